//! The provider process.
