//! The watched-file events: ConfigChange (a settings file changed during
//! the session) and FileChanged (a file the FileChanged matcher names, or a
//! hook's `watchPaths` asked for), and the watch list those hooks build.

use dsh_seams::{ConfigChange, ConfigDecision, FileChange, SeamContext};

use dsh_hooks::{Cx, Flow};

use super::lifecycle::{EnvFiles, fire_with_env_files};
use super::{Firing, answer};
use crate::config::HandlerStatus;
use crate::dialect::Claude;
use crate::events::HookEvent;
use crate::output::Effect;
use crate::payload;

/// Asks the session to watch what the FileChanged matchers name: the
/// matcher is the watch list too, split on `|`, basenames in the
/// current working directory (PROTOCOL.md).
pub(super) fn watch_matcher_names(claude: &Claude, ctx: &SeamContext) {
    let names: Vec<String> = claude
        .config
        .handlers()
        .iter()
        .filter(|h| h.event == Some(HookEvent::FileChanged))
        .filter(|h| matches!(h.status, HandlerStatus::Active))
        .filter_map(|h| h.matcher.as_deref())
        .flat_map(|m| m.split('|'))
        .map(str::trim)
        .filter(|name| !name.is_empty() && *name != "*" && !name.contains('/'))
        .map(str::to_owned)
        .collect();
    ctx.session.env.watch_names(names);
}

/// A settings change is applied: the merged settings `env` is read
/// again (hooks and the bash tool see it from now on). The hooks
/// themselves are not: the session keeps the ones trust was decided on.
pub(super) fn config_applied<'a>(
    cx: Cx<'_, Claude>,
    change: &'a ConfigChange,
) -> Flow<'a, Claude, ()> {
    let ctx = cx.ctx;
    let mut discovery = cx.bridge.config.discovery.clone();
    // A fresh reader: the session's memoizes what it read at start-up.
    discovery.files = dsh_files::ConfigFiles::default();
    match crate::config::load_with_options(&discovery, cx.bridge.config.options.clone()) {
        Ok(config) => {
            for (name, value) in &config.settings_env {
                ctx.session.env.set(name.clone(), value.clone());
            }
            cx.state.settings_env = Some(config.settings_env);
        }
        Err(error) => {
            tracing::warn!(
                %error,
                file = %change.path.display(),
                "changed settings not applied"
            );
        }
    }
    Flow::Done(())
}

/// ConfigChange: matcher on the source; an exit 2 or a `decision:
/// "block"` keeps the old settings (`ev_config_change_block`).
pub(super) fn config_change<'a>(
    cx: Cx<'_, Claude>,
    change: &'a ConfigChange,
) -> Flow<'a, Claude, ConfigDecision> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let source = change.source.as_str();
    let path = change.path.to_string_lossy();
    let firing = Firing {
        subject: Some(source),
        source: Some(source),
        ..Firing::new(
            HookEvent::ConfigChange,
            &payload::config_change(&common, source, &path),
        )
    };
    answer(&cx, &firing, |fired| {
        fired
            .iter()
            .find_map(|f| match &f.reading.effect {
                Effect::Block { text } | Effect::Deny { text } => Some(text.clone()),
                Effect::None | Effect::Allow { .. } | Effect::Ask { .. } | Effect::Defer { .. } => {
                    None
                }
            })
            .map_or(ConfigDecision::Apply, |reason| ConfigDecision::Keep {
                reason,
            })
    })
}

/// FileChanged: matcher on the file's basename; hooks may write
/// `CLAUDE_ENV_FILE` and answer `watchPaths` (replacing the paths an
/// earlier CwdChanged or FileChanged asked for).
pub(super) fn file_changed<'a>(cx: Cx<'_, Claude>, change: &'a FileChange) -> Flow<'a, Claude, ()> {
    let common = cx.bridge.common(cx.state, cx.ctx, true);
    let path = change.path.to_string_lossy();
    let name = change
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let env_files = EnvFiles::prepare(&cx.bridge.config, cx.ctx, "filechanged");
    let firing = Firing {
        subject: Some(&name),
        ..Firing::new(
            HookEvent::FileChanged,
            &payload::file_changed(&common, &path, change.kind.as_str()),
        )
    };
    fire_with_env_files(&cx, &firing, env_files, true)
}
