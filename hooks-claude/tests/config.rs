//! Settings discovery, merge, dedup and the global switches, with temporary
//! HOME, project and managed directories (a developer's real configuration
//! is never read).
#![allow(clippy::unwrap_used)]

use std::path::Path;

use dsh_files::ConfigFiles;
use dsh_files::settings::SettingsStack;
use dsh_hooks_claude::{
    ClaudeDiscovery, ClaudeOptions, ConfigError, HookEvent, load_with_options, project_slug,
};
use pretty_assertions::assert_eq;

struct Dirs {
    _tmp: tempfile::TempDir,
    discovery: ClaudeDiscovery,
}

fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = tmp.path().join("proj");
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let mut discovery = ClaudeDiscovery::new(&project, &home, &tmp.path().join("dsh"));
    discovery.managed_dir = tmp.path().join("managed");
    Dirs {
        _tmp: tmp,
        discovery,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn pre(command: &str) -> String {
    format!(
        r#"{{"hooks":{{"PreToolUse":[{{"matcher":"Bash","hooks":[{{"type":"command","command":"{command}"}}]}}]}}}}"#
    )
}

fn commands(
    config: &dsh_hooks_claude::ClaudeConfig,
    event: HookEvent,
    subject: &str,
) -> Vec<String> {
    config
        .select(event, Some(subject))
        .into_iter()
        .map(|h| h.command_text())
        .collect()
}

#[test]
fn layers_accumulate_and_identical_commands_run_once() {
    // u_settings_layers: user, project and local hooks all run; the same
    // command in all three runs once.
    let d = dirs();
    let user = d.discovery.home.join(".claude/settings.json");
    let project = d.discovery.cwd.join(".claude/settings.json");
    let local = d.discovery.cwd.join(".claude/settings.local.json");
    let both = |own: &str| {
        format!(
            r#"{{"hooks":{{"PreToolUse":[{{"matcher":"Bash","hooks":[{{"type":"command","command":"{own}"}},{{"type":"command","command":"same"}}]}}]}}}}"#
        )
    };
    write(&user, &both("in_user"));
    write(&project, &both("in_project"));
    write(&local, &both("in_local"));
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["in_local", "same", "in_project", "in_user"]
    );
    assert!(commands(&config, HookEvent::PreToolUse, "Write").is_empty());
    assert_eq!(config.entries().len(), 6);
    assert!(
        config.entries()[0]
            .origin
            .ends_with("settings.local.json#hooks.PreToolUse[0].hooks[0]")
    );
}

#[test]
fn dedup_across_matcher_groups_of_one_file() {
    // o1_multi_hooks: o_dup under "Bash" and "*" ran once.
    let d = dirs();
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"hooks":{"PreToolUse":[
            {"matcher":"Bash","hooks":[{"type":"command","command":"a"},{"type":"command","command":"dup"}]},
            {"matcher":"*","hooks":[{"command":"dup","type":"command"}]}]}}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["a", "dup"]
    );
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Read"),
        vec!["dup"]
    );
}

#[test]
fn disable_all_hooks_precedence() {
    // Project `disableAllHooks` (u2) switches off every non-managed hook;
    // a higher layer setting it false wins over a lower one setting true.
    let d = dirs();
    write(
        &d.discovery.home.join(".claude/settings.json"),
        &pre("user_hook"),
    );
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"disableAllHooks": true, "hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"ss"}]}]}}"#,
    );
    write(
        &d.discovery.managed_dir.join("managed-settings.json"),
        &pre("managed_hook"),
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["managed_hook"]
    );
    assert!(commands(&config, HookEvent::SessionStart, "startup").is_empty());
    assert!(
        config
            .entries()
            .iter()
            .any(|e| e.status.starts_with("disabled: disableAllHooks"))
    );

    write(
        &d.discovery.cwd.join(".claude/settings.local.json"),
        r#"{"disableAllHooks": false}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["managed_hook", "user_hook"]
    );

    write(
        &d.discovery
            .managed_dir
            .join("managed-settings.d/10-off.json"),
        r#"{"disableAllHooks": true}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert!(commands(&config, HookEvent::PreToolUse, "Bash").is_empty());
}

#[test]
fn allow_managed_hooks_only() {
    let d = dirs();
    write(
        &d.discovery.home.join(".claude/settings.json"),
        &pre("user_hook"),
    );
    write(
        &d.discovery.managed_dir.join("managed-settings.json"),
        &pre("managed_hook").replacen('{', r#"{"allowManagedHooksOnly": true,"#, 1),
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["managed_hook"]
    );
}

#[test]
fn managed_hooks_only_and_a_user_disable_all_hooks_keep_both_texts() {
    // The user's layer is off for the managed policy's reason, and the
    // notice still names the user's own `disableAllHooks`.
    let d = dirs();
    let user = d.discovery.home.join(".claude/settings.json");
    let managed = d.discovery.managed_dir.join("managed-settings.json");
    write(
        &user,
        &pre("user_hook").replacen('{', r#"{"disableAllHooks": true,"#, 1),
    );
    write(
        &managed,
        &pre("managed_hook").replacen('{', r#"{"allowManagedHooksOnly": true,"#, 1),
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    let statuses: Vec<String> = config.entries().into_iter().map(|e| e.status).collect();
    assert_eq!(
        statuses,
        vec![
            "active".to_owned(),
            format!("disabled: allowManagedHooksOnly in {}", managed.display()),
        ]
    );
    assert!(
        config.notices().contains(&format!(
            "non-managed hooks disabled by disableAllHooks in {}",
            user.display()
        )),
        "{:?}",
        config.notices()
    );
}

#[test]
fn the_switches_are_the_handed_in_settings_stacks_decision() {
    // The session's stack decided `disableAllHooks` from the file as it
    // was read; the bridge applies that decision, not a second one.
    let d = dirs();
    let user = d.discovery.home.join(".claude/settings.json");
    write(
        &user,
        &pre("user_hook").replacen('{', r#"{"disableAllHooks": true,"#, 1),
    );
    let stack = SettingsStack::load(&ConfigFiles::new(), &d.discovery.candidates(), false);
    write(&user, &pre("user_hook"));
    let mut discovery = d.discovery.clone();
    discovery.settings = Some(stack.clone());
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        config.entries()[0].status,
        format!("disabled: disableAllHooks in {}", user.display())
    );
    // A stack of other candidates (or another trust) is not this
    // session's: the bridge loads its own through its reader.
    discovery.extra_settings.push(user.clone());
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    assert!(config.entries().iter().all(|e| e.status == "active"));
    discovery.extra_settings.clear();
    discovery.project_settings = dsh_hooks::project_settings::ProjectSettings::HoldBack;
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(config.entries()[0].status, "active");
}

#[test]
fn extra_settings_files_are_a_layer_and_must_exist() {
    let d = dirs();
    let extra = d.discovery.cwd.join("extra.json");
    write(&extra, &pre("from_flag"));
    let mut discovery = d.discovery.clone();
    discovery.extra_settings.push(extra);
    let config = load_with_options(&discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["from_flag"]
    );

    discovery
        .extra_settings
        .push(d.discovery.cwd.join("missing.json"));
    let error = load_with_options(&discovery, ClaudeOptions::default()).unwrap_err();
    assert!(error.to_string().contains("missing.json"), "{error}");
}

#[test]
fn malformed_json_names_file_line_and_column() {
    let d = dirs();
    let path = d.discovery.cwd.join(".claude/settings.json");
    write(
        &path,
        "{\n  \"hooks\": {\n    \"PreToolUse\": [,]\n  }\n}\n",
    );
    let error = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap_err();
    match &error {
        ConfigError::Json {
            path: p,
            line,
            column,
            ..
        } => {
            assert_eq!(p, &path);
            assert_eq!((*line, *column), (3, 20));
        }
        other => panic!("{other:?}"),
    }
    let text = error.to_string();
    assert!(text.contains(&format!("{}:3:20", path.display())), "{text}");
}

#[test]
fn invalid_regex_names_file_event_and_pattern() {
    let d = dirs();
    let path = d.discovery.cwd.join(".claude/settings.json");
    write(
        &path,
        r#"{"hooks":{"PostToolUse":[{"matcher":"Edit|(Write","hooks":[{"type":"command","command":"x"}]}]}}"#,
    );
    let error = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap_err();
    let text = error.to_string();
    assert!(text.contains(&path.display().to_string()), "{text}");
    assert!(text.contains("PostToolUse"), "{text}");
    assert!(text.contains("Edit|(Write"), "{text}");
}

#[test]
fn matchers_on_events_that_ignore_them_are_never_compiled() {
    // Claude Code ignores `matcher` on Stop; a pattern it would never
    // compile must not stop dsh from starting, and the hook runs every time.
    let d = dirs();
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"hooks":{"Stop":[{"matcher":"(","hooks":[{"type":"command","command":"stop-hook"}]}]}}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    let selected: Vec<String> = config
        .select(HookEvent::Stop, None)
        .into_iter()
        .map(|h| h.command_text())
        .collect();
    assert_eq!(selected, vec!["stop-hook".to_owned()]);
}

#[test]
fn unknown_events_unfired_events_and_unsupported_types_are_notices() {
    let d = dirs();
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"hooks":{
            "NoSuchEvent":[{"hooks":[{"type":"command","command":"a"}]}],
            "TeammateIdle":[{"hooks":[{"type":"command","command":"b"}]}],
            "Stop":[{"hooks":[{"type":"prompt","prompt":"ok?"},{"type":"prompt","prompt":"again?"},{"type":"agent","prompt":"x"}]}],
            "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"c","args":["--flag","${CLAUDE_PROJECT_DIR}"]}]}]
        }}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    let notices = config.notices().join("\n");
    assert!(
        notices.contains("unknown hook event `NoSuchEvent`"),
        "{notices}"
    );
    assert!(notices.contains("TeammateIdle"), "{notices}");
    assert_eq!(notices.matches("`prompt` hooks").count(), 1, "{notices}");
    assert!(notices.contains("(2 configured"), "{notices}");
    assert!(notices.contains("`agent` hooks"), "{notices}");
    let statuses: Vec<String> = config.entries().into_iter().map(|e| e.status).collect();
    assert_eq!(
        statuses.iter().filter(|s| *s == "active").count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["c --flag ${CLAUDE_PROJECT_DIR}"]
    );
    assert!(config.select(HookEvent::Stop, None).is_empty());
}

/// A group's `matcher`: `null` is no matcher (every subject), anything but
/// a string skips the group with a notice quoting it as written.
#[test]
fn a_null_matcher_matches_all_and_a_wrong_typed_one_skips_its_group() {
    let d = dirs();
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"hooks":{"PreToolUse":[
            {"matcher":null,"hooks":[{"type":"command","command":"any"}]},
            {"matcher":["Bash", 1],"hooks":[{"type":"command","command":"listed"}]},
            {"matcher":7,"hooks":[{"type":"command","command":"seven"}]},
            {"matcher":"Bash","hooks":[{"type":"command","command":"bash"}]}
        ]}}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    assert_eq!(
        commands(&config, HookEvent::PreToolUse, "Bash"),
        vec!["any", "bash"]
    );
    let file = d.discovery.cwd.join(".claude/settings.json");
    let skipped: Vec<String> = config
        .notices()
        .into_iter()
        .filter(|n| n.contains(".matcher is not a string"))
        .collect();
    assert_eq!(
        skipped,
        [
            format!(
                r#"{}#hooks.PreToolUse[1].matcher is not a string (["Bash",1]); group ignored"#,
                file.display()
            ),
            format!(
                "{}#hooks.PreToolUse[2].matcher is not a string (7); group ignored",
                file.display()
            ),
        ]
    );
}

#[test]
fn default_timeouts_and_matcher_subjects() {
    let d = dirs();
    write(
        &d.discovery.cwd.join(".claude/settings.json"),
        r#"{"hooks":{
            "UserPromptSubmit":[{"matcher":"ignored-on-this-event","hooks":[{"type":"command","command":"u"}]}],
            "SessionStart":[{"matcher":"resume","hooks":[{"type":"command","command":"r","timeout":5}]}]
        }}"#,
    );
    let config = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap();
    let entries = config.entries();
    assert_eq!(entries[0].timeout_secs, 30.0);
    assert_eq!(entries[1].timeout_secs, 5.0);
    assert_eq!(
        config
            .select(HookEvent::UserPromptSubmit, Some("whatever"))
            .len(),
        1
    );
    assert!(
        config
            .select(HookEvent::SessionStart, Some("startup"))
            .is_empty()
    );
    assert_eq!(
        config.select(HookEvent::SessionStart, Some("resume")).len(),
        1
    );
}

#[test]
fn slug_replaces_non_alphanumerics() {
    assert_eq!(
        project_slug(Path::new("/tmp/a.b/my proj")),
        "-tmp-a-b-my-proj"
    );
    let long = format!("/{}", "x".repeat(300));
    let slug = project_slug(Path::new(&long));
    assert!(slug.len() > 200 && slug.len() < 230, "{slug}");
}

/// A timeout too large for a deadline is a configuration error naming the
/// file and the field (it used to panic in `Duration::from_secs_f64`).
#[test]
fn a_timeout_no_deadline_can_hold_is_a_config_error() {
    let d = dirs();
    let project = d.discovery.cwd.join(".claude/settings.json");
    write(
        &project,
        r#"{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
            {"type":"command","command":"true","timeout":5},
            {"type":"command","command":"false","timeout":1e20}
        ]}]}}"#,
    );
    let error = load_with_options(&d.discovery, ClaudeOptions::default()).unwrap_err();
    match &error {
        ConfigError::InvalidTimeout { path, field, value } => {
            assert_eq!(path, &project);
            assert_eq!(field, "hooks.PreToolUse[0].hooks[1].timeout");
            assert_eq!(value.parse::<f64>().unwrap(), 1e20);
        }
        other => panic!("{other:?}"),
    }
    let text = error.to_string();
    assert!(text.contains(&project.display().to_string()), "{text}");
    assert!(
        text.contains("hooks.PreToolUse[0].hooks[1].timeout"),
        "{text}"
    );
}

#[test]
fn candidates_list_every_source_in_precedence_order() {
    let root = tempfile::tempdir().unwrap();
    let managed = root.path().join("managed");
    std::fs::create_dir_all(managed.join("managed-settings.d")).unwrap();
    for name in ["b.json", "a.json", "notes.txt"] {
        std::fs::write(managed.join("managed-settings.d").join(name), "{}").unwrap();
    }
    let mut discovery = ClaudeDiscovery::new("/p", "/h", root.path());
    discovery.managed_dir = managed.clone();
    discovery.extra_settings = vec!["/x/flag.json".into()];
    let listed: Vec<(String, &str)> = discovery
        .candidates()
        .into_iter()
        .map(|(path, source)| (path.display().to_string(), source.as_str()))
        .collect();
    let dropins = managed.join("managed-settings.d");
    assert_eq!(
        listed,
        vec![
            (
                managed.join("managed-settings.json").display().to_string(),
                "managed"
            ),
            (dropins.join("a.json").display().to_string(), "managed"),
            (dropins.join("b.json").display().to_string(), "managed"),
            ("/x/flag.json".to_owned(), "flag"),
            ("/p/.claude/settings.local.json".to_owned(), "local"),
            ("/p/.claude/settings.json".to_owned(), "project"),
            ("/h/.claude/settings.json".to_owned(), "user"),
        ]
    );
}
