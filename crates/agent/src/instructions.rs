//! Project instructions: the files Claude Code and Codex users keep for their
//! agent, read at session start and put into the system prompt.
//!
//! Claude Code (in this order in the prompt): `~/.claude/CLAUDE.md` (User),
//! `CLAUDE.md` and `.claude/CLAUDE.md` in the project and each directory
//! above it (Project, outermost first), `.claude/rules/**/*.md` without a
//! `paths:` frontmatter (Project), `CLAUDE.local.md` (Local). Rules *with*
//! `paths:` apply to matching files only: they are kept in
//! [`Instructions::scoped_rules`] and loaded into the conversation when a
//! tool call's `file_path` inside the project matches one of their globs
//! ([`Instructions::rules_for`]). Nested `sub/CLAUDE.md` files are not loaded.
//!
//! Codex: `$CODEX_HOME/AGENTS.override.md`, else `$CODEX_HOME/AGENTS.md`
//! (User); then from the project root (the nearest directory above the
//! working directory holding `.git`; without one, only the working
//! directory) down to the working directory, per directory
//! `AGENTS.override.md`, else `AGENTS.md` (Project). Empty files are skipped.
//!
//! Everything together is capped at [`DEFAULT_MAX_BYTES`]: a file that
//! crosses the cap is cut there with a visible `[dsh: …]` line, later files
//! are left out, and [`Instructions::notices`] says so for the user.

use std::path::{Path, PathBuf};

use dsh_seams::{InstructionFile, InstructionKind, MemoryType};

use crate::frontmatter;

/// What a `.claude/rules/` file's frontmatter says: `paths`, the globs that
/// scope it (a YAML list or a comma-separated string; anything else reads
/// as none, and the rule applies everywhere).
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct RuleFront {
    #[serde(deserialize_with = "dsh_frontmatter::list")]
    paths: Vec<String>,
}

/// The cap on instruction text in the system prompt (bytes).
pub const DEFAULT_MAX_BYTES: usize = 64 * 1024;

/// Where instruction and command files are looked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextRoots {
    /// The project (session working directory).
    pub cwd: PathBuf,
    /// `$HOME` (`~/.claude/…`); `None` skips user files.
    pub home: Option<PathBuf>,
    /// `$CODEX_HOME` (default `~/.codex`); `None` skips Codex user files.
    pub codex_home: Option<PathBuf>,
}

impl ContextRoots {
    /// From the process environment: `HOME`, `CODEX_HOME` (else `~/.codex`).
    pub fn from_env(cwd: PathBuf) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let codex_home = std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|home| home.join(".codex")));
        ContextRoots {
            cwd,
            home,
            codex_home,
        }
    }
}

/// The instruction files of a session, as they went into the system prompt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Instructions {
    /// The files loaded, in prompt order.
    pub files: Vec<InstructionFile>,
    /// `.claude/rules` files scoped by `paths:` (`globs` set), loaded only
    /// when a matching file is touched.
    pub scoped_rules: Vec<InstructionFile>,
    /// What the user should know (the cap cut something).
    pub notices: Vec<String>,
}

impl Instructions {
    /// Reads every instruction file under `roots`, capped at `max_bytes`.
    pub fn discover(roots: &ContextRoots, max_bytes: usize) -> Self {
        let mut found: Vec<(PathBuf, MemoryType, InstructionKind, String)> = Vec::new();
        let mut scoped_rules = Vec::new();
        let mut push = |path: PathBuf, memory: MemoryType, kind: InstructionKind| {
            if let Some(text) = read_nonempty(&path) {
                found.push((path, memory, kind, text));
            }
        };
        if let Some(home) = &roots.home {
            push(
                home.join(".claude").join("CLAUDE.md"),
                MemoryType::User,
                InstructionKind::ClaudeMemory,
            );
        }
        let mut ancestors: Vec<&Path> = roots.cwd.ancestors().collect();
        ancestors.reverse();
        for dir in &ancestors {
            // `~/.claude/CLAUDE.md` is the user's, never a project file.
            if roots.home.as_deref() == Some(*dir) && *dir != roots.cwd {
                continue;
            }
            push(
                dir.join("CLAUDE.md"),
                MemoryType::Project,
                InstructionKind::ClaudeMemory,
            );
            push(
                dir.join(".claude").join("CLAUDE.md"),
                MemoryType::Project,
                InstructionKind::ClaudeMemory,
            );
        }
        let mut rules = Vec::new();
        markdown_files(&roots.cwd.join(".claude").join("rules"), &mut rules, 0);
        for path in rules {
            let Some(text) = read_nonempty(&path) else {
                continue;
            };
            let Some((front, body)) = frontmatter::split::<RuleFront>(&path, &text) else {
                continue;
            };
            let globs = front.paths;
            if globs.is_empty() {
                found.push((
                    path,
                    MemoryType::Project,
                    InstructionKind::ClaudeRule,
                    body.to_owned(),
                ));
            } else {
                let (content, truncated) = cap_text(body, SCOPED_RULE_MAX_BYTES);
                scoped_rules.push(InstructionFile {
                    path,
                    memory_type: MemoryType::Project,
                    kind: InstructionKind::ClaudeRule,
                    content,
                    truncated,
                    globs,
                    trigger: None,
                });
            }
        }
        let mut push = |path: PathBuf, memory: MemoryType, kind: InstructionKind| {
            if let Some(text) = read_nonempty(&path) {
                found.push((path, memory, kind, text));
            }
        };
        push(
            roots.cwd.join("CLAUDE.local.md"),
            MemoryType::Local,
            InstructionKind::ClaudeMemory,
        );
        if let Some(codex_home) = &roots.codex_home
            && let Some(path) = first_agents_file(codex_home)
        {
            push(path, MemoryType::User, InstructionKind::Agents);
        }
        let root = roots
            .cwd
            .ancestors()
            .find(|dir| dir.join(".git").exists())
            .unwrap_or(&roots.cwd);
        for dir in ancestors.iter().filter(|dir| dir.starts_with(root)) {
            if let Some(path) = first_agents_file(dir) {
                push(path, MemoryType::Project, InstructionKind::Agents);
            }
        }

        let mut instructions = Instructions {
            scoped_rules,
            ..Instructions::default()
        };
        let mut used = 0usize;
        let mut left_out = 0usize;
        for (path, memory_type, kind, text) in found {
            if used >= max_bytes {
                left_out += 1;
                continue;
            }
            let room = max_bytes - used;
            let (content, truncated) = if text.len() > room {
                let mut cut = room;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                instructions.notices.push(format!(
                    "instructions cut at {max_bytes} bytes: {} was shortened from {} bytes",
                    path.display(),
                    text.len()
                ));
                (
                    format!(
                        "{}\n[dsh: the rest of this file was cut: instructions are capped at {max_bytes} bytes]",
                        &text[..cut]
                    ),
                    true,
                )
            } else {
                (text, false)
            };
            used += content.len().min(room);
            instructions.files.push(InstructionFile {
                path,
                memory_type,
                kind,
                content,
                truncated,
                globs: Vec::new(),
                trigger: None,
            });
        }
        if left_out > 0 {
            instructions.notices.push(format!(
                "instructions cut at {max_bytes} bytes: {left_out} more instruction file(s) were left out"
            ));
        }
        instructions
    }

    /// The system-prompt section for the loaded files (empty when none).
    pub fn render(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "# Project instructions\n\nThe user and the project gave the instructions below. \
             They take precedence over your defaults; follow them.",
        );
        for file in &self.files {
            let whose = match (file.kind, file.memory_type) {
                (InstructionKind::Agents, MemoryType::User) => "global AGENTS.md",
                (InstructionKind::Agents, MemoryType::Project | MemoryType::Local) => {
                    "AGENTS.md, project"
                }
                (_, MemoryType::User) => "the user's instructions for every project",
                (_, MemoryType::Project) => "project instructions, checked in",
                (_, MemoryType::Local) => "the user's private instructions for this project",
            };
            out.push_str(&format!(
                "\n\n## {} ({whose})\n\n{}",
                file.path.display(),
                file.content.trim_end()
            ));
        }
        if !self.scoped_rules.is_empty() {
            out.push_str(
                "\n\nRules that apply only to some files join the conversation when such a file is used:",
            );
            for rule in &self.scoped_rules {
                out.push_str(&format!(
                    "\n- {} ({})",
                    rule.path.display(),
                    rule.globs.join(", ")
                ));
            }
        }
        out
    }

    /// The scoped rules a use of `file` (absolute, or relative to `cwd`)
    /// loads, skipping those in `loaded`: each with `trigger` set. A file
    /// outside `cwd` matches nothing (globs are relative to the project).
    pub fn rules_for(
        &self,
        cwd: &Path,
        file: &Path,
        loaded: &std::collections::HashSet<PathBuf>,
    ) -> Vec<InstructionFile> {
        let absolute = if file.is_absolute() {
            file.to_path_buf()
        } else {
            cwd.join(file)
        };
        let Ok(relative) = absolute.strip_prefix(cwd) else {
            return Vec::new();
        };
        self.scoped_rules
            .iter()
            .filter(|rule| !loaded.contains(&rule.path))
            .filter(|rule| {
                rule.globs.iter().any(|glob| {
                    globset::GlobBuilder::new(glob.trim_start_matches("./"))
                        .literal_separator(true)
                        .build()
                        .is_ok_and(|glob| glob.compile_matcher().is_match(relative))
                })
            })
            .map(|rule| InstructionFile {
                trigger: Some(absolute.clone()),
                ..rule.clone()
            })
            .collect()
    }

    /// `base` followed by the instruction section, if any.
    pub fn system_prompt(&self, base: &str) -> String {
        let section = self.render();
        if section.is_empty() {
            base.to_owned()
        } else {
            format!("{base}\n\n{section}")
        }
    }
}

/// The cap on one path-scoped rule's text (it joins the conversation, not
/// the system prompt).
pub const SCOPED_RULE_MAX_BYTES: usize = 16 * 1024;

/// `text` cut at `max` bytes (on a character boundary) with a visible line.
fn cap_text(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    (
        format!(
            "{}\n[dsh: the rest of this file was cut: it is capped at {max} bytes]",
            &text[..cut]
        ),
        true,
    )
}

fn read_nonempty(path: &Path) -> Option<String> {
    if !path.is_file() {
        return None;
    }
    let text = fs_err::read_to_string(path).ok()?;
    (!text.trim().is_empty()).then_some(text)
}

fn first_agents_file(dir: &Path) -> Option<PathBuf> {
    ["AGENTS.override.md", "AGENTS.md"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| read_nonempty(path).is_some())
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    if depth > 4 {
        return;
    }
    let Ok(entries) = fs_err::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            markdown_files(&path, out, depth + 1);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    #[test]
    fn claude_and_codex_files_in_prompt_order() {
        let base = tempfile::tempdir().unwrap();
        let home = base.path().join("home");
        let repo = base.path().join("repo");
        let project = repo.join("pkg");
        write(&home.join(".claude/CLAUDE.md"), "USER-CLAUDE-MD\n");
        write(&project.join("CLAUDE.md"), "PROJECT\n");
        write(&project.join("CLAUDE.local.md"), "LOCAL\n");
        write(&project.join(".claude/rules/style.md"), "RULE-ALWAYS\n");
        write(
            &project.join(".claude/rules/py.md"),
            "---\npaths:\n  - \"**/*.py\"\n---\nRULE-PY-ONLY\n",
        );
        write(&project.join("sub/CLAUDE.md"), "NESTED\n");
        write(&home.join(".codex/AGENTS.md"), "GLOBAL-AGENTS\n");
        write(&home.join(".codex/AGENTS.override.md"), "GLOBAL-OVERRIDE\n");
        fs_err::create_dir_all(repo.join(".git")).unwrap();
        write(&repo.join("AGENTS.md"), "ROOT-AGENTS\n");
        write(&project.join("AGENTS.md"), "PKG-AGENTS\n");
        write(&project.join("AGENTS.override.md"), "  \n");
        let roots = ContextRoots {
            cwd: project.clone(),
            home: Some(home.clone()),
            codex_home: Some(home.join(".codex")),
        };
        let found = Instructions::discover(&roots, DEFAULT_MAX_BYTES);
        let listed: Vec<(String, &str)> = found
            .files
            .iter()
            .map(|f| {
                (
                    f.path
                        .strip_prefix(base.path())
                        .unwrap()
                        .display()
                        .to_string(),
                    f.memory_type.as_str(),
                )
            })
            .collect();
        assert_eq!(
            listed,
            vec![
                ("home/.claude/CLAUDE.md".to_owned(), "User"),
                ("repo/pkg/CLAUDE.md".to_owned(), "Project"),
                ("repo/pkg/.claude/rules/style.md".to_owned(), "Project"),
                ("repo/pkg/CLAUDE.local.md".to_owned(), "Local"),
                ("home/.codex/AGENTS.override.md".to_owned(), "User"),
                ("repo/AGENTS.md".to_owned(), "Project"),
                ("repo/pkg/AGENTS.md".to_owned(), "Project"),
            ]
        );
        let scoped: Vec<(&Path, &[String], &str)> = found
            .scoped_rules
            .iter()
            .map(|r| (r.path.as_path(), r.globs.as_slice(), r.content.as_str()))
            .collect();
        assert_eq!(
            scoped,
            vec![(
                project.join(".claude/rules/py.md").as_path(),
                &["**/*.py".to_owned()][..],
                "RULE-PY-ONLY\n"
            )]
        );
        let none = std::collections::HashSet::new();
        let hit = found.rules_for(&project, Path::new("src/app.py"), &none);
        assert_eq!(hit.len(), 1);
        assert_eq!(hit[0].trigger, Some(project.join("src/app.py")));
        assert!(
            found
                .rules_for(&project, &project.join("app.py"), &none)
                .len()
                == 1
        );
        assert!(
            found
                .rules_for(&project, Path::new("notes.txt"), &none)
                .is_empty()
        );
        assert!(
            found
                .rules_for(&project, &base.path().join("x.py"), &none)
                .is_empty()
        );
        let loaded: std::collections::HashSet<PathBuf> =
            [project.join(".claude/rules/py.md")].into_iter().collect();
        assert!(
            found
                .rules_for(&project, Path::new("a.py"), &loaded)
                .is_empty()
        );
        let prompt = found.system_prompt("BASE");
        assert!(prompt.starts_with("BASE\n\n# Project instructions"));
        for text in ["USER-CLAUDE-MD", "RULE-ALWAYS", "LOCAL", "PKG-AGENTS"] {
            assert!(prompt.contains(text), "{text} missing from {prompt}");
        }
        assert!(!prompt.contains("RULE-PY-ONLY") && !prompt.contains("NESTED"));
        assert!(found.notices.is_empty());
    }

    #[test]
    fn the_cap_cuts_visibly_and_leaves_later_files_out() {
        let project = tempfile::tempdir().unwrap();
        write(&project.path().join("CLAUDE.md"), &"é".repeat(40));
        write(&project.path().join("CLAUDE.local.md"), "LATER\n");
        let roots = ContextRoots {
            cwd: project.path().to_owned(),
            home: None,
            codex_home: None,
        };
        let found = Instructions::discover(&roots, 25);
        assert_eq!(found.files.len(), 1);
        assert!(found.files[0].truncated);
        assert!(found.files[0].content.starts_with(&"é".repeat(12)));
        assert!(
            found.files[0]
                .content
                .contains("[dsh: the rest of this file was cut")
        );
        assert_eq!(found.notices.len(), 2, "{:?}", found.notices);
        assert!(!found.system_prompt("B").contains("LATER"));
    }

    #[test]
    fn nothing_found_leaves_the_prompt_alone() {
        let project = tempfile::tempdir().unwrap();
        let roots = ContextRoots {
            cwd: project.path().to_owned(),
            home: None,
            codex_home: None,
        };
        let found = Instructions::discover(&roots, DEFAULT_MAX_BYTES);
        assert_eq!(found.system_prompt("BASE"), "BASE");
    }
}
