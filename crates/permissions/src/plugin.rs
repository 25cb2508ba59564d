//! The permission model as a pipeline stage: a [`Plugin`] whose
//! `pre_execute` turns a [`Verdict`] into allow / ask / deny.
//!
//! Register it after the hook bridges: the pre-execute waterfall runs in
//! registration order, so PreToolUse hooks fire first (as in Claude Code)
//! and a hook's deny ends the waterfall before the rules are consulted. An
//! ask goes to the approval seam, where the bridges fire PermissionRequest;
//! nobody answering denies it with the verdict's reason.

use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use dsh_seams::{
    PermissionUpdate, Plugin, PreToolDecision, PreToolOutcome, PreToolVerdict, ProposedCall,
    RuleBehavior, RuleValue, Screening, SeamContext, ToolExecution, ToolOutcome, UpdateDestination,
};

use dsh_protocol::{DecidedBy, DeciderKind};

use crate::layer::{Behavior, Source};
use crate::mode::Mode;
use crate::policy::{Decider, DenyHooks, Permissions, PromptSurface, Verdict};
use crate::rule::Rule;
use crate::store;

/// Claude Code's name for a dsh tool, which is what rules are written
/// against; other names (MCP tools) pass through.
pub fn rule_tool_name(dsh_tool: &str) -> &str {
    match dsh_tool {
        "bash" => "Bash",
        "bash_output" => "BashOutput",
        "kill_shell" => "KillShell",
        "read" => "Read",
        "write" => "Write",
        "edit" => "Edit",
        "notebook_edit" => "NotebookEdit",
        "glob" => "Glob",
        "grep" => "Grep",
        "web_fetch" => "WebFetch",
        "task_create" => "TaskCreate",
        "task_get" => "TaskGet",
        "task_update" => "TaskUpdate",
        "task_list" => "TaskList",
        "ask_user_question" => "AskUserQuestion",
        "exit_plan_mode" => "ExitPlanMode",
        "agent" => "Agent",
        other => other,
    }
}

/// The pipeline stage.
pub struct PermissionsPlugin {
    state: Mutex<Permissions>,
    surface: PromptSurface,
    reload: Mutex<Option<Reload>>,
}

impl std::fmt::Debug for PermissionsPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionsPlugin")
            .field("state", &self.state)
            .field("surface", &self.surface)
            .finish_non_exhaustive()
    }
}

/// What re-reading a changed settings file needs: the workspace's trust,
/// checked again each time (`~/.claude.json`, `trust.json`, or the
/// person's answer for this session).
pub type Reload = std::sync::Arc<dyn Fn() -> crate::Trust + Send + Sync>;

impl PermissionsPlugin {
    /// A stage applying `permissions`; `surface` says who can answer asks.
    pub fn new(permissions: Permissions, surface: PromptSurface) -> Self {
        PermissionsPlugin {
            state: Mutex::new(permissions),
            surface,
            reload: Mutex::new(None),
        }
    }

    /// Lets a settings file that changed during the session replace its
    /// layer ([`Plugin::config_applied`]), trust checked again then.
    pub fn set_reload(&self, reload: Reload) {
        *self.reload.lock().unwrap_or_else(PoisonError::into_inner) = Some(reload);
    }

    /// Reads `path` again as the `source` layer and puts it in place of the
    /// old one; the workspace's trust is checked again (a fresh read of
    /// `~/.claude.json` and `trust.json`). Returns why not, when it could
    /// not (the old rules stay).
    pub fn reload_layer(&self, source: Source, path: &std::path::Path) -> Result<(), String> {
        let Some(reload) = self
            .reload
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return Err("this session's permissions are not reloadable".to_owned());
        };
        let layer = store::read_layer(source, path).map_err(|e| e.to_string())?;
        let trust = reload();
        self.with(|p| p.replace_layer(layer, trust));
        Ok(())
    }

    fn with<R>(&self, f: impl FnOnce(&mut Permissions) -> R) -> R {
        // A poisoned lock only means another call panicked mid-decision;
        // the rules themselves are still consistent.
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard)
    }

    /// The current mode (what hook payloads' `permission_mode` must say).
    pub fn mode(&self) -> Mode {
        self.with(|p| p.mode())
    }

    /// Adds a session rule (PermissionRequest `updatedPermissions`).
    pub fn add_session_rule(&self, rule: Rule, behavior: Behavior) {
        self.with(|p| p.add_session_rule(rule, behavior));
    }

    /// Switches mode (an accepted `setMode` suggestion).
    pub fn set_mode(&self, mode: Mode) {
        self.with(|p| p.set_mode(mode));
    }

    /// The working directories: the project and `additionalDirectories`.
    pub fn working_dirs(&self) -> Vec<std::path::PathBuf> {
        self.with(|p| p.working_dirs().to_vec())
    }

    /// Every rule in force, with its source (`dsh status`).
    pub fn rules(&self) -> Vec<crate::SourcedRule> {
        self.with(|p| p.rules().to_vec())
    }

    /// Project `allow` rules dropped because the workspace is not trusted.
    pub fn dropped_allow(&self) -> Vec<crate::SourcedRule> {
        self.with(|p| p.dropped_allow().to_vec())
    }

    /// Relative paths in the next calls' inputs start where the session's
    /// working directory is now (the bash tool keeps its `cd`).
    fn follow_dir(&self, ctx: &SeamContext) {
        let dir = ctx.session.env.work_dir();
        self.with(|p| p.set_input_base(dir));
    }

    /// The verdict for a call, by dsh tool name.
    pub fn verdict(&self, dsh_tool: &str, arguments: &serde_json::Value) -> Verdict {
        self.with(|p| p.decide(rule_tool_name(dsh_tool), arguments))
    }
}

fn behavior_of(behavior: RuleBehavior) -> Behavior {
    match behavior {
        RuleBehavior::Allow => Behavior::Allow,
        RuleBehavior::Deny => Behavior::Deny,
        RuleBehavior::Ask => Behavior::Ask,
    }
}

impl PermissionsPlugin {
    /// Applies one accepted permission change. Rules always take effect for
    /// the session; `localSettings` rules are also written to
    /// `.claude/settings.local.json` with the library writer, as Claude
    /// Code does. Other file destinations, and replacing or removing rules,
    /// act on the session's rules only (dsh never rewrites a settings file
    /// the user keeps by hand). Returns what could not be applied.
    pub fn apply_update(&self, update: &PermissionUpdate) -> Vec<String> {
        let mut problems = Vec::new();
        match update {
            PermissionUpdate::AddRules {
                rules,
                behavior,
                destination,
            } => {
                for value in rules {
                    let raw = value.to_rule_string();
                    match Rule::parse(&raw) {
                        Ok(rule) => self.add_session_rule(rule, behavior_of(*behavior)),
                        Err(e) => {
                            problems.push(format!("rule `{raw}`: {e}"));
                            continue;
                        }
                    }
                    if *destination == UpdateDestination::LocalSettings {
                        let project = self.with(|p| p.project_dir().to_owned());
                        if let Err(e) =
                            store::persist_local_rule(&project, &raw, behavior_of(*behavior))
                        {
                            problems.push(e.to_string());
                        }
                    }
                }
            }
            PermissionUpdate::ReplaceRules {
                rules, behavior, ..
            } => {
                self.with(|p| p.remove_session_rules(behavior_of(*behavior), None));
                problems.extend(self.apply_update(&PermissionUpdate::AddRules {
                    rules: rules.clone(),
                    behavior: *behavior,
                    destination: UpdateDestination::Session,
                }));
            }
            PermissionUpdate::RemoveRules {
                rules, behavior, ..
            } => {
                let raws: Vec<String> = rules.iter().map(RuleValue::to_rule_string).collect();
                self.with(|p| p.remove_session_rules(behavior_of(*behavior), Some(&raws)));
            }
            PermissionUpdate::SetMode { mode, .. } => match mode.parse::<Mode>() {
                Ok(mode) => self.set_mode(mode),
                Err(e) => problems.push(e.to_string()),
            },
            PermissionUpdate::AddDirectories { directories, .. } => self.with(|p| {
                for d in directories {
                    p.add_working_dir(d);
                }
            }),
            PermissionUpdate::RemoveDirectories { directories, .. } => self.with(|p| {
                for d in directories {
                    p.remove_working_dir(d);
                }
            }),
        }
        problems
    }
}

/// The log's account of a [`Decider`]: a rule with the file or flag it
/// came from (`--allowedTools` rules are flags), or the mode.
pub fn decided_by(decider: &Decider, mode: Mode) -> DecidedBy {
    match decider {
        Decider::Rule {
            rule,
            source,
            origin,
            ..
        } => DecidedBy {
            kind: if *source == Source::CliArg && origin.starts_with("--") {
                DeciderKind::Flag
            } else {
                DeciderKind::Rule
            },
            source: origin.clone(),
            rule: Some(rule.clone()),
            reason: None,
        },
        Decider::Mode(m) => DecidedBy::new(DeciderKind::Mode, m.hook_name()),
        Decider::ReadOnly => DecidedBy::new(DeciderKind::Mode, mode.hook_name()).because(
            "reads and read-only commands inside the working directories run in every mode",
        ),
    }
}

#[async_trait]
impl Plugin for PermissionsPlugin {
    fn name(&self) -> &str {
        "permissions"
    }

    /// A changed settings file nobody kept out: its rules replace the old.
    async fn config_applied(&self, _ctx: &SeamContext, change: &dsh_seams::ConfigChange) {
        let source = match change.source {
            dsh_seams::ConfigSource::UserSettings => Source::User,
            dsh_seams::ConfigSource::ProjectSettings => Source::Project,
            dsh_seams::ConfigSource::LocalSettings => Source::Local,
        };
        if let Err(why) = self.reload_layer(source, &change.path) {
            tracing::warn!(file = %change.path.display(), %why, "changed permission rules not applied");
        }
    }

    /// A deny rule on a file a reading tool asks for settles the call
    /// before any hook sees it (Claude Code does not fire PreToolUse then).
    async fn screen(&self, ctx: &SeamContext, call: &ProposedCall) -> Screening {
        self.follow_dir(ctx);
        match self.verdict(&call.tool, &call.arguments) {
            Verdict::Deny {
                message,
                hooks: DenyHooks::None,
                ..
            } => Screening::Deny { reason: message },
            Verdict::Deny { .. } | Verdict::Allow(_) | Verdict::Ask { .. } => Screening::Pass,
        }
    }

    fn explain(&self, exec: &ToolExecution, _review: Option<&PreToolVerdict>) -> Option<DecidedBy> {
        let verdict = self.verdict(&exec.tool, &exec.arguments);
        let mode = self.mode();
        Some(match verdict {
            Verdict::Allow(decider) => decided_by(&decider, mode),
            Verdict::Deny {
                decider, message, ..
            } => decided_by(&decider, mode).because(message),
            Verdict::Ask {
                decider, reason, ..
            } => decided_by(&decider, mode).because(reason),
        })
    }

    async fn permissions_updated(&self, _ctx: &SeamContext, updates: &[PermissionUpdate]) {
        for update in updates {
            for problem in self.apply_update(update) {
                tracing::warn!(%problem, "a permission update was not applied");
            }
        }
    }

    /// An approved plan (`exit_plan_mode` succeeded) ends plan mode.
    fn tool_result(&self, _ctx: &SeamContext, exec: &ToolExecution, outcome: &ToolOutcome) {
        if exec.tool == "exit_plan_mode" && !outcome.is_error && self.mode() == Mode::Plan {
            self.set_mode(Mode::Default);
        }
    }

    async fn pre_execute(
        &self,
        ctx: &SeamContext,
        exec: &ToolExecution,
        _review: Option<&PreToolVerdict>,
    ) -> PreToolOutcome {
        self.follow_dir(ctx);
        let decision = match self.verdict(&exec.tool, &exec.arguments) {
            Verdict::Allow(_) => PreToolDecision::Allow,
            Verdict::Deny {
                message,
                hooks: DenyHooks::PreToolUseThenPermissionDenied { reason },
                ..
            } => PreToolDecision::AutoDeny {
                reason: message,
                check_reason: reason,
            },
            Verdict::Deny {
                message,
                hooks: DenyHooks::PreToolUse | DenyHooks::None,
                ..
            } => PreToolDecision::Deny { reason: message },
            Verdict::Ask {
                reason,
                suggestions,
                ..
            } => PreToolDecision::Ask {
                reason: Some(Verdict::unanswered_text(&reason, self.surface)),
                suggestions,
            },
        };
        PreToolOutcome {
            decision,
            contexts: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::rule::PathContext;

    fn exec(tool: &str, args: serde_json::Value) -> ToolExecution {
        ToolExecution {
            execution_id: "e1".into(),
            call_id: "c1".into(),
            tool: tool.into(),
            arguments: Arc::new(args),
            original_arguments: None,
            rewritten_by: None,
            parent_execution_id: None,
            origin: None,
        }
    }

    fn plugin(mode: Mode, surface: PromptSurface) -> PermissionsPlugin {
        let ctx = PathContext {
            cwd: PathBuf::from("/proj"),
            home: None,
            base: None,
        };
        PermissionsPlugin::new(Permissions::new(mode, ctx), surface)
    }

    #[tokio::test]
    async fn asks_carry_the_unanswered_text_for_the_surface() {
        let ctx = SeamContext::detached("/proj");
        let call = exec("bash", json!({"command": "touch a.txt"}));
        let headless = plugin(Mode::Default, PromptSurface::Headless)
            .pre_execute(&ctx, &call, None)
            .await;
        let PreToolDecision::Ask {
            reason: Some(text), ..
        } = headless.decision
        else {
            panic!("expected an ask, got {:?}", headless.decision);
        };
        assert!(
            text.starts_with("touch in '/proj/a.txt' needs approval."),
            "{text}"
        );
        let none = plugin(Mode::Default, PromptSurface::None)
            .pre_execute(&ctx, &call, None)
            .await;
        let PreToolDecision::Ask {
            reason: Some(text), ..
        } = none.decision
        else {
            panic!("expected an ask");
        };
        assert!(
            text.starts_with("Permission for this tool use was denied."),
            "{text}"
        );
    }

    #[tokio::test]
    async fn an_approved_plan_ends_plan_mode() {
        let ctx = SeamContext::detached("/proj");
        let call = exec("exit_plan_mode", json!({"plan": "1. edit"}));
        let p = plugin(Mode::Plan, PromptSurface::Headless);
        let asked = p.pre_execute(&ctx, &call, None).await;
        assert!(
            matches!(asked.decision, PreToolDecision::Ask { .. }),
            "{:?}",
            asked.decision
        );
        p.tool_result(
            &ctx,
            &call,
            &ToolOutcome::error("rejected", dsh_seams::Disposition::Executed),
        );
        assert_eq!(p.mode(), Mode::Plan, "a failed call keeps plan mode");
        let ok = ToolOutcome {
            is_error: false,
            content: "approved".into(),
            value: None,
            disposition: dsh_seams::Disposition::Executed,
        };
        p.tool_result(&ctx, &call, &ok);
        assert_eq!(p.mode(), Mode::Default);
        // Outside plan mode the tool runs unasked.
        let default = plugin(Mode::Default, PromptSurface::Headless);
        let ran = default.pre_execute(&ctx, &call, None).await;
        assert!(
            matches!(ran.decision, PreToolDecision::Allow),
            "{:?}",
            ran.decision
        );
    }

    #[tokio::test]
    async fn reads_run_and_session_rules_take_effect() {
        let ctx = SeamContext::detached("/proj");
        let p = plugin(Mode::Default, PromptSurface::Headless);
        let read = p
            .pre_execute(&ctx, &exec("read", json!({"file_path": "x"})), None)
            .await;
        assert_eq!(read.decision, PreToolDecision::Allow);
        let call = exec("bash", json!({"command": "touch b"}));
        assert!(matches!(
            p.pre_execute(&ctx, &call, None).await.decision,
            PreToolDecision::Ask { .. }
        ));
        p.add_session_rule(Rule::parse("Bash(touch:*)").expect("rule"), Behavior::Allow);
        assert_eq!(
            p.pre_execute(&ctx, &call, None).await.decision,
            PreToolDecision::Allow
        );
        p.set_mode(Mode::Plan);
        assert_eq!(p.mode(), Mode::Plan);
    }

    fn update(value: serde_json::Value) -> PermissionUpdate {
        serde_json::from_value(value).expect("a permission update")
    }

    #[test]
    fn updates_change_rules_mode_and_directories_and_local_rules_persist() {
        let dir = tempfile::tempdir().expect("tempdir");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(&project).expect("project");
        let p = PermissionsPlugin::new(
            Permissions::new(
                Mode::Default,
                PathContext {
                    cwd: project.clone(),
                    home: None,
                    base: None,
                },
            ),
            PromptSurface::Headless,
        );
        let touch = json!({"command": "touch a.txt"});
        assert!(matches!(p.verdict("bash", &touch), Verdict::Ask { .. }));
        let problems = p.apply_update(&update(json!({"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow", "destination": "localSettings"})));
        assert!(problems.is_empty(), "{problems:?}");
        assert!(matches!(p.verdict("bash", &touch), Verdict::Allow(_)));
        let local = std::fs::read_to_string(project.join(".claude/settings.local.json"))
            .expect("settings.local.json written");
        assert!(local.contains("Bash(touch:*)"), "{local}");
        p.apply_update(&update(json!({"type": "removeRules",
            "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}],
            "behavior": "allow", "destination": "session"})));
        assert!(matches!(p.verdict("bash", &touch), Verdict::Ask { .. }));

        let outside = json!({"file_path": "/elsewhere/x.txt"});
        assert!(matches!(p.verdict("read", &outside), Verdict::Ask { .. }));
        p.apply_update(&update(json!({"type": "addDirectories",
            "directories": ["/elsewhere"], "destination": "session"})));
        assert!(matches!(p.verdict("read", &outside), Verdict::Allow(_)));

        p.apply_update(&update(
            json!({"type": "setMode", "mode": "plan", "destination": "session"}),
        ));
        assert_eq!(p.mode(), Mode::Plan);
        let bad = p.apply_update(&update(
            json!({"type": "setMode", "mode": "nope", "destination": "session"}),
        ));
        assert_eq!(bad.len(), 1);
        assert_eq!(p.mode(), Mode::Plan);
    }
}
