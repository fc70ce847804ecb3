//! provider-xray: Kind declarations and adapters.
