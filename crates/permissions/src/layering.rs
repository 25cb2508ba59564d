//! A session's permissions, layered: every settings file Claude Code reads
//! (user, project, local, then `--settings` files ranked with the command
//! line), the command line's rules, the mode, and workspace trust deciding
//! whether project `allow` rules count. Front ends call [`build`] through
//! the session assembly; the result is the pipeline stage registered after
//! the hook bridges.
//!
//! Which rule an approval answer adds is in [`crate::always`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use dsh_files::settings::SettingsStack;
use dsh_seams::Plugin;

use crate::store::{self, StoreError};
use crate::{
    Layer, LayerError, Mode, PathContext, Permissions, PermissionsPlugin, PromptSurface, Trust,
};

/// What the command line says about permissions.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    /// `--permission-mode`.
    pub mode: Option<Mode>,
    /// `--allowedTools` values (comma- or space-separated rules).
    pub allowed_tools: Vec<String>,
    /// `--add-dir` directories (working directories beside the project).
    pub additional_directories: Vec<PathBuf>,
    /// `--disallowedTools` values.
    pub disallowed_tools: Vec<String>,
    /// `--permission-prompts none` (nobody can answer an ask).
    pub no_prompt_surface: bool,
}

/// Where a session's permission layers come from.
pub struct Where<'a> {
    /// The project directory.
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// dsh's home (its `trust.json` can vouch for the workspace).
    pub dsh_home: &'a Path,
    /// The session's Claude Code settings layers (each file parsed once):
    /// the user, project, local and `--settings` layers are read.
    pub settings: &'a SettingsStack,
    /// The mode when neither the flag nor a `defaultMode` names one (replay:
    /// `bypassPermissions`); `None`: Claude Code's `default`.
    pub fallback: Option<Mode>,
    /// The person trusted the workspace for this session only (nothing
    /// on disk says so).
    pub trusted_this_session: bool,
}

/// Why a session's permissions could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LayeringError {
    /// A settings file could not be read or does not parse.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A rule given on the command line does not parse.
    #[error("invalid permission rule on the command line")]
    CommandLine(#[source] LayerError),
}

/// The session's permissions and the mode hooks are told.
#[derive(Clone)]
pub struct Built {
    /// The pipeline stage.
    pub plugin: Arc<dyn Plugin>,
    /// The effective mode.
    pub mode: Mode,
    /// The same stage, typed: approval answers add session rules to it
    /// and ask it who wanted a call approved.
    pub permissions: Arc<PermissionsPlugin>,
}

/// Who vouched for the workspace, for its project `allow` rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkspaceTrust {
    /// `~/.claude.json` `projects.<cwd>.hasTrustDialogAccepted` (Claude
    /// Code's trust dialog).
    ClaudeJson,
    /// `dsh hooks trust` (no selector) in this directory: a workspace
    /// record in `$DSH_HOME/trust.json`.
    DshTrust,
    /// The person trusted the project for this session only (the trust
    /// question's "this session" answer): nothing is stored.
    ThisSession,
    /// Neither: project `allow` rules are dropped.
    Untrusted,
}

impl WorkspaceTrust {
    /// What the permission model does with it.
    pub fn trust(self) -> Trust {
        match self {
            WorkspaceTrust::ClaudeJson | WorkspaceTrust::DshTrust | WorkspaceTrust::ThisSession => {
                Trust::Trusted
            }
            WorkspaceTrust::Untrusted => Trust::Untrusted,
        }
    }

    /// How `hooks list` names it.
    pub fn by(self) -> Option<&'static str> {
        match self {
            WorkspaceTrust::ClaudeJson => Some("~/.claude.json"),
            WorkspaceTrust::DshTrust => Some("dsh hooks trust"),
            WorkspaceTrust::ThisSession => Some("this session only"),
            WorkspaceTrust::Untrusted => None,
        }
    }
}

/// Whether the workspace `cwd` is trusted: either consent counts, Claude
/// Code's trust dialog or dsh's own `dsh hooks trust`, each for exactly
/// this directory. An unreadable trust store vouches for nothing (the
/// hooks loader reports it).
pub fn workspace_trust(home: &Path, dsh_home: &Path, cwd: &Path) -> WorkspaceTrust {
    workspace_trust_with(&dsh_files::ConfigFiles::default(), home, dsh_home, cwd)
}

/// [`workspace_trust`] through a session's reader.
pub fn workspace_trust_with(
    files: &dsh_files::ConfigFiles,
    home: &Path,
    dsh_home: &Path,
    cwd: &Path,
) -> WorkspaceTrust {
    if store::claude_json_trusts_with(files, &home.join(".claude.json"), cwd) {
        WorkspaceTrust::ClaudeJson
    } else if dsh_trust::TrustStore::load_with(files, dsh_home).is_ok_and(|s| s.trusts_project(cwd))
    {
        WorkspaceTrust::DshTrust
    } else {
        WorkspaceTrust::Untrusted
    }
}

/// Reads every settings layer and adds the command line's; the mode is the
/// flag's, else the highest-ranked `defaultMode`, else `fallback`, else
/// Claude Code's `default`.
pub fn build(requested: &Requested, at: &Where<'_>) -> Result<Built, LayeringError> {
    build_with(requested, at, &dsh_files::ConfigFiles::default())
}

/// [`build`] through a session's reader (`~/.claude.json` and `trust.json`
/// read from disk once per session; the settings files are the stack's).
pub fn build_with(
    requested: &Requested,
    at: &Where<'_>,
    files: &dsh_files::ConfigFiles,
) -> Result<Built, LayeringError> {
    // User, project, local, then `--settings` files (they rank with the
    // command line, as in Claude Code).
    let mut layers = store::stack_layers(at.settings)?;
    let mut command_line = Layer::from_cli(&requested.allowed_tools, &requested.disallowed_tools)
        .map_err(LayeringError::CommandLine)?;
    command_line
        .additional_directories
        .extend(requested.additional_directories.iter().cloned());
    layers.push(command_line);
    let mode = match requested.mode {
        Some(mode) => mode,
        None => {
            let from_settings = Permissions::effective_mode(None, &layers);
            let named = layers.iter().any(|layer| layer.default_mode.is_some());
            match at.fallback {
                Some(fallback) if !named => fallback,
                Some(_) | None => from_settings,
            }
        }
    };
    // Project allow rules apply only in a workspace the user trusts.
    let trust = if at.trusted_this_session {
        Trust::Trusted
    } else {
        workspace_trust_with(files, at.home, at.dsh_home, at.cwd).trust()
    };
    let mut permissions = Permissions::new(
        mode,
        PathContext {
            cwd: at.cwd.to_owned(),
            home: Some(at.home.to_owned()),
            base: None,
        },
    );
    for layer in layers {
        permissions.add_layer(layer, trust);
    }
    let surface = if requested.no_prompt_surface {
        PromptSurface::None
    } else {
        PromptSurface::Headless
    };
    let permissions = Arc::new(PermissionsPlugin::new(permissions, surface));
    let (home, dsh_home, cwd) = (
        at.home.to_owned(),
        at.dsh_home.to_owned(),
        at.cwd.to_owned(),
    );
    let this_session = at.trusted_this_session;
    permissions.set_reload(Arc::new(move || {
        if this_session {
            Trust::Trusted
        } else {
            workspace_trust(&home, &dsh_home, &cwd).trust()
        }
    }));
    Ok(Built {
        plugin: Arc::clone(&permissions) as Arc<dyn Plugin>,
        mode,
        permissions,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Source;
    use dsh_files::settings::SettingsSource;

    fn project() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let cwd = root.path().join("project");
        let home = root.path().join("home");
        fs_err::create_dir_all(cwd.join(".claude")).unwrap();
        fs_err::create_dir_all(&home).unwrap();
        (root, cwd, home)
    }

    /// The settings layer stack a session in `cwd` loads (no managed
    /// policy): `--settings`, local, project, user.
    fn stack(cwd: &Path, home: &Path, flags: &[PathBuf]) -> SettingsStack {
        let mut candidates: Vec<(PathBuf, SettingsSource)> = flags
            .iter()
            .map(|flag| (flag.clone(), SettingsSource::Flag))
            .collect();
        candidates.extend([
            (
                cwd.join(".claude/settings.local.json"),
                SettingsSource::Local,
            ),
            (cwd.join(".claude/settings.json"), SettingsSource::Project),
            (home.join(".claude/settings.json"), SettingsSource::User),
        ]);
        SettingsStack::load(&dsh_files::ConfigFiles::new(), &candidates, false)
    }

    #[test]
    fn the_flag_beats_settings_and_settings_beat_the_fallback() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        let empty = stack(&cwd, &home, &[]);
        let at = |settings, fallback| Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings,
            fallback,
            trusted_this_session: false,
        };
        let built = build(
            &Requested::default(),
            &at(&empty, Some(Mode::BypassPermissions)),
        )
        .unwrap();
        assert_eq!(built.mode, Mode::BypassPermissions);
        let built = build(&Requested::default(), &at(&empty, None)).unwrap();
        assert_eq!(built.mode, Mode::Default);
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"permissions":{"defaultMode":"acceptEdits"}}"#,
        )
        .unwrap();
        let settings = stack(&cwd, &home, &[]);
        let built = build(
            &Requested::default(),
            &at(&settings, Some(Mode::BypassPermissions)),
        )
        .unwrap();
        assert_eq!(built.mode, Mode::AcceptEdits);
        let flagged = Requested {
            mode: Some(Mode::Plan),
            ..Requested::default()
        };
        assert_eq!(
            build(&flagged, &at(&settings, None)).unwrap().mode,
            Mode::Plan
        );
    }

    #[test]
    fn a_bad_command_line_rule_is_named_as_such() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        let requested = Requested {
            allowed_tools: vec!["Bash(".to_owned()],
            ..Requested::default()
        };
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &stack(&cwd, &home, &[]),
            fallback: None,
            trusted_this_session: false,
        };
        let Err(error) = build(&requested, &at) else {
            panic!("an unbalanced rule was accepted");
        };
        assert!(matches!(error, LayeringError::CommandLine(_)), "{error}");
    }

    #[test]
    fn project_allow_rules_count_only_in_a_trusted_workspace() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        fs_err::write(
            cwd.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(make:*)"]}}"#,
        )
        .unwrap();
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &stack(&cwd, &home, &[]),
            fallback: None,
            trusted_this_session: false,
        };
        let args = serde_json::json!({"command": "make all"});
        let untrusted = build(&Requested::default(), &at).unwrap();
        assert_eq!(
            workspace_trust(&home, &dsh_home, &cwd),
            WorkspaceTrust::Untrusted
        );
        assert!(!matches!(
            untrusted.permissions.verdict("bash", &args),
            crate::Verdict::Allow(_)
        ));
        fs_err::write(
            home.join(".claude.json"),
            serde_json::json!({"projects": {cwd.display().to_string(): {"hasTrustDialogAccepted": true}}})
                .to_string(),
        )
        .unwrap();
        assert_eq!(
            workspace_trust(&home, &dsh_home, &cwd),
            WorkspaceTrust::ClaudeJson
        );
        let trusted = build(&Requested::default(), &at).unwrap();
        assert!(matches!(
            trusted.permissions.verdict("bash", &args),
            crate::Verdict::Allow(_)
        ));
    }

    #[test]
    fn managed_policy_rules_bite_whatever_the_other_files_allow() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        let managed = root.path().join("managed-settings.json");
        fs_err::write(
            &managed,
            r#"{"permissions":{"deny":["Bash(rm:*)"],"allow":["Bash(make:*)"]}}"#,
        )
        .unwrap();
        fs_err::create_dir_all(home.join(".claude")).unwrap();
        fs_err::write(
            home.join(".claude/settings.json"),
            r#"{"permissions":{"allow":["Bash(rm:*)"]}}"#,
        )
        .unwrap();
        let mut candidates = vec![(managed, SettingsSource::Managed)];
        candidates.push((home.join(".claude/settings.json"), SettingsSource::User));
        let settings = SettingsStack::load(&dsh_files::ConfigFiles::new(), &candidates, false);
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &settings,
            fallback: None,
            trusted_this_session: false,
        };
        let built = build(&Requested::default(), &at).unwrap();
        let verdict = |command: &str| {
            built
                .permissions
                .verdict("bash", &serde_json::json!({ "command": command }))
        };
        assert!(matches!(verdict("rm -rf x"), crate::Verdict::Deny { .. }));
        assert!(matches!(verdict("make all"), crate::Verdict::Allow(_)));
    }

    #[test]
    fn a_changed_settings_file_replaces_its_rules_with_trust_checked_again() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        let local = cwd.join(".claude/settings.local.json");
        fs_err::write(&local, r#"{"permissions":{"deny":["Bash(rm:*)"]}}"#).unwrap();
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &stack(&cwd, &home, &[]),
            fallback: None,
            trusted_this_session: false,
        };
        let built = build(&Requested::default(), &at).unwrap();
        let rm = serde_json::json!({"command": "rm x"});
        let make = serde_json::json!({"command": "make all"});
        assert!(matches!(
            built.permissions.verdict("bash", &rm),
            crate::Verdict::Deny { .. }
        ));
        // The file now allows `make` and no longer denies `rm`: the old rule
        // goes, the new allow is kept aside (the workspace is not trusted).
        fs_err::write(&local, r#"{"permissions":{"allow":["Bash(make:*)"]}}"#).unwrap();
        built
            .permissions
            .reload_layer(Source::Local, &local)
            .unwrap();
        assert!(!matches!(
            built.permissions.verdict("bash", &rm),
            crate::Verdict::Deny { .. }
        ));
        assert!(!matches!(
            built.permissions.verdict("bash", &make),
            crate::Verdict::Allow(_)
        ));
        assert_eq!(built.permissions.dropped_allow().len(), 1);
        // Trusted since: the next change is read with the new trust.
        fs_err::write(
            home.join(".claude.json"),
            serde_json::json!({"projects": {cwd.display().to_string(): {"hasTrustDialogAccepted": true}}})
                .to_string(),
        )
        .unwrap();
        built
            .permissions
            .reload_layer(Source::Local, &local)
            .unwrap();
        assert!(matches!(
            built.permissions.verdict("bash", &make),
            crate::Verdict::Allow(_)
        ));
        assert_eq!(built.permissions.dropped_allow().len(), 0);
        // A file that no longer parses keeps the rules in force.
        fs_err::write(&local, "{not json").unwrap();
        assert!(
            built
                .permissions
                .reload_layer(Source::Local, &local)
                .is_err()
        );
        assert!(matches!(
            built.permissions.verdict("bash", &make),
            crate::Verdict::Allow(_)
        ));
    }

    #[test]
    fn the_layers_are_the_stacks_documents_in_claude_codes_order() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        fs_err::create_dir_all(home.join(".claude")).unwrap();
        let rule = |behavior: &str, rule: &str| {
            format!(r#"{{"permissions":{{"{behavior}":["{rule}"]}}}}"#)
        };
        fs_err::write(
            home.join(".claude/settings.json"),
            rule("deny", "Bash(u:*)"),
        )
        .unwrap();
        fs_err::write(cwd.join(".claude/settings.json"), rule("deny", "Bash(p:*)")).unwrap();
        fs_err::write(
            cwd.join(".claude/settings.local.json"),
            rule("deny", "Bash(l:*)"),
        )
        .unwrap();
        let file = root.path().join("flag.json");
        fs_err::write(&file, rule("deny", "Bash(f:*)")).unwrap();
        let inline = PathBuf::from(rule("ask", "Bash(i:*)"));
        let settings = stack(&cwd, &home, &[file.clone(), inline]);
        // What the session parsed is what counts, not the disk now.
        for path in [&file, &home.join(".claude/settings.json")] {
            fs_err::remove_file(path).unwrap();
        }
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &settings,
            fallback: None,
            trusted_this_session: false,
        };
        let built = build(&Requested::default(), &at).unwrap();
        let rules: Vec<(String, &str, String)> = built
            .permissions
            .rules()
            .iter()
            .map(|r| (r.rule.raw.clone(), r.source.name(), r.origin.clone()))
            .collect();
        let origin = |path: PathBuf| path.display().to_string();
        assert_eq!(
            rules,
            [
                (
                    "Bash(u:*)".to_owned(),
                    "userSettings",
                    origin(home.join(".claude/settings.json"))
                ),
                (
                    "Bash(p:*)".to_owned(),
                    "projectSettings",
                    origin(cwd.join(".claude/settings.json"))
                ),
                (
                    "Bash(l:*)".to_owned(),
                    "localSettings",
                    origin(cwd.join(".claude/settings.local.json"))
                ),
                ("Bash(f:*)".to_owned(), "cliArg", origin(file)),
                // Inline `--settings` JSON counts, as in Claude Code.
                ("Bash(i:*)".to_owned(), "cliArg", "--settings".to_owned()),
            ]
        );
    }

    #[test]
    fn a_bad_layer_is_named_with_its_file_line_and_column() {
        let (root, cwd, home) = project();
        let dsh_home = root.path().join("dsh");
        let local = cwd.join(".claude/settings.local.json");
        let text = "{\n  \"permissions\": {\"deny\": [\"Bash(\"]}}";
        fs_err::write(&local, text).unwrap();
        let at = Where {
            cwd: &cwd,
            home: &home,
            dsh_home: &dsh_home,
            settings: &stack(&cwd, &home, &[]),
            fallback: None,
            trusted_this_session: false,
        };
        let Err(error) = build(&Requested::default(), &at) else {
            panic!("a bad rule was accepted");
        };
        // The text reading the file itself gives, position and all.
        let direct = Layer::from_settings_text(Source::Local, local.display().to_string(), text)
            .unwrap_err();
        assert!(
            matches!(direct, LayerError::Rule { line: 2, .. }),
            "{direct}"
        );
        assert_eq!(error.to_string(), direct.to_string());
        // A file that exists but cannot be read is named with its error.
        fs_err::remove_file(&local).unwrap();
        fs_err::create_dir(&local).unwrap();
        let at = Where {
            settings: &stack(&cwd, &home, &[]),
            ..at
        };
        let Err(error) = build(&Requested::default(), &at) else {
            panic!("an unreadable layer was accepted");
        };
        assert!(
            error
                .to_string()
                .starts_with(&format!("{}: ", local.display())),
            "{error}"
        );
    }
}
