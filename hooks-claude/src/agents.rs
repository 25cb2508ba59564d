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
//! The frontmatter is YAML, read by `dsh-frontmatter` as for every other
//! Markdown file dsh reads; a block that is not YAML is reported, naming
//! the file and line, and the file is skipped.

use std::path::{Path, PathBuf};

use dsh_seams::AgentDefinition;
use serde_json::Value;

use crate::output::wire::Field;
use crate::payload::dsh_tool_name;
use crate::settings_wire::HooksWire;

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
    /// Its frontmatter `hooks`, read as a settings file's, with `Stop`
    /// already renamed `SubagentStop`.
    pub(crate) hooks: Option<HooksWire>,
}

/// The session notice for an agent file that could not be read.
pub fn skipped_agent_notice(path: &Path, why: &str) -> String {
    format!("agent file {} skipped: {why}", path.display())
}

/// The message Claude Code logs for an untrusted project's agent hooks.
pub fn skipped_hooks_notice(agent: &str) -> String {
    format!(
        "Skipping frontmatter hooks for agent '{agent}': the folder its definition file came from is not trusted"
    )
}

/// Reads every agent file: project first, then user; a name defined in the
/// project hides the user's. Returns the agents and, for each file that
/// could not be read, its path and why.
pub fn load_agents(project: &Path, home: &Path) -> (Vec<AgentFile>, Vec<(PathBuf, String)>) {
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
                    // The io error itself: the path is said once, by the caller.
                    let why = std::error::Error::source(&error)
                        .map_or_else(|| error.to_string(), ToString::to_string);
                    notices.push((path, why));
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
                Err(problem) => notices.push((path, problem)),
            }
        }
    }
    (agents, notices)
}

/// Parses one agent file.
pub fn parse_agent(path: &Path, text: &str, scope: AgentScope) -> Result<AgentFile, String> {
    let document = dsh_frontmatter::parse(text).map_err(|error| error.to_string())?;
    let front = document.frontmatter.ok_or("no `---` frontmatter")?;
    let body = document.body;
    let fields = front.fields();
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match front.text("name") {
        Some(name) if !name.is_empty() => name,
        Some(_) | None => stem,
    };
    let description = front.text("description").unwrap_or_default();
    let tools = match fields.get("tools") {
        None | Some(Value::Null) => None,
        Some(Value::String(_) | Value::Array(_)) => Some(
            front
                .list("tools")
                .iter()
                .map(|tool| dsh_tool_name(tool.trim()).to_owned())
                .collect(),
        ),
        Some(other) => return Err(format!("`tools` is neither a list nor a string: {other}")),
    };
    let model = front
        .text("model")
        .filter(|model| !model.is_empty() && model != "inherit");
    let hooks = match fields.get("hooks") {
        None => None,
        Some(raw) if raw.is_null() => None,
        Some(raw) => match Field::<HooksWire>::read(raw) {
            Field::Valid(mut events) => {
                for (event, _) in &mut events.0 {
                    // A subagent's own "stop" is SubagentStop.
                    if event == "Stop" {
                        "SubagentStop".clone_into(event);
                    }
                }
                Some(events)
            }
            Field::Absent | Field::Invalid { .. } => {
                return Err(format!("`hooks` is not a mapping: {raw}"));
            }
        },
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
            serde_json::from_value::<HooksWire>(json!({
                "PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "python3 {HOOK} agent_frontmatter_pre {RUN}"}]}],
                "SubagentStop": [{"hooks": [
                    {"type": "command", "command": "python3 {HOOK} agent_frontmatter_stop {RUN}"}]}]
            }))
            .unwrap()
        );
    }

    #[test]
    fn frontmatter_shapes_and_errors() {
        let agent = parse_agent(
            Path::new("/p/.claude/agents/x.md"),
            "---\ndescription: Use when: the tests fail\ntools: [Bash, 'Read']\nmodel: opus\n---\nbody\n",
            AgentScope::User,
        )
        .unwrap();
        assert_eq!(agent.definition.name, "x");
        assert_eq!(agent.definition.description, "Use when: the tests fail");
        assert_eq!(
            agent.definition.tools,
            Some(vec!["bash".to_owned(), "read".to_owned()])
        );
        assert_eq!(agent.definition.model.as_deref(), Some("opus"));
        let error = parse_agent(
            Path::new("x.md"),
            "---\na: 1\n   b: 2\n---\n",
            AgentScope::User,
        )
        .unwrap_err();
        assert!(error.contains("line 3"), "{error}");
        assert!(
            parse_agent(Path::new("x.md"), "no frontmatter", AgentScope::User)
                .unwrap_err()
                .contains("frontmatter")
        );
        assert!(
            parse_agent(
                Path::new("x.md"),
                "---\nhooks: [a]\n---\n",
                AgentScope::User
            )
            .unwrap_err()
            .contains("`hooks` is not a mapping")
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
        std::fs::write(
            home.join(".claude/agents/bad.md"),
            "---\na: 1\n   b: 2\n---\n",
        )
        .unwrap();
        let (agents, notices) = load_agents(&project, &home);
        assert_eq!(agents.len(), 1);
        assert_eq!(agents[0].definition.name, "helper");
        assert_eq!(agents[0].definition.system_prompt, "project prompt");
        assert_eq!(agents[0].scope, AgentScope::Project);
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].0.ends_with("bad.md"));
        assert!(notices[0].1.contains("line 3"), "{notices:?}");
    }
}
