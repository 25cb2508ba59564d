//! The prompt-command layer: what a prompt beginning with `/` means.
//!
//! [`parse`] turns a prompt into a typed [`PromptCommand`] (or `None` for an
//! ordinary prompt): the built-ins dsh handles itself (`/clear`, `/model NAME`,
//! `/compact [instructions]`), a custom command found in the
//! [`CommandCatalog`], or [`PromptCommand::Invalid`] with the message to show.
//! The terminal, `dsh -p` and `dsh replay` all go through it, so a fixture
//! prompt `/x arg` is handled exactly as the terminal would handle it
//! (contracts §6).
//!
//! Custom commands come from Claude Code's `.claude/commands/**/*.md`
//! (project) and `~/.claude/commands/**/*.md` (user), Claude Code skills
//! invoked by name (`.claude/skills/<name>/SKILL.md`, `~/.claude/skills/…`)
//! and Codex custom prompts (`$CODEX_HOME/prompts/*.md`, invoked as
//! `/prompts:name`). A subdirectory namespaces a Claude Code command only in
//! its description (`frontend/component.md` is `/component`, "(project:frontend)"),
//! as Claude Code documents it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use dsh_seams::CommandSource;

use crate::frontmatter;
use crate::instructions::ContextRoots;

/// What a prompt beginning with `/` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptCommand {
    /// `/clear`: end the conversation and start a fresh one in this session.
    Clear,
    /// `/model NAME`: use NAME for the following requests.
    Model(String),
    /// `/compact [instructions]`: summarise the history now; it runs as a
    /// turn of its own (`crate::compaction`).
    Compact(String),
    /// A custom command, skill or Codex prompt, with its arguments.
    Custom(CustomInvocation),
    /// A `/name` dsh cannot run; the message says why (shown to the user,
    /// an error naming the prompt in fixture replays).
    Invalid(String),
}

/// A custom command and the arguments it was invoked with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomInvocation {
    /// The name as typed (`x`, `prompts:review`).
    pub name: String,
    /// Everything after the name, trimmed.
    pub args: String,
    /// The command.
    pub command: CustomCommand,
}

impl CustomInvocation {
    /// The text the model gets instead of the prompt.
    pub fn expand(&self) -> String {
        self.command.expand(&self.args)
    }
}

/// What a command, skill or prompt file's frontmatter says (Codex prompts
/// read `description` and `argument-hint` only). A key of another shape
/// reads as absent.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct CommandFront {
    /// A skill's name (default: its folder's).
    #[serde(deserialize_with = "dsh_frontmatter::text")]
    name: Option<String>,
    #[serde(deserialize_with = "dsh_frontmatter::text")]
    description: Option<String>,
    #[serde(rename = "argument-hint", deserialize_with = "dsh_frontmatter::text")]
    argument_hint: Option<String>,
    #[serde(rename = "allowed-tools", deserialize_with = "dsh_frontmatter::list")]
    allowed_tools: Vec<String>,
}

/// Which convention a custom command follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandKind {
    /// A Claude Code command file (`.claude/commands/…/NAME.md`).
    ClaudeCommand,
    /// A Claude Code skill invoked as `/NAME` (`.claude/skills/NAME/SKILL.md`).
    ClaudeSkill,
    /// A Codex custom prompt (`$CODEX_HOME/prompts/NAME.md`, `/prompts:NAME`).
    CodexPrompt,
}

/// One custom command definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// The name it is invoked by (without the slash).
    pub name: String,
    /// Which convention.
    pub kind: CommandKind,
    /// Project or user.
    pub source: CommandSource,
    /// The defining file.
    pub path: PathBuf,
    /// Frontmatter `description` (with the namespace, for Claude Code subdirectories).
    pub description: Option<String>,
    /// Frontmatter `argument-hint`.
    pub argument_hint: Option<String>,
    /// Frontmatter `allowed-tools` (recorded and listed; dsh does not narrow
    /// the tools on offer for the command's turn).
    pub allowed_tools: Vec<String>,
    /// The body after the frontmatter.
    pub body: String,
}

impl CustomCommand {
    /// The body with the arguments substituted.
    ///
    /// Claude Code commands and skills: `$ARGUMENTS` is the whole argument
    /// text, `$1`…`$9` the whitespace-separated (quote-aware) arguments;
    /// when the body uses neither and arguments were given, they are appended
    /// as `ARGUMENTS: …` so they are not lost. A skill's text starts with
    /// `Base directory for this skill: DIR` (as captured). Codex prompts:
    /// `$1`…`$9`, `$ARGUMENTS`, `$$` for a dollar, and named `$UPPER`
    /// placeholders filled from `KEY=value` arguments.
    pub fn expand(&self, args: &str) -> String {
        let positional = split_args(args);
        match self.kind {
            CommandKind::ClaudeCommand | CommandKind::ClaudeSkill => {
                let (text, used) = substitute(&self.body, args, &positional, &BTreeMap::new());
                let mut text = text;
                if !used && !args.is_empty() {
                    if !text.ends_with('\n') && !text.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&format!("\nARGUMENTS: {args}"));
                }
                match self.kind {
                    CommandKind::ClaudeSkill => {
                        let dir = self.path.parent().unwrap_or(&self.path);
                        format!("Base directory for this skill: {}\n\n{text}", dir.display())
                    }
                    CommandKind::ClaudeCommand | CommandKind::CodexPrompt => text,
                }
            }
            CommandKind::CodexPrompt => {
                let named: BTreeMap<String, String> = positional
                    .iter()
                    .filter_map(|arg| {
                        let (key, value) = arg.split_once('=')?;
                        is_named_placeholder(key).then(|| (key.to_owned(), value.to_owned()))
                    })
                    .collect();
                substitute(&self.body, args, &positional, &named).0
            }
        }
    }
}

fn is_named_placeholder(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && name != "ARGUMENTS"
}

/// Replaces `$ARGUMENTS`, `$1`…`$9`, `$$` and (when `named` has them)
/// `$NAME`. Returns the text and whether any argument placeholder was used.
fn substitute(
    body: &str,
    args: &str,
    positional: &[String],
    named: &BTreeMap<String, String>,
) -> (String, bool) {
    let mut out = String::with_capacity(body.len() + args.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(args);
            used = true;
            rest = tail;
        } else if let Some(digit) = after.chars().next().filter(|c| ('1'..='9').contains(c)) {
            let index = (digit as usize) - ('1' as usize);
            out.push_str(positional.get(index).map(String::as_str).unwrap_or(""));
            used = true;
            rest = &after[1..];
        } else if let Some(tail) = after.strip_prefix('$').filter(|_| !named.is_empty()) {
            out.push('$');
            rest = tail;
        } else {
            let len = after
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(after.len());
            match named.get(&after[..len]) {
                Some(value) if len > 0 => {
                    out.push_str(value);
                    used = true;
                    rest = &after[len..];
                }
                Some(_) | None => {
                    out.push('$');
                    rest = after;
                }
            }
        }
    }
    out.push_str(rest);
    (out, used)
}

/// Splits arguments on whitespace, keeping `"…"` and `'…'` groups together.
pub fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                started = true;
            }
            None if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut current));
                    started = false;
                }
            }
            None => {
                current.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(current);
    }
    out
}

/// Every custom command dsh can run in a project, by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandCatalog {
    commands: BTreeMap<String, CustomCommand>,
}

impl CommandCatalog {
    /// Reads the command, skill and prompt directories under `roots`.
    /// Unreadable files are skipped (a command directory is optional); on a
    /// name defined twice, project beats user and a command beats a skill.
    pub fn discover(roots: &ContextRoots) -> Self {
        let mut catalog = CommandCatalog::default();
        // Lowest precedence first: later inserts replace earlier ones.
        if let Some(home) = &roots.home {
            catalog.add_skills(&home.join(".claude").join("skills"), CommandSource::User);
            catalog.add_commands(&home.join(".claude").join("commands"), CommandSource::User);
        }
        catalog.add_skills(
            &roots.cwd.join(".claude").join("skills"),
            CommandSource::Project,
        );
        catalog.add_commands(
            &roots.cwd.join(".claude").join("commands"),
            CommandSource::Project,
        );
        if let Some(codex_home) = &roots.codex_home {
            catalog.add_codex_prompts(&codex_home.join("prompts"));
        }
        catalog
    }

    /// The command invoked as `/name`.
    pub fn get(&self, name: &str) -> Option<&CustomCommand> {
        self.commands.get(name)
    }

    /// Every command, by name.
    pub fn iter(&self) -> impl Iterator<Item = &CustomCommand> {
        self.commands.values()
    }

    /// Adds (or replaces) a command.
    pub fn insert(&mut self, command: CustomCommand) {
        self.commands.insert(command.name.clone(), command);
    }

    fn add_commands(&mut self, dir: &Path, source: CommandSource) {
        let mut files = Vec::new();
        markdown_files(dir, &mut files, 0);
        for path in files {
            let Ok(text) = fs_err::read_to_string(&path) else {
                continue;
            };
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let namespace = path
                .parent()
                .and_then(|parent| parent.strip_prefix(dir).ok())
                .map(|rel| rel.to_string_lossy().replace('/', ":"))
                .filter(|rel| !rel.is_empty());
            let Some((front, body)) = frontmatter::split::<CommandFront>(&path, &text) else {
                continue;
            };
            let scope = match source {
                CommandSource::Project => "project",
                CommandSource::User => "user",
            };
            let description = front.description.map(|d| match &namespace {
                Some(ns) => format!("{d} ({scope}:{ns})"),
                None => d,
            });
            self.insert(CustomCommand {
                name: stem.to_owned(),
                kind: CommandKind::ClaudeCommand,
                source,
                description,
                argument_hint: front.argument_hint,
                allowed_tools: front.allowed_tools,
                body: body.to_owned(),
                path,
            });
        }
    }

    fn add_skills(&mut self, dir: &Path, source: CommandSource) {
        let Ok(entries) = fs_err::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for skill_dir in dirs {
            let path = skill_dir.join("SKILL.md");
            let Ok(text) = fs_err::read_to_string(&path) else {
                continue;
            };
            let Some((front, body)) = frontmatter::split::<CommandFront>(&path, &text) else {
                continue;
            };
            let name = front
                .name
                .or_else(|| {
                    skill_dir
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                })
                .unwrap_or_default();
            if name.is_empty() || !is_command_name(&name) {
                continue;
            }
            self.insert(CustomCommand {
                name,
                kind: CommandKind::ClaudeSkill,
                source,
                description: front.description,
                argument_hint: front.argument_hint,
                allowed_tools: front.allowed_tools,
                body: body.to_owned(),
                path,
            });
        }
    }

    fn add_codex_prompts(&mut self, dir: &Path) {
        let Ok(entries) = fs_err::read_dir(dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "md"))
            .collect();
        files.sort();
        for path in files {
            let Ok(text) = fs_err::read_to_string(&path) else {
                continue;
            };
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let Some((front, body)) = frontmatter::split::<CommandFront>(&path, &text) else {
                continue;
            };
            self.insert(CustomCommand {
                name: format!("prompts:{stem}"),
                kind: CommandKind::CodexPrompt,
                source: CommandSource::User,
                description: front.description,
                argument_hint: front.argument_hint,
                allowed_tools: Vec::new(),
                body: body.to_owned(),
                path,
            });
        }
    }
}

/// `.md` files under `dir`, sorted, a few levels deep (namespaces).
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

/// Whether `name` can be a command name: letters, digits, `_`, `-`, `.`
/// and `:` (namespaces), starting with a letter or digit. `/etc/hosts is
/// odd` is therefore an ordinary prompt, not a command.
fn is_command_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
}

/// What `text` asks for, when it is a command; `None` for an ordinary prompt
/// (no leading `/`, or a `/` not followed by a command name).
pub fn parse(text: &str, catalog: &CommandCatalog) -> Option<PromptCommand> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = match rest.find(char::is_whitespace) {
        Some(at) => (&rest[..at], rest[at..].trim()),
        None => (rest, ""),
    };
    if !is_command_name(name) {
        return None;
    }
    // A custom command of the same name wins over nothing; built-ins win
    // over custom commands, as in Claude Code.
    Some(match name {
        "clear" => PromptCommand::Clear,
        "model" if args.is_empty() => {
            PromptCommand::Invalid("/model needs a model name: /model NAME".to_owned())
        }
        "model" => PromptCommand::Model(args.to_owned()),
        "compact" => PromptCommand::Compact(args.to_owned()),
        _ => match catalog.get(name) {
            Some(command) => PromptCommand::Custom(CustomInvocation {
                name: name.to_owned(),
                args: args.to_owned(),
                command: command.clone(),
            }),
            None => PromptCommand::Invalid(format!("unknown command /{name}")),
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    }

    fn roots(project: &Path, home: &Path) -> ContextRoots {
        ContextRoots {
            cwd: project.to_owned(),
            home: Some(home.to_owned()),
            codex_home: Some(home.join(".codex")),
        }
    }

    #[test]
    fn builtins_plain_prompts_and_unknown_names() {
        let catalog = CommandCatalog::default();
        assert_eq!(parse("/clear", &catalog), Some(PromptCommand::Clear));
        assert_eq!(
            parse("/model  deepseek-reasoner ", &catalog),
            Some(PromptCommand::Model("deepseek-reasoner".into()))
        );
        assert!(matches!(
            parse("/model", &catalog),
            Some(PromptCommand::Invalid(_))
        ));
        assert_eq!(
            parse("/compact keep the API notes", &catalog),
            Some(PromptCommand::Compact("keep the API notes".into()))
        );
        assert_eq!(
            parse("/nosuch a", &catalog),
            Some(PromptCommand::Invalid("unknown command /nosuch".into()))
        );
        assert_eq!(parse("hello /clear", &catalog), None);
        assert_eq!(parse("/etc/hosts is odd", &catalog), None);
        assert_eq!(parse("/", &catalog), None);
    }

    #[test]
    fn claude_commands_skills_and_codex_prompts_are_found_and_expanded() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        write(
            &project.path().join(".claude/commands/x.md"),
            "---\ndescription: oracle command x\nargument-hint: ARG\nallowed-tools: Bash(git:*)\n---\nEXPANDED-X with args: $ARGUMENTS\n",
        );
        write(
            &project
                .path()
                .join(".claude/commands/frontend/component.md"),
            "---\ndescription: make one\n---\nComponent $1 in $2.\n",
        );
        write(
            &home.path().join(".claude/commands/x.md"),
            "user x loses to the project's\n",
        );
        write(
            &home.path().join(".claude/commands/plain.md"),
            "No placeholders.",
        );
        write(
            &project.path().join(".claude/skills/sk/SKILL.md"),
            "---\nname: sk\ndescription: oracle skill sk\n---\nSKILL-BODY args: $ARGUMENTS\n",
        );
        write(
            &home.path().join(".codex/prompts/review.md"),
            "---\ndescription: review\n---\nReview $FILE at $1 for $$5 ($ARGUMENTS)\n",
        );
        let catalog = CommandCatalog::discover(&roots(project.path(), home.path()));

        let Some(PromptCommand::Custom(x)) = parse("/x hello-arg", &catalog) else {
            panic!("x is a custom command");
        };
        assert_eq!(x.command.source, CommandSource::Project);
        assert_eq!(x.command.argument_hint.as_deref(), Some("ARG"));
        assert_eq!(x.command.allowed_tools, vec!["Bash(git:*)"]);
        assert_eq!(x.expand(), "EXPANDED-X with args: hello-arg\n");

        let component = catalog.get("component").unwrap();
        assert_eq!(
            component.description.as_deref(),
            Some("make one (project:frontend)")
        );
        assert_eq!(
            component.expand("\"my button\" src"),
            "Component my button in src.\n"
        );

        let plain = catalog.get("plain").unwrap();
        assert_eq!(plain.source, CommandSource::User);
        assert_eq!(plain.expand(""), "No placeholders.");
        assert_eq!(plain.expand("a b"), "No placeholders.\n\nARGUMENTS: a b");

        let Some(PromptCommand::Custom(sk)) = parse("/sk skill-arg", &catalog) else {
            panic!("sk is a skill");
        };
        assert_eq!(
            sk.expand(),
            format!(
                "Base directory for this skill: {}\n\nSKILL-BODY args: skill-arg\n",
                project.path().join(".claude/skills/sk").display()
            )
        );

        let Some(PromptCommand::Custom(review)) = parse("/prompts:review FILE=a.rs HEAD", &catalog)
        else {
            panic!("a Codex prompt");
        };
        assert_eq!(review.command.kind, CommandKind::CodexPrompt);
        assert_eq!(
            review.expand(),
            "Review a.rs at FILE=a.rs for $5 (FILE=a.rs HEAD)\n"
        );
    }

    #[test]
    fn split_args_keeps_quoted_groups() {
        assert_eq!(
            split_args(r#"a "b c" 'd e'  f"#),
            vec!["a", "b c", "d e", "f"]
        );
        assert!(split_args("   ").is_empty());
        assert_eq!(split_args("\"\""), vec![""]);
    }
}
