//! provider-platform: Kind declarations and adapters.
