//! provider-artifactory: Kind declarations and adapters.
