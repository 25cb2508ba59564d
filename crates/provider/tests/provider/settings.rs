//! Settings precedence (defaults < config.toml < environment) and bad files.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use dsh_provider::{ProviderApi, ProviderSettings, SettingOrigin, SettingOrigins, SettingsError};
use pretty_assertions::assert_eq;

fn load(home: &Path, vars: &[(&str, &str)]) -> Result<ProviderSettings, SettingsError> {
    let vars: HashMap<String, String> = vars
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    ProviderSettings::load(home, &|name| vars.get(name).cloned())
}

fn home_with(config: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    home
}

#[test]
fn defaults_without_file_or_environment() {
    let home = tempfile::tempdir().unwrap();
    let settings = load(home.path(), &[]).unwrap();
    assert_eq!(settings, ProviderSettings::default());
    assert_eq!(settings.base_url, "https://api.deepseek.com");
    assert_eq!(settings.model, "deepseek-chat");
    assert_eq!(settings.api_key_env, "DEEPSEEK_API_KEY");
    assert_eq!(settings.api_key, None);
    assert_eq!(
        settings.completions_url(),
        "https://api.deepseek.com/chat/completions"
    );
}

#[test]
fn the_key_comes_from_deepseek_api_key_unless_dsh_api_key_is_set() {
    let home = tempfile::tempdir().unwrap();
    let settings = load(home.path(), &[("DEEPSEEK_API_KEY", "ds")]).unwrap();
    assert_eq!(settings.api_key.as_deref(), Some("ds"));
    let settings = load(
        home.path(),
        &[("DEEPSEEK_API_KEY", "ds"), ("DSH_API_KEY", "dsh")],
    )
    .unwrap();
    assert_eq!(settings.api_key.as_deref(), Some("dsh"));
    // An empty variable counts as unset.
    let settings = load(
        home.path(),
        &[("DEEPSEEK_API_KEY", "ds"), ("DSH_API_KEY", "")],
    )
    .unwrap();
    assert_eq!(settings.api_key.as_deref(), Some("ds"));
}

#[test]
fn the_file_overrides_defaults_and_the_environment_overrides_the_file() {
    let home = home_with(
        r#"
[provider]
base_url = "http://127.0.0.1:9999/v1"
model = "file-model"
api_key_env = "LOCAL_LLM_KEY"
request_timeout_secs = 7
connect_timeout_secs = 3
max_retries = 5
max_tokens = 1000
temperature = 0.25

[hooks]
anything = "belongs to someone else"
"#,
    );
    let from_file = load(
        home.path(),
        &[
            ("LOCAL_LLM_KEY", "local"),
            ("DEEPSEEK_API_KEY", "not this one"),
        ],
    )
    .unwrap();
    assert_eq!(
        from_file,
        ProviderSettings {
            base_url: "http://127.0.0.1:9999/v1".into(),
            model: "file-model".into(),
            api_key_env: "LOCAL_LLM_KEY".into(),
            api_key: Some("local".into()),
            request_timeout: Duration::from_secs(7),
            connect_timeout: Duration::from_secs(3),
            max_retries: 5,
            max_tokens: Some(1000),
            temperature: Some(0.25),
            origins: SettingOrigins {
                api: SettingOrigin::KeySet("LOCAL_LLM_KEY".into()),
                base_url: SettingOrigin::ConfigFile,
                model: SettingOrigin::ConfigFile,
                // The key came from the variable `api_key_env` names.
                api_key: Some("LOCAL_LLM_KEY".into()),
            },
            ..ProviderSettings::default()
        }
    );

    let from_env = load(
        home.path(),
        &[
            ("LOCAL_LLM_KEY", "local"),
            ("DSH_BASE_URL", "http://127.0.0.1:1234"),
            ("DSH_MODEL", "env-model"),
            ("DSH_API_KEY", "env-key"),
        ],
    )
    .unwrap();
    assert_eq!(from_env.base_url, "http://127.0.0.1:1234");
    assert_eq!(from_env.model, "env-model");
    assert_eq!(from_env.api_key.as_deref(), Some("env-key"));
    assert_eq!(from_env.max_retries, 5, "untouched file values stay");
    assert_eq!(
        from_env.completions_url(),
        "http://127.0.0.1:1234/chat/completions"
    );
}

#[test]
fn an_unknown_key_names_the_file_the_key_and_the_line() {
    let home = home_with("[provider]\nmodel = \"x\"\nmodle = \"typo\"\n");
    let error = load(home.path(), &[]).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, SettingsError::Parse { line: 3, .. }),
        "{error:?}"
    );
    assert!(message.contains("config.toml"), "{message}");
    assert!(
        message.contains(&home.path().display().to_string()),
        "{message}"
    );
    assert!(message.contains("modle"), "{message}");
}

#[test]
fn the_api_key_itself_is_not_accepted_in_the_file() {
    let home = home_with("[provider]\napi_key = \"sk-secret\"\n");
    let message = load(home.path(), &[]).unwrap_err().to_string();
    assert!(message.contains("api_key"), "{message}");
}

#[test]
fn malformed_toml_reports_line_and_column() {
    let home = home_with("[provider]\nmodel = \"ok\"\nbase_url = \"unterminated\n");
    let error = load(home.path(), &[]).unwrap_err();
    match &error {
        SettingsError::Parse { line, column, .. } => {
            assert_eq!(*line, 3, "{error}");
            assert!(*column > 1, "{error}");
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let message = error.to_string();
    assert!(message.contains("config.toml:3:"), "{message}");
}

#[test]
fn a_mistyped_value_names_the_key() {
    let home = home_with("[provider]\nmax_retries = \"three\"\n");
    let error = load(home.path(), &[]).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, SettingsError::Parse { line: 2, .. }),
        "{error:?}"
    );
    assert!(message.contains("config.toml:2:"), "{message}");
    assert!(message.contains("max_retries"), "{message}");
}

#[test]
fn unacceptable_values_name_the_key_or_variable() {
    let home = home_with("[provider]\nbase_url = \"ftp://example.invalid\"\n");
    let message = load(home.path(), &[]).unwrap_err().to_string();
    assert!(message.contains("[provider] base_url"), "{message}");
    assert!(message.contains("config.toml"), "{message}");

    let home = home_with("[provider]\ntemperature = 9.0\n");
    let message = load(home.path(), &[]).unwrap_err().to_string();
    assert!(message.contains("[provider] temperature"), "{message}");

    let home = tempfile::tempdir().unwrap();
    let error = load(home.path(), &[("DSH_BASE_URL", "not a url")]).unwrap_err();
    assert!(
        matches!(
            error,
            SettingsError::InvalidEnv {
                var: "DSH_BASE_URL",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn an_unreadable_file_is_an_error_naming_it() {
    let home = tempfile::tempdir().unwrap();
    // A directory where the file should be cannot be read as one.
    std::fs::create_dir(home.path().join("config.toml")).unwrap();
    let message = load(home.path(), &[]).unwrap_err().to_string();
    assert!(message.contains("config.toml"), "{message}");
}

#[test]
fn debug_output_never_shows_the_key() {
    let settings = ProviderSettings {
        api_key: Some("sk-very-secret".into()),
        ..ProviderSettings::default()
    };
    let debug = format!("{settings:?}");
    assert!(!debug.contains("sk-very-secret"), "{debug}");
    assert!(debug.contains("redacted"), "{debug}");
}

/// The API each environment selects, with its base URL, model, key
/// variable and the reason `dsh status` gives.
#[test]
fn the_api_follows_the_keys_present_unless_configured() {
    let home = tempfile::tempdir().unwrap();
    let anthropic = load(home.path(), &[("ANTHROPIC_API_KEY", "sk-ant")]).unwrap();
    assert_eq!(anthropic.api, ProviderApi::Anthropic);
    assert_eq!(anthropic.base_url, "https://api.anthropic.com");
    assert_eq!(anthropic.model, "claude-sonnet-4-5");
    assert_eq!(anthropic.api_key_env, "ANTHROPIC_API_KEY");
    assert_eq!(anthropic.api_key.as_deref(), Some("sk-ant"));
    assert_eq!(
        anthropic.endpoint_url(),
        "https://api.anthropic.com/v1/messages"
    );
    assert_eq!(
        anthropic.origins.api.to_string(),
        "$ANTHROPIC_API_KEY is set"
    );

    let with_base = load(
        home.path(),
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:7/anthropic"),
        ],
    )
    .unwrap();
    assert_eq!(with_base.base_url, "http://127.0.0.1:7/anthropic");
    assert_eq!(
        with_base.origins.base_url,
        SettingOrigin::Env("ANTHROPIC_BASE_URL".into())
    );

    let openai = load(home.path(), &[("OPENAI_API_KEY", "sk-oa")]).unwrap();
    assert_eq!(openai.api, ProviderApi::Responses);
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert_eq!(openai.api_key_env, "OPENAI_API_KEY");

    // Both vendor keys: Anthropic's wins; a DeepSeek or DSH key keeps chat.
    let both = load(
        home.path(),
        &[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")],
    )
    .unwrap();
    assert_eq!(both.api, ProviderApi::Anthropic);
    for key in ["DEEPSEEK_API_KEY", "DSH_API_KEY"] {
        let chat = load(home.path(), &[("ANTHROPIC_API_KEY", "a"), (key, "k")]).unwrap();
        assert_eq!(chat.api, ProviderApi::Chat, "{key}");
        assert_eq!(chat.base_url, "https://api.deepseek.com");
        assert_eq!(chat.api_key.as_deref(), Some("k"));
    }

    // DSH_PROVIDER_API wins over the keys, and the key follows the API.
    let chosen = load(
        home.path(),
        &[
            ("DSH_PROVIDER_API", "anthropic"),
            ("DEEPSEEK_API_KEY", "ds"),
            ("ANTHROPIC_API_KEY", "a"),
        ],
    )
    .unwrap();
    assert_eq!(chosen.api, ProviderApi::Anthropic);
    assert_eq!(chosen.api_key.as_deref(), Some("a"));
    assert_eq!(chosen.origins.api.to_string(), "$DSH_PROVIDER_API");
    let error = load(home.path(), &[("DSH_PROVIDER_API", "grpc")]).unwrap_err();
    assert!(error.to_string().contains("DSH_PROVIDER_API"), "{error}");
}

#[test]
fn the_configured_api_wins_over_keys_and_the_flag_over_everything() {
    let home = home_with("[provider]\napi = \"anthropic\"\nthinking_budget_tokens = 4096\n");
    let settings = load(home.path(), &[("DEEPSEEK_API_KEY", "ds")]).unwrap();
    assert_eq!(settings.api, ProviderApi::Anthropic);
    assert_eq!(settings.origins.api, SettingOrigin::ConfigFile);
    assert_eq!(settings.thinking_budget_tokens, Some(4096));
    assert_eq!(settings.api_key, None, "the Anthropic key is not set");

    let text = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    let flagged = ProviderSettings::resolve(
        &home.path().join("config.toml"),
        Some(&text),
        &|_| None,
        Some(ProviderApi::Chat),
    )
    .unwrap();
    assert_eq!(flagged.api, ProviderApi::Chat);
    assert_eq!(flagged.origins.api.to_string(), "--provider-api");

    let bad = home_with("[provider]\napi = \"soap\"\n");
    let error = load(bad.path(), &[]).unwrap_err();
    assert!(error.to_string().contains("[provider] api"), "{error}");
    let low = home_with("[provider]\nthinking_budget_tokens = 10\n");
    assert!(load(low.path(), &[]).is_err());
}

#[test]
fn the_reply_limit_is_16_mib_unless_max_reply_mib_says_otherwise() {
    let home = tempfile::tempdir().unwrap();
    assert_eq!(
        load(home.path(), &[]).unwrap().max_reply_bytes,
        16 * 1024 * 1024
    );
    let home = home_with("[provider]\nmax_reply_mib = 64\n");
    assert_eq!(
        load(home.path(), &[]).unwrap().max_reply_bytes,
        64 * 1024 * 1024
    );
    let home = home_with("[provider]\nmax_reply_mib = 0\n");
    let message = load(home.path(), &[]).unwrap_err().to_string();
    assert!(
        message.contains("[provider] max_reply_mib: must be at least 1"),
        "{message}"
    );
}
