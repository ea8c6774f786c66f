//! Work in progress: see issue 7.
