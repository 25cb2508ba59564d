//! One hook handler of a settings file, read the way Claude Code reads it
//! from its [`HandlerWire`]: a key of the wrong type is skipped (or
//! reported) rather than failing the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{CommandForm, ConfigError, HandlerKind};
use crate::output::wire::Field;
use crate::settings_wire::HandlerWire;

/// A handler read: what it runs, its timeout, its `if` rule.
pub(super) type ParsedHandler = (HandlerKind, Option<Duration>, Option<String>);

/// The handler's `timeout`: absent or `null` is the default; anything but a
/// positive finite number is noted and defaulted; a number no deadline can
/// hold is an error.
fn timeout_of(
    timeout: &Field<serde_json::Number>,
    file: &Path,
    field: &str,
    origin: &str,
    notices: &mut Vec<String>,
) -> Result<Option<Duration>, ConfigError> {
    let value = match timeout {
        Field::Absent => return Ok(None),
        Field::Invalid { .. } if timeout.is_null() => return Ok(None),
        Field::Invalid { written, .. } => {
            notices.push(format!(
                "{origin}.timeout is not a positive number of seconds ({written}); default used"
            ));
            return Ok(None);
        }
        Field::Valid(value) => value,
    };
    match value.as_f64() {
        // The checked conversion: a finite positive number can still be
        // too large for a `Duration` (e.g. `1e20`).
        Some(secs) if secs.is_finite() && secs > 0.0 => match Duration::try_from_secs_f64(secs) {
            Ok(timeout) => Ok(Some(timeout)),
            Err(_) => Err(ConfigError::InvalidTimeout {
                path: file.to_owned(),
                field: format!("{field}.timeout"),
                value: value.to_string(),
            }),
        },
        _ => {
            notices.push(format!(
                "{origin}.timeout is not a positive number of seconds ({value}); default used"
            ));
            Ok(None)
        }
    }
}

/// Reads one handler entry; `Ok(None)` when it is skipped (with a notice).
pub(super) fn parse_handler(
    raw: &Field<HandlerWire>,
    file: &Path,
    field: &str,
    notices: &mut Vec<String>,
) -> Result<Option<ParsedHandler>, ConfigError> {
    let origin = format!("{}#{field}", file.display());
    let Some(wire) = raw.valid() else {
        notices.push(format!("{origin} is not an object; ignored"));
        return Ok(None);
    };
    let timeout = timeout_of(&wire.timeout, file, field, &origin, notices)?;
    let if_rule = wire.if_rule.as_str().map(str::to_owned);
    let kind = match wire.kind.as_str().unwrap_or("") {
        "command" => {
            let Some(command) = wire.command.as_str() else {
                notices.push(format!("{origin} has no `command` string; ignored"));
                return Ok(None);
            };
            let is_async =
                wire.is_async.valid() == Some(&true) || wire.async_rewake.valid() == Some(&true);
            let form = match (wire.args.valid(), wire.shell.as_str()) {
                (Some(args), _) => CommandForm::Exec {
                    program: command.to_owned(),
                    // A non-string argument is passed as its JSON text.
                    args: args
                        .iter()
                        .map(|arg| arg.as_str().or(arg.written()).unwrap_or("").to_owned())
                        .collect(),
                },
                (None, Some("powershell")) => {
                    return Ok(Some((
                        HandlerKind::Unsupported {
                            kind: "command with shell=powershell".to_owned(),
                        },
                        timeout,
                        if_rule,
                    )));
                }
                (None, Some("bash")) => CommandForm::Shell {
                    shell: PathBuf::from("/bin/bash"),
                    command: command.to_owned(),
                },
                (None, _) => CommandForm::Shell {
                    shell: PathBuf::from("/bin/sh"),
                    command: command.to_owned(),
                },
            };
            HandlerKind::Command { form, is_async }
        }
        "http" => {
            let Some(url) = wire.url.as_str() else {
                notices.push(format!("{origin} has no `url` string; ignored"));
                return Ok(None);
            };
            let headers = wire
                .headers
                .valid()
                .map(|h| {
                    h.iter()
                        .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_owned())))
                        .collect()
                })
                .unwrap_or_default();
            let allowed_env_vars = wire
                .allowed_env_vars
                .valid()
                .map(|a| {
                    a.iter()
                        .filter_map(Field::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            HandlerKind::Http {
                url: url.to_owned(),
                headers,
                allowed_env_vars,
            }
        }
        "" => {
            notices.push(format!("{origin} has no `type`; ignored"));
            return Ok(None);
        }
        other => HandlerKind::Unsupported {
            kind: other.to_owned(),
        },
    };
    Ok(Some((kind, timeout, if_rule)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(raw: &str) -> (Option<ParsedHandler>, Vec<String>) {
        let mut notices = Vec::new();
        let raw: Field<HandlerWire> = serde_json::from_str(raw).unwrap();
        let parsed = parse_handler(
            &raw,
            Path::new("/s.json"),
            "hooks.Stop[0].hooks[0]",
            &mut notices,
        );
        (parsed.unwrap(), notices)
    }

    #[test]
    fn handlers_read_leniently_with_notices() {
        let (parsed, notices) = parse(
            r#"{"type":"command","command":"p","args":[1,"a",null,{"k":true}],"timeout":"5","async":"yes"}"#,
        );
        let (kind, timeout, if_rule) = parsed.unwrap();
        assert_eq!(
            kind,
            HandlerKind::Command {
                form: CommandForm::Exec {
                    program: "p".into(),
                    args: vec![
                        "1".into(),
                        "a".into(),
                        "null".into(),
                        r#"{"k":true}"#.into()
                    ],
                },
                is_async: false,
            }
        );
        assert_eq!((timeout, if_rule), (None, None));
        assert_eq!(
            notices,
            [
                r#"/s.json#hooks.Stop[0].hooks[0].timeout is not a positive number of seconds ("5"); default used"#
            ]
        );
        let (parsed, notices) = parse(
            r#"{"type":"command","command":"c","args":"no","shell":"bash","timeout":null,"asyncRewake":true,"if":"Bash(x)"}"#,
        );
        assert_eq!(
            parsed.unwrap(),
            (
                HandlerKind::Command {
                    form: CommandForm::Shell {
                        shell: PathBuf::from("/bin/bash"),
                        command: "c".into()
                    },
                    is_async: true,
                },
                None,
                Some("Bash(x)".into())
            )
        );
        assert!(notices.is_empty());
        let (parsed, _) =
            parse(r#"{"type":"command","command":"c","shell":"powershell","timeout":1.5}"#);
        assert_eq!(
            parsed.unwrap(),
            (
                HandlerKind::Unsupported {
                    kind: "command with shell=powershell".into()
                },
                Some(Duration::from_millis(1500)),
                None
            )
        );
        let (parsed, _) = parse(
            r#"{"type":"http","url":"http://h","headers":{"A":"1","B":2},"allowedEnvVars":["X",3,"Y"]}"#,
        );
        assert_eq!(
            parsed.unwrap().0,
            HandlerKind::Http {
                url: "http://h".into(),
                headers: [("A".to_owned(), "1".to_owned())].into_iter().collect(),
                allowed_env_vars: vec!["X".into(), "Y".into()],
            }
        );
        for (raw, notice) in [
            (
                "[]",
                "/s.json#hooks.Stop[0].hooks[0] is not an object; ignored",
            ),
            (
                r#"{"type":"command","command":7}"#,
                "/s.json#hooks.Stop[0].hooks[0] has no `command` string; ignored",
            ),
            (
                r#"{"type":"http"}"#,
                "/s.json#hooks.Stop[0].hooks[0] has no `url` string; ignored",
            ),
            (
                r#"{"type":3}"#,
                "/s.json#hooks.Stop[0].hooks[0] has no `type`; ignored",
            ),
        ] {
            let (parsed, notices) = parse(raw);
            assert!(parsed.is_none(), "{raw}");
            assert_eq!(notices, [notice], "{raw}");
        }
        let mut notices = Vec::new();
        let huge: Field<HandlerWire> =
            serde_json::from_str(r#"{"type":"command","command":"c","timeout":1e20}"#).unwrap();
        assert!(matches!(
            parse_handler(&huge, Path::new("/s.json"), "f", &mut notices),
            Err(ConfigError::InvalidTimeout { .. })
        ));
    }
}
