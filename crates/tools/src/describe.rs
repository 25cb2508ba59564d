//! How a tool call is described to people: its kind, a one-line title, the
//! argument summary the terminal prints, and the files it touches.
//!
//! This is the one reader of a call's raw argument keys (`command`,
//! `file_path`, `pattern`, …) for display. The terminal, `-p`'s approval
//! line and the ACP server all describe a call through [`describe`], so a
//! new tool or a renamed argument is taught to them in one place.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny};
use serde_json::Value;

/// What a call does, in the vocabulary of ACP's `ToolKind` (editors pick an
/// icon by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads a file.
    Read,
    /// Creates or changes a file.
    Edit,
    /// Deletes a file.
    Delete,
    /// Moves or renames a file.
    Move,
    /// Searches files or their contents.
    Search,
    /// Runs a command.
    Execute,
    /// Thinks or plans without side effects.
    Think,
    /// Fetches something from the network.
    Fetch,
    /// Anything else: subagents, MCP tools, unknown tools.
    Other,
}

/// A file or directory a call touches, as the call names it (possibly
/// relative to the session's working directory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPath {
    /// The path as given in the arguments.
    pub path: String,
    /// The 1-based line the call starts at, when it names one (`read`'s
    /// `offset`).
    pub line: Option<u32>,
}

/// A call described for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDescription {
    /// What the call does.
    pub kind: ToolKind,
    /// A one-line title, as an editor lists the call: a verb and what it
    /// acts on (`Run cargo test`, `Read src/lib.rs`), at most
    /// [`TITLE_CHARS`] characters.
    pub title: String,
    /// The one-line summary of the arguments the terminal prints after the
    /// tool's name (`$ cargo test`, `src/lib.rs`, `"TODO" in src`); the
    /// arguments as JSON for a tool with no summary of its own. Line breaks
    /// are shown as `⏎`; the caller shortens it to its width.
    pub summary: String,
    /// The files and directories the call touches, in the order it names
    /// them.
    pub paths: Vec<ToolPath>,
}

impl ToolDescription {
    /// The file a call changes (`write`, `edit`), whose content before and
    /// after makes a diff.
    pub fn changed_file(&self) -> Option<&str> {
        match self.kind {
            ToolKind::Edit => self.paths.first().map(|path| path.path.as_str()),
            ToolKind::Read
            | ToolKind::Delete
            | ToolKind::Move
            | ToolKind::Search
            | ToolKind::Execute
            | ToolKind::Think
            | ToolKind::Fetch
            | ToolKind::Other => None,
        }
    }
}

/// The longest [`ToolDescription::title`], in characters.
pub const TITLE_CHARS: usize = 120;

/// A field read leniently: a value of another type reads as absent.
pub(crate) fn lenient<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either<T> {
        Wanted(T),
        Other(IgnoredAny),
    }
    Ok(match Either::deserialize(deserializer)? {
        Either::Wanted(wanted) => Some(wanted),
        Either::Other(_) => None,
    })
}

/// The arguments of the built-in tools a description shows; any other
/// field, and any of these that is missing or mistyped, is left out.
#[derive(Debug, Default, Deserialize)]
struct Shown {
    #[serde(default, deserialize_with = "lenient")]
    description: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    command: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    file_path: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    offset: Option<u64>,
    #[serde(default, deserialize_with = "lenient")]
    pattern: Option<String>,
    #[serde(default, deserialize_with = "lenient")]
    path: Option<String>,
}

/// Describes a call of `tool` with `arguments` (the built-in tools by their
/// arguments; an MCP or unknown tool by its name and its arguments as JSON).
/// Missing or mistyped arguments leave their part out; this never fails.
pub fn describe(tool: &str, arguments: &Value) -> ToolDescription {
    let shown = Shown::deserialize(arguments).unwrap_or_default();
    let (kind, verb, detail, summary, paths): (ToolKind, &str, Option<&str>, Option<String>, _) =
        match tool {
            "bash" => (
                ToolKind::Execute,
                "Run",
                shown
                    .description
                    .as_deref()
                    .filter(|description| !description.trim().is_empty())
                    .or(shown.command.as_deref()),
                shown.command.as_ref().map(|command| format!("$ {command}")),
                Vec::new(),
            ),
            "read" | "write" | "edit" => {
                let line = (tool == "read")
                    .then_some(shown.offset)
                    .flatten()
                    .and_then(|offset| u32::try_from(offset).ok());
                let file = shown.file_path.clone();
                let (kind, verb) = match tool {
                    "read" => (ToolKind::Read, "Read"),
                    "write" => (ToolKind::Edit, "Write"),
                    _ => (ToolKind::Edit, "Edit"),
                };
                (
                    kind,
                    verb,
                    shown.file_path.as_deref(),
                    file.clone(),
                    file.map(|path| ToolPath { path, line })
                        .into_iter()
                        .collect(),
                )
            }
            "glob" | "grep" => {
                let pattern = shown.pattern.as_deref();
                let within = shown.path.as_deref();
                (
                    ToolKind::Search,
                    if tool == "glob" {
                        "Find files"
                    } else {
                        "Search"
                    },
                    pattern,
                    pattern.map(|pattern| match within {
                        Some(within) => format!("{pattern:?} in {within}"),
                        None => format!("{pattern:?}"),
                    }),
                    within
                        .map(|path| ToolPath {
                            path: path.to_owned(),
                            line: None,
                        })
                        .into_iter()
                        .collect(),
                )
            }
            other => (ToolKind::Other, other, None, None, Vec::new()),
        };
    ToolDescription {
        kind,
        title: title(verb, detail),
        summary: summary
            .unwrap_or_else(|| arguments.to_string())
            .replace('\n', "⏎"),
        paths,
    }
}

/// `verb` and the first line of `detail`, cut to [`TITLE_CHARS`].
fn title(verb: &str, detail: Option<&str>) -> String {
    let Some(detail) = detail else {
        return verb.to_owned();
    };
    let line = detail.lines().next().unwrap_or_default();
    let title = format!("{verb} {line}");
    if title.chars().count() > TITLE_CHARS {
        title.chars().take(TITLE_CHARS - 1).collect::<String>() + "…"
    } else {
        title
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn at(path: &str, line: Option<u32>) -> ToolPath {
        ToolPath {
            path: path.to_owned(),
            line,
        }
    }

    #[test]
    fn bash_is_run_by_its_description_or_first_command_line() {
        let call = describe("bash", &json!({"command": "ls -la\nrm x"}));
        assert_eq!(call.kind, ToolKind::Execute);
        assert_eq!(call.title, "Run ls -la");
        assert_eq!(call.summary, "$ ls -la⏎rm x");
        assert_eq!(call.paths, []);
        assert_eq!(call.changed_file(), None);

        let described = describe(
            "bash",
            &json!({"command": "cargo test", "description": "Run the tests"}),
        );
        assert_eq!(described.title, "Run Run the tests");
        assert_eq!(described.summary, "$ cargo test");
        let blank = describe("bash", &json!({"command": "make", "description": "  "}));
        assert_eq!(blank.title, "Run make");
    }

    #[test]
    fn file_tools_name_their_file() {
        let read = describe("read", &json!({"file_path": "/etc/hosts", "offset": 3}));
        assert_eq!(read.kind, ToolKind::Read);
        assert_eq!(read.title, "Read /etc/hosts");
        assert_eq!(read.summary, "/etc/hosts");
        assert_eq!(read.paths, [at("/etc/hosts", Some(3))]);
        assert_eq!(read.changed_file(), None);

        let write = describe("write", &json!({"file_path": "a.txt", "content": "x\n"}));
        assert_eq!(write.kind, ToolKind::Edit);
        assert_eq!(write.title, "Write a.txt");
        assert_eq!(write.summary, "a.txt");
        assert_eq!(write.paths, [at("a.txt", None)]);
        assert_eq!(write.changed_file(), Some("a.txt"));

        let edit = describe(
            "edit",
            &json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b", "offset": 9}),
        );
        assert_eq!(edit.kind, ToolKind::Edit);
        assert_eq!(edit.title, "Edit src/a.rs");
        // Only `read` has a start line.
        assert_eq!(edit.paths, [at("src/a.rs", None)]);
        assert_eq!(edit.changed_file(), Some("src/a.rs"));
    }

    #[test]
    fn search_tools_name_their_pattern_and_directory() {
        let glob = describe("glob", &json!({"pattern": "**/*.rs"}));
        assert_eq!(glob.kind, ToolKind::Search);
        assert_eq!(glob.title, "Find files **/*.rs");
        assert_eq!(glob.summary, r#""**/*.rs""#);
        assert_eq!(glob.paths, []);

        let grep = describe("grep", &json!({"pattern": "TODO", "path": "src"}));
        assert_eq!(grep.kind, ToolKind::Search);
        assert_eq!(grep.title, "Search TODO");
        assert_eq!(grep.summary, r#""TODO" in src"#);
        assert_eq!(grep.paths, [at("src", None)]);
        assert_eq!(grep.changed_file(), None);
    }

    #[test]
    fn agent_mcp_and_unknown_tools_are_named_with_their_arguments() {
        let agent = describe(
            "agent",
            &json!({"description": "look around", "prompt": "list files"}),
        );
        assert_eq!(agent.kind, ToolKind::Other);
        assert_eq!(agent.title, "agent");
        assert_eq!(
            agent.summary,
            r#"{"description":"look around","prompt":"list files"}"#
        );

        let mcp = describe("mcp__docs__search", &json!({"q": "a\nb"}));
        assert_eq!(mcp.kind, ToolKind::Other);
        assert_eq!(mcp.title, "mcp__docs__search");
        assert_eq!(mcp.summary, r#"{"q":"a\nb"}"#);
        assert_eq!(mcp.paths, []);

        let unknown = describe("mystery", &json!({}));
        assert_eq!(unknown.kind, ToolKind::Other);
        assert_eq!(unknown.title, "mystery");
        assert_eq!(unknown.summary, "{}");
    }

    #[test]
    fn missing_or_mistyped_arguments_leave_their_part_out() {
        let read = describe("read", &json!({}));
        assert_eq!(read.title, "Read");
        assert_eq!(read.summary, "{}");
        assert_eq!(read.paths, []);
        let bash = describe("bash", &json!({"command": 7}));
        assert_eq!(bash.title, "Run");
        assert_eq!(bash.summary, r#"{"command":7}"#);
        let read = describe("read", &json!({"file_path": "a", "offset": -1}));
        assert_eq!(read.paths, [at("a", None)]);
        let huge = u64::from(u32::MAX) + 1;
        let read = describe("read", &json!({"file_path": "a", "offset": huge}));
        assert_eq!(read.paths, [at("a", None)]);
        assert_eq!(describe("bash", &Value::Null).summary, "null");
        // One mistyped field does not hide the others.
        let bash = describe("bash", &json!({"command": "ls", "description": 5}));
        assert_eq!(
            (bash.title.as_str(), bash.summary.as_str()),
            ("Run ls", "$ ls")
        );
        let read = describe("read", &json!({"file_path": "a", "offset": 2.5}));
        assert_eq!(read.paths, [at("a", None)]);
    }

    #[test]
    fn long_titles_are_cut_with_an_ellipsis() {
        let command = "x".repeat(300);
        let title = describe("bash", &json!({ "command": command })).title;
        assert_eq!(title.chars().count(), TITLE_CHARS);
        assert!(title.starts_with("Run xxx"));
        assert!(title.ends_with('…'));
        let exact = "y".repeat(TITLE_CHARS - "Run ".len());
        let title = describe("bash", &json!({ "command": exact })).title;
        assert_eq!(title, format!("Run {exact}"));
    }
}
