//! Claude Code's permission rule syntax and how a rule matches a tool call.
//!
//! `Tool` or `Tool(content)`. The content means different things per tool:
//! a command pattern for `Bash` (`npm test:*` is a prefix at a word
//! boundary, `*` elsewhere is a wildcard, anything else is exact), a
//! gitignore-style path pattern for the file tools (`Read(./secrets/**)`),
//! `domain:HOST` for `WebFetch`. `mcp__server` names every tool of a server.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Behavior {
    /// Runs without asking.
    Allow,
    /// Never runs.
    Deny,
    /// Always asks.
    Ask,
}

impl Behavior {
    /// The settings key.
    pub fn key(self) -> &'static str {
        match self {
            Behavior::Allow => "allow",
            Behavior::Deny => "deny",
            Behavior::Ask => "ask",
        }
    }
}

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

/// How a path rule meets a path that may be (or pass through) a symbolic
/// link. A repository can commit `notes -> ~/.ssh`, so a rule is judged
/// against where the path points as well as how it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathJudgement {
    /// Deny and ask rules: they match if the path as written *or* where it
    /// points matches (`Read(./secrets/**)` still catches `secrets/x` that
    /// links elsewhere; `Read(~/.ssh/**)` catches a link into `~/.ssh`).
    Restrict,
    /// Allow rules: they cover a path only where it points, so a link
    /// leaving what the rule names is not covered.
    Grant,
}

/// Where relative path patterns and paths are anchored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathContext {
    /// The session's working directory (the project).
    pub cwd: PathBuf,
    /// The user's home, for `~/` patterns.
    pub home: Option<PathBuf>,
    /// Where relative paths in tool inputs start when that is not the
    /// project: the shell's directory after a `cd` the bash tool kept.
    /// Rule patterns stay anchored at `cwd`.
    pub base: Option<PathBuf>,
}

impl PathContext {
    /// A path from a tool input made absolute and lexically normalised
    /// (`..` cannot climb out of a pattern's reach by spelling): the path
    /// *as written*. See [`PathContext::resolve_real`] for where it points.
    pub fn resolve(&self, p: &str) -> PathBuf {
        normalize(&self.join(p))
    }

    /// Where a path from a tool input points: made absolute, symlinks
    /// followed and `..` applied as the kernel would (see [`real_path`]).
    pub fn resolve_real(&self, p: &str) -> PathBuf {
        real_path(&self.join(p))
    }

    /// The same context with the project and home where they point (a
    /// project under a symlinked `/tmp`, a home under a linked `/home`).
    pub fn real(&self) -> PathContext {
        PathContext {
            cwd: real_path(&self.cwd),
            home: self.home.as_deref().map(real_path),
            base: self.base.as_deref().map(real_path),
        }
    }

    fn join(&self, p: &str) -> PathBuf {
        let base = self.base.as_deref().unwrap_or(&self.cwd);
        if let Some(rest) = p.strip_prefix("~/") {
            match &self.home {
                Some(h) => h.join(rest),
                None => base.join(p),
            }
        } else {
            base.join(p)
        }
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

/// How many symbolic links [`real_path`] follows before it stops (the
/// kernel's own limit is 40).
const MAX_LINK_HOPS: usize = 40;

/// Where an absolute path points: every symbolic link followed and `..`
/// applied to the directory it is really in. An existing path is its
/// `canonicalize`; for one that does not exist yet, the existing part is
/// resolved and the rest appended (a new file under a linked directory is
/// judged where it will land); a dangling link resolves to its target.
/// A link loop, or a relative path, is normalised lexically from there on.
/// Never fails: a permission check must judge every path.
pub fn real_path(p: &Path) -> PathBuf {
    if !p.is_absolute() {
        return normalize(p);
    }
    if let Ok(real) = fs_err::canonicalize(p) {
        return real;
    }
    let owned = |c: Component<'_>| match c {
        Component::Prefix(_) | Component::RootDir => None,
        Component::CurDir => Some(std::ffi::OsString::from(".")),
        Component::ParentDir => Some(std::ffi::OsString::from("..")),
        Component::Normal(name) => Some(name.to_owned()),
    };
    // `None` is "back to the root" (an absolute link target).
    let mut pending: std::collections::VecDeque<Option<std::ffi::OsString>> = p
        .components()
        .skip(1)
        .map(|c| owned(c).or(Some(".".into())))
        .collect();
    let mut out = PathBuf::from("/");
    // Once a component is missing (or loops), the rest is lexical.
    let mut lexical = false;
    let mut hops = 0;
    while let Some(part) = pending.pop_front() {
        let Some(name) = part else {
            out = PathBuf::from("/");
            continue;
        };
        if name == "." {
            continue;
        }
        if name == ".." {
            // `out` holds no links (until `lexical`), so popping is what
            // the kernel's `..` does.
            out.pop();
            continue;
        }
        out.push(&name);
        if lexical {
            continue;
        }
        match fs_err::symlink_metadata(&out) {
            Ok(meta) if meta.file_type().is_symlink() => {
                hops += 1;
                let target = match fs_err::read_link(&out) {
                    Ok(target) if hops <= MAX_LINK_HOPS => target,
                    _ => {
                        lexical = true;
                        continue;
                    }
                };
                out.pop();
                let mut parts: Vec<Option<std::ffi::OsString>> =
                    target.components().map(owned).collect();
                if !target.is_absolute() {
                    parts.retain(Option::is_some);
                }
                for part in parts.into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Ok(_) => {}
            Err(_) => lexical = true,
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

    /// Does this rule match a call of `tool` with `input` (its arguments,
    /// or the [`CallInput`] already read from them)? Path patterns
    /// match as a restriction does ([`PathJudgement::Restrict`]); use
    /// [`Rule::matches_for`] to judge an allow rule.
    pub fn matches<'a>(
        &self,
        tool: &str,
        input: impl Into<CallInput<'a>>,
        ctx: &PathContext,
    ) -> bool {
        self.matches_as(tool, input, ctx, PathJudgement::Restrict)
    }

    /// [`Rule::matches`] for a rule with `behavior`: an allow rule grants
    /// only where a path points, a deny or ask rule restricts it as
    /// written too.
    pub fn matches_for<'a>(
        &self,
        behavior: Behavior,
        tool: &str,
        input: impl Into<CallInput<'a>>,
        ctx: &PathContext,
    ) -> bool {
        let judgement = match behavior {
            Behavior::Allow => PathJudgement::Grant,
            Behavior::Deny | Behavior::Ask => PathJudgement::Restrict,
        };
        self.matches_as(tool, input, ctx, judgement)
    }

    /// [`Rule::matches`] with an explicit [`PathJudgement`].
    pub fn matches_as<'a>(
        &self,
        tool: &str,
        input: impl Into<CallInput<'a>>,
        ctx: &PathContext,
        judgement: PathJudgement,
    ) -> bool {
        let input = input.into();
        if !self.names_tool(tool) {
            return false;
        }
        match &self.specifier {
            Specifier::Any => true,
            Specifier::CommandPrefix(prefix) => input.command.is_some_and(|c| {
                let c = c.trim();
                c == prefix
                    || c.strip_prefix(prefix.as_str())
                        .is_some_and(|rest| rest.starts_with(char::is_whitespace))
            }),
            Specifier::CommandWildcard(pat) => {
                input.command.is_some_and(|c| wildcard_match(pat, c.trim()))
            }
            Specifier::CommandExact(exact) => input.command.is_some_and(|c| c.trim() == exact),
            Specifier::Path(pattern) => match input.path {
                Some(p) => path_rule_matches(pattern, p, ctx, judgement),
                None => false,
            },
            Specifier::Domain(domain) => input
                .url
                .and_then(host_of)
                .is_some_and(|h| h.eq_ignore_ascii_case(domain)),
            Specifier::Literal(lit) => input.primary.is_some_and(|s| s == lit),
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
                    base: None,
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

/// What permission rules read of a tool call's arguments, taken out of
/// the JSON once ([`CallInput::of`]): the arguments themselves are whatever
/// the tool takes, these are the fields rules are about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallInput<'a> {
    /// `command`: what a `Bash(...)` rule matches.
    pub command: Option<&'a str>,
    /// The path a file tool acts on (`file_path`, `notebook_path` or
    /// `path`, the first that is a string): what `Read(...)` and
    /// `Edit(...)` rules match.
    pub path: Option<&'a str>,
    /// `url`: what a `WebFetch(domain:...)` rule matches.
    pub url: Option<&'a str>,
    /// The first string among the arguments: what any other rule's
    /// specifier is compared with.
    pub primary: Option<&'a str>,
}

impl<'a> From<&'a serde_json::Value> for CallInput<'a> {
    fn from(arguments: &'a serde_json::Value) -> Self {
        CallInput::of(arguments)
    }
}

impl<'a> From<&CallInput<'a>> for CallInput<'a> {
    fn from(input: &CallInput<'a>) -> Self {
        *input
    }
}

impl<'a> CallInput<'a> {
    /// The fields of a call's `arguments` (all `None` when they are not
    /// an object).
    pub fn of(arguments: &'a serde_json::Value) -> Self {
        let Some(fields) = arguments.as_object() else {
            return CallInput::default();
        };
        let text = |key: &str| fields.get(key).and_then(|value| value.as_str());
        CallInput {
            command: text("command"),
            path: ["file_path", "notebook_path", "path"]
                .into_iter()
                .find_map(text),
            url: text("url"),
            primary: fields.values().find_map(|value| value.as_str()),
        }
    }

    /// A Bash call of one `command` (one command of a parsed line).
    pub fn command(command: &'a str) -> Self {
        CallInput {
            command: Some(command),
            primary: Some(command),
            ..CallInput::default()
        }
    }
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
/// The project and home are literal text in the pattern (a `[` in a
/// directory name is not a character class).
fn anchor_pattern(pattern: &str, ctx: &PathContext) -> String {
    let cwd = globset::escape(&ctx.cwd.to_string_lossy());
    let cwd = cwd.trim_end_matches('/');
    if let Some(abs) = pattern.strip_prefix("//") {
        format!("/{abs}")
    } else if let Some(rest) = pattern.strip_prefix("~/") {
        match &ctx.home {
            Some(h) => format!(
                "{}/{rest}",
                globset::escape(&h.to_string_lossy()).trim_end_matches('/')
            ),
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
    glob_covers(&glob, path)
}

fn glob_covers(glob: &GlobMatcher, path: &Path) -> bool {
    path.ancestors().any(|p| glob.is_match(p))
}

/// Whether a path rule matches the tool's path `p` (see [`PathJudgement`]).
fn path_rule_matches(pattern: &str, p: &str, ctx: &PathContext, judgement: PathJudgement) -> bool {
    let real = ctx.resolve_real(p);
    // The project and home where they point, so a project under a linked
    // directory still covers its own files.
    let real_ctx = ctx.real();
    match judgement {
        PathJudgement::Grant => path_pattern_matches(pattern, &real, &real_ctx),
        PathJudgement::Restrict => {
            // Each distinct pattern is compiled once; most calls compile
            // one (no link in the project, home or pattern).
            let written = ctx.resolve(p);
            let anchored = anchor_pattern(pattern, ctx);
            if let Ok(glob) = compile_glob(&anchored)
                && (glob_covers(&glob, &written) || (real != written && glob_covers(&glob, &real)))
            {
                return true;
            }
            let covers_real = |pat: &str| compile_glob(pat).is_ok_and(|g| glob_covers(&g, &real));
            if real_ctx != *ctx {
                let real_anchored = anchor_pattern(pattern, &real_ctx);
                if real_anchored != anchored && covers_real(&real_anchored) {
                    return true;
                }
            }
            real_prefix_pattern(&anchored).is_some_and(|pat| covers_real(&pat))
        }
    }
}

/// An anchored pattern whose literal leading directories are replaced by
/// where they point (`/proj/secrets/**` with `secrets -> /vault` becomes
/// `/vault/**`), so a restriction also catches the target named directly.
/// `None` when nothing in the literal part is a link. Never used to grant:
/// a repository could aim a literal directory anywhere.
fn real_prefix_pattern(anchored: &str) -> Option<String> {
    const GLOB_CHARS: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];
    let parts: Vec<&str> = anchored.split('/').collect();
    let literal = parts
        .iter()
        .position(|part| part.contains(GLOB_CHARS))
        .unwrap_or(parts.len());
    let prefix = parts[..literal].join("/");
    if prefix.is_empty() {
        return None;
    }
    let real = real_path(Path::new(&prefix));
    if real == Path::new(&prefix) {
        return None;
    }
    let rest = parts[literal..].join("/");
    let real = globset::escape(&real.to_string_lossy());
    let real = real.trim_end_matches('/');
    Some(if rest.is_empty() {
        real.to_owned()
    } else {
        format!("{real}/{rest}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ctx() -> PathContext {
        PathContext {
            cwd: PathBuf::from("/proj"),
            home: Some(PathBuf::from("/home/u")),
            base: None,
        }
    }

    fn m(rule: &str, tool: &str, input: serde_json::Value) -> bool {
        Rule::parse(rule)
            .expect("rule parses")
            .matches(tool, &input, &ctx())
    }

    #[test]
    fn call_input_reads_what_rules_match() {
        let args =
            json!({"notebook_path": 5, "path": "p", "url": "https://x.io/a", "command": "ls"});
        let input = CallInput::of(&args);
        // A key of another type is skipped, for the path as for the first string.
        assert_eq!(input.path, Some("p"));
        assert_eq!(input.primary, Some("p"));
        assert_eq!(input.command, Some("ls"));
        assert_eq!(input.url, Some("https://x.io/a"));
        assert_eq!(CallInput::of(&json!("ls")), CallInput::default());
        // One command of a parsed line matches as a call of it would.
        for (rule, command) in [("Bash(ls:*)", "ls -l"), ("Other(ls -l)", "ls -l")] {
            let rule = Rule::parse(rule).unwrap();
            let tool = if rule.tool == "Bash" { "Bash" } else { "Other" };
            assert!(rule.matches(tool, CallInput::command(command), &ctx()));
            assert!(rule.matches(tool, &json!({ "command": command }), &ctx()));
        }
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
    fn real_path_follows_links_like_the_kernel() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().canonicalize().expect("real");
        let at = |p: &str| root.join(p);
        std::fs::create_dir_all(at("a/b")).expect("mkdir");
        std::fs::create_dir_all(at("t")).expect("mkdir");
        symlink(at("a/b"), at("abs")).expect("link");
        symlink("a/b", at("rel")).expect("link");
        symlink("rel", at("chain")).expect("link");
        symlink("../t/new", at("a/dangling")).expect("link");
        symlink("loop2", at("loop1")).expect("link");
        symlink("loop1", at("loop2")).expect("link");
        // Existing paths: canonical.
        assert_eq!(real_path(&at("abs")), at("a/b"));
        assert_eq!(real_path(&at("chain/./")), at("a/b"));
        // `..` after a link applies to its target's directory.
        assert_eq!(real_path(&at("rel/../x/y")), at("a/x/y"));
        assert_eq!(real_path(&at("chain/../../t")), at("t"));
        // Not there yet: the existing part resolved, the rest appended.
        assert_eq!(
            real_path(&at("abs/new/deeper.txt")),
            at("a/b/new/deeper.txt")
        );
        assert_eq!(real_path(&at("nope/../t/x")), at("t/x"));
        // A dangling link is its target, relative to the link's directory.
        assert_eq!(real_path(&at("a/dangling")), at("t/new"));
        assert_eq!(real_path(&at("a/dangling/more")), at("t/new/more"));
        // A loop stops (lexically) instead of spinning.
        assert_eq!(real_path(&at("loop1/x")), at("loop1/x"));
        // Relative paths are only normalised (no process cwd involved).
        assert_eq!(real_path(Path::new("p/../q")), PathBuf::from("q"));
    }

    #[test]
    fn project_and_home_names_are_literal_in_patterns() {
        let ctx = PathContext {
            cwd: PathBuf::from("/w/[x]"),
            home: Some(PathBuf::from("/h/{u}")),
            base: None,
        };
        let rule = Rule::parse("Read(./a)").expect("parses");
        assert!(rule.matches("Read", &json!({"file_path": "a"}), &ctx));
        assert!(!rule.matches("Read", &json!({"file_path": "/w/x/a"}), &ctx));
        let rule = Rule::parse("Read(~/.ssh/**)").expect("parses");
        assert!(rule.matches("Read", &json!({"file_path": "/h/{u}/.ssh/id"}), &ctx));
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
