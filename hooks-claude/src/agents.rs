//! Custom agents: Claude Code's `.claude/agents/<name>.md` files (user and
//! project). Each is a Markdown file whose YAML frontmatter names the agent
//! (`name`, default the file stem), says when to use it (`description`),
//! limits its tools (`tools`, Claude Code names, comma-separated or a
//! list), picks a model (`model`, `inherit` = the session's) and may carry
//! `hooks` in the settings shape. The body is the agent's system prompt.
//!
//! Frontmatter hooks apply only inside that agent, and a frontmatter `Stop`
//! hook fires as `SubagentStop` (as captured, `sub_custom_agent_trusted`).
//! They are project hooks like any other: dsh's trust decides whether they
//! run (`dsh hooks trust`), and an untrusted project's frontmatter hooks
//! are skipped with Claude Code's message (`sub_custom_agent`).
//!
//! The frontmatter is read with a small YAML subset (block mappings and
//! sequences, plain and quoted scalars, `[a, b]` lists, `#` comments),
//! which is what agent files use; anything else is reported, naming the
//! file and line, and the file is skipped.

use std::path::{Path, PathBuf};

use dsh_seams::AgentDefinition;
use serde_json::{Map, Value};

use crate::payload::dsh_tool_name;

/// Where an agent file came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentScope {
    /// `<project>/.claude/agents/`.
    Project,
    /// `~/.claude/agents/`.
    User,
}

/// One custom agent as read from its file.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentFile {
    /// What the `agent` tool offers.
    pub definition: AgentDefinition,
    /// Where it came from.
    pub scope: AgentScope,
    /// Its frontmatter `hooks`, in the settings shape, with `Stop` already
    /// renamed `SubagentStop`.
    pub hooks: Option<Value>,
}

/// The message Claude Code logs for an untrusted project's agent hooks.
pub fn skipped_hooks_notice(agent: &str) -> String {
    format!(
        "Skipping frontmatter hooks for agent '{agent}': the folder its definition file came from is not trusted"
    )
}

/// Reads every agent file: project first, then user; a name defined in the
/// project hides the user's. Returns the agents and notices for files that
/// could not be read.
pub fn load_agents(project: &Path, home: &Path) -> (Vec<AgentFile>, Vec<String>) {
    let mut agents: Vec<AgentFile> = Vec::new();
    let mut notices = Vec::new();
    for (dir, scope) in [
        (project.join(".claude").join("agents"), AgentScope::Project),
        (home.join(".claude").join("agents"), AgentScope::User),
    ] {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        paths.sort();
        for path in paths {
            let text = match fs_err::read_to_string(&path) {
                Ok(text) => text,
                Err(error) => {
                    notices.push(format!("agent file skipped: {error}"));
                    continue;
                }
            };
            match parse_agent(&path, &text, scope) {
                Ok(agent) => {
                    if !agents
                        .iter()
                        .any(|known| known.definition.name == agent.definition.name)
                    {
                        agents.push(agent);
                    }
                }
                Err(problem) => {
                    notices.push(format!("agent file {} skipped: {problem}", path.display()))
                }
            }
        }
    }
    (agents, notices)
}

/// Parses one agent file.
pub fn parse_agent(path: &Path, text: &str, scope: AgentScope) -> Result<AgentFile, String> {
    let (front, body) = split_frontmatter(text).ok_or("no `---` frontmatter")?;
    let fields = parse_yaml(front)?;
    let Value::Object(fields) = fields else {
        return Err("the frontmatter is not a mapping".to_owned());
    };
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match fields.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name.clone(),
        _ => stem,
    };
    let description = fields
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let tools = match fields.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::String(list)) => Some(
            list.split(',')
                .map(str::trim)
                .filter(|tool| !tool.is_empty())
                .map(|tool| dsh_tool_name(tool).to_owned())
                .collect(),
        ),
        Some(Value::Array(list)) => Some(
            list.iter()
                .filter_map(Value::as_str)
                .map(|tool| dsh_tool_name(tool.trim()).to_owned())
                .collect(),
        ),
        Some(other) => return Err(format!("`tools` is neither a list nor a string: {other}")),
    };
    let model = fields
        .get("model")
        .and_then(Value::as_str)
        .filter(|model| !model.is_empty() && *model != "inherit")
        .map(str::to_owned);
    let hooks = match fields.get("hooks") {
        None | Some(Value::Null) => None,
        Some(Value::Object(events)) => {
            let mut renamed = Map::new();
            for (event, groups) in events {
                // A subagent's own "stop" is SubagentStop.
                let event = if event == "Stop" {
                    "SubagentStop".to_owned()
                } else {
                    event.clone()
                };
                renamed.insert(event, groups.clone());
            }
            Some(Value::Object(renamed))
        }
        Some(other) => return Err(format!("`hooks` is not a mapping: {other}")),
    };
    Ok(AgentFile {
        definition: AgentDefinition {
            name,
            description,
            system_prompt: body.trim().to_owned(),
            tools,
            model,
            source: path.to_owned(),
        },
        scope,
        hooks,
    })
}

/// The frontmatter (between a first `---` line and the next) and the body.
fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// One meaningful line: its indentation and content.
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
}

/// Parses the YAML subset agent files use into JSON.
pub fn parse_yaml(text: &str) -> Result<Value, String> {
    let lines: Vec<Line<'_>> = text
        .lines()
        .enumerate()
        .filter_map(|(index, raw)| {
            let trimmed = raw.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                return None;
            }
            Some(Line {
                number: index + 1,
                indent: raw.len() - trimmed.len(),
                text: trimmed.trim_end(),
            })
        })
        .collect();
    if lines.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let mut at = 0;
    let value = block(&lines, &mut at, lines[0].indent)?;
    match lines.get(at) {
        Some(line) => Err(format!("line {}: unexpected indentation", line.number)),
        None => Ok(value),
    }
}

/// A block (mapping or sequence) whose lines start at `indent`.
fn block(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<Value, String> {
    let Some(first) = lines.get(*at) else {
        return Ok(Value::Null);
    };
    if first.text == "-" || first.text.starts_with("- ") {
        let mut items = Vec::new();
        while let Some(line) = lines.get(*at) {
            if line.indent != indent || !(line.text == "-" || line.text.starts_with("- ")) {
                break;
            }
            let rest = line.text[1..].trim_start();
            *at += 1;
            if rest.is_empty() {
                items.push(nested(lines, at, indent)?);
            } else if let Some((key, value)) = key_value(rest) {
                // `- key: value` opens a mapping whose other keys sit two
                // columns further in.
                let item_indent = indent + (line.text.len() - rest.len());
                let mut map = Map::new();
                insert_entry(&mut map, key, value, lines, at, item_indent, line.number)?;
                while let Some(next) = lines.get(*at) {
                    if next.indent != item_indent {
                        break;
                    }
                    let Some((key, value)) = key_value(next.text) else {
                        return Err(format!("line {}: expected `key: value`", next.number));
                    };
                    *at += 1;
                    insert_entry(&mut map, key, value, lines, at, item_indent, next.number)?;
                }
                items.push(Value::Object(map));
            } else {
                items.push(scalar(rest, line.number)?);
            }
        }
        return Ok(Value::Array(items));
    }
    let mut map = Map::new();
    while let Some(line) = lines.get(*at) {
        if line.indent != indent {
            break;
        }
        let Some((key, value)) = key_value(line.text) else {
            return Err(format!("line {}: expected `key: value`", line.number));
        };
        *at += 1;
        insert_entry(&mut map, key, value, lines, at, indent, line.number)?;
    }
    Ok(Value::Object(map))
}

/// The block nested under a line at `indent` (more indented), or null.
fn nested(lines: &[Line<'_>], at: &mut usize, indent: usize) -> Result<Value, String> {
    match lines.get(*at) {
        Some(next) if next.indent > indent => block(lines, at, next.indent),
        // A sequence may sit at its key's own indentation.
        Some(next) if next.indent == indent && next.text.starts_with("- ") => {
            block(lines, at, indent)
        }
        Some(_) | None => Ok(Value::Null),
    }
}

fn insert_entry(
    map: &mut Map<String, Value>,
    key: &str,
    value: &str,
    lines: &[Line<'_>],
    at: &mut usize,
    indent: usize,
    number: usize,
) -> Result<(), String> {
    let parsed = if value.is_empty() {
        nested(lines, at, indent)?
    } else {
        scalar(value, number)?
    };
    map.insert(unquote(key).to_owned(), parsed);
    Ok(())
}

/// `key: value` (value may be empty); `None` for a line that is not one.
fn key_value(text: &str) -> Option<(&str, &str)> {
    if text.starts_with('"') || text.starts_with('\'') {
        let quote = text.chars().next()?;
        let end = text[1..].find(quote)? + 1;
        let rest = text[end + 1..].strip_prefix(':')?;
        return Some((&text[..=end], rest.trim()));
    }
    let colon = text
        .find(": ")
        .or_else(|| text.ends_with(':').then(|| text.len() - 1))?;
    Some((text[..colon].trim_end(), text[colon + 1..].trim()))
}

fn unquote(text: &str) -> &str {
    let quoted = text.len() >= 2
        && ((text.starts_with('"') && text.ends_with('"'))
            || (text.starts_with('\'') && text.ends_with('\'')));
    if quoted {
        &text[1..text.len() - 1]
    } else {
        text
    }
}

/// A scalar or a flow sequence.
fn scalar(text: &str, number: usize) -> Result<Value, String> {
    if let Some(inner) = text.strip_prefix('[') {
        let inner = inner
            .strip_suffix(']')
            .ok_or_else(|| format!("line {number}: unclosed `[`"))?;
        return Ok(Value::Array(
            inner
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| Value::String(unquote(item).to_owned()))
                .collect(),
        ));
    }
    if text.starts_with('{') || text.starts_with('|') || text.starts_with('>') {
        return Err(format!(
            "line {number}: flow mappings and block scalars are not supported"
        ));
    }
    if text.starts_with('"') {
        return serde_json::from_str(text)
            .map_err(|error| format!("line {number}: bad quoted string: {error}"));
    }
    if text.len() >= 2 && text.starts_with('\'') && text.ends_with('\'') {
        return Ok(Value::String(text[1..text.len() - 1].replace("''", "'")));
    }
    // A plain scalar ends at ` #` (a comment).
    let text = text.split(" #").next().unwrap_or(text).trim_end();
    Ok(match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        "null" | "~" => Value::Null,
        _ => match text.parse::<i64>() {
            Ok(number) => Value::from(number),
            Err(_) => Value::String(text.to_owned()),
        },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The agent file of `captures/sub_custom_agent*`.
    const REVIEWER: &str = "---\nname: reviewer\ndescription: Reviews things. Use when asked to review.\ntools: Bash, Read\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: python3 {HOOK} agent_frontmatter_pre {RUN}\n  Stop:\n    - hooks:\n        - type: command\n          command: python3 {HOOK} agent_frontmatter_stop {RUN}\n---\nYou are the reviewer agent. Review what you are given.\n";

    #[test]
    fn the_captured_agent_file_reads_as_claude_code_reads_it() {
        let agent = parse_agent(
            Path::new("/p/.claude/agents/reviewer.md"),
            REVIEWER,
            AgentScope::Project,
        )
        .unwrap();
        assert_eq!(agent.definition.name, "reviewer");
        assert_eq!(
            agent.definition.description,
            "Reviews things. Use when asked to review."
        );
        assert_eq!(
            agent.definition.tools,
            Some(vec!["bash".to_owned(), "read".to_owned()])
        );
        assert_eq!(
            agent.definition.system_prompt,
            "You are the reviewer agent. Review what you are given."
        );
        assert_eq!(agent.definition.model, None);
        assert_eq!(
            agent.hooks.unwrap(),
            json!({
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "python3 {HOOK} agent_frontmatter_pre {RUN}"}]}],
                "SubagentStop": [{"hooks": [
                    {"type": "command", "command": "python3 {HOOK} agent_frontmatter_stop {RUN}"}]}]
            })
        );
    }

    #[test]
    fn yaml_subset_scalars_lists_and_errors() {
        assert_eq!(
            parse_yaml("a: [Bash, 'Read']\nb: \"x: y\"\nc: 3 # n\nd: true\ne:\n- 1\n- two\n")
                .unwrap(),
            json!({"a": ["Bash", "Read"], "b": "x: y", "c": 3, "d": true, "e": [1, "two"]})
        );
        assert!(parse_yaml("a: {b: 1}").unwrap_err().contains("line 1"));
        assert!(parse_yaml("a: 1\n   b: 2").is_err());
        assert!(
            parse_agent(Path::new("x.md"), "no frontmatter", AgentScope::User)
                .unwrap_err()
                .contains("frontmatter")
        );
    }

    #[test]
    fn project_agents_hide_user_agents_of_the_same_name() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("p");
        let home = root.path().join("h");
        for (dir, body) in [(&project, "project prompt"), (&home, "user prompt")] {
            let agents = dir.join(".claude/agents");
            std::fs::create_dir_all(&agents).unwrap();
            std::fs::write(
                agents.join("helper.md"),
                format!("---\ndescription: d\nmodel: inherit\n---\n{body}\n"),
            )
            .unwrap();
        }
        std::fs::write(home.join(".claude/agents/bad.md"), "---\na: {x}\n---\n").unwrap();
        let (agents, notices) = load_agents(&project, &home);
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0].definition.name, "helper");
        assert_eq!(agents[0].definition.system_prompt, "project prompt");
        assert_eq!(agents[0].scope, AgentScope::Project);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("bad.md"));
    }
}
