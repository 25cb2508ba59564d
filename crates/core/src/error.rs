//! The crate's error: a message, or a message with the error that caused it
//! (so a caller's error chain reads as before).

/// What went wrong while resolving or assembling a session.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A message of its own.
    #[error("{0}")]
    Message(String),
    /// What was being done, and the error that stopped it.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// Why it failed.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// An error passed on as it is.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with `message`.
    pub fn msg(message: impl Into<String>) -> Self {
        Error::Message(message.into())
    }
}

macro_rules! passed_on {
    ($($ty:ty),* $(,)?) => {$(
        impl From<$ty> for Error {
            fn from(error: $ty) -> Self {
                Error::Other(Box::new(error))
            }
        }
    )*};
}

passed_on!(
    std::io::Error,
    serde_json::Error,
    toml::de::Error,
    dsh_permissions::store::StoreError,
    dsh_permissions::LayerError,
    dsh_permissions::layering::LayeringError,
    dsh_mcp::ConfigError,
    dsh_provider::SettingsError,
    dsh_provider::ProviderError,
    dsh_session::LogError,
    dsh_agent::AgentError,
    dsh_session::SessionIdError,
    dsh_session::store::StoreError,
);

impl From<dsh_trust::TrustError> for Error {
    fn from(error: dsh_trust::TrustError) -> Self {
        Error::Other(Box::new(error))
    }
}

/// `.context(…)` on results, as the binary's `anyhow` has it.
pub trait ResultExt<T> {
    /// Names what was being done when the error happened.
    fn context(self, context: impl Into<String>) -> Result<T>;
    /// [`ResultExt::context`], computed only on error.
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E> ResultExt<T> for std::result::Result<T, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|source| Error::Context {
            context: context.into(),
            source: Box::new(source),
        })
    }
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|source| Error::Context {
            context: context().into(),
            source: Box::new(source),
        })
    }
}
