//! provider-project: Kind declarations and adapters.
