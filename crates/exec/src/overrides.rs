//! `-c key=value`: the Codex configuration overrides `dsh exec` maps onto
//! a dsh session, those it accepts without effect (each named on stderr
//! with the reason), and the refusal of everything else.
//!
//! A value is TOML (`approval_policy="never"`, `sandbox_workspace_write.network_access=true`);
//! one that does not parse as TOML is taken as a plain string, as Codex does.

use serde::Deserialize;
use serde::de::IgnoredAny;

use crate::args::SandboxMode;

/// What the overrides asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `model`.
    pub model: Option<String>,
    /// `model_provider = "openai"`: the Responses API.
    pub provider_api: Option<dsh_provider::ProviderApi>,
    /// `sandbox_mode`.
    pub sandbox: Option<SandboxMode>,
    /// `approval_policy` (`never`, `on-request`, `on-failure`: exec asks nobody).
    pub approval_policy: Option<String>,
    /// `openai_base_url` (the Codex SDK's `baseUrl`).
    pub base_url: Option<String>,
    /// Overrides accepted without effect, each with the reason (for stderr).
    pub ignored: Vec<String>,
}

/// An override dsh refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// Not `key=value`.
    #[error("-c {0}: an override is key=value (a TOML value), e.g. -c model=\"gpt-5\"")]
    Malformed(String),
    /// A key dsh does not know.
    #[error(
        "-c {key}: dsh exec does not know this Codex setting; it understands {}",
        KNOWN.join(", ")
    )]
    Unknown {
        /// The key.
        key: String,
    },
    /// A known key with a value dsh cannot honour.
    #[error("-c {key}={value}: {why}")]
    Refused {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// Why it is refused.
        why: String,
    },
}

/// The keys dsh exec understands.
pub const KNOWN: &[&str] = &[
    "model",
    "model_provider",
    "approval_policy",
    "sandbox_mode",
    "openai_base_url",
    "model_reasoning_effort",
    "model_reasoning_summary",
    "model_verbosity",
    "web_search",
    "sandbox_workspace_write.*",
];

/// The string `raw` gives: a TOML string's text, or `raw` itself when it
/// is not TOML; `None` for a TOML value of another type (every key dsh
/// reads takes a string).
fn toml_string(raw: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Line<T> {
        v: T,
    }
    let line = format!("v = {raw}");
    if toml::from_str::<Line<IgnoredAny>>(&line).is_err() {
        return Some(raw.to_owned());
    }
    toml::from_str::<Line<String>>(&line)
        .ok()
        .map(|line| line.v)
}

fn string(key: &str, raw: &str, value: Option<&str>) -> Result<String, OverrideError> {
    value
        .map(str::to_owned)
        .ok_or_else(|| OverrideError::Refused {
            key: key.to_owned(),
            value: raw.to_owned(),
            why: "a string is expected".to_owned(),
        })
}

/// Parses every `-c` argument, in order (a later one wins).
pub fn parse(args: &[String]) -> Result<Overrides, OverrideError> {
    let mut overrides = Overrides::default();
    for arg in args {
        let Some((key, raw)) = arg.split_once('=') else {
            return Err(OverrideError::Malformed(arg.clone()));
        };
        let (key, raw) = (key.trim(), raw.trim());
        if key.is_empty() {
            return Err(OverrideError::Malformed(arg.clone()));
        }
        let value = toml_string(raw);
        let refuse = |why: &str| OverrideError::Refused {
            key: key.to_owned(),
            value: raw.to_owned(),
            why: why.to_owned(),
        };
        match key {
            "model" => overrides.model = Some(string(key, raw, value.as_deref())?),
            "model_provider" => match string(key, raw, value.as_deref())?.as_str() {
                "openai" => overrides.provider_api = Some(dsh_provider::ProviderApi::Responses),
                _ => {
                    return Err(refuse(
                        "dsh has no Codex provider table; `openai` selects the Responses API, \
                         and dsh's own config.toml [provider] (or DSH_BASE_URL, DSH_PROVIDER_API) names any other endpoint",
                    ));
                }
            },
            "approval_policy" => match string(key, raw, value.as_deref())?.as_str() {
                policy @ ("never" | "on-request" | "on-failure") => {
                    overrides.approval_policy = Some(policy.to_owned());
                }
                "untrusted" => {
                    return Err(refuse(
                        "exec asks nobody: it runs with approval policy `never` (Codex rejects `untrusted` too)",
                    ));
                }
                _ => return Err(refuse("expected never, on-request or on-failure")),
            },
            "sandbox_mode" => {
                let name = string(key, raw, value.as_deref())?;
                overrides.sandbox = Some(SandboxMode::parse(&name).ok_or_else(|| {
                    refuse("expected read-only, workspace-write or danger-full-access")
                })?);
            }
            "openai_base_url" => overrides.base_url = Some(string(key, raw, value.as_deref())?),
            "model_reasoning_effort" | "model_reasoning_summary" | "model_verbosity" => {
                overrides.ignored.push(format!(
                    "-c {key}={raw} is ignored: dsh sends no reasoning or verbosity settings to the model"
                ));
            }
            "web_search" => {
                if value.as_deref() != Some("disabled") {
                    overrides.ignored.push(format!(
                        "-c {key}={raw} is ignored: dsh has no web search tool"
                    ));
                }
            }
            _ if key.starts_with("sandbox_workspace_write.") => {
                overrides.ignored.push(format!(
                    "-c {key}={raw} is ignored: it configures the workspace-write sandbox, which dsh does not run"
                ));
            }
            _ => {
                return Err(OverrideError::Unknown {
                    key: key.to_owned(),
                });
            }
        }
    }
    Ok(overrides)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_sdk_overrides_parse_as_toml() {
        let parsed = parse(&args(&[
            "approval_policy=\"never\"",
            "model=\"gpt-5\"",
            "openai_base_url=\"http://127.0.0.1:9/v1\"",
            "sandbox_mode=\"danger-full-access\"",
            "model_provider=openai",
            "web_search=\"disabled\"",
        ]))
        .unwrap();
        assert_eq!(parsed.approval_policy.as_deref(), Some("never"));
        assert_eq!(parsed.model.as_deref(), Some("gpt-5"));
        assert_eq!(parsed.base_url.as_deref(), Some("http://127.0.0.1:9/v1"));
        assert_eq!(parsed.sandbox, Some(SandboxMode::DangerFullAccess));
        assert_eq!(
            parsed.provider_api,
            Some(dsh_provider::ProviderApi::Responses)
        );
        assert!(parsed.ignored.is_empty(), "{:?}", parsed.ignored);
    }

    #[test]
    fn ignored_settings_say_why() {
        let parsed = parse(&args(&[
            "model_reasoning_effort=\"high\"",
            "sandbox_workspace_write.network_access=true",
            "web_search=\"live\"",
            "web_search=true",
            "model=gpt-5",
        ]))
        .unwrap();
        // Not TOML: the text itself, as Codex takes it.
        assert_eq!(parsed.model.as_deref(), Some("gpt-5"));
        assert_eq!(parsed.ignored.len(), 4);
        assert!(parsed.ignored[3].contains("web_search=true"));
        assert!(
            parsed.ignored[0].contains("no reasoning"),
            "{:?}",
            parsed.ignored
        );
        assert!(parsed.ignored[1].contains("workspace-write"));
        assert!(parsed.ignored[2].contains("no web search"));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_refused_by_name() {
        let unknown = parse(&args(&["shell_environment_policy.inherit=\"all\""])).unwrap_err();
        assert!(
            unknown
                .to_string()
                .starts_with("-c shell_environment_policy.inherit: dsh exec does not know"),
            "{unknown}"
        );
        assert!(unknown.to_string().contains("approval_policy"));
        let untrusted = parse(&args(&["approval_policy=\"untrusted\""])).unwrap_err();
        assert!(untrusted.to_string().contains("asks nobody"), "{untrusted}");
        let sandbox = parse(&args(&["sandbox_mode=\"jail\""])).unwrap_err();
        assert!(
            sandbox.to_string().contains("danger-full-access"),
            "{sandbox}"
        );
        assert_eq!(
            parse(&args(&["model"])).unwrap_err(),
            OverrideError::Malformed("model".to_owned())
        );
        let number = parse(&args(&["model=5"])).unwrap_err();
        assert!(
            number.to_string().contains("a string is expected"),
            "{number}"
        );
    }
}
