//! Work in progress: see issue 6.
