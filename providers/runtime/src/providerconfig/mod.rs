//! ProviderConfig handling.
