//! Hooks an application registered through the Claude Agent SDK
//! (`options.hooks`): Claude Code's "callback" hooks.
//!
//! The SDK sends its registrations in `initialize` (event → matcher groups →
//! callback ids) and answers each firing over stdio (`hook_callback`). For
//! the bridge such a hook is one more handler of the Claude Code
//! configuration: it is selected by the same matchers, gets the same stdin
//! payload, and its answer (the hook JSON output, as a command would print
//! it) is read by the same interpreter and merged in the same waterfall as
//! the settings hooks beside it. Only the transport differs — the
//! [`HookCallbacks`] the front end supplies — and the log says so:
//! `hook/invoked.dialect` is `sdk`.
//!
//! As in Claude Code 2.1.328, SDK hooks come before the settings hooks of
//! the same event, and a `SessionStart` callback is accepted but never
//! called.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dsh_hook_runner::{Captured, HookExit, HookRun};
use dsh_protocol::ExactJson;
use dsh_seams::CancellationToken;

pub use crate::config::HookCallbacks;
use crate::config::SdkCallbacks;
use crate::config::{ClaudeConfig, HandlerKind, HandlerStatus, HookHandler, SettingsSource};
use crate::events::HookEvent;
use crate::matcher::Matcher;

/// One callback the application registered.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkHook {
    /// The event name as sent (`PreToolUse`).
    pub event: String,
    /// The tool-name matcher; `None`: every subject.
    pub matcher: Option<String>,
    /// The callback id (`hook_0`).
    pub callback_id: String,
    /// Its timeout, when the application set one.
    pub timeout: Option<Duration>,
}

/// An application's SDK hooks and where their firings go, as a front end
/// hands them to session assembly.
#[derive(Clone)]
pub struct SdkHookSet {
    /// The registrations, in the order sent.
    pub hooks: Vec<SdkHook>,
    /// The control-protocol side that answers them.
    pub transport: Arc<dyn HookCallbacks>,
}

impl std::fmt::Debug for SdkHookSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SdkHookSet")
            .field("hooks", &self.hooks)
            .finish_non_exhaustive()
    }
}

/// The origin recorded for an SDK hook: `sdk#hooks.PreToolUse.hook_0`.
fn origin(event: &str, callback_id: &str) -> String {
    format!("sdk#hooks.{event}.{callback_id}")
}

impl ClaudeConfig {
    /// Adds the application's SDK hooks ahead of the settings hooks; their
    /// firings go to `transport`. Returns notices for registrations dsh
    /// accepts but never calls (unknown events, `SessionStart`).
    pub fn add_sdk_hooks(
        &mut self,
        hooks: &[SdkHook],
        transport: Arc<dyn HookCallbacks>,
    ) -> Result<Vec<String>, crate::ConfigError> {
        let mut notices = Vec::new();
        let mut added = Vec::with_capacity(hooks.len());
        for hook in hooks {
            let event = HookEvent::parse(&hook.event);
            let status = match event {
                None => {
                    notices.push(format!(
                        "SDK hook {} is registered for unknown event `{}`; never called",
                        hook.callback_id, hook.event
                    ));
                    HandlerStatus::unsupported(format!("unknown event {}", hook.event))
                }
                Some(HookEvent::SessionStart) => {
                    notices.push(format!(
                        "SDK hook {} (SessionStart) is accepted and, as in Claude Code, never called",
                        hook.callback_id
                    ));
                    HandlerStatus::unsupported(
                        "SessionStart SDK callbacks are never called (Claude Code 2.1.328)"
                            .to_owned(),
                    )
                }
                Some(_) => HandlerStatus::Active,
            };
            let compiled = if event.is_some_and(HookEvent::supports_matcher) {
                Matcher::compile(hook.matcher.as_deref()).map_err(|error| {
                    crate::ConfigError::InvalidMatcher {
                        path: PathBuf::from("sdk"),
                        event: hook.event.clone(),
                        pattern: error.pattern,
                        message: error.message,
                    }
                })?
            } else {
                Matcher::All
            };
            added.push(HookHandler {
                event_name: hook.event.clone(),
                event,
                matcher: hook.matcher.clone(),
                compiled,
                kind: HandlerKind::Callback {
                    callback_id: hook.callback_id.clone(),
                },
                timeout: hook.timeout,
                if_rule: None,
                // The application's own, as a `--settings` file is the user's.
                source: SettingsSource::Flag,
                file: PathBuf::from("sdk"),
                origin: origin(&hook.event, &hook.callback_id),
                status,
                plugin: None,
                agent: None,
            });
        }
        added.append(&mut self.handlers);
        self.handlers = added;
        self.sdk = Some(SdkCallbacks(transport));
        Ok(notices)
    }
}

/// Fires one SDK hook and turns the answer into a run the Claude Code
/// interpreter reads: an answer is stdout after exit 0 (a command hook
/// that printed that JSON); no answer is a failure with the reason on
/// stderr (a non-blocking error, as a command's exit 1).
pub(crate) async fn run_callback(
    transport: Arc<dyn HookCallbacks>,
    callback_id: String,
    input: ExactJson,
    tool_use_id: String,
    timeout: Duration,
    cancel: CancellationToken,
) -> HookRun {
    let started = Instant::now();
    let call = transport.call(&callback_id, &input, &tool_use_id);
    let (exit, stdout, stderr) = tokio::select! {
        answer = tokio::time::timeout(timeout, call) => match answer {
            Ok(Ok(output)) => (HookExit::Exited(0), output.to_string(), String::new()),
            Ok(Err(why)) => (HookExit::Exited(1), String::new(), why),
            Err(_) => (HookExit::TimedOut, String::new(), String::new()),
        },
        () = cancel.cancelled() => (HookExit::Cancelled, String::new(), String::new()),
    };
    HookRun {
        exit,
        stdout: captured(stdout),
        stderr: captured(stderr),
        duration: started.elapsed(),
        pid: None,
        timeout,
        record_limit: dsh_hook_runner::RunnerConfig::DEFAULT_CAPTURE_LIMIT,
    }
}

fn captured(text: String) -> Captured {
    let bytes = text.into_bytes();
    Captured {
        total_bytes: bytes.len() as u64,
        bytes,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::events::HookEvent;
    use serde_json::json;

    struct Never;

    #[async_trait::async_trait]
    impl HookCallbacks for Never {
        async fn call(&self, _: &str, _: &ExactJson, _: &str) -> Result<serde_json::Value, String> {
            Err("not in this test".to_owned())
        }
    }

    fn hook(event: &str, matcher: Option<&str>, id: &str) -> SdkHook {
        SdkHook {
            event: event.to_owned(),
            matcher: matcher.map(str::to_owned),
            callback_id: id.to_owned(),
            timeout: None,
        }
    }

    #[test]
    fn sdk_hooks_come_before_settings_hooks_and_session_start_is_never_called() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(project.path().join(".claude")).unwrap();
        std::fs::write(
            project.path().join(".claude/settings.json"),
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]}}).to_string(),
        )
        .unwrap();
        let discovery =
            crate::ClaudeDiscovery::new(project.path(), home.path(), &home.path().join(".dsh"));
        let mut config = crate::load(&discovery).unwrap();
        let notices = config
            .add_sdk_hooks(
                &[
                    hook("PreToolUse", Some("Bash"), "hook_0"),
                    hook("SessionStart", None, "hook_1"),
                    hook("NoSuchEvent", None, "hook_2"),
                ],
                Arc::new(Never),
            )
            .unwrap();
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices[0].contains("never called"), "{notices:?}");
        let selected = config.select(HookEvent::PreToolUse, Some("Bash"));
        let commands: Vec<String> = selected.iter().map(|h| h.command_text()).collect();
        assert_eq!(commands, ["sdk:hook_0", "true"]);
        assert_eq!(selected[0].origin, "sdk#hooks.PreToolUse.hook_0");
        assert!(selected[0].is_user_installed());
        assert!(
            config
                .select(HookEvent::PreToolUse, Some("Write"))
                .is_empty()
        );
        assert!(config.select(HookEvent::SessionStart, None).is_empty());
    }
}
