//! dsh's system prompt: the text in `system_prompt.md`, with the guidance
//! for each offered tool and an environment block.
//!
//! The template is plain text with three kinds of markers, each on a line
//! of its own: `@tool NAME` … `@end` (kept only when the session offers the
//! tool `NAME`), `@mcp` … `@end` (kept only when an MCP tool is offered),
//! and `{{environment}}` (replaced by [`Environment::block`]). The loaded
//! instruction files (CLAUDE.md, AGENTS.md, …) are appended after it by the
//! agent, as before.
//!
//! Change [`SYSTEM_PROMPT_VERSION`] with every change to the text, so a
//! session log and `dsh status --json` say which prompt a model was given.
//! `dsh replay` keeps its fixed one-line prompt ([`crate::replay_system_prompt`]),
//! so fixture request snapshots do not depend on the date or the git state.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The version of `system_prompt.md`.
pub const SYSTEM_PROMPT_VERSION: &str = "2";

/// The template.
pub const TEMPLATE: &str = include_str!("system_prompt.md");

/// The git state of the working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitState {
    /// Not inside a git work tree (or git is not installed).
    NotARepository,
    /// Inside one.
    Repository {
        /// The branch, or `HEAD` when detached.
        branch: String,
        /// How many paths `git status --porcelain` lists (`None`: not
        /// asked, the repository's configuration names a program git runs).
        changed: Option<usize>,
    },
}

/// What the environment block says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Environment {
    /// The working directory.
    pub cwd: PathBuf,
    /// Further directories the session may work in (`--add-dir`).
    pub additional_dirs: Vec<PathBuf>,
    /// `linux`, `macos`, … and the architecture.
    pub platform: String,
    /// Today's date, `YYYY-MM-DD` (UTC).
    pub date: String,
    /// The git state of `cwd`.
    pub git: GitState,
    /// The model's name.
    pub model: String,
}

impl Environment {
    /// The environment of a session in `cwd` talking to `model` now.
    pub fn detect(cwd: &Path, additional_dirs: Vec<PathBuf>, model: &str) -> Self {
        Environment {
            cwd: cwd.to_path_buf(),
            additional_dirs,
            platform: format!("{} ({})", std::env::consts::OS, std::env::consts::ARCH),
            date: chrono::Utc::now().format("%Y-%m-%d").to_string(),
            git: git_state(cwd),
            model: model.to_owned(),
        }
    }

    /// The block that replaces `{{environment}}`.
    pub fn block(&self) -> String {
        let mut lines = vec![format!("- Working directory: {}", self.cwd.display())];
        if !self.additional_dirs.is_empty() {
            let dirs: Vec<String> = self
                .additional_dirs
                .iter()
                .map(|dir| dir.display().to_string())
                .collect();
            lines.push(format!(
                "- Additional working directories: {}",
                dirs.join(", ")
            ));
        }
        lines.push(match &self.git {
            GitState::NotARepository => "- Git: not a git repository".to_owned(),
            GitState::Repository { branch, changed } => {
                let changes = match changed {
                    Some(0) => ", no uncommitted changes",
                    Some(1) => ", 1 changed path",
                    Some(n) => &format!(", {n} changed paths"),
                    None => "",
                };
                format!("- Git: branch {branch}{changes} at session start")
            }
        });
        lines.push(format!("- Platform: {}", self.platform));
        lines.push(format!("- Date: {}", self.date));
        lines.push(format!("- Model: {}", self.model));
        lines.join("\n")
    }
}

/// Runs `git ARGS` in `cwd`; its stdout when it succeeded. Whatever the
/// repository configures, no file system monitor or hook runs and the
/// index is not rewritten (`post-index-change`): a session starting in a
/// repository must not run the repository's programs.
fn git(cwd: &Path, args: &[&str]) -> Option<String> {
    let output = Command::new("git")
        .args(["--no-optional-locks", "-c", "core.fsmonitor=false"])
        .args(["-c", "core.hooksPath=/dev/null"])
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The git state of `cwd` (two quick `git` commands; none when git is
/// missing or `cwd` is not in a work tree).
pub fn git_state(cwd: &Path) -> GitState {
    let inside = git(cwd, &["rev-parse", "--is-inside-work-tree"]);
    if inside.as_deref().map(str::trim) != Some("true") {
        return GitState::NotARepository;
    }
    // Empty when HEAD is detached.
    let branch = git(cwd, &["branch", "--show-current"]).unwrap_or_default();
    let branch = match branch.trim() {
        "" => "(detached HEAD)".to_owned(),
        name => name.to_owned(),
    };
    // Status runs the repository's clean filters on changed files: not
    // asked where the repository names any program.
    let changed = match dsh_trust::gitconfig::configured_program(cwd) {
        Some(_) => None,
        None => Some(
            git(cwd, &["status", "--porcelain"])
                .map(|status| status.lines().filter(|line| !line.is_empty()).count())
                .unwrap_or(0),
        ),
    };
    GitState::Repository { branch, changed }
}

/// The system prompt for a session offering `tools` (dsh's names) in
/// `environment`.
pub fn render(tools: &[String], environment: &Environment) -> String {
    let offered = |name: &str| tools.iter().any(|tool| tool == name);
    let has_mcp = tools.iter().any(|tool| tool.starts_with("mcp__"));
    let mut out = Vec::new();
    let mut keep = true;
    for line in TEMPLATE.lines() {
        if let Some(name) = line.strip_prefix("@tool ") {
            keep = offered(name.trim());
        } else if line == "@mcp" {
            keep = has_mcp;
        } else if line == "@end" {
            keep = true;
        } else if line == "{{environment}}" {
            out.push(environment.block());
        } else if keep {
            out.push(line.to_owned());
        }
    }
    out.join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;

    fn environment() -> Environment {
        Environment {
            cwd: PathBuf::from("/work/project"),
            additional_dirs: vec![PathBuf::from("/work/shared")],
            platform: "linux (x86_64)".to_owned(),
            date: "2026-12-06".to_owned(),
            git: GitState::Repository {
                branch: "main".to_owned(),
                changed: Some(2),
            },
            model: "deepseek-chat".to_owned(),
        }
    }

    /// The whole prompt with every built-in tool and an MCP tool, against a
    /// real environment (its date, platform and paths filtered).
    #[test]
    fn the_full_prompt_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut tools: Vec<String> = dsh_tools::builtin::builtin_tools()
            .into_iter()
            .map(|tool| tool.spec().name)
            .collect();
        tools.push("mcp__docs__search".to_owned());
        let environment = Environment::detect(dir.path(), Vec::new(), "deepseek-chat");
        let prompt = render(&tools, &environment);
        let cwd = dir.path().display().to_string();
        insta::with_settings!({filters => vec![
            (regex_escape(&cwd).as_str(), "[CWD]"),
            (r"\d{4}-\d{2}-\d{2}", "[DATE]"),
            (r"Platform: .*", "Platform: [PLATFORM]"),
        ]}, {
            insta::assert_snapshot!(format!("version {SYSTEM_PROMPT_VERSION}\n\n{prompt}"));
        });
    }

    fn regex_escape(text: &str) -> String {
        text.chars()
            .flat_map(|c| {
                if c.is_ascii_alphanumeric() || c == '/' || c == '_' || c == '-' {
                    vec![c]
                } else {
                    vec!['\\', c]
                }
            })
            .collect()
    }

    #[test]
    fn only_offered_tools_get_guidance() {
        let tools = vec!["bash".to_owned(), "read".to_owned()];
        let prompt = render(&tools, &environment());
        assert!(prompt.contains("- `bash` runs a command"));
        assert!(prompt.contains("- `read` shows a file"));
        assert!(!prompt.contains("`web_fetch`"), "{prompt}");
        assert!(!prompt.contains("mcp__"));
        assert!(!prompt.contains("@tool") && !prompt.contains("@end"));
        assert!(prompt.ends_with(
            "# Environment\n- Working directory: /work/project\n\
             - Additional working directories: /work/shared\n\
             - Git: branch main, 2 changed paths at session start\n\
             - Platform: linux (x86_64)\n- Date: 2026-12-06\n- Model: deepseek-chat"
        ));
    }

    #[test]
    fn every_tool_section_names_a_builtin_tool() {
        let names: Vec<&str> = dsh_tools::builtin::names::TOOL_NAMES
            .iter()
            .map(|names| names.dsh)
            .collect();
        for line in TEMPLATE.lines() {
            if let Some(name) = line.strip_prefix("@tool ") {
                assert!(names.contains(&name), "unknown tool section {name}");
            }
        }
        // Every offered built-in has guidance.
        for tool in dsh_tools::builtin::builtin_tools() {
            let name = tool.spec().name;
            assert!(
                TEMPLATE.lines().any(|line| line == format!("@tool {name}"))
                    || ["task_get", "task_update", "task_list"].contains(&name.as_str()),
                "no guidance for {name}"
            );
        }
    }

    #[test]
    fn git_state_of_a_plain_directory_and_a_repository() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_state(dir.path()), GitState::NotARepository);
        let ok = Command::new("git")
            .args(["init", "-q", "-b", "trunk"])
            .current_dir(dir.path())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            return; // no git on this machine: nothing more to check
        }
        std::fs::write(dir.path().join("a.txt"), "a").unwrap();
        assert_eq!(
            git_state(dir.path()),
            GitState::Repository {
                branch: "trunk".to_owned(),
                changed: Some(1)
            }
        );
        // A repository that names a program: none of it runs, and status
        // is not asked.
        let ran = dir.path().join("ran");
        let monitor = format!("touch '{}'; false", ran.display());
        let git_ok = |args: &[&str]| {
            let done = Command::new("git")
                .args(["-c", "user.name=n", "-c", "user.email=n@example.invalid"])
                .args(args)
                .current_dir(dir.path())
                .status()
                .unwrap();
            assert!(done.success(), "{args:?}");
        };
        git_ok(&["add", "a.txt"]);
        git_ok(&["commit", "-qm", "a"]);
        git_ok(&["config", "core.fsmonitor", &monitor]);
        git_ok(&["config", "filter.x.clean", "touch ran; cat"]);
        // A changed file's content is what status runs the clean filter on.
        std::fs::write(dir.path().join("a.txt"), "b").unwrap();
        std::fs::write(dir.path().join(".gitattributes"), "* filter=x\n").unwrap();
        std::fs::write(
            dir.path().join(".git/hooks/post-index-change"),
            "#!/bin/sh\ntouch ran\n",
        )
        .unwrap();
        assert_eq!(
            git_state(dir.path()),
            GitState::Repository {
                branch: "trunk".to_owned(),
                changed: None
            }
        );
        assert!(!ran.exists());
    }
}
