//! Why a Codex configuration file could not be accepted.

use std::path::PathBuf;

/// A configuration file dsh could not accept.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// Malformed or mistyped JSON.
    #[error("{path}:{line}:{column}: invalid Codex hooks JSON: {message}")]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// Malformed or mistyped TOML.
    #[error("{path}:{line}:{column}: invalid Codex config TOML: {message}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// The file exists but could not be read.
    #[error("{path}: cannot read Codex configuration: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
