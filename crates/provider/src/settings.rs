//! Provider settings: built-in defaults, then `$DSH_HOME/config.toml`'s
//! `[provider]` table, then environment variables.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// DeepSeek's API, the default endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.deepseek.com";
/// DeepSeek's general chat model, the default model.
pub const DEFAULT_MODEL: &str = "deepseek-chat";
/// The variable the API key is read from when `DSH_API_KEY` is unset.
pub const DEFAULT_API_KEY_ENV: &str = "DEEPSEEK_API_KEY";
/// Anthropic's API, the default endpoint of the `anthropic` API.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The default model of the `anthropic` API.
pub const ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";
/// The key variable of the `anthropic` API (Claude Code's).
pub const ANTHROPIC_API_KEY_ENV: &str = "ANTHROPIC_API_KEY";
/// The base URL variable Anthropic's SDKs (and Claude Code) read.
pub const ENV_ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// OpenAI's API, the default endpoint of the `responses` API.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// The default model of the `responses` API.
pub const OPENAI_MODEL: &str = "gpt-5";
/// The key variable of the `responses` API (Codex's).
pub const OPENAI_API_KEY_ENV: &str = "OPENAI_API_KEY";
/// The base URL variable OpenAI's SDKs (and Codex) read.
pub const ENV_OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
/// Chooses the wire API (`chat`, `anthropic`, `responses`).
pub const ENV_PROVIDER_API: &str = "DSH_PROVIDER_API";
/// Overrides `base_url`.
pub const ENV_BASE_URL: &str = "DSH_BASE_URL";
/// Overrides `model`.
pub const ENV_MODEL: &str = "DSH_MODEL";
/// The API key; wins over the variable named by `api_key_env`.
pub const ENV_API_KEY: &str = "DSH_API_KEY";
/// The directory holding dsh's configuration and sessions.
pub const ENV_DSH_HOME: &str = "DSH_HOME";
/// The file, relative to `DSH_HOME`, the `[provider]` table is read from.
pub const CONFIG_FILE_NAME: &str = "config.toml";

const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const DEFAULT_MAX_RETRIES: u32 = 3;
const DEFAULT_RETRY_BASE_DELAY: Duration = Duration::from_millis(500);
/// The default bound on one reply, in MiB (`max_reply_mib`).
pub const DEFAULT_MAX_REPLY_MIB: u64 = 16;

/// The wire API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProviderApi {
    /// OpenAI-compatible Chat Completions (`{base_url}/chat/completions`).
    #[default]
    Chat,
    /// Anthropic's Messages API (`{base_url}/v1/messages`).
    Anthropic,
    /// OpenAI's Responses API (`{base_url}/responses`).
    Responses,
}

impl ProviderApi {
    /// The endpoint this API is reached at when nothing names one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderApi::Chat => DEFAULT_BASE_URL,
            ProviderApi::Anthropic => ANTHROPIC_BASE_URL,
            ProviderApi::Responses => OPENAI_BASE_URL,
        }
    }

    /// The model asked for when nothing names one.
    pub fn default_model(self) -> &'static str {
        match self {
            ProviderApi::Chat => DEFAULT_MODEL,
            ProviderApi::Anthropic => ANTHROPIC_MODEL,
            ProviderApi::Responses => OPENAI_MODEL,
        }
    }

    /// The variable the key is read from when `DSH_API_KEY` is unset and
    /// `api_key_env` names none.
    pub fn default_api_key_env(self) -> &'static str {
        match self {
            ProviderApi::Chat => DEFAULT_API_KEY_ENV,
            ProviderApi::Anthropic => ANTHROPIC_API_KEY_ENV,
            ProviderApi::Responses => OPENAI_API_KEY_ENV,
        }
    }

    /// The variable the vendor's own tools read the base URL from.
    fn base_url_env(self) -> Option<&'static str> {
        match self {
            ProviderApi::Chat => None,
            ProviderApi::Anthropic => Some(ENV_ANTHROPIC_BASE_URL),
            ProviderApi::Responses => Some(ENV_OPENAI_BASE_URL),
        }
    }

    /// The name used in `config.toml`, `DSH_PROVIDER_API` and `--provider-api`.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderApi::Chat => "chat",
            ProviderApi::Anthropic => "anthropic",
            ProviderApi::Responses => "responses",
        }
    }
}

impl std::fmt::Display for ProviderApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProviderApi {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value.trim().to_ascii_lowercase().as_str() {
            "chat" => Ok(ProviderApi::Chat),
            "anthropic" => Ok(ProviderApi::Anthropic),
            "responses" => Ok(ProviderApi::Responses),
            _ => Err(format!(
                "{value:?} is not a provider api; expected \"chat\", \"anthropic\" or \"responses\""
            )),
        }
    }
}

/// Where a setting's value came from, for `dsh status`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SettingOrigin {
    /// dsh's built-in default (for the chosen API).
    #[default]
    Default,
    /// The `[provider]` table of `config.toml`.
    ConfigFile,
    /// This environment variable.
    Env(String),
    /// This command-line flag.
    Flag(String),
    /// Chosen because this key variable is set (the API).
    KeySet(String),
}

impl std::fmt::Display for SettingOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingOrigin::Default => f.write_str("default"),
            SettingOrigin::ConfigFile => f.write_str("config.toml [provider]"),
            SettingOrigin::Env(name) => write!(f, "${name}"),
            SettingOrigin::Flag(flag) => f.write_str(flag),
            SettingOrigin::KeySet(name) => write!(f, "${name} is set"),
        }
    }
}

/// Where the API, base URL and model came from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SettingOrigins {
    /// Of [`ProviderSettings::api`].
    pub api: SettingOrigin,
    /// Of [`ProviderSettings::base_url`].
    pub base_url: SettingOrigin,
    /// Of [`ProviderSettings::model`].
    pub model: SettingOrigin,
    /// The variable the API key was read from (`None`: no key is set).
    pub api_key: Option<String>,
}

/// Everything the HTTP provider needs to reach a model.
///
/// Build it with [`ProviderSettings::load`]; [`Default`] gives the built-in
/// defaults (DeepSeek, no key).
#[derive(Clone, PartialEq)]
pub struct ProviderSettings {
    /// The wire API spoken.
    pub api: ProviderApi,
    /// The endpoint's base URL: requests go to `{base_url}/chat/completions`
    /// (chat), `{base_url}/v1/messages` (anthropic) or
    /// `{base_url}/responses` (responses).
    pub base_url: String,
    /// The model name sent in every request.
    pub model: String,
    /// The environment variable the key was (or would be) read from when
    /// `DSH_API_KEY` is unset. Named in authentication errors.
    pub api_key_env: String,
    /// The API key, once resolved.
    pub api_key: Option<String>,
    /// Idle timeout: the longest wait for response headers, and for each
    /// next piece of a streaming body. Not a cap on a whole reply's length.
    pub request_timeout: Duration,
    /// The longest wait for a TCP (and TLS) connection.
    pub connect_timeout: Duration,
    /// Retries after the first attempt, for 429, 5xx and connection failures.
    pub max_retries: u32,
    /// First backoff delay; doubled on each retry unless the server sent `Retry-After`.
    pub retry_base_delay: Duration,
    /// `max_tokens` sent with each request, when set.
    pub max_tokens: Option<u32>,
    /// The most bytes one reply may hold (text, tool-call arguments and
    /// thinking together); a reply that grows past it fails with
    /// [`crate::ProviderError::ReplyTooLarge`] (`max_reply_mib`).
    pub max_reply_bytes: usize,
    /// `temperature` sent with each request, when set.
    pub temperature: Option<f32>,
    /// Extended thinking's token budget (Anthropic), when thinking is on.
    pub thinking_budget_tokens: Option<u32>,
    /// A JSON Schema the model's final answer must follow (`dsh exec
    /// --output-schema`): sent as the Responses API's `text.format`
    /// (`json_schema`). Only the Responses API carries it; a front end that
    /// sets it checks [`ProviderSettings::api`] first.
    pub output_schema: Option<serde_json::Value>,
    /// Where the API, base URL and model came from.
    pub origins: SettingOrigins,
}

impl std::fmt::Debug for ProviderSettings {
    // The key must never reach a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_retries", &self.max_retries)
            .field("retry_base_delay", &self.retry_base_delay)
            .field("max_tokens", &self.max_tokens)
            .field("max_reply_bytes", &self.max_reply_bytes)
            .field("temperature", &self.temperature)
            .field("thinking_budget_tokens", &self.thinking_budget_tokens)
            .field("output_schema", &self.output_schema)
            .field("origins", &self.origins)
            .finish()
    }
}

impl Default for ProviderSettings {
    fn default() -> Self {
        ProviderSettings {
            api: ProviderApi::Chat,
            base_url: DEFAULT_BASE_URL.to_owned(),
            model: DEFAULT_MODEL.to_owned(),
            api_key_env: DEFAULT_API_KEY_ENV.to_owned(),
            api_key: None,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            max_retries: DEFAULT_MAX_RETRIES,
            retry_base_delay: DEFAULT_RETRY_BASE_DELAY,
            max_tokens: None,
            max_reply_bytes: mib_to_bytes(DEFAULT_MAX_REPLY_MIB),
            temperature: None,
            thinking_budget_tokens: None,
            output_schema: None,
            origins: SettingOrigins::default(),
        }
    }
}

/// Why the provider settings could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The configuration file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The configuration file is not valid TOML, has an unknown key in
    /// `[provider]`, or a value of the wrong type.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line of the problem (0 when the parser gave no position).
        line: usize,
        /// 1-based column of the problem (0 when the parser gave no position).
        column: usize,
        /// What is wrong; names the key for unknown or mistyped keys.
        message: String,
    },
    /// A value in the configuration file parsed but is not acceptable.
    #[error("{}: [provider] {key}: {message}", path.display())]
    InvalidValue {
        /// The file.
        path: PathBuf,
        /// The key in the `[provider]` table.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An environment variable holds an unacceptable value.
    #[error("environment variable {var}: {message}")]
    InvalidEnv {
        /// The variable.
        var: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// The `[provider]` table as written in `config.toml`. Strict: a typo must
/// not silently fall back to a default.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderTable {
    api: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    request_timeout_secs: Option<u64>,
    connect_timeout_secs: Option<u64>,
    max_retries: Option<u32>,
    max_tokens: Option<u32>,
    max_reply_mib: Option<u64>,
    temperature: Option<f32>,
    thinking_budget_tokens: Option<u32>,
}

/// The field names a strict (`deny_unknown_fields`) table accepts, read
/// from serde's own refusal of a key no table has: the code is the source
/// of truth for the config reference's check.
pub fn accepted_keys<T: serde::de::DeserializeOwned>() -> Vec<String> {
    let probe = "__dsh_probe__ = 0";
    let Err(error) = toml::from_str::<T>(probe) else {
        return Vec::new();
    };
    let text = error.to_string();
    let Some((_, expected)) = text.split_once("expected one of") else {
        // One field only: "expected `name`".
        return text
            .split_once("expected `")
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(name, _)| vec![name.to_owned()])
            .unwrap_or_default();
    };
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The keys of `config.toml`'s `[provider]` table.
pub fn provider_table_keys() -> Vec<String> {
    accepted_keys::<ProviderTable>()
}

/// `mib` MiB in bytes (saturating: a limit past the address space is none).
fn mib_to_bytes(mib: u64) -> usize {
    usize::try_from(mib.saturating_mul(1024 * 1024)).unwrap_or(usize::MAX)
}

/// The whole file. Other tables belong to other parts of dsh and are not
/// checked here.
#[derive(Debug, Default, Deserialize)]
struct ConfigFile {
    #[serde(default)]
    provider: Option<ProviderTable>,
}

/// dsh's home directory: `$DSH_HOME`, else `$HOME/.dsh`; `None` when
/// neither variable is set (or both are empty).
pub fn resolve_dsh_home(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| env(name).filter(|value| !value.is_empty());
    set(ENV_DSH_HOME)
        .map(PathBuf::from)
        .or_else(|| set("HOME").map(|home| PathBuf::from(home).join(".dsh")))
}

impl ProviderSettings {
    /// Every variable the API key is looked up in, in order.
    pub fn key_variables(&self) -> Vec<String> {
        let mut names = vec![ENV_API_KEY.to_owned()];
        if self.api_key_env != ENV_API_KEY {
            names.push(self.api_key_env.clone());
        }
        names
    }

    /// Every variable looked at for a key, for people: `DSH_API_KEY` and
    /// the API's key variable, and (when no setting chose the API) the
    /// Anthropic and OpenAI key variables that would have chosen theirs.
    /// Ends with `is` / `are` (`are all`) for the sentence it goes in.
    pub fn looked_at_key_variables(&self) -> String {
        let mut names = self.key_variables();
        if self.origins.api == SettingOrigin::Default {
            for name in [ANTHROPIC_API_KEY_ENV, OPENAI_API_KEY_ENV] {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
        match names.as_slice() {
            [one] => format!("{one} is"),
            [first, second] => format!("{first} and {second} are"),
            [rest @ .., last] => format!("{} and {last} are all", rest.join(", ")),
            [] => String::new(),
        }
    }

    /// Where the base URL is set, for a fix: the variable, the file, or
    /// how to set it when it is the built-in default.
    pub fn base_url_fix(&self) -> String {
        match &self.origins.base_url {
            SettingOrigin::Env(name) => format!("check ${name}"),
            SettingOrigin::ConfigFile => {
                "check base_url in the [provider] table of config.toml".to_owned()
            }
            SettingOrigin::Flag(flag) => format!("check {flag}"),
            SettingOrigin::Default | SettingOrigin::KeySet(_) => format!(
                "check your network, or point {ENV_BASE_URL} (or [provider] base_url in config.toml) at another endpoint"
            ),
        }
    }

    /// Loads settings: built-in defaults, overridden by the `[provider]`
    /// table of `$DSH_HOME/config.toml` (the file is optional), overridden
    /// by `DSH_BASE_URL`, `DSH_MODEL` and `DSH_API_KEY`. Without
    /// `DSH_API_KEY` the key is read from the variable named by
    /// `api_key_env` (default `DEEPSEEK_API_KEY`). `env` looks variables
    /// up; an empty value counts as unset.
    ///
    /// A missing key is not an error here (see [`crate::OpenAiProvider::new`]),
    /// so that commands which never reach a model still run.
    pub fn load(
        dsh_home: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingsError> {
        let path = dsh_home.join(CONFIG_FILE_NAME);
        let text = read_config_text(&path)?;
        Self::from_config_text(&path, text.as_deref(), env)
    }

    /// [`ProviderSettings::load`] over `config.toml`'s text, already read
    /// (`None`: there is no file), so that one read serves every table.
    pub fn from_config_text(
        path: &Path,
        text: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, SettingsError> {
        Self::resolve(path, text, env, None)
    }

    /// [`ProviderSettings::from_config_text`] with the API a command-line
    /// flag (`--provider-api`) chose, which wins over everything else.
    pub fn resolve(
        path: &Path,
        text: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
        api_flag: Option<ProviderApi>,
    ) -> Result<Self, SettingsError> {
        // A key dsh handed to itself at start-up (see `key_handoff`) is no
        // longer in the environment; it wins over whatever `env` says.
        let env = |name: &str| {
            crate::key_handoff::handed_off_key(name)
                .or_else(|| env(name))
                .filter(|value| !value.trim().is_empty())
        };
        let table = match text {
            Some(text) => parse_table(path, text)?.unwrap_or_default(),
            None => ProviderTable::default(),
        };
        let (api, api_origin) = choose_api(path, &table, &env, api_flag)?;
        let mut settings = ProviderSettings {
            api,
            base_url: api.default_base_url().to_owned(),
            model: api.default_model().to_owned(),
            api_key_env: api.default_api_key_env().to_owned(),
            origins: SettingOrigins {
                api: api_origin,
                base_url: SettingOrigin::Default,
                model: SettingOrigin::Default,
                api_key: None,
            },
            ..ProviderSettings::default()
        };
        if let Some(name) = api.base_url_env()
            && let Some(base_url) = env(name)
        {
            check_base_url(&base_url)
                .map_err(|message| SettingsError::InvalidEnv { var: name, message })?;
            settings.base_url = base_url;
            settings.origins.base_url = SettingOrigin::Env(name.to_owned());
        }
        settings.apply_table(table, path)?;

        if let Some(base_url) = env(ENV_BASE_URL) {
            check_base_url(&base_url).map_err(|message| SettingsError::InvalidEnv {
                var: ENV_BASE_URL,
                message,
            })?;
            settings.base_url = base_url;
            settings.origins.base_url = SettingOrigin::Env(ENV_BASE_URL.to_owned());
        }
        if let Some(model) = env(ENV_MODEL) {
            settings.model = model;
            settings.origins.model = SettingOrigin::Env(ENV_MODEL.to_owned());
        }
        settings.api_key = env(ENV_API_KEY).or_else(|| env(&settings.api_key_env));
        settings.origins.api_key = if env(ENV_API_KEY).is_some() {
            Some(ENV_API_KEY.to_owned())
        } else if settings.api_key.is_some() {
            Some(settings.api_key_env.clone())
        } else {
            None
        };
        Ok(settings)
    }

    fn apply_table(&mut self, table: ProviderTable, path: &Path) -> Result<(), SettingsError> {
        let invalid = |key: &'static str, message: String| SettingsError::InvalidValue {
            path: path.to_owned(),
            key,
            message,
        };
        if let Some(base_url) = table.base_url {
            check_base_url(&base_url).map_err(|message| invalid("base_url", message))?;
            self.base_url = base_url;
            self.origins.base_url = SettingOrigin::ConfigFile;
        }
        if let Some(model) = table.model {
            if model.trim().is_empty() {
                return Err(invalid("model", "must not be empty".to_owned()));
            }
            self.model = model;
            self.origins.model = SettingOrigin::ConfigFile;
        }
        if let Some(api_key_env) = table.api_key_env {
            if api_key_env.trim().is_empty() || api_key_env.contains('=') {
                return Err(invalid(
                    "api_key_env",
                    format!("{api_key_env:?} is not an environment variable name"),
                ));
            }
            self.api_key_env = api_key_env;
        }
        if let Some(secs) = table.request_timeout_secs {
            if secs == 0 {
                return Err(invalid(
                    "request_timeout_secs",
                    "must be at least 1".to_owned(),
                ));
            }
            self.request_timeout = Duration::from_secs(secs);
        }
        if let Some(secs) = table.connect_timeout_secs {
            if secs == 0 {
                return Err(invalid(
                    "connect_timeout_secs",
                    "must be at least 1".to_owned(),
                ));
            }
            self.connect_timeout = Duration::from_secs(secs);
        }
        if let Some(max_retries) = table.max_retries {
            self.max_retries = max_retries;
        }
        if let Some(max_tokens) = table.max_tokens {
            if max_tokens == 0 {
                return Err(invalid("max_tokens", "must be at least 1".to_owned()));
            }
            self.max_tokens = Some(max_tokens);
        }
        if let Some(mib) = table.max_reply_mib {
            if mib == 0 {
                return Err(invalid("max_reply_mib", "must be at least 1".to_owned()));
            }
            self.max_reply_bytes = mib_to_bytes(mib);
        }
        if let Some(temperature) = table.temperature {
            if !(0.0..=2.0).contains(&temperature) {
                return Err(invalid(
                    "temperature",
                    format!("{temperature} is outside 0.0..=2.0"),
                ));
            }
            self.temperature = Some(temperature);
        }
        if let Some(budget) = table.thinking_budget_tokens {
            // The Messages API's own minimum.
            if budget < 1024 {
                return Err(invalid(
                    "thinking_budget_tokens",
                    format!("{budget} is below the minimum of 1024"),
                ));
            }
            self.thinking_budget_tokens = Some(budget);
        }
        Ok(())
    }

    /// The full URL Chat Completions requests are posted to.
    pub fn completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    /// The full URL requests of the configured API are posted to.
    pub fn endpoint_url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.api {
            ProviderApi::Chat => format!("{base}/chat/completions"),
            ProviderApi::Anthropic => format!("{base}/v1/messages"),
            ProviderApi::Responses => format!("{base}/responses"),
        }
    }
}

/// The API: `--provider-api`, else `DSH_PROVIDER_API`, else `[provider]
/// api`; otherwise Chat Completions when anything points at it (a DSH or
/// chat key, a configured base URL or model), else Anthropic when
/// `ANTHROPIC_API_KEY` is set, else Responses when `OPENAI_API_KEY` is,
/// else Chat Completions (DeepSeek).
fn choose_api(
    path: &Path,
    table: &ProviderTable,
    env: &dyn Fn(&str) -> Option<String>,
    api_flag: Option<ProviderApi>,
) -> Result<(ProviderApi, SettingOrigin), SettingsError> {
    if let Some(api) = api_flag {
        return Ok((api, SettingOrigin::Flag("--provider-api".to_owned())));
    }
    if let Some(value) = env(ENV_PROVIDER_API) {
        let api = value.parse().map_err(|message| SettingsError::InvalidEnv {
            var: ENV_PROVIDER_API,
            message,
        })?;
        return Ok((api, SettingOrigin::Env(ENV_PROVIDER_API.to_owned())));
    }
    if let Some(value) = &table.api {
        let api = value
            .parse()
            .map_err(|message| SettingsError::InvalidValue {
                path: path.to_owned(),
                key: "api",
                message,
            })?;
        return Ok((api, SettingOrigin::ConfigFile));
    }
    let chat_key = table.api_key_env.as_deref().unwrap_or(DEFAULT_API_KEY_ENV);
    for name in [ENV_API_KEY, chat_key] {
        if env(name).is_some() {
            return Ok((ProviderApi::Chat, SettingOrigin::KeySet(name.to_owned())));
        }
    }
    if table.base_url.is_some() || table.model.is_some() {
        return Ok((ProviderApi::Chat, SettingOrigin::ConfigFile));
    }
    for (name, api) in [
        (ANTHROPIC_API_KEY_ENV, ProviderApi::Anthropic),
        (OPENAI_API_KEY_ENV, ProviderApi::Responses),
    ] {
        if env(name).is_some() {
            return Ok((api, SettingOrigin::KeySet(name.to_owned())));
        }
    }
    Ok((ProviderApi::Chat, SettingOrigin::Default))
}

/// The `api_key_env` of `$DSH_HOME/config.toml` (`path`, whose text is
/// `text`; `None`: no file), read leniently: `None` when the file is
/// malformed or names no variable (the normal [`ProviderSettings::load`]
/// reports the problems).
pub(crate) fn configured_api_key_env(path: &Path, text: Option<&str>) -> Option<String> {
    let table = parse_table(path, text?).ok()??;
    table
        .api_key_env
        .filter(|name| !name.trim().is_empty() && !name.contains(['=', '\0']))
}

/// The key variable of the API the environment and `config.toml` (`path`,
/// `text`) select (before any `--provider-api`), read leniently: `None`
/// when the settings do not resolve (the normal load reports why).
pub(crate) fn selected_api_key_env(
    path: &Path,
    text: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<String> {
    let settings = ProviderSettings::resolve(path, text, env, None).ok()?;
    Some(settings.api_key_env).filter(|name| !name.contains(['=', '\0']))
}

/// `config.toml`'s text; `None` when there is no such file. The first read
/// of a process takes the text the key hand-off already read at start-up
/// (so one start opens the file once); later reads read the disk.
pub fn read_config_text(path: &Path) -> Result<Option<String>, SettingsError> {
    if let Some(text) = crate::key_handoff::take_handed_off_config(path) {
        return Ok(text);
    }
    read_config_from_disk(path)
}

/// `config.toml`'s text as it is on disk now.
pub(crate) fn read_config_from_disk(path: &Path) -> Result<Option<String>, SettingsError> {
    match fs_err::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(SettingsError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

fn parse_table(path: &Path, text: &str) -> Result<Option<ProviderTable>, SettingsError> {
    let file: ConfigFile = toml::from_str(text).map_err(|error| {
        let start = error.span().map(|span| span.start);
        let (line, column) = start
            .map(|start| line_and_column(text, start))
            .unwrap_or((0, 0));
        let mut message = error.message().trim().to_owned();
        // A wrong value's error points at the value and does not say whose
        // it is; the key is what a person needs to find it.
        if let Some(key) = start.and_then(|start| key_of_value_at(text, start))
            && !message.contains(&key)
        {
            message = format!("{key}: {message}");
        }
        SettingsError::Parse {
            path: path.to_owned(),
            line,
            column,
            message,
        }
    })?;
    Ok(file.provider)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// The key of a `key = value` line when `offset` falls in the value.
fn key_of_value_at(text: &str, offset: usize) -> Option<String> {
    let before = text.get(..offset)?;
    let line_start = before.rfind('\n').map_or(0, |index| index + 1);
    let (key, _) = before.get(line_start..)?.split_once('=')?;
    let key = key.trim().trim_matches('"');
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    plain.then(|| key.to_owned())
}

fn check_base_url(value: &str) -> Result<(), String> {
    let url =
        reqwest::Url::parse(value).map_err(|error| format!("{value:?} is not a URL: {error}"))?;
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(format!(
            "{value:?} has scheme {other:?}; expected http or https"
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_counts_from_one() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_and_column(text, 0), (1, 1));
        assert_eq!(line_and_column(text, 6), (2, 1));
        assert_eq!(line_and_column(text, 9), (2, 4));
    }

    #[test]
    fn the_key_of_a_value_is_found_from_its_offset() {
        let text = "[provider]\nmax_retries = \"x\"\n";
        let offset = text.find("\"x").unwrap();
        assert_eq!(
            key_of_value_at(text, offset).as_deref(),
            Some("max_retries")
        );
        assert_eq!(key_of_value_at(text, 2), None);
    }

    #[test]
    fn dsh_home_defaults_to_dot_dsh_under_home() {
        let env = |name: &str| (name == "HOME").then(|| "/home/u".to_owned());
        assert_eq!(resolve_dsh_home(&env), Some(PathBuf::from("/home/u/.dsh")));
        let env = |name: &str| Some(format!("/x/{name}"));
        assert_eq!(resolve_dsh_home(&env), Some(PathBuf::from("/x/DSH_HOME")));
        assert_eq!(resolve_dsh_home(&|_| None), None);
    }

    #[test]
    fn completions_url_tolerates_a_trailing_slash() {
        let settings = ProviderSettings {
            base_url: "http://127.0.0.1:9/v1/".to_owned(),
            ..ProviderSettings::default()
        };
        assert_eq!(
            settings.completions_url(),
            "http://127.0.0.1:9/v1/chat/completions"
        );
    }
}
