//! The lifecycle events: Setup (`--init`, `--maintenance`), CwdChanged
//! (the bash tool's `cd`) and PreModelSwitch/PostModelSwitch (`/model`, a
//! host's `set_model`),
//! and the per-hook `CLAUDE_ENV_FILE` files SessionStart, Setup and
//! CwdChanged hooks write to.

use std::path::PathBuf;

use dsh_seams::{
    CwdChange, ModelSwitch, ModelSwitchDecision, NoticeLevel, SeamContext, SetupTrigger, UserNotice,
};
use serde::Deserialize;

use dsh_hooks::{Cx, Flow, Record};

use super::{Fired, Firing, answer};
use crate::config::ClaudeConfig;
use crate::dialect::{Claude, event_source};
use crate::envfile::{EnvFileNames, parse_env_file};
use crate::events::HookEvent;
use crate::output::{Effect, ParsedOutput};
use crate::payload;

/// The `CLAUDE_ENV_FILE` of each hook of one firing:
/// `<state_dir>/session-env/<sid>/<prefix>-hook-<i>.sh`, as Claude Code names
/// them (`sessionstart`, `setup`, `cwdchanged`). Stale files of an earlier
/// firing are removed first; after the hooks ran, their exports reach later
/// bash calls.
pub(super) struct EnvFiles {
    names: EnvFileNames,
    count: usize,
}

impl EnvFiles {
    pub(super) fn prepare(config: &ClaudeConfig, ctx: &SeamContext, prefix: &'static str) -> Self {
        let dir = config
            .discovery
            .state_dir
            .join("session-env")
            .join(&ctx.session.session_id);
        if let Err(error) = fs_err::create_dir_all(&dir) {
            tracing::warn!(%error, "cannot create CLAUDE_ENV_FILE directory");
        }
        let files = EnvFiles {
            names: EnvFileNames { dir, prefix },
            count: config.handlers().len(),
        };
        for i in 0..files.count {
            let _ = fs_err::remove_file(files.names.path(i));
        }
        files
    }

    /// How the files are named (each hook's `CLAUDE_ENV_FILE`).
    pub(super) fn names(&self) -> &EnvFileNames {
        &self.names
    }

    /// Applies what the hooks wrote to the session's environment; lines
    /// that are not simple assignments are reported, not run.
    pub(super) fn apply(&self, ctx: &SeamContext, event: HookEvent) {
        for i in 0..self.count {
            let file = self.names.path(i);
            let Ok(text) = fs_err::read_to_string(&file) else {
                continue;
            };
            let parsed = parse_env_file(&text);
            for (name, value) in parsed.vars {
                ctx.session.env.set(name, value);
            }
            for (line, text) in parsed.skipped {
                ctx.sink.tell_user(UserNotice {
                    source: event_source(event),
                    text: format!(
                        "CLAUDE_ENV_FILE {}:{line}: not a simple assignment, not applied: {text}",
                        file.display()
                    ),
                    level: NoticeLevel::Warning,
                });
            }
        }
    }
}

/// Setup: matcher on the trigger; hooks may write `CLAUDE_ENV_FILE`.
/// Claude Code 2.1.328 sends a Setup `additionalContext` nowhere in a
/// headless run (`ev_setup_context`), so none is returned.
pub(super) fn setup<'a>(cx: Cx<'_, Claude>, trigger: SetupTrigger) -> Flow<'a, Claude, ()> {
    let common = cx.bridge.common(cx.state, cx.ctx, false);
    let env_files = EnvFiles::prepare(&cx.bridge.config, cx.ctx, "setup");
    let firing = Firing {
        subject: Some(trigger.as_str()),
        source: Some(trigger.as_str()),
        ..Firing::new(HookEvent::Setup, &payload::setup(&common, trigger.as_str()))
    };
    fire_with_env_files(&cx, &firing, env_files, false)
}

/// CwdChanged: no matcher; hooks may write `CLAUDE_ENV_FILE` (direnv).
pub(super) fn cwd_changed<'a>(cx: Cx<'_, Claude>, change: &'a CwdChange) -> Flow<'a, Claude, ()> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let env_files = EnvFiles::prepare(&cx.bridge.config, cx.ctx, "cwdchanged");
    let firing = Firing::new(
        HookEvent::CwdChanged,
        &payload::cwd_changed(
            &common,
            &change.old.to_string_lossy(),
            &change.new.to_string_lossy(),
        ),
    );
    fire_with_env_files(&cx, &firing, env_files, true)
}

/// Fires `firing` with each hook's `CLAUDE_ENV_FILE`. Once the runs are
/// recorded, what they wrote reaches the session's environment, and (when
/// `watch`) the `watchPaths` they answered replace the paths an earlier
/// CwdChanged or FileChanged asked for (PROTOCOL.md).
pub(super) fn fire_with_env_files<'a>(
    cx: &Cx<'_, Claude>,
    firing: &Firing<'_>,
    env_files: EnvFiles,
    watch: bool,
) -> Flow<'a, Claude, ()> {
    let event = firing.event;
    let fire = Claude::fire_with(cx, firing, Some(env_files.names()));
    Flow::fire(fire, move |_, fired| {
        let paths = if watch { watch_paths(fired) } else { None };
        let applied = Flow::later(move |cx| {
            env_files.apply(cx.ctx, event);
            if let Some(paths) = paths {
                cx.ctx.session.env.set_dynamic_watch(paths);
            }
            Flow::Done(())
        });
        (Record::AsRead, applied)
    })
}

/// The `hookSpecificOutput` fields the lifecycle events read.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LifecycleOutput {
    #[serde(default)]
    hook_specific_output: Option<LifecycleSpecific>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LifecycleSpecific {
    /// MessageDisplay: the text to show instead.
    display_content: Option<String>,
    /// SessionStart, CwdChanged, FileChanged: files to watch.
    watch_paths: Option<Vec<PathBuf>>,
}

/// A hook's `hookSpecificOutput`, when its output was valid JSON of that
/// shape.
fn specific(fired: &Fired) -> Option<LifecycleSpecific> {
    let ParsedOutput::Json(json) = &fired.reading.parsed else {
        return None;
    };
    LifecycleOutput::deserialize(json)
        .ok()?
        .hook_specific_output
}

/// A MessageDisplay hook's `displayContent`, when its output was valid.
pub(super) fn display_content(fired: &Fired) -> Option<String> {
    specific(fired)?.display_content
}

/// The `hookSpecificOutput.watchPaths` of the hooks of one firing, in
/// configuration order; `None` when no hook gave any.
pub(super) fn watch_paths(fired: &[Fired]) -> Option<Vec<PathBuf>> {
    let mut found: Option<Vec<PathBuf>> = None;
    for paths in fired.iter().filter_map(|f| specific(f)?.watch_paths) {
        found.get_or_insert_with(Vec::new).extend(paths);
    }
    found
}

/// Claude Code's prompt-cache lifetime (`cache_ttl: "5m"`).
const CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(300);

/// PreModelSwitch (matcher on the requested model): a `deny` (or `ask`,
/// with no one to ask) or an exit 2 refuses the switch; the first in
/// configuration order gives the reason.
pub(super) fn before_model_switch<'a>(
    mut cx: Cx<'_, Claude>,
    switch: &'a ModelSwitch,
) -> Flow<'a, Claude, ModelSwitchDecision> {
    let firing = switch_firing(&mut cx, switch, HookEvent::PreModelSwitch);
    answer(&cx, &firing, |fired| {
        fired
            .iter()
            .find_map(|f| match &f.reading.effect {
                Effect::Deny { text } => Some(text.clone()),
                Effect::None
                | Effect::Allow { .. }
                | Effect::Ask { .. }
                | Effect::Defer { .. }
                | Effect::Block { .. } => None,
            })
            .map_or(ModelSwitchDecision::Allow, |reason| {
                ModelSwitchDecision::Deny { reason }
            })
    })
}

/// PostModelSwitch: observation only.
pub(super) fn model_switched<'a>(
    mut cx: Cx<'_, Claude>,
    switch: &'a ModelSwitch,
) -> Flow<'a, Claude, ()> {
    let firing = switch_firing(&mut cx, switch, HookEvent::PostModelSwitch);
    answer(&cx, &firing, |_| ())
}

fn switch_firing<'s>(
    cx: &mut Cx<'_, Claude>,
    switch: &'s ModelSwitch,
    event: HookEvent,
) -> Firing<'s> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let facts = payload::SwitchFacts {
        from: &switch.from,
        to: &switch.to,
        requested: &switch.requested,
        source: switch.source.as_str(),
        context_tokens: switch
            .last_usage
            .map_or(0, |usage| usage.input_tokens + usage.output_tokens),
        cache_warm: switch
            .since_last_response
            .is_some_and(|since| since < CACHE_TTL),
    };
    Firing {
        subject: Some(&switch.requested),
        ..Firing::new(
            event,
            &payload::model_switch(&common, event.as_str(), &facts),
        )
    }
}
