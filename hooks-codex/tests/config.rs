//! Configuration layering, trust by Codex's hash, warnings and errors.

#![allow(clippy::unwrap_used, clippy::type_complexity)]

use std::path::Path;

use dsh_hooks::registry::DialectConfig;
use dsh_hooks_codex::config::{definition_hash, trust_key};
use dsh_hooks_codex::{
    CodexDiscovery, CodexEvent, ConfigError, EntryStatus, LayerSource, Off, TrustState, load,
};
use pretty_assertions::assert_eq;

struct Env {
    _tmp: tempfile::TempDir,
    home: std::path::PathBuf,
    project: std::path::PathBuf,
    managed: std::path::PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("work/project");
    let managed = tmp.path().join("etc-codex");
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(&managed).unwrap();
    Env {
        _tmp: tmp,
        home,
        project,
        managed,
    }
}

impl Env {
    fn discovery(&self) -> CodexDiscovery {
        let mut d = CodexDiscovery::new(&self.project, &self.home);
        d.managed_dir = Some(self.managed.clone());
        d
    }
    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    fn codex_home(&self) -> std::path::PathBuf {
        self.home.join(".codex")
    }
}

/// Hashes the real Codex 0.169 binary reported from `hooks/list` for these
/// definitions (a probe run against the installed binary; path-independent).
#[test]
fn definition_hash_matches_codex_0_169() {
    let cases: &[(
        CodexEvent,
        Option<&str>,
        &str,
        u64,
        bool,
        Option<&str>,
        Option<u64>,
        &str,
    )] = &[
        (
            CodexEvent::PreToolUse,
            Some("Bash"),
            "echo hello",
            600,
            false,
            None,
            None,
            "sha256:0db5a87976e34500eb1936b70b9d77f3e711825aa7f3a688eb4bbb0aeb07c0e7",
        ),
        (
            CodexEvent::PreToolUse,
            Some("Bash"),
            "echo two",
            30,
            true,
            Some("checking"),
            None,
            "sha256:0b2cf1327ed780ec85fb2753c4b0a6db9293fd6ba967b6e44d1e47a23e3b387d",
        ),
        (
            CodexEvent::PreToolUse,
            None,
            "echo nomatch",
            1,
            false,
            None,
            None,
            "sha256:806503bac55debb739c6dc68b46b9f572865d623ee6ba4b56398e7ef2f2c2c02",
        ),
        (
            CodexEvent::SessionStart,
            Some("startup"),
            "echo ss",
            600,
            false,
            None,
            None,
            "sha256:22d994ae7ea748b6de89d0aee7cc37d891ffdf73c41f069220bd77ac53de8546",
        ),
        (
            CodexEvent::PostToolUse,
            Some("Edit|Write"),
            "echo post",
            5,
            false,
            None,
            None,
            "sha256:eb886a37384104cb9b9bf4bdb445610871656e7ac4e78a89b6d74de7062008ae",
        ),
        (
            CodexEvent::UserPromptSubmit,
            None,
            "echo e-ups",
            600,
            false,
            None,
            Some(100),
            "sha256:cdcc7e8d6ead35abd8e1c6a9ad745a112fef2d71beab8f628b1d143127c3a3e9",
        ),
        (
            CodexEvent::SessionEnd,
            None,
            "echo e-send",
            1,
            false,
            None,
            None,
            "sha256:263612c894e8a0429f7e04074a8d5641cd5f273de1c5effab2cfb94a047e28d8",
        ),
        (
            CodexEvent::PreToolUse,
            Some("Bash"),
            "echo héllo \"q\"",
            600,
            false,
            None,
            None,
            "sha256:e5ade447d534e974805196f2fa20ea89b0d4c6716f7e7f2dc99873d53c0e240e",
        ),
    ];
    for (event, matcher, command, timeout, is_async, status, limit, expected) in cases {
        assert_eq!(
            definition_hash(
                *event, *matcher, command, *timeout, *is_async, *status, *limit
            ),
            *expected,
            "{event} {command}"
        );
    }
}

#[test]
fn layers_add_up_in_codex_order_with_keys_and_trust() {
    let e = env();
    let user_json = e.codex_home().join("hooks.json");
    e.write(
        &user_json,
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo stop"}]}],
            "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hello"},
                                                     {"type":"command","command":"echo off"}]}]}}"#,
    );
    let trusted = definition_hash(
        CodexEvent::PreToolUse,
        Some("Bash"),
        "echo hello",
        600,
        false,
        None,
        None,
    );
    let project = e.project.display().to_string();
    let key0 = trust_key(&user_json, CodexEvent::PreToolUse, 0, 0);
    let key1 = trust_key(&user_json, CodexEvent::PreToolUse, 0, 1);
    let key_stop = trust_key(&user_json, CodexEvent::Stop, 0, 0);
    e.write(
        &e.codex_home().join("config.toml"),
        &format!(
            "[hooks.state.\"{key0}\"]\ntrusted_hash = \"{trusted}\"\n\
             [hooks.state.\"{key1}\"]\nenabled = false\n\
             [hooks.state.\"{key_stop}\"]\ntrusted_hash = \"sha256:old\"\n\
             [projects.\"{project}\"]\ntrust_level = \"trusted\"\n"
        ),
    );
    e.write(
        &e.project.join(".codex/hooks.json"),
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"echo proj"}]}]}}"#,
    );
    e.write(
        &e.managed.join("hooks.json"),
        r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo managed"}]}]}}"#,
    );
    let config = load(&e.discovery()).unwrap();
    let entries = config.entries();
    let summary: Vec<(String, String, LayerSource, TrustState)> = entries
        .iter()
        .map(|entry| {
            (
                entry.event.clone(),
                entry.command.clone().unwrap(),
                entry.source,
                entry.trust,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "UserPromptSubmit".into(),
                "echo managed".into(),
                LayerSource::System,
                TrustState::Managed
            ),
            (
                "PreToolUse".into(),
                "echo hello".into(),
                LayerSource::User,
                TrustState::Trusted
            ),
            (
                "PreToolUse".into(),
                "echo off".into(),
                LayerSource::User,
                TrustState::Disabled
            ),
            (
                "Stop".into(),
                "echo stop".into(),
                LayerSource::User,
                TrustState::Modified
            ),
            (
                "PreToolUse".into(),
                "echo proj".into(),
                LayerSource::Project,
                TrustState::Untrusted
            ),
        ]
    );
    assert_eq!(entries[1].key, key0);
    assert_eq!(
        entries[1].origin,
        format!("{}#hooks.PreToolUse[0].hooks[0]", user_json.display())
    );
    assert!(matches!(
        entries[2].status,
        EntryStatus::Off(Off::Disabled(_))
    ));
    assert_eq!(entries[1].timeout_secs, 600);
}

/// `dsh hooks list` statuses: Codex's own `enabled = false`, a handler dsh
/// cannot run, and a project hook dsh's trust leaves out.
#[test]
fn listing_statuses_say_why_a_hook_does_not_run() {
    let e = env();
    e.write(
        &e.project.join(".codex/hooks.json"),
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"a"},{"type":"prompt"},{"type":"command","command":"off"}]}]}}"#,
    );
    let key = trust_key(
        &e.project.join(".codex/hooks.json"),
        CodexEvent::PreToolUse,
        0,
        2,
    );
    let state = format!("[hooks.state.\"{key}\"]\nenabled = false\n");
    e.write(&e.codex_home().join("config.toml"), &state);
    let mut config: Box<dyn DialectConfig> = Box::new(load(&e.discovery()).unwrap());
    let first = config.hooks()[0].origin.clone();
    config.disable_origins(&[first], "not trusted");
    let rows: Vec<(String, bool)> = (config.hooks().into_iter())
        .map(|hook| (hook.status, hook.active))
        .collect();
    let off = format!("disabled: enabled = false in [hooks.state.\"{key}\"]");
    let prompt = "unsupported: prompt hooks are not supported (Codex 0.169 skips them too)";
    assert_eq!(
        rows,
        [
            ("disabled: not trusted".to_owned(), false),
            (prompt.to_owned(), false),
            (off, false)
        ]
    );
}

#[test]
fn untrusted_project_is_reported_and_counts_as_untrusted() {
    let e = env();
    e.write(
        &e.project.join(".codex/hooks.json"),
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"echo proj"}]}]}}"#,
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.entries()[0].trust, TrustState::Untrusted);
    assert!(
        config
            .notices()
            .iter()
            .any(|n| n.contains("is not trusted in Codex")),
        "{:?}",
        config.notices()
    );
}

#[test]
fn both_formats_in_one_layer_warn_with_codex_wording() {
    let e = env();
    let json = e.codex_home().join("hooks.json");
    let toml = e.codex_home().join("config.toml");
    e.write(
        &json,
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"echo a"}]}]}}"#,
    );
    e.write(&toml, "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"echo b\"\n");
    let config = load(&e.discovery()).unwrap();
    let expected = format!(
        "loading hooks from both {} and {}; prefer a single representation for this layer",
        json.display(),
        toml.display()
    );
    assert!(
        config.notices().contains(&expected),
        "{:?}",
        config.notices()
    );
    let commands: Vec<_> = config
        .entries()
        .into_iter()
        .map(|entry| entry.command.unwrap())
        .collect();
    assert_eq!(commands, vec!["echo a", "echo b"]);
    assert!(
        config.entries()[1]
            .key
            .ends_with("config.toml:pre_tool_use:0:0")
    );
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let e = env();
    let json = e.codex_home().join("hooks.json");
    e.write(
        &json,
        "{\"hooks\": {\n  \"PreToolUse\": [ {\"hooks\": [ ,\n",
    );
    let err = load(&e.discovery()).unwrap_err();
    match &err {
        ConfigError::Json {
            path, line, column, ..
        } => {
            assert_eq!(path, &json);
            assert_eq!((*line, *column), (2, 31));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2:31:", json.display())),
        "{err}"
    );
}

#[test]
fn malformed_toml_names_file_line_and_column() {
    let e = env();
    let toml = e.codex_home().join("config.toml");
    e.write(&toml, "model = \"x\"\n[hooks\nfoo = 1\n");
    let err = load(&e.discovery()).unwrap_err();
    match &err {
        ConfigError::Toml {
            path, line, column, ..
        } => {
            assert_eq!(path, &toml);
            assert_eq!(*line, 2);
            assert!(*column >= 1);
        }
        other => panic!("{other:?}"),
    }
    // A type error inside [hooks] is located too.
    e.write(&toml, "[[hooks.PreToolUse]]\nmatcher = 3\n");
    match load(&e.discovery()).unwrap_err() {
        ConfigError::Toml { line, .. } => assert_eq!(line, 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn notices_for_unsupported_handlers_events_and_invalid_matchers() {
    let e = env();
    let json = e.codex_home().join("hooks.json");
    e.write(
        &json,
        r#"{"hooks":{
          "PreToolUse":[{"matcher":"(unclosed","hooks":[{"type":"command","command":"echo bad"}]},
                        {"hooks":[{"type":"prompt","prompt":"x"},{"type":"agent"},{"type":"mcp_tool","server":"s","tool":"t"}]}],
          "SubagentStart":[{"hooks":[{"type":"command","command":"echo c"}]}],
          "Stop":[{"hooks":[{"type":"command","command":"echo s","additionalContextLimit":5}]}],
          "SessionEnd":[{"hooks":[{"type":"command","command":"echo e","timeout":30}]}],
          "StopFailure":[{"hooks":[{"type":"command","command":"echo sf"}]}]}}"#,
    );
    let config = load(&e.discovery()).unwrap();
    let notices = config.notices();
    let path = json.display();
    for expected in [
        format!(
            "invalid matcher \"(unclosed\" in {path}: regex parse error:\n    (unclosed\n    ^\nerror: unclosed group"
        ),
        format!("skipping prompt hook in {path}: prompt hooks are not supported yet"),
        format!("skipping agent hook in {path}: agent hooks are not supported yet"),
        format!(
            "ignoring additionalContextLimit for Stop hook in {path}: this event cannot emit additionalContext"
        ),
        format!("clamping SessionEnd hook timeout to 3s in {path}"),
    ] {
        assert!(
            notices.contains(&expected),
            "missing {expected:?} in {notices:#?}"
        );
    }
    assert!(notices.iter().any(|n| n.contains("mcp_tool")));
    // Every Codex event has a seam now (SubagentStart included): no "not fired" notice.
    assert!(
        !notices.iter().any(|n| n.contains("is not fired by dsh")),
        "{notices:#?}"
    );
    assert!(notices.iter().any(|n| n.contains("StopFailure")));
    let end = config
        .entries()
        .into_iter()
        .find(|entry| entry.event == "SessionEnd")
        .unwrap();
    assert_eq!(end.timeout_secs, 3);
    let subagent = config
        .entries()
        .into_iter()
        .find(|entry| entry.event == "SubagentStart")
        .unwrap();
    assert!(matches!(subagent.status, EntryStatus::Active));
}

#[test]
fn notify_is_read_from_config_toml() {
    let e = env();
    e.write(
        &e.codex_home().join("config.toml"),
        "notify = [\"notify-send\", \"-a\"]\n",
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.notify().unwrap().argv, vec!["notify-send", "-a"]);
}

#[test]
fn codex_home_override_and_defaults() {
    let e = env();
    let mut d = e.discovery();
    assert_eq!(d.codex_home(), e.home.join(".codex"));
    d.codex_home = Some(e.home.join("elsewhere"));
    e.write(
        &e.home.join("elsewhere/hooks.json"),
        r#"{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"echo x","timeout":0}]}]}}"#,
    );
    let config = load(&d).unwrap();
    assert_eq!(config.entries().len(), 1);
    assert_eq!(config.entries()[0].timeout_secs, 1, "timeout minimum is 1");
}

/// A project's own config.toml cannot consent for the user: neither its
/// `[projects] trust_level` nor its `[hooks.state] trusted_hash` counts.
#[test]
fn a_project_cannot_mark_itself_trusted() {
    let e = env();
    let project_json = e.project.join(".codex/hooks.json");
    e.write(
        &project_json,
        r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"echo proj"}]}]}}"#,
    );
    let hash = definition_hash(
        CodexEvent::PreToolUse,
        None,
        "echo proj",
        600,
        false,
        None,
        None,
    );
    let key = trust_key(&project_json, CodexEvent::PreToolUse, 0, 0);
    let project = e.project.display().to_string();
    e.write(
        &e.project.join(".codex/config.toml"),
        &format!(
            "[projects.\"{project}\"]\ntrust_level = \"trusted\"\n\
             [hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
        ),
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.entries()[0].trust, TrustState::Untrusted);
    assert!(
        config
            .notices()
            .iter()
            .any(|n| n.contains("ignoring [projects] trust_level")),
        "{:?}",
        config.notices()
    );
    // The same state from the user's own configuration does count.
    e.write(
        &e.codex_home().join("config.toml"),
        &format!(
            "[projects.\"{project}\"]\ntrust_level = \"trusted\"\n\
             [hooks.state.\"{key}\"]\ntrusted_hash = \"{hash}\"\n"
        ),
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.entries()[0].trust, TrustState::Trusted);
}

/// A project's `notify` is a project hook: listed, untrusted until the
/// user trusts the project and its hash, never self-trusted.
#[test]
fn a_project_notify_is_listed_and_trusted_like_a_project_hook() {
    let e = env();
    let project_toml = e.project.join(".codex/config.toml");
    let project = e.project.display().to_string();
    e.write(
        &project_toml,
        &format!(
            "notify = [\"sh\", \"-c\", \"touch pwned\"]\n\
             [projects.\"{project}\"]\ntrust_level = \"trusted\"\n\
             [hooks.state.\"{}:notify\"]\ntrusted_hash = \"whatever\"\n",
            project_toml.display()
        ),
    );
    let config = load(&e.discovery()).unwrap();
    let notify = config.notify().unwrap();
    assert_eq!(notify.layer, LayerSource::Project);
    assert_eq!(notify.trust, TrustState::Untrusted);
    let entries = config.entries();
    let entry = entries.iter().find(|e| e.event == "notify").unwrap();
    assert_eq!(entry.origin, format!("{}#notify", project_toml.display()));
    assert_eq!(entry.command.as_deref(), Some("sh -c touch pwned"));
    assert_eq!(entry.source, LayerSource::Project);
    assert_eq!(entry.trust, TrustState::Untrusted);
    assert!(!TrustState::Untrusted.runs_when_trusted_only());

    // Trusted from the user's configuration, with its current hash.
    e.write(
        &e.codex_home().join("config.toml"),
        &format!(
            "[projects.\"{project}\"]\ntrust_level = \"trusted\"\n\
             [hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
            notify.key(),
            notify.definition_hash()
        ),
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.notify().unwrap().trust, TrustState::Trusted);

    // Switched off by the user's trust flow: it no longer runs.
    let mut config = config;
    let origin = config.notify().unwrap().origin_label();
    config.disable_origins(&[origin], "not trusted");
    assert!(config.notify().is_none());
}

#[test]
fn a_user_notify_counts_as_trusted() {
    let e = env();
    e.write(
        &e.codex_home().join("config.toml"),
        "notify = [\"notify-send\"]\n",
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(config.notify().unwrap().trust, TrustState::Trusted);
    assert_eq!(config.notify().unwrap().layer, LayerSource::User);
}

/// `approval_policy` and `sandbox_mode` come from every `config.toml`
/// layer, the nearest (last) one winning; a confining sandbox is reported
/// as not enforced, and a policy alone makes the configuration non-empty.
#[test]
fn approval_policy_and_sandbox_mode_are_layered() {
    use dsh_hooks_codex::config::approval::{ApprovalPolicy, SandboxMode};
    let e = env();
    e.write(
        &e.codex_home().join("config.toml"),
        "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n",
    );
    let config = load(&e.discovery()).unwrap();
    let approval = config.approval();
    assert_eq!(
        approval.policy.as_ref().map(|p| p.value),
        Some(ApprovalPolicy::Never)
    );
    assert_eq!(
        approval.sandbox.as_ref().map(|s| s.value),
        Some(SandboxMode::WorkspaceWrite)
    );
    assert!(!config.is_empty(), "a policy alone still decides approvals");
    assert!(
        config.notices().iter().any(|n| n
            .starts_with("sandbox_mode=workspace-write requested; no sandbox is enforced by dsh")),
        "{:?}",
        config.notices()
    );

    e.write(
        &e.project.join(".codex/config.toml"),
        "approval_policy = \"on-request\"\nsandbox_mode = \"danger-full-access\"\n",
    );
    let config = load(&e.discovery()).unwrap();
    let policy = config.approval().policy.clone().unwrap();
    assert_eq!(policy.value, ApprovalPolicy::OnRequest);
    assert_eq!(policy.origin, e.project.join(".codex/config.toml"));
    assert!(
        !config
            .notices()
            .iter()
            .any(|n| n.contains("no sandbox is enforced")),
        "full access asks for no sandbox: {:?}",
        config.notices()
    );

    e.write(
        &e.project.join(".codex/config.toml"),
        "approval_policy = \"sometimes\"\n",
    );
    let config = load(&e.discovery()).unwrap();
    assert_eq!(
        config.approval().policy.as_ref().map(|p| p.value),
        Some(ApprovalPolicy::Never),
        "an unknown value is ignored, the user layer's stays"
    );
    assert!(
        config
            .notices()
            .iter()
            .any(|n| n.contains("ignoring approval_policy = \"sometimes\"")),
        "{:?}",
        config.notices()
    );

    let empty = env();
    assert!(load(&empty.discovery()).unwrap().is_empty());
}

/// A project's own `approval_policy` and `sandbox_mode` wait for trust:
/// dsh's workspace trust (`ProjectSettings::Apply`) or Codex's own
/// user-level `trust_level`.
#[test]
fn an_untrusted_project_layer_keeps_its_approval_policy_to_itself() {
    use dsh_hooks::project_settings::ProjectSettings;
    use dsh_hooks_codex::config::approval::ApprovalPolicy;
    let e = env();
    e.write(
        &e.codex_home().join("config.toml"),
        "approval_policy = \"on-request\"\n",
    );
    e.write(
        &e.project.join(".codex/config.toml"),
        "approval_policy = \"never\"\nsandbox_mode = \"read-only\"\n",
    );
    let mut discovery = e.discovery();
    discovery.project_settings = ProjectSettings::HoldBack;
    let config = load(&discovery).unwrap();
    assert_eq!(
        config.approval().policy.as_ref().map(|p| p.value),
        Some(ApprovalPolicy::OnRequest)
    );
    let keys: Vec<&str> = config.held_back.iter().map(|h| h.key.as_str()).collect();
    assert_eq!(keys, ["approval_policy", "sandbox_mode"]);

    // Codex's own trust of the project counts.
    e.write(
        &e.codex_home().join("config.toml"),
        &format!(
            "approval_policy = \"on-request\"\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            e.project.display()
        ),
    );
    let config = load(&discovery).unwrap();
    assert_eq!(
        config.approval().policy.as_ref().map(|p| p.value),
        Some(ApprovalPolicy::Never)
    );
    assert!(config.held_back.is_empty());
}
