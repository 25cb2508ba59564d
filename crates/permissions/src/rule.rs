//! Claude Code's permission rule syntax and how a rule matches a tool call.
//!
//! `Tool` or `Tool(content)`. The content means different things per tool:
//! a command pattern for `Bash` (`npm test:*` is a prefix at a word
//! boundary, `*` elsewhere is a wildcard, anything else is exact), a
//! gitignore-style path pattern for the file tools (`Read(./secrets/**)`),
//! `domain:HOST` for `WebFetch`. `mcp__server` names every tool of a server.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// Why a rule string is not a rule. Positions are 0-based byte offsets into
/// the rule string; [`crate::layer`] turns them into file:line:col.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleSyntaxError {
    /// The rule is empty or only whitespace.
    #[error("empty rule")]
    Empty,
    /// The tool name has a character tools never have.
    #[error("invalid character {ch:?} in tool name at offset {offset}")]
    BadToolName {
        /// The offending character.
        ch: char,
        /// Where it is.
        offset: usize,
    },
    /// `Tool(` without the closing `)` at the end.
    #[error("unclosed `(` at offset {offset}: a rule with content ends with `)`")]
    Unclosed {
        /// Where the `(` is.
        offset: usize,
    },
    /// `Tool()`: say `Tool` to mean every call.
    #[error("empty content `()` at offset {offset}: write the bare tool name to match every call")]
    EmptyContent {
        /// Where the `(` is.
        offset: usize,
    },
    /// A path pattern globset cannot compile.
    #[error("bad path pattern at offset {offset}: {message}")]
    BadPattern {
        /// Where the content starts.
        offset: usize,
        /// globset's explanation.
        message: String,
    },
}

/// What a rule's content says, interpreted for its tool.
#[derive(Debug, Clone)]
pub enum Specifier {
    /// Bare tool name: every call of that tool.
    Any,
    /// `Bash(prefix:*)`: the command is `prefix` or starts with `prefix `.
    CommandPrefix(String),
    /// `Bash(...)` with `*` wildcards elsewhere.
    CommandWildcard(String),
    /// `Bash(exact command)`.
    CommandExact(String),
    /// A path pattern of a file tool, kept raw; anchored when matched.
    Path(String),
    /// `WebFetch(domain:HOST)`.
    Domain(String),
    /// Content of a tool dsh has no interpretation for: matches an input
    /// whose primary string field is exactly this.
    Literal(String),
}

/// One parsed rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub raw: String,
    /// The tool (or `mcp__server` prefix) it names.
    pub tool: String,
    /// What it says about the call.
    pub specifier: Specifier,
}

/// Which family a tool belongs to, for rules and for modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolKind {
    /// Reads files (`Read`, `Glob`, `Grep`, `LS`, `NotebookRead`).
    Read,
    /// Changes files (`Edit`, `Write`, `MultiEdit`, `NotebookEdit`).
    Edit,
    /// Runs shell commands.
    Bash,
    /// An MCP tool (`mcp__server__tool`).
    Mcp,
    /// Anything else (`WebFetch`, `WebSearch`, `Task`, …).
    Other,
}

/// The family of a tool by its Claude Code name.
pub fn tool_kind(tool: &str) -> ToolKind {
    match tool {
        "Read" | "Glob" | "Grep" | "LS" | "NotebookRead" => ToolKind::Read,
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Bash" => ToolKind::Bash,
        t if t.starts_with("mcp__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    }
}

/// Where relative path patterns and paths are anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathContext {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The user's home, for `~/` patterns.
    pub home: Option<PathBuf>,
}

impl PathContext {
    /// A path from a tool input made absolute and lexically normalised
    /// (`..` cannot climb out of a pattern's reach by spelling).
    pub fn resolve(&self, p: &str) -> PathBuf {
        let joined = if let Some(rest) = p.strip_prefix("~/") {
            match &self.home {
                Some(h) => h.join(rest),
                None => self.cwd.join(p),
            }
        } else {
            self.cwd.join(p)
        };
        normalize(&joined)
    }
}

/// Lexical normalisation: drop `.`, apply `..` (never above the root).
pub fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => out.push(c),
        }
    }
    out
}

fn valid_tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '*'
}

impl Rule {
    /// Parses one rule string.
    pub fn parse(raw: &str) -> Result<Rule, RuleSyntaxError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(RuleSyntaxError::Empty);
        }
        let lead = raw.len() - raw.trim_start().len();
        let (tool, content) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                if !trimmed.ends_with(')') {
                    return Err(RuleSyntaxError::Unclosed {
                        offset: lead + open,
                    });
                }
                let inner = &trimmed[open + 1..trimmed.len() - 1];
                if inner.trim().is_empty() {
                    return Err(RuleSyntaxError::EmptyContent {
                        offset: lead + open,
                    });
                }
                (&trimmed[..open], Some((inner, lead + open + 1)))
            }
        };
        if let Some((offset, ch)) = tool.char_indices().find(|&(_, c)| !valid_tool_char(c)) {
            return Err(RuleSyntaxError::BadToolName {
                ch,
                offset: lead + offset,
            });
        }
        if tool.is_empty() {
            return Err(RuleSyntaxError::BadToolName {
                ch: '(',
                offset: lead,
            });
        }
        let specifier = match content {
            None => Specifier::Any,
            Some(("*", _)) => Specifier::Any,
            Some((inner, offset)) => specifier_for(tool, inner, offset)?,
        };
        Ok(Rule {
            raw: raw.to_owned(),
            tool: tool.to_owned(),
            specifier,
        })
    }

    /// Does this rule name the tool at all (ignoring its content)?
    fn names_tool(&self, tool: &str) -> bool {
        if self.tool == tool {
            return true;
        }
        // `mcp__server` and `mcp__server__*` name every tool of the server.
        if let Some(server) = self.tool.strip_prefix("mcp__") {
            let server = server.strip_suffix("__*").unwrap_or(server);
            if !server.contains("__")
                && let Some(rest) = tool.strip_prefix("mcp__")
            {
                return rest
                    .strip_prefix(server)
                    .is_some_and(|r| r.starts_with("__"));
            }
        }
        // `Edit(...)` rules cover every file-changing tool and `Read(...)`
        // every file-reading tool, as Claude Code applies them.
        matches!(
            (self.tool.as_str(), tool_kind(tool)),
            ("Edit", ToolKind::Edit) | ("Read", ToolKind::Read)
        )
    }

    /// Does this rule match a call of `tool` with `input`?
    pub fn matches(&self, tool: &str, input: &serde_json::Value, ctx: &PathContext) -> bool {
        if !self.names_tool(tool) {
            return false;
        }
        match &self.specifier {
            Specifier::Any => true,
            Specifier::CommandPrefix(prefix) => command_of(input).is_some_and(|c| {
                let c = c.trim();
                c == prefix
                    || c.strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(char::is_whitespace))
            }),
            Specifier::CommandWildcard(pat) => {
                command_of(input).is_some_and(|c| wildcard_match(pat, c.trim()))
            }
            Specifier::CommandExact(exact) => command_of(input).is_some_and(|c| c.trim() == exact),
            Specifier::Path(pattern) => match path_of(input) {
                Some(p) => path_pattern_matches(pattern, &ctx.resolve(p), ctx),
                None => false,
            },
            Specifier::Domain(domain) => input
                .get("url")
                .and_then(|u| u.as_str())
                .and_then(host_of)
                .is_some_and(|h| h.eq_ignore_ascii_case(domain)),
            Specifier::Literal(lit) => primary_string(input).is_some_and(|s| s == lit),
        }
    }
}

fn specifier_for(tool: &str, inner: &str, offset: usize) -> Result<Specifier, RuleSyntaxError> {
    let spec = match tool_kind(tool) {
        ToolKind::Bash => {
            if let Some(prefix) = inner.strip_suffix(":*") {
                Specifier::CommandPrefix(prefix.trim().to_owned())
            } else if inner.contains('*') {
                Specifier::CommandWildcard(inner.trim().to_owned())
            } else {
                Specifier::CommandExact(inner.trim().to_owned())
            }
        }
        ToolKind::Read | ToolKind::Edit => {
            // Compile once here so a bad pattern is a parse error with a
            // position rather than a silent non-match later.
            compile_glob(&anchor_pattern(
                inner,
                &PathContext {
                    cwd: PathBuf::from("/"),
                    home: None,
                },
            ))
            .map_err(|message| RuleSyntaxError::BadPattern { offset, message })?;
            Specifier::Path(inner.to_owned())
        }
        ToolKind::Mcp | ToolKind::Other => match inner.strip_prefix("domain:") {
            Some(d) if tool == "WebFetch" => Specifier::Domain(d.trim().to_owned()),
            _ => Specifier::Literal(inner.to_owned()),
        },
    };
    Ok(spec)
}

fn command_of(input: &serde_json::Value) -> Option<&str> {
    input.get("command").and_then(|c| c.as_str())
}

/// The path a file tool acts on.
pub fn path_of(input: &serde_json::Value) -> Option<&str> {
    ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
}

fn primary_string(input: &serde_json::Value) -> Option<&str> {
    input.as_object()?.values().find_map(|v| v.as_str())
}

fn host_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    Some(host.split(':').next().unwrap_or(host))
}

/// `*` matches any run of characters (including none); nothing else is special.
fn wildcard_match(pat: &str, s: &str) -> bool {
    let parts: Vec<&str> = pat.split('*').collect();
    let (first, rest) = match parts.split_first() {
        Some(x) => x,
        None => return pat == s,
    };
    let Some(mut tail) = s.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return tail.is_empty();
    };
    for part in middle {
        match tail.find(part) {
            Some(i) => tail = &tail[i + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
}

/// A path pattern made absolute: `//x` is absolute, `~/x` under home,
/// `/x` and `./x` under the project, a bare name with no `/` anywhere below.
fn anchor_pattern(pattern: &str, ctx: &PathContext) -> String {
    let cwd = ctx.cwd.to_string_lossy();
    let cwd = cwd.trim_end_matches('/');
    if let Some(abs) = pattern.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        match &ctx.home {
            Some(h) => format!("{}/{rest}", h.to_string_lossy().trim_end_matches('/')),
            None => format!("{cwd}/{rest}"),
        }
    } else if let Some(rest) = pattern.strip_prefix("./") {
        format!("{cwd}/{rest}")
    } else if let Some(rest) = pattern.strip_prefix('/') {
        format!("{cwd}/{rest}")
    } else if pattern.contains('/') {
        format!("{cwd}/{pattern}")
    } else {
        format!("{cwd}/**/{pattern}")
    }
}

fn compile_glob(pattern: &str) -> Result<GlobMatcher, String> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| e.to_string())
}

/// A gitignore-style pattern matches a path or any directory above it, so
/// `Read(./secrets)` covers `./secrets/key`.
fn path_pattern_matches(pattern: &str, path: &Path, ctx: &PathContext) -> bool {
    let Ok(glob) = compile_glob(&anchor_pattern(pattern, ctx)) else {
        return false;
    };
    path.ancestors().any(|p| glob.is_match(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> PathContext {
        PathContext {
            cwd: PathBuf::from("/proj"),
            home: Some(PathBuf::from("/home/u")),
        }
    }

    fn m(rule: &str, tool: &str, input: serde_json::Value) -> bool {
        Rule::parse(rule)
            .expect("rule parses")
            .matches(tool, &input, &ctx())
    }

    #[test]
    fn bash_prefix_is_a_word_boundary() {
        assert!(m(
            "Bash(npm test:*)",
            "Bash",
            json!({"command": "npm test"})
        ));
        assert!(m(
            "Bash(npm test:*)",
            "Bash",
            json!({"command": "npm test -- --watch"})
        ));
        assert!(!m(
            "Bash(npm test:*)",
            "Bash",
            json!({"command": "npm testify"})
        ));
        assert!(m(
            "Bash(rm:*)",
            "Bash",
            json!({"command": "rm -f victim.txt"})
        ));
        assert!(!m("Bash(rm:*)", "Bash", json!({"command": "rmdir x"})));
        assert!(!m("Bash(rm:*)", "Read", json!({"command": "rm x"})));
    }

    #[test]
    fn bash_exact_and_wildcard() {
        assert!(m("Bash(echo hi)", "Bash", json!({"command": "echo hi"})));
        assert!(!m(
            "Bash(echo hi)",
            "Bash",
            json!({"command": "echo hi there"})
        ));
        assert!(m(
            "Bash(git * main)",
            "Bash",
            json!({"command": "git push origin main"})
        ));
        assert!(!m(
            "Bash(git * main)",
            "Bash",
            json!({"command": "git push origin dev"})
        ));
        assert!(m("Bash", "Bash", json!({"command": "anything"})));
        assert!(m("Bash(*)", "Bash", json!({"command": "anything"})));
    }

    #[test]
    fn read_patterns_anchor_like_claude_code() {
        assert!(m(
            "Read(./secret.txt)",
            "Read",
            json!({"file_path": "secret.txt"})
        ));
        assert!(m(
            "Read(./secret.txt)",
            "Read",
            json!({"file_path": "/proj/secret.txt"})
        ));
        assert!(!m(
            "Read(./secret.txt)",
            "Read",
            json!({"file_path": "/proj/sub/secret.txt"})
        ));
        assert!(m(
            "Read(./secrets/**)",
            "Read",
            json!({"file_path": "secrets/a/b.key"})
        ));
        assert!(m(
            "Read(./secrets)",
            "Read",
            json!({"file_path": "secrets/k"})
        ));
        assert!(m(
            "Read(*.env)",
            "Read",
            json!({"file_path": "/proj/a/b/.env"})
        ));
        assert!(m(
            "Read(//etc/**)",
            "Read",
            json!({"file_path": "/etc/passwd"})
        ));
        assert!(m(
            "Read(~/.ssh/**)",
            "Read",
            json!({"file_path": "/home/u/.ssh/id"})
        ));
        // `..` cannot spell its way past a pattern.
        assert!(m(
            "Read(./secret.txt)",
            "Read",
            json!({"file_path": "x/../secret.txt"})
        ));
        // Read rules cover the other reading tools, Edit rules every writer.
        assert!(m(
            "Read(./secrets/**)",
            "Grep",
            json!({"path": "secrets/x"})
        ));
        assert!(m(
            "Edit(./src/**)",
            "Write",
            json!({"file_path": "src/a.rs"})
        ));
        assert!(!m(
            "Edit(./src/**)",
            "Write",
            json!({"file_path": "docs/a.md"})
        ));
    }

    #[test]
    fn mcp_rules_name_a_server_or_a_tool() {
        assert!(m("mcp__github", "mcp__github__create_issue", json!({})));
        assert!(m("mcp__github__*", "mcp__github__create_issue", json!({})));
        assert!(m(
            "mcp__github__create_issue",
            "mcp__github__create_issue",
            json!({})
        ));
        assert!(!m(
            "mcp__github__create_issue",
            "mcp__github__close_issue",
            json!({})
        ));
        assert!(!m("mcp__git", "mcp__github__create_issue", json!({})));
    }

    #[test]
    fn webfetch_domain() {
        assert!(m(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://example.com/a"})
        ));
        assert!(!m(
            "WebFetch(domain:example.com)",
            "WebFetch",
            json!({"url": "https://evil.com/example.com"})
        ));
    }

    #[test]
    fn syntax_errors_have_positions() {
        assert_eq!(Rule::parse("  ").err(), Some(RuleSyntaxError::Empty));
        assert_eq!(
            Rule::parse("Bash(npm").err(),
            Some(RuleSyntaxError::Unclosed { offset: 4 })
        );
        assert_eq!(
            Rule::parse("Bash()").err(),
            Some(RuleSyntaxError::EmptyContent { offset: 4 })
        );
        assert_eq!(
            Rule::parse("Ba sh").err(),
            Some(RuleSyntaxError::BadToolName { ch: ' ', offset: 2 })
        );
        assert!(matches!(
            Rule::parse("Read(./a/[b)"),
            Err(RuleSyntaxError::BadPattern { offset: 5, .. })
        ));
    }
}
