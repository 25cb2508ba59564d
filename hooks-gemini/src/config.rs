//! Discovery of Gemini CLI's hook configuration.

/// A discovery error.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A settings file could not be read or parsed.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: std::path::PathBuf,
        /// What was wrong.
        message: String,
    },
}

/// Gemini's discovered hook configuration.
#[derive(Debug, Clone, Default)]
pub struct GeminiConfig {}

/// Loads the configuration (skeleton).
pub fn load() -> Result<GeminiConfig, ConfigError> {
    Ok(GeminiConfig::default())
}
