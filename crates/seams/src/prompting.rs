//! Types for the prompt-layer seams: project instruction files
//! loaded into the system prompt, slash commands expanding into prompts, and
//! the system-prompt seam a native plugin may use to amend the prompt (seed
//! 004's `before_agent_start`).

use std::path::PathBuf;

use crate::ContextEntry;

/// Who an instruction file belongs to, as Claude Code's `memory_type` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryType {
    /// The user's own instructions for every project (`~/.claude/CLAUDE.md`,
    /// Codex's global `AGENTS.md`).
    User,
    /// Instructions checked into the project (`CLAUDE.md`, `.claude/rules/*.md`,
    /// `AGENTS.md` files from the project root down).
    Project,
    /// The user's private instructions for this project (`CLAUDE.local.md`).
    Local,
}

impl MemoryType {
    /// The wire name (`User`, `Project`, `Local`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "User",
            MemoryType::Project => "Project",
            MemoryType::Local => "Local",
        }
    }
}

/// Which tool's convention an instruction file follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InstructionKind {
    /// A Claude Code memory file (`CLAUDE.md`, `CLAUDE.local.md`).
    ClaudeMemory,
    /// A Claude Code rule (`.claude/rules/*.md` without `paths:`).
    ClaudeRule,
    /// A Codex `AGENTS.md` / `AGENTS.override.md`.
    Agents,
}

/// Why instruction files were loaded (Claude Code's `load_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoadReason {
    /// Read when the session started.
    SessionStart,
    /// A `.claude/rules` file scoped by `paths:`, read when a tool touched a
    /// matching file ([`InstructionFile::trigger`]).
    PathGlobMatch,
}

impl LoadReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadReason::SessionStart => "session_start",
            LoadReason::PathGlobMatch => "path_glob_match",
        }
    }
}

/// One instruction file as it went into the system prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Absolute path.
    pub path: PathBuf,
    /// Whose it is.
    pub memory_type: MemoryType,
    /// Which convention.
    pub kind: InstructionKind,
    /// The text that reached the system prompt (frontmatter removed; cut at
    /// the size cap when `truncated`).
    pub content: String,
    /// Whether the size cap cut this file (or left it out entirely).
    pub truncated: bool,
    /// A scoped rule's `paths:` globs (empty: the file applies everywhere).
    pub globs: Vec<String>,
    /// The file whose use loaded a scoped rule (`LoadReason::PathGlobMatch`).
    pub trigger: Option<PathBuf>,
}

/// Where a custom command was defined (Claude Code's `command_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommandSource {
    /// The project's `.claude/commands/` or `.claude/skills/`.
    Project,
    /// The user's `~/.claude/commands/`, `~/.claude/skills/` or `~/.codex/prompts/`.
    User,
}

impl CommandSource {
    /// Claude Code's settings-source name (`projectSettings`, `userSettings`).
    pub fn settings_name(self) -> &'static str {
        match self {
            CommandSource::Project => "projectSettings",
            CommandSource::User => "userSettings",
        }
    }
}

/// How a prompt was expanded (Claude Code's `expansion_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExpansionType {
    /// A custom slash command, a skill invoked as `/name`, or a Codex
    /// `/prompts:name`.
    SlashCommand,
}

impl ExpansionType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ExpansionType::SlashCommand => "slash_command",
        }
    }
}

/// A prompt about to be replaced by a command's expansion (the
/// prompt-expansion seam, after prompt-submit allowed the prompt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpansionInput {
    /// The prompt as typed (`/x hello-arg`).
    pub prompt: String,
    /// The command's name as typed, without the slash (`x`, `frontend:component`).
    pub command_name: String,
    /// Everything after the name, trimmed.
    pub command_args: String,
    /// Where the command was defined.
    pub source: CommandSource,
    /// How it expands.
    pub expansion_type: ExpansionType,
    /// The text the model will get instead of the prompt.
    pub expanded: String,
}

/// What the system-prompt seam (seed 004's `before_agent_start`) is told,
/// once per turn after prompt policy and before the turn's first request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentStartInput {
    /// The prompt as the model will get it.
    pub prompt: String,
    /// The system prompt as earlier listeners left it.
    pub system_prompt: String,
    /// The instruction files already in it.
    pub instructions: Vec<InstructionFile>,
}

/// What a system-prompt listener decided.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AgentStartDecision {
    /// A replacement system prompt for this turn's requests (later
    /// listeners see it; the next turn starts again from the session's).
    pub system_prompt: Option<String>,
    /// Contexts appended after the turn's prompt.
    pub contexts: Vec<ContextEntry>,
}

impl AgentStartDecision {
    /// Nothing changes.
    pub fn keep() -> Self {
        AgentStartDecision::default()
    }
}
