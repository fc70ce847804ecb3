//! A JFrog Platform simulator: the REST APIs behind our Kinds, failures included.
pub mod cli;
