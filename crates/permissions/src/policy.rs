//! The decision: rules in precedence order, then what the mode does with a
//! call no rule settled.

use std::path::{Path, PathBuf};

use dsh_seams::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
use serde_json::Value;

use crate::layer::{Behavior, Layer, Source, SourcedRule};
use crate::mode::Mode;
use crate::rule::{
    CallInput, PathContext, Rule, Specifier, ToolKind, normalize, real_path, tool_kind,
};
use crate::texts;
use crate::{readonly, shell};

/// Whether the user trusts this workspace (dsh's hook trust, or Claude
/// Code's `hasTrustDialogAccepted` in `~/.claude.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Project-scoped `allow` rules apply.
    Trusted,
    /// Project-scoped `allow` rules are dropped (deny and ask still apply:
    /// an untrusted repository may restrict, never widen).
    Untrusted,
}

/// Who settled a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decider {
    /// A rule, with its layer and file.
    Rule {
        /// The rule as written.
        rule: String,
        /// allow / deny / ask.
        behavior: Behavior,
        /// Its layer.
        source: Source,
        /// Its file or flag.
        origin: String,
    },
    /// The mode's own policy.
    Mode(Mode),
    /// A read or read-only command inside the working directories: runs in
    /// every mode.
    ReadOnly,
}

/// Which hooks fire before a denial reaches the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DenyHooks {
    /// PreToolUse fires first (a deny rule on Bash, dontAsk).
    PreToolUse,
    /// Nothing fires (a deny rule on a file a reading tool asked for).
    None,
    /// PreToolUse, then PermissionDenied with this `reason` (auto mode).
    PreToolUseThenPermissionDenied {
        /// The PermissionDenied payload's `reason`.
        reason: String,
    },
}

/// What happens to one call, before hooks and people have their say.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Runs.
    Allow(Decider),
    /// Does not run; `message` is the model's tool_result text.
    Deny {
        /// Who decided.
        decider: Decider,
        /// The tool_result text (`is_error: true`).
        message: String,
        /// Which hooks fire on the way.
        hooks: DenyHooks,
    },
    /// Needs approval: PreToolUse → PermissionRequest → prompt (if any).
    Ask {
        /// Who asked.
        decider: Decider,
        /// The PermissionRequest payload's `permission_suggestions`; `None`
        /// means the key is absent (ask rules, plan mode).
        suggestions: Option<Vec<PermissionUpdate>>,
        /// The reason; also the model's text when nobody answered.
        reason: String,
    },
}

/// Who can answer an approval prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PromptSurface {
    /// Headless `-p` without a surface flag: an unanswered ask is denied
    /// with its own reason.
    Headless,
    /// `--permission-prompts none`: denied with the "no approval surface"
    /// text that forbids retries.
    None,
}

impl Verdict {
    /// The tool_result text when an ask is denied because nobody answered.
    pub fn unanswered_text(reason: &str, surface: PromptSurface) -> String {
        match surface {
            PromptSurface::Headless => reason.to_owned(),
            PromptSurface::None => texts::no_approval_surface(reason),
        }
    }
}

/// A session's effective permissions.
#[derive(Debug, Clone)]
pub struct Permissions {
    mode: Mode,
    ctx: PathContext,
    working_dirs: Vec<PathBuf>,
    /// `working_dirs` where they point, in the same order: resolved once
    /// when a directory is added, not on every call a path is judged in.
    real_working_dirs: Vec<PathBuf>,
    rules: Vec<SourcedRule>,
    dropped_allow: Vec<SourcedRule>,
}

/// Commands that create, change or remove files: acceptEdits runs them
/// inside the working directories; default mode asks with the captured text.
const FILE_PROGRAMS: &[&str] = &["touch", "mkdir", "rm", "rmdir", "mv", "cp", "sed"];

/// Tools that neither read nor write the user's files.
const HARMLESS_TOOLS: &[&str] = &[
    "TodoWrite",
    "Task",
    "Agent",
    "ExitPlanMode",
    "BashOutput",
    "KillShell",
    "TaskCreate",
    "TaskGet",
    "TaskUpdate",
    "TaskList",
    "AskUserQuestion",
];

/// How a shell command looks to the permission model.
#[derive(Debug, Clone, PartialEq, Eq)]
enum CommandClass {
    ReadOnly,
    /// A file command and the paths it names (first is the one reported).
    FileChange {
        program: String,
        targets: Vec<String>,
    },
    /// The parse cannot see everything the line runs; the reason says why.
    Opaque(String),
    /// Only reads, but reads outside the working directories (or files it
    /// cannot name); the reason says what.
    ReadsOutside(String),
    Other,
}

/// Classifies a parsed line: read-only when every command is (and reads
/// inside the working directories), a file change when one plain file
/// command is all that is left, opaque when part of it cannot be seen.
fn classify_line(perms: &Permissions, line: &shell::Line) -> CommandClass {
    if let Some(why) = line.opaque.first() {
        return CommandClass::Opaque(why.clone());
    }
    let mut file_change: Option<(String, Vec<String>)> = None;
    let mut outside = None;
    for cmd in line.commands.iter().filter(|c| c.runs) {
        if readonly::is_read_only(cmd) {
            if let Some(why) = perms.configured_program(cmd) {
                return CommandClass::Opaque(why);
            }
            if outside.is_none() {
                outside = perms.reads_outside(cmd);
            }
            continue;
        }
        let plain = cmd.wrappers.is_empty()
            && cmd.evaluates.is_empty()
            && !cmd.open_args
            && !cmd.is_dynamic()
            && !cmd.redirects.iter().any(shell::Redirect::writes);
        let program = cmd.program_name().unwrap_or("");
        if plain && FILE_PROGRAMS.contains(&program) && file_change.is_none() {
            let args: Vec<&str> = cmd.argv().iter().skip(1).map(shell::Word::text).collect();
            let Some(targets) = file_targets(program, &args) else {
                return CommandClass::Other;
            };
            if targets.is_empty() {
                return CommandClass::Other;
            }
            file_change = Some((program.to_owned(), targets));
            continue;
        }
        return CommandClass::Other;
    }
    match (file_change, outside) {
        (_, Some(why)) => CommandClass::ReadsOutside(why),
        (Some((program, targets)), None) => CommandClass::FileChange { program, targets },
        (None, None) => CommandClass::ReadOnly,
    }
}

/// The paths a file command creates, changes or removes: its operands
/// and the directory `-t`/`--target-directory` names, its options read as
/// getopt reads them. `None` when an option is not in the table (or a
/// backup suffix names another directory): dsh cannot say where it writes.
fn file_targets(program: &str, args: &[&str]) -> Option<Vec<String>> {
    use Takes::{No, Optional, Required};
    use shell::getopt::{self, Takes};
    const HELP: [(&str, Takes); 2] = [("help", No), ("version", No)];
    if program == "sed" {
        let words: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
        let sed = shell::sed::read(&words);
        let plain = sed.runs.is_empty()
            && !sed.runs_unknown
            && sed.writes.is_empty()
            && sed.unreadable.is_none();
        return plain.then_some(sed.files);
    }
    let (short, long): (&'static str, &'static [(&'static str, Takes)]) = match program {
        "touch" => (
            "acd:fhmr:t:",
            &[
                ("no-create", No),
                ("date", Required),
                ("no-dereference", No),
                ("reference", Required),
                ("time", Required),
                HELP[0],
                HELP[1],
            ],
        ),
        "mkdir" => (
            "m:pvZ",
            &[
                ("mode", Required),
                ("parents", No),
                ("verbose", No),
                ("context", Optional),
                HELP[0],
                HELP[1],
            ],
        ),
        "rm" => (
            "dfiIrRv",
            &[
                ("dir", No),
                ("force", No),
                ("interactive", Optional),
                ("one-file-system", No),
                ("preserve-root", Optional),
                ("recursive", No),
                ("verbose", No),
                HELP[0],
                HELP[1],
            ],
        ),
        "rmdir" => (
            "pv",
            &[
                ("ignore-fail-on-non-empty", No),
                ("parents", No),
                ("verbose", No),
                HELP[0],
                HELP[1],
            ],
        ),
        "mv" => (
            "bfinS:t:TuvZ",
            &[
                ("backup", Optional),
                ("debug", No),
                ("exchange", No),
                ("force", No),
                ("interactive", No),
                ("no-clobber", No),
                ("no-copy", No),
                ("strip-trailing-slashes", No),
                ("suffix", Required),
                ("target-directory", Required),
                ("no-target-directory", No),
                ("update", Optional),
                ("verbose", No),
                ("context", No),
                HELP[0],
                HELP[1],
            ],
        ),
        "cp" => (
            "abdfHilLnPpRrsS:t:TuvxZ",
            &[
                ("archive", No),
                ("attributes-only", No),
                ("backup", Optional),
                ("copy-contents", No),
                ("debug", No),
                ("force", No),
                ("interactive", No),
                ("link", No),
                ("dereference", No),
                ("no-clobber", No),
                ("no-dereference", No),
                ("preserve", Optional),
                ("no-preserve", Required),
                ("parents", No),
                ("recursive", No),
                ("reflink", Optional),
                ("remove-destination", No),
                ("sparse", Required),
                ("strip-trailing-slashes", No),
                ("symbolic-link", No),
                ("suffix", Required),
                ("target-directory", Required),
                ("no-target-directory", No),
                ("update", Optional),
                ("verbose", No),
                ("one-file-system", No),
                ("context", Optional),
                HELP[0],
                HELP[1],
            ],
        ),
        _ => return None,
    };
    let spec = getopt::Spec {
        short,
        long,
        permute: true,
        numeric: false,
    };
    let words: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
    let parsed = getopt::parse(&spec, &words).ok()?;
    let mut targets = Vec::new();
    for o in &parsed.options {
        if o.is(&["-t", "--target-directory"]) {
            targets.push(o.value.clone()?);
        }
        // A backup suffix is appended to a name: with a `/` it points
        // somewhere else. `cp -s` links name their sources, fine.
        if o.is(&["-S", "--suffix"]) && o.value.as_deref().is_none_or(|s| s.contains('/')) {
            return None;
        }
    }
    targets.extend(parsed.operands);
    Some(targets)
}

impl Permissions {
    /// Permissions for a session in `cwd` with `mode` (already resolved
    /// from flags and `defaultMode`; see [`Permissions::effective_mode`]).
    pub fn new(mode: Mode, ctx: PathContext) -> Permissions {
        let project = normalize(&ctx.cwd);
        Permissions {
            mode,
            real_working_dirs: vec![real_path(&project)],
            working_dirs: vec![project],
            ctx,
            rules: Vec::new(),
            dropped_allow: Vec::new(),
        }
    }

    /// The mode a session starts in: the flag, else the highest-precedence
    /// layer's `defaultMode`, else `default`.
    pub fn effective_mode(flag: Option<Mode>, layers: &[Layer]) -> Mode {
        flag.or_else(|| {
            layers
                .iter()
                .filter_map(|l| l.default_mode.map(|m| (l.source, m)))
                .min_by_key(|(s, _)| *s)
                .map(|(_, m)| m)
        })
        .unwrap_or_default()
    }

    /// Adds a layer; in an untrusted workspace its project-scoped `allow`
    /// rules are kept aside (see [`Permissions::dropped_allow`]).
    pub fn add_layer(&mut self, layer: Layer, trust: Trust) {
        for dir in &layer.additional_directories {
            self.add_working_dir(&dir.to_string_lossy());
        }
        for r in layer.rules {
            if trust == Trust::Untrusted
                && r.behavior == Behavior::Allow
                && r.source.is_project_scoped()
            {
                self.dropped_allow.push(r);
            } else {
                self.rules.push(r);
            }
        }
    }

    /// Replaces the rules of `layer`'s source with `layer`'s (a settings
    /// file changed during the session), trust applied as [`Self::add_layer`]
    /// does. Its `additionalDirectories` are added; directories it no longer
    /// names stay for the session.
    pub fn replace_layer(&mut self, layer: Layer, trust: Trust) {
        let source = layer.source;
        self.rules.retain(|r| r.source != source);
        self.dropped_allow.retain(|r| r.source != source);
        self.add_layer(layer, trust);
    }

    /// A session rule (PermissionRequest `updatedPermissions`, or "allow
    /// for this session").
    pub fn add_session_rule(&mut self, rule: crate::rule::Rule, behavior: Behavior) {
        self.rules.push(SourcedRule {
            rule,
            behavior,
            source: Source::Session,
            origin: "session".to_owned(),
        });
    }

    /// Changes the mode (a `setMode` suggestion accepted).
    pub fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
    }

    /// Adds a working directory (an accepted `addDirectories`).
    pub fn add_working_dir(&mut self, dir: &str) {
        let d = self.ctx.resolve(dir);
        if !self.working_dirs.contains(&d) {
            self.real_working_dirs.push(real_path(&d));
            self.working_dirs.push(d);
        }
    }

    /// Removes a working directory added during the session or by settings
    /// (the project itself stays).
    pub fn remove_working_dir(&mut self, dir: &str) {
        let d = self.ctx.resolve(dir);
        let project = normalize(&self.ctx.cwd);
        if let Some(index) = self.working_dirs.iter().position(|w| *w == d)
            && d != project
        {
            self.working_dirs.remove(index);
            self.real_working_dirs.remove(index);
        }
    }

    /// Removes the session rules with this behavior whose text is in
    /// `raws` (all of them when `raws` is `None`).
    pub fn remove_session_rules(&mut self, behavior: Behavior, raws: Option<&[String]>) {
        self.rules.retain(|r| {
            r.source != Source::Session
                || r.behavior != behavior
                || raws.is_some_and(|raws| !raws.contains(&r.rule.raw))
        });
    }

    /// Where relative paths in tool inputs start: `None` for the project,
    /// else the directory the bash tool's last `cd` left the session in.
    pub fn set_input_base(&mut self, base: Option<PathBuf>) {
        self.ctx.base = base
            .map(|dir| normalize(&dir))
            .filter(|dir| *dir != normalize(&self.ctx.cwd));
    }

    /// The project directory (where `.claude/settings.local.json` lives).
    pub fn project_dir(&self) -> &Path {
        &self.ctx.cwd
    }

    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Rules in effect.
    pub fn rules(&self) -> &[SourcedRule] {
        &self.rules
    }

    /// Project `allow` rules dropped because the workspace is untrusted.
    pub fn dropped_allow(&self) -> &[SourcedRule] {
        &self.dropped_allow
    }

    /// The working directories (the project and `additionalDirectories`).
    pub fn working_dirs(&self) -> &[PathBuf] {
        &self.working_dirs
    }

    /// Whether `p` (from a tool input) is inside the working directories
    /// where it points: symlinks followed on both sides, so a link leaving
    /// the project is outside and a project under a linked directory still
    /// holds its own files.
    fn inside_working_dirs(&self, p: &str) -> bool {
        self.working_dir_of(p).is_some()
    }

    /// Why a read-only command does not only read inside the working
    /// directories (a path outside them, or one it cannot name); `None`
    /// when it does.
    fn reads_outside(&self, cmd: &shell::Command) -> Option<String> {
        match readonly::read_paths(cmd) {
            readonly::Reads::Unknown(why) => Some(why),
            readonly::Reads::Paths(paths) => paths.into_iter().find_map(|p| {
                let home;
                let path = if p == "~" {
                    home = self.ctx.home.as_ref()?.to_string_lossy().into_owned();
                    home.as_str()
                } else {
                    p
                };
                // `~user/…` is another user's home.
                let other_home = path.starts_with('~') && !path.starts_with("~/");
                (other_home || !self.inside_working_dirs(path)).then(|| {
                    let shown = if other_home {
                        path.to_owned()
                    } else {
                        self.ctx.resolve(path).display().to_string()
                    };
                    format!("it reads '{shown}', outside the working directories")
                })
            }),
        }
    }

    /// Why a read-only `git` command may still run a program: its
    /// repository's configuration, from the shell's directory
    /// ([`crate::gitconfig`]); `None` for every other command.
    fn configured_program(&self, cmd: &shell::Command) -> Option<String> {
        if cmd.program_name() != Some("git") {
            return None;
        }
        let dir = self.ctx.base.as_deref().unwrap_or(&self.ctx.cwd);
        crate::gitconfig::configured_program(dir).map(|found| found.why)
    }

    /// The working directory (as configured) that really holds `p`.
    fn working_dir_of(&self, p: &str) -> Option<&PathBuf> {
        let real = self.ctx.resolve_real(p);
        self.working_dirs
            .iter()
            .zip(&self.real_working_dirs)
            .find(|(_, real_dir)| real.starts_with(real_dir))
            .map(|(dir, _)| dir)
    }

    fn first_match(
        &self,
        behavior: Behavior,
        tool: &str,
        input: &CallInput<'_>,
    ) -> Option<&SourcedRule> {
        let matching = |input: &CallInput<'_>| {
            self.rules
                .iter()
                .filter(|r| r.behavior == behavior)
                .find(|r| r.rule.matches_for(r.behavior, tool, input, &self.ctx))
        };
        let (ToolKind::Bash, Some(command)) = (tool_kind(tool), input.command) else {
            return matching(input);
        };
        // A line is judged command by command, on a real parse: a deny or
        // ask rule matches any command the line can run, an allow rule
        // must cover every one of them.
        let line = shell::parse_cached(command);
        match behavior {
            // One denied (or asked-about) command is enough.
            Behavior::Deny | Behavior::Ask => matching(input).or_else(|| {
                line.commands
                    .iter()
                    .flat_map(shell::Command::deny_texts)
                    .find_map(|text| matching(&CallInput::command(&text)))
            }),
            // Every command must be allowed, unless a rule consents to the
            // whole line (a bare `Bash`, `Bash(*)`, or this exact line).
            Behavior::Allow => {
                // A broad allow consents to the whole line only when the
                // parse saw all of it, or when no deny or ask rule on Bash
                // could have been walked past.
                if !line.is_transparent() && self.restricts_bash() {
                    return None;
                }
                let whole_line = self
                    .rules
                    .iter()
                    .filter(|r| r.behavior == behavior && consents_to_any_line(&r.rule))
                    .find(|r| r.rule.matches_for(r.behavior, tool, input, &self.ctx));
                if whole_line.is_some() {
                    return whole_line;
                }
                // What the parse cannot see is never approved by a rule
                // about some of its commands.
                if !line.is_transparent() {
                    return None;
                }
                // A read-only command (`echo`, `ls`, …) needs no rule: the
                // mode runs it anyway, so it does not spoil the line.
                let mut first = None;
                for cmd in line.commands.iter().filter(|c| c.runs) {
                    let found = allow_texts(cmd)
                        .iter()
                        .find_map(|text| matching(&CallInput::command(text)));
                    match found {
                        Some(rule) => {
                            first.get_or_insert(rule);
                        }
                        None if readonly::is_read_only(cmd)
                            && self.reads_outside(cmd).is_none()
                            && self.configured_program(cmd).is_none() => {}
                        None => return None,
                    }
                }
                first
            }
        }
    }

    /// Decides one call. Precedence: deny rules, then ask rules, then
    /// bypassPermissions, then allow rules, then the mode.
    pub fn decide(&self, tool: &str, arguments: &Value) -> Verdict {
        let input = &CallInput::of(arguments);
        let kind = tool_kind(tool);
        if let Some(r) = self.first_match(Behavior::Deny, tool, input) {
            let decider = rule_decider(r);
            return match (kind, input.command) {
                (ToolKind::Read, _) => Verdict::Deny {
                    decider,
                    message: texts::READ_RULE_DENIED.to_owned(),
                    hooks: DenyHooks::None,
                },
                (ToolKind::Bash, Some(cmd)) => Verdict::Deny {
                    decider,
                    message: texts::bash_rule_denied(cmd),
                    hooks: DenyHooks::PreToolUse,
                },
                _ => Verdict::Deny {
                    decider,
                    message: texts::tool_rule_denied(tool),
                    hooks: DenyHooks::PreToolUse,
                },
            };
        }
        if let Some(r) = self.first_match(Behavior::Ask, tool, input) {
            return self.apply_mode_to_ask(
                tool,
                rule_decider(r),
                None,
                texts::ask_unanswered(tool),
            );
        }
        if self.mode == Mode::BypassPermissions && !self.unreadable_past_a_rule(kind, input) {
            return Verdict::Allow(Decider::Mode(self.mode));
        }
        if let Some(r) = self.first_match(Behavior::Allow, tool, input) {
            return Verdict::Allow(rule_decider(r));
        }
        self.mode_policy(tool, kind, input)
    }

    /// True when a deny or ask rule names `Bash`: a line the parse cannot
    /// read may hide what such a rule is about.
    fn restricts_bash(&self) -> bool {
        self.rules
            .iter()
            .any(|r| r.behavior != Behavior::Allow && r.rule.tool == "Bash")
    }

    /// A Bash line the parse cannot fully read while a deny or ask rule on
    /// Bash is in force: no mode or broad rule approves it unasked.
    fn unreadable_past_a_rule(&self, kind: ToolKind, input: &CallInput<'_>) -> bool {
        match (kind, input.command) {
            (ToolKind::Bash, Some(command)) => {
                self.restricts_bash() && !shell::parse_cached(command).is_transparent()
            }
            _ => false,
        }
    }

    fn mode_policy(&self, tool: &str, kind: ToolKind, input: &CallInput<'_>) -> Verdict {
        let mode = Decider::Mode(self.mode);
        let edits_run = matches!(self.mode, Mode::AcceptEdits | Mode::Auto);
        match kind {
            ToolKind::Read => {
                let inside = input.path.is_none_or(|p| self.inside_working_dirs(p));
                if inside {
                    Verdict::Allow(Decider::ReadOnly)
                } else {
                    self.apply_mode_to_ask(tool, mode, None, texts::ask_unanswered(tool))
                }
            }
            ToolKind::Edit => {
                let inside = input.path.is_some_and(|p| self.inside_working_dirs(p));
                let path = input.path.map(|p| self.ctx.resolve(p));
                match (self.mode, path) {
                    (Mode::Plan, Some(p)) => Verdict::Ask {
                        decider: mode,
                        suggestions: None,
                        reason: texts::plan_mode_write(&p),
                    },
                    _ if edits_run && inside => Verdict::Allow(mode),
                    _ => self.apply_mode_to_ask(
                        tool,
                        mode,
                        Some(vec![set_mode_suggestion(Mode::AcceptEdits)]),
                        texts::ask_unanswered(tool),
                    ),
                }
            }
            ToolKind::Bash => {
                let command = input.command.unwrap_or("");
                match classify_line(self, &shell::parse_cached(command)) {
                    CommandClass::ReadOnly => Verdict::Allow(Decider::ReadOnly),
                    CommandClass::FileChange { program, targets } => {
                        let resolved: Vec<PathBuf> =
                            targets.iter().map(|t| self.ctx.resolve(t)).collect();
                        let dir = targets
                            .first()
                            .and_then(|t| self.working_dir_of(t))
                            .cloned();
                        let all_inside = targets.iter().all(|t| self.inside_working_dirs(t));
                        match dir {
                            Some(_) if all_inside && edits_run => Verdict::Allow(mode),
                            Some(dir) if all_inside => {
                                let reason = texts::file_command_needs_approval(
                                    &program,
                                    &resolved[0],
                                    &dir,
                                );
                                let suggestions = vec![
                                    PermissionUpdate::AddDirectories {
                                        directories: vec![dir.to_string_lossy().into_owned()],
                                        destination: UpdateDestination::Session,
                                    },
                                    set_mode_suggestion(Mode::AcceptEdits),
                                ];
                                self.apply_mode_to_ask(tool, mode, Some(suggestions), reason)
                            }
                            _ => self.apply_mode_to_ask(
                                tool,
                                mode,
                                None,
                                texts::ask_unanswered(tool),
                            ),
                        }
                    }
                    CommandClass::ReadsOutside(why) => self.apply_mode_to_ask(
                        tool,
                        mode,
                        None,
                        texts::bash_reads_outside(command, &why),
                    ),
                    CommandClass::Opaque(why) => self.apply_mode_to_ask(
                        tool,
                        mode,
                        None,
                        texts::bash_not_checkable(command, &why),
                    ),
                    CommandClass::Other => {
                        // Not captured: Claude Code's prompt offers a prefix
                        // rule for the program; dsh suggests the same.
                        let program = command.split_whitespace().next().unwrap_or("");
                        let suggestions = (!program.is_empty()).then(|| {
                            vec![PermissionUpdate::AddRules {
                                rules: vec![RuleValue {
                                    tool_name: "Bash".to_owned(),
                                    rule_content: Some(format!("{program}:*")),
                                }],
                                behavior: RuleBehavior::Allow,
                                destination: UpdateDestination::LocalSettings,
                            }]
                        });
                        self.apply_mode_to_ask(tool, mode, suggestions, texts::ask_unanswered(tool))
                    }
                }
            }
            ToolKind::Mcp | ToolKind::Other => {
                if tool == "ExitPlanMode" && self.mode == Mode::Plan {
                    // The plan is shown for approval; approving it ends
                    // plan mode (the stage's `tool_result`).
                    Verdict::Ask {
                        decider: mode,
                        suggestions: None,
                        reason: texts::EXIT_PLAN_MODE.to_owned(),
                    }
                } else if HARMLESS_TOOLS.contains(&tool) {
                    Verdict::Allow(Decider::ReadOnly)
                } else {
                    self.apply_mode_to_ask(tool, mode, None, texts::ask_unanswered(tool))
                }
            }
        }
    }

    /// What a call that would ask becomes in this mode: dontAsk denies it
    /// without asking; auto sends it to the (unavailable) classifier.
    fn apply_mode_to_ask(
        &self,
        tool: &str,
        decider: Decider,
        suggestions: Option<Vec<PermissionUpdate>>,
        reason: String,
    ) -> Verdict {
        match self.mode {
            Mode::DontAsk => Verdict::Deny {
                decider,
                message: reason,
                hooks: DenyHooks::PreToolUse,
            },
            Mode::Auto => Verdict::Deny {
                decider: Decider::Mode(Mode::Auto),
                message: texts::auto_unavailable(tool),
                hooks: DenyHooks::PreToolUseThenPermissionDenied {
                    reason: texts::AUTO_CLASSIFIER_UNAVAILABLE.to_owned(),
                },
            },
            Mode::Default | Mode::AcceptEdits | Mode::Plan | Mode::BypassPermissions => {
                Verdict::Ask {
                    decider,
                    suggestions,
                    reason,
                }
            }
        }
    }
}

/// Wrappers an allow rule for the wrapped program sees through: they run
/// it unchanged (`sudo` and `doas` do not: a rule must name them).
const ALLOW_TRANSPARENT_WRAPPERS: &[&str] = &[
    "command", "builtin", "env", "nice", "time", "timeout", "stdbuf", "ionice", "setsid", "chrt",
    "taskset", "exec", "xargs", "nohup", "busybox",
];

/// The forms of one parsed command an allow rule may match: the unwrapped
/// program and arguments (only when its wrappers and variables change
/// nothing about what runs), and the command as written.
fn allow_texts(cmd: &shell::Command) -> Vec<String> {
    let mut texts = Vec::new();
    let plain = cmd.assignments.iter().all(readonly::harmless_variable)
        && cmd
            .wrappers
            .iter()
            .all(|w| ALLOW_TRANSPARENT_WRAPPERS.contains(&w.as_str()));
    if plain && !cmd.argv().is_empty() {
        texts.push(cmd.rule_text());
        if !cmd.open_args {
            let argv: Vec<&str> = cmd.argv().iter().map(|w| w.raw.as_str()).collect();
            texts.push(argv.join(" "));
        }
    }
    if !cmd.words.is_empty() {
        texts.push(cmd.written());
    }
    texts
}

/// A rule whose match on a whole command line is consent to everything the
/// line runs: the user named all of Bash, or this exact line.
fn consents_to_any_line(rule: &Rule) -> bool {
    match &rule.specifier {
        Specifier::Any | Specifier::CommandExact(_) => true,
        Specifier::CommandWildcard(pattern) => pattern == "*",
        Specifier::CommandPrefix(_)
        | Specifier::Path(_)
        | Specifier::Domain(_)
        | Specifier::Literal(_) => false,
    }
}

fn set_mode_suggestion(mode: Mode) -> PermissionUpdate {
    PermissionUpdate::SetMode {
        mode: mode.hook_name().to_owned(),
        destination: UpdateDestination::Session,
    }
}

fn rule_decider(r: &SourcedRule) -> Decider {
    Decider::Rule {
        rule: r.rule.raw.clone(),
        behavior: r.behavior,
        source: r.source,
        origin: r.origin.clone(),
    }
}
