//! A hermetic test context and snapshot normalization.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fixture file by name.
pub fn fixture(name: &str) -> PathBuf {
    repo_root().join("fixtures").join(name)
}

/// Whether `test`, which drives a pinned client nobody on this project
/// wrote (`missing`: why that client cannot run here), can go on: when it
/// cannot, the test is skipped with the reason on stderr, except in CI
/// (`CI=true`, where `.ci/run` installs every client), where it fails.
pub fn client_ready(test: &str, missing: Option<String>) -> bool {
    let Some(reason) = missing else {
        return true;
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI must run {test}: {reason}"
    );
    eprintln!("skipped {test}: {reason}");
    false
}

/// Why the npm client in `tests/<dir>` cannot run: `file` (below its
/// `node_modules`) is absent, or `node` is not on PATH. `npm_ci` is how
/// `.ci/run` installs it.
pub fn npm_client_missing(dir: &str, file: &str, npm_ci: &str) -> Option<String> {
    let installed = repo_root()
        .join("tests")
        .join(dir)
        .join("node_modules")
        .join(file);
    if !installed.is_file() {
        return Some(format!(
            "{} is absent; run `(cd tests/{dir} && {npm_ci})`",
            installed.display()
        ));
    }
    if std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_err()
    {
        return Some("`node` is not on PATH".to_owned());
    }
    None
}

/// The `dsh` binary under test: `$DSH_TEST_BIN` when set (CI points it
/// at the release binary `cargo install` put in place, so the smoke suite
/// runs what users run), else the one cargo built for this test run.
pub fn dsh_bin() -> PathBuf {
    std::env::var_os("DSH_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| assert_cmd::cargo::cargo_bin("dsh"))
}

/// A temporary project directory with its own HOME, DSH_HOME and CODEX_HOME.
pub struct TestContext {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl TestContext {
    pub fn new() -> Self {
        TestContext {
            project: tempfile::tempdir().expect("temp project"),
            home: tempfile::tempdir().expect("temp home"),
        }
    }

    /// The project directory, canonicalized (what dsh reports as cwd).
    pub fn project(&self) -> PathBuf {
        self.project
            .path()
            .canonicalize()
            .expect("canonical project")
    }

    pub fn home(&self) -> PathBuf {
        self.home.path().canonicalize().expect("canonical home")
    }

    /// Copies a directory tree into the project (hook scripts, settings).
    pub fn copy_into_project(&self, from: &Path) {
        copy_tree(from, &self.project());
    }

    /// `dsh` with cwd = project and a pinned environment.
    pub fn dsh(&self) -> assert_cmd::Command {
        assert_cmd::Command::from_std(self.dsh_std())
    }

    /// `program` in the project with only this context's environment
    /// (PATH, HOME, DSH_HOME, CODEX_HOME): a client that starts dsh.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        cmd.current_dir(self.project())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.home())
            .env("DSH_HOME", self.home().join(".dsh"))
            .env("CODEX_HOME", self.home().join(".codex"));
        cmd
    }

    /// [`TestContext::dsh`] as a `std` command (to spawn and signal it).
    pub fn dsh_std(&self) -> std::process::Command {
        let mut cmd = self.command(dsh_bin());
        cmd.env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .env("LANG", "C.UTF-8");
        cmd
    }

    /// Replaces this context's paths and volatile values in `text`.
    pub fn redact(&self, text: &str) -> String {
        let slug = dsh_hooks_claude::project_slug(&self.project());
        redact_text(
            text,
            &[
                (self.project(), "[PROJECT]"),
                (self.home(), "[HOME]"),
                (repo_root(), "[REPO]"),
            ],
        )
        .replace(&slug, "[PROJECT_SLUG]")
    }
}

/// Copies the tree `from` into `to`, keeping file modes (hook scripts are
/// executables). A missing `from` copies nothing.
pub fn copy_tree(from: &Path, to: &Path) {
    copy_tree_with(from, to, &[]);
}

/// [`copy_tree`], then writes each `(placeholder, path)` of `paths` into
/// the text of every file that holds the placeholder (fixtures name the
/// directories a test only knows when it runs).
pub fn copy_tree_with(from: &Path, to: &Path, paths: &[(&str, &Path)]) {
    if from.is_dir() {
        std::fs::create_dir_all(to).expect("mkdir");
    }
    for entry in walk(from) {
        let relative = entry.strip_prefix(from).expect("inside");
        let target = to.join(relative);
        if entry.is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
            continue;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::copy(&entry, &target).expect("copy");
        if paths.is_empty() {
            continue;
        }
        let text =
            std::fs::read_to_string(&entry).unwrap_or_else(|e| panic!("{}: {e}", entry.display()));
        let placed = paths
            .iter()
            .fold(text.clone(), |text, (placeholder, path)| {
                text.replace(placeholder, &path.display().to_string())
            });
        if placed != text {
            // Written through the copy, so its mode stays.
            std::fs::write(&target, placed).expect("write");
        }
    }
}

/// Every non-blank line of `text`, as JSON (a line that is not JSON fails
/// the test).
pub fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            out.push(path.clone());
            if path.is_dir() {
                out.extend(walk(&path));
            }
        }
    }
    out
}

/// Path and id redaction for free text (stderr, rendered logs).
pub fn redact_text(text: &str, paths: &[(PathBuf, &str)]) -> String {
    let mut text = text.to_owned();
    for (path, label) in paths {
        text = text.replace(&path.display().to_string(), label);
    }
    static PATTERNS: std::sync::LazyLock<[(regex::Regex, &str); 3]> =
        std::sync::LazyLock::new(|| {
            [
                (
                    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                    "[UUID]",
                ),
                (r"exec_[0-9a-f]{32}", "[EXEC]"),
                (r"\b\d+ ?ms\b", "[N] ms"),
            ]
            .map(|(pattern, label)| (regex::Regex::new(pattern).expect("regex"), label))
        });
    for (pattern, label) in PATTERNS.iter() {
        text = pattern.replace_all(&text, *label).into_owned();
    }
    text
}

/// Normalizes JSONL (a session log or requests) for a snapshot: timestamps,
/// durations, execution and invocation ids (numbered in order of first
/// appearance, so pairing stays visible), temp paths and uuids.
pub fn normalize_jsonl(text: &str, ctx: &TestContext) -> String {
    let mut ids: HashMap<String, String> = HashMap::new();
    let mut out = String::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let mut value: Value = serde_json::from_str(line).expect("valid JSON line");
        normalize_value(&mut value, &mut ids);
        let line = serde_json::to_string(&value).expect("serialize");
        out.push_str(&ctx.redact(&line));
        out.push('\n');
    }
    out
}

fn normalize_value(value: &mut Value, ids: &mut HashMap<String, String>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "ts" => *field = Value::from("[TS]"),
                    "duration_ms" => *field = Value::from("[MS]"),
                    "execution_id" | "invocation_id" | "parent_execution_id" => {
                        if let Some(id) = field.as_str() {
                            let prefix = if key == "invocation_id" {
                                "hook"
                            } else {
                                "exec"
                            };
                            let next = ids.len() + 1;
                            let label = ids
                                .entry(id.to_owned())
                                .or_insert_with(|| format!("[{prefix}-{next}]"))
                                .clone();
                            *field = Value::from(label);
                        }
                    }
                    _ => normalize_value(field, ids),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| normalize_value(item, ids)),
        _ => {}
    }
}

/// The `hook/result` events of `log` whose `hook/invoked` names `dialect`.
pub fn dialect_results<'a>(log: &'a [Value], dialect: &str) -> Vec<&'a Value> {
    let invoked: Vec<&str> = log
        .iter()
        .filter(|e| e["type"] == "hook/invoked" && e["dialect"] == dialect)
        .filter_map(|e| e["invocation_id"].as_str())
        .collect();
    log.iter()
        .filter(|e| {
            e["type"] == "hook/result"
                && invoked.contains(&e["invocation_id"].as_str().unwrap_or_default())
        })
        .collect()
}

/// Events of a given type from a normalized or raw log.
pub fn events_of(text: &str, kind: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == kind)
        .collect()
}

/// Whether every Claude Code message a `stream-json` reader saw (`lines`)
/// is backed by the session log (`events`, dsh's JSON events): the stream
/// never acknowledges what the log lost. `Err` names the first message
/// that has no event behind it.
pub fn claude_stream_in_log(lines: &[Value], events: &[Value]) -> Result<usize, String> {
    fn of<'a>(events: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> {
        events.iter().filter(move |e| e["type"] == kind)
    }
    let mut checked = 0;
    for line in lines {
        let backed = match line["type"].as_str() {
            Some("system") if line["subtype"] == "init" => {
                of(events, "turn/start").next().is_some()
            }
            Some("assistant") => line["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|block| match block["type"].as_str() {
                    Some("text") => {
                        of(events, "assistant/message").any(|e| e["content"] == block["text"])
                    }
                    Some("tool_use") => of(events, "assistant/message").any(|e| {
                        e["tool_calls"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .any(|call| call["id"] == block["id"])
                    }),
                    _ => false,
                }),
            Some("user") => line["message"]["content"]
                .as_array()
                .into_iter()
                .flatten()
                .all(|block| {
                    of(events, "tool/result").any(|e| {
                        e["call_id"] == block["tool_use_id"]
                            && e["content"] == block["content"]
                            && e["is_error"] == block["is_error"]
                    })
                }),
            Some("result") => of(events, "turn/end").next().is_some(),
            _ => true,
        };
        if !backed {
            return Err(format!("streamed but not in the log: {line}"));
        }
        checked += 1;
    }
    Ok(checked)
}
