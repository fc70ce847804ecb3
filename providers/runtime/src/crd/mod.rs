//! CRD generation from Kind declarations.
