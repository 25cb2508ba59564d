//! How `dsh hooks check` reads a command word the way the shell will when
//! the hook runs: `~`, `$HOME`, `$CLAUDE_PROJECT_DIR`, `${CLAUDE_PLUGIN_ROOT}`
//! and the variables of the settings `env` block are known before the run;
//! a command substitution (`$(git rev-parse --show-toplevel)/…`, backticks)
//! is only known at run time, so such a path is "not checkable statically",
//! never a missing script.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// What the shell will have when the hook runs, as far as it is known now.
#[derive(Debug, Clone, Default)]
pub struct ShellVars {
    /// `$CLAUDE_PROJECT_DIR` (and the directory relative paths start from).
    pub project: PathBuf,
    /// `~` and `$HOME`.
    pub home: Option<PathBuf>,
    /// `$CLAUDE_PLUGIN_ROOT` for a plugin's `hooks/hooks.json`.
    pub plugin_root: Option<PathBuf>,
    /// The settings file's `env` block: Claude Code puts it into every hook's
    /// environment, over the inherited one.
    pub settings_env: BTreeMap<String, String>,
}

impl ShellVars {
    /// The variables for checking `document` (a settings file) in `project`.
    pub fn for_settings(project: PathBuf, document: &Value) -> Self {
        let settings = SettingsEnv::deserialize(document).unwrap_or_default();
        let settings_env = settings
            .env
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(name, value)| Some((name, value.text()?)))
            .collect();
        ShellVars {
            project,
            home: std::env::var_os("HOME").map(PathBuf::from),
            plugin_root: None,
            settings_env,
        }
    }

    fn lookup(&self, name: &str) -> Option<String> {
        let path = |p: &PathBuf| p.display().to_string();
        match name {
            "CLAUDE_PROJECT_DIR" => return Some(path(&self.project)),
            "CLAUDE_PLUGIN_ROOT" => return self.plugin_root.as_ref().map(path),
            _ => {}
        }
        if let Some(value) = self.settings_env.get(name) {
            return Some(value.clone());
        }
        if name == "HOME" {
            return self.home.as_ref().map(path);
        }
        std::env::var(name).ok()
    }
}

/// The `env` block of a settings file, read leniently: an `env` that is
/// not an object is no variables.
#[derive(Debug, Default, Deserialize)]
struct SettingsEnv {
    #[serde(default, deserialize_with = "crate::wire::lenient")]
    env: Option<BTreeMap<String, EnvValue>>,
}

/// One `env` value: Claude Code stringifies scalars; a list, a mapping or
/// `null` is not a variable.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum EnvValue {
    Text(String),
    Number(serde_json::Number),
    Flag(bool),
    Other(IgnoredAny),
}

impl EnvValue {
    fn text(self) -> Option<String> {
        match self {
            EnvValue::Text(text) => Some(text),
            EnvValue::Number(number) => Some(number.to_string()),
            EnvValue::Flag(flag) => Some(flag.to_string()),
            EnvValue::Other(_) => None,
        }
    }
}

/// One command word, read as the shell will.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Word {
    /// Fully known: the expanded text.
    Known(String),
    /// Computed when the hook runs (a command substitution): not checkable
    /// statically.
    RunTime,
    /// Names a variable that is not known here (`name`): the shell may
    /// have it when the hook runs.
    UnknownVariable(String),
}

/// Expands `~`, `$NAME` and `${NAME}` in `word`; see [`Word`].
pub fn resolve(word: &str, vars: &ShellVars) -> Word {
    if word.contains("$(") || word.contains('`') {
        return Word::RunTime;
    }
    let forms = dsh_hook_runner::vars::Forms {
        bare: true,
        // `${VAR:-default}` and friends are decided by the shell at run time.
        defaults: false,
        // A leading `~` or `~/` is the home directory (`~user` is left alone).
        tilde: true,
    };
    let expanded = dsh_hook_runner::vars::expand(word, forms, |name| vars.lookup(name));
    if expanded.dynamic {
        return Word::RunTime;
    }
    match expanded.unset.into_iter().next() {
        Some(name) => Word::UnknownVariable(name),
        None => Word::Known(expanded.text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> ShellVars {
        let mut vars = ShellVars::for_settings(
            PathBuf::from("/p"),
            &json!({"env": {"GUARD_DIR": "/opt/guard", "LEVEL": 3, "NESTED": {"a": 1}}}),
        );
        vars.home = Some(PathBuf::from("/home/u"));
        vars
    }

    #[test]
    fn settings_env_scalars_become_text_and_other_shapes_no_variables() {
        let env = |document| ShellVars::for_settings(PathBuf::from("/p"), &document).settings_env;
        let read =
            env(json!({"env": {"F": 1.5, "B": true, "N": null, "L": [1], "S": "s", "I": -2}}));
        assert_eq!(
            read.into_iter().collect::<Vec<_>>(),
            [("B", "true"), ("F", "1.5"), ("I", "-2"), ("S", "s")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        for document in [
            json!({"env": ["A"]}),
            json!({"env": "A=1"}),
            json!([1]),
            json!(null),
        ] {
            assert!(env(document).is_empty());
        }
    }

    #[test]
    fn home_forms_expand_to_the_home_directory() {
        let v = vars();
        assert_eq!(resolve("~/x.sh", &v), Word::Known("/home/u/x.sh".into()));
        assert_eq!(
            resolve("$HOME/x.sh", &v),
            Word::Known("/home/u/x.sh".into())
        );
        assert_eq!(
            resolve("${HOME}/x.sh", &v),
            Word::Known("/home/u/x.sh".into())
        );
        assert_eq!(resolve("~user/x", &v), Word::Known("~user/x".into()));
    }

    #[test]
    fn project_plugin_root_and_settings_env_expand() {
        let mut v = vars();
        assert_eq!(
            resolve("$CLAUDE_PROJECT_DIR/.claude/h.sh", &v),
            Word::Known("/p/.claude/h.sh".into())
        );
        assert_eq!(
            resolve("${GUARD_DIR}/bin/guard", &v),
            Word::Known("/opt/guard/bin/guard".into())
        );
        assert_eq!(resolve("$LEVEL", &v), Word::Known("3".into()));
        assert_eq!(
            resolve("${NESTED}/x", &v),
            Word::UnknownVariable("NESTED".into())
        );
        assert_eq!(
            resolve("${CLAUDE_PLUGIN_ROOT}/hooks/x.sh", &v),
            Word::UnknownVariable("CLAUDE_PLUGIN_ROOT".into())
        );
        v.plugin_root = Some(PathBuf::from("/plug"));
        assert_eq!(
            resolve("${CLAUDE_PLUGIN_ROOT}/hooks/x.sh", &v),
            Word::Known("/plug/hooks/x.sh".into())
        );
    }

    #[test]
    fn run_time_paths_are_not_checkable() {
        let v = vars();
        assert_eq!(
            resolve("$(git rev-parse --show-toplevel)/hooks/x.sh", &v),
            Word::RunTime
        );
        assert_eq!(resolve("$(git", &v), Word::RunTime);
        assert_eq!(resolve("`pwd`/x.sh", &v), Word::RunTime);
        assert_eq!(resolve("${X:-/tmp}/x.sh", &v), Word::RunTime);
        assert_eq!(
            resolve("$DSH_SURELY_UNSET_VAR_42/x", &v),
            Word::UnknownVariable("DSH_SURELY_UNSET_VAR_42".into())
        );
    }

    #[test]
    fn settings_env_wins_over_the_inherited_home() {
        let mut v = vars();
        v.settings_env.insert("HOME".into(), "/elsewhere".into());
        assert_eq!(resolve("$HOME/x", &v), Word::Known("/elsewhere/x".into()));
    }
}

/// `CLAUDE_PLUGIN_ROOT` for a plugin's `<root>/hooks/hooks.json` (the root
/// holds `.claude-plugin/`); `None` for any other file.
pub fn plugin_root_of(file: &std::path::Path) -> Option<PathBuf> {
    let hooks_dir = file.parent()?;
    if file.file_name()? != "hooks.json" || hooks_dir.file_name()? != "hooks" {
        return None;
    }
    let root = hooks_dir.parent()?;
    root.join(".claude-plugin")
        .is_dir()
        .then(|| root.to_owned())
}

/// Where Claude Code keeps its transcripts, as hook scripts name it.
const CLAUDE_PROJECTS: &str = ".claude/projects";

/// The largest script read when looking for [`CLAUDE_PROJECTS`].
const SCRIPT_READ_LIMIT: u64 = 1 << 20;

/// The first place — the command itself or a file it names — that reads
/// Claude Code's transcript directory (`~/.claude/projects/*/<id>.jsonl`)
/// instead of the hook's `transcript_path`. `scripts` are the files the
/// command runs (inside the project); the command's words that resolve to
/// existing files are looked at too (scripts under `~` or a plugin root).
pub(super) fn reads_claude_projects(
    command: &str,
    words: &[String],
    scripts: &[PathBuf],
    vars: &ShellVars,
) -> Option<String> {
    if command.contains(CLAUDE_PROJECTS) {
        return Some("the command".to_owned());
    }
    let mut files: Vec<PathBuf> = scripts.to_vec();
    for word in words {
        if let Word::Known(text) = resolve(word, vars) {
            let path = vars.project.join(text.trim_start_matches("./"));
            if path.is_file() && !files.contains(&path) {
                files.push(path);
            }
        }
    }
    files.into_iter().find_map(|file| {
        use std::io::Read as _;
        let mut text = String::new();
        fs_err::File::open(&file)
            .ok()?
            .take(SCRIPT_READ_LIMIT)
            .read_to_string(&mut text)
            .ok()?;
        text.contains(CLAUDE_PROJECTS)
            .then(|| file.display().to_string())
    })
}

#[cfg(test)]
mod transcript_tests {
    use super::*;

    #[test]
    fn finds_the_glob_in_the_command_or_a_named_script() {
        let dir = tempfile::tempdir().unwrap();
        let vars = ShellVars {
            project: dir.path().to_owned(),
            ..ShellVars::default()
        };
        let script = dir.path().join("stop.sh");
        std::fs::write(&script, "ls ~/.claude/projects/*/\"$id\".jsonl\n").unwrap();
        let clean = dir.path().join("clean.sh");
        std::fs::write(&clean, "jq -r .transcript_path\n").unwrap();
        let words = |c: &str| dsh_trust::words(c);
        assert_eq!(
            reads_claude_projects("cat ~/.claude/projects/*/x.jsonl", &[], &[], &vars),
            Some("the command".to_owned())
        );
        assert_eq!(
            reads_claude_projects("bash stop.sh", &words("bash stop.sh"), &[], &vars),
            Some(script.display().to_string())
        );
        assert_eq!(
            reads_claude_projects("bash clean.sh", &words("bash clean.sh"), &[], &vars),
            None
        );
    }
}
