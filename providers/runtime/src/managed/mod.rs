//! The generic managed reconciler.
