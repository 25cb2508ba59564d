//! Claude Code's print-mode command line: `-p/--print` as a switch, the
//! output format and the flags that shape a `claude -p` run. The flags
//! that change the session itself (`--max-turns`, `--add-dir`,
//! `--dangerously-skip-permissions`, `--strict-mcp-config`,
//! `--permission-mode`, `--allowedTools`, `--model`, …) are dsh-core's
//! `SessionFlags`, shared by every front end.

use clap::ValueEnum;

/// What print mode writes on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// The final assistant text.
    #[default]
    Text,
    /// One `result` object (with `--verbose`: a JSON array of every message).
    Json,
    /// Claude Code's messages, one JSON object per line (needs `--verbose`).
    StreamJson,
}

/// Why a print-mode command line is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FlagError {
    /// Claude Code's own refusal, word for word.
    #[error("When using --print, --output-format=stream-json requires --verbose")]
    StreamJsonNeedsVerbose,
    /// A print-mode flag without `-p`.
    #[error("{0} only applies with -p/--print")]
    NeedsPrint(&'static str),
    /// `--include-partial-messages` outside stream-json.
    #[error("--include-partial-messages only applies with --output-format=stream-json")]
    PartialNeedsStreamJson,
    /// `--session-id` is not a UUID.
    #[error("Invalid session ID. Must be a valid UUID.")]
    BadSessionId,
    /// `--fork-session` without a session to fork.
    #[error("--fork-session needs --resume ID or --continue")]
    ForkNeedsResume,
    /// `--session-id` together with a resumed session and no fork.
    #[error(
        "--session-id can only be used with --continue or --resume if --fork-session is also specified"
    )]
    SessionIdWithResume,
    /// `--setting-sources` with an unknown source.
    #[error("--setting-sources: unknown source `{0}` (expected user, project or local)")]
    BadSettingSource(String),
    /// `--setting-sources` naming a subset dsh cannot load alone.
    #[error(
        "--setting-sources {0}: dsh always reads the user, project and local settings; it cannot leave some out"
    )]
    SettingSourcesSubset(String),
}

/// The print-mode flags (flattened into dsh's top-level command line).
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct PrintFlags {
    /// Print the response and exit (`claude -p`): the prompt is the
    /// positional argument, or standard input when there is none.
    #[arg(short = 'p', long = "print")]
    pub print: bool,
    /// What `-p` prints: the final text, one result object, or Claude Code's
    /// messages as JSON lines (`stream-json` needs `--verbose`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t)]
    pub output_format: OutputFormat,
    /// With `--output-format stream-json`: the model's reply as it streams,
    /// as `stream_event` messages.
    #[arg(long)]
    pub include_partial_messages: bool,
    /// Every message: required by `stream-json`; `json` prints them all as
    /// an array; `text` names each tool call and result on stderr. In the
    /// terminal: every hook run and hook context is shown (Ctrl-O toggles).
    #[arg(long)]
    pub verbose: bool,
    /// Replace dsh's base system prompt (project instructions still follow).
    #[arg(long, value_name = "PROMPT")]
    pub system_prompt: Option<String>,
    /// Append this text to the system prompt.
    #[arg(long, value_name = "PROMPT")]
    pub append_system_prompt: Option<String>,
    /// Use this UUID as the new session's id.
    #[arg(long, value_name = "UUID")]
    pub session_id: Option<String>,
    /// With --resume/--continue: continue in a new session (a new id, a copy
    /// of the history) instead of appending to the old one.
    #[arg(long)]
    pub fork_session: bool,
    /// When the model is overloaded or failing (HTTP 5xx), ask this model instead.
    #[arg(long, value_name = "MODEL")]
    pub fallback_model: Option<String>,
    /// Which settings to load, comma-separated: user, project, local (dsh
    /// reads all three; naming fewer is refused).
    #[arg(long, value_name = "SOURCES")]
    pub setting_sources: Option<String>,
}

impl PrintFlags {
    /// Checks the combination, as Claude Code does. `resuming`: `--resume`
    /// or `--continue` was given.
    pub fn check(&self, resuming: bool) -> Result<(), FlagError> {
        if !self.print {
            let print_only = [
                (self.output_format != OutputFormat::Text, "--output-format"),
                (self.include_partial_messages, "--include-partial-messages"),
                (self.fallback_model.is_some(), "--fallback-model"),
            ];
            if let Some((_, flag)) = print_only.iter().find(|(given, _)| *given) {
                return Err(FlagError::NeedsPrint(flag));
            }
        }
        if self.print && self.output_format == OutputFormat::StreamJson && !self.verbose {
            return Err(FlagError::StreamJsonNeedsVerbose);
        }
        if self.include_partial_messages && self.output_format != OutputFormat::StreamJson {
            return Err(FlagError::PartialNeedsStreamJson);
        }
        if let Some(id) = &self.session_id {
            if uuid::Uuid::parse_str(id).is_err() {
                return Err(FlagError::BadSessionId);
            }
            if resuming && !self.fork_session {
                return Err(FlagError::SessionIdWithResume);
            }
        }
        if self.fork_session && !resuming {
            return Err(FlagError::ForkNeedsResume);
        }
        if let Some(sources) = &self.setting_sources {
            let mut named = Vec::new();
            for source in sources.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if !matches!(source, "user" | "project" | "local") {
                    return Err(FlagError::BadSettingSource(source.to_owned()));
                }
                named.push(source);
            }
            if !["user", "project", "local"]
                .iter()
                .all(|source| named.contains(source))
            {
                return Err(FlagError::SettingSourcesSubset(sources.clone()));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn print() -> PrintFlags {
        PrintFlags {
            print: true,
            ..PrintFlags::default()
        }
    }

    #[test]
    fn stream_json_needs_verbose_with_claude_codes_words() {
        let flags = PrintFlags {
            output_format: OutputFormat::StreamJson,
            ..print()
        };
        assert_eq!(flags.check(false), Err(FlagError::StreamJsonNeedsVerbose));
        assert_eq!(
            FlagError::StreamJsonNeedsVerbose.to_string(),
            "When using --print, --output-format=stream-json requires --verbose"
        );
        let verbose = PrintFlags {
            verbose: true,
            ..flags
        };
        assert_eq!(verbose.check(false), Ok(()));
    }

    #[test]
    fn session_flags_are_checked() {
        let bad = PrintFlags {
            session_id: Some("nope".into()),
            ..print()
        };
        assert_eq!(bad.check(false), Err(FlagError::BadSessionId));
        let fork = PrintFlags {
            fork_session: true,
            ..print()
        };
        assert_eq!(fork.check(false), Err(FlagError::ForkNeedsResume));
        assert_eq!(fork.check(true), Ok(()));
        let all = PrintFlags {
            setting_sources: Some("user,project,local".into()),
            ..print()
        };
        assert_eq!(all.check(false), Ok(()));
        let some = PrintFlags {
            setting_sources: Some("project".into()),
            ..print()
        };
        assert!(matches!(
            some.check(false),
            Err(FlagError::SettingSourcesSubset(_))
        ));
        let json_without_print = PrintFlags {
            output_format: OutputFormat::Json,
            ..PrintFlags::default()
        };
        assert_eq!(
            json_without_print.check(false),
            Err(FlagError::NeedsPrint("--output-format"))
        );
    }
}
