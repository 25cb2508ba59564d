//! The built-in tools.
