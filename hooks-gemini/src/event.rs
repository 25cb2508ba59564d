//! Gemini CLI's hook events, by their settings-file names.

use dsh_hooks::names::{EventTable, Tabled};
use dsh_protocol::Seam;

use GeminiEvent as E;

/// One Gemini CLI hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GeminiEvent {
    /// A session started (`startup`, `resume`, `clear`).
    SessionStart,
    /// A prompt was submitted, before the agent loop.
    BeforeAgent,
    /// Before a model request (handled by the model-event module).
    BeforeModel,
    /// Before the model chooses among tools (handled by the model-event module).
    BeforeToolSelection,
    /// After each model response chunk (handled by the model-event module).
    AfterModel,
    /// Before a tool runs.
    BeforeTool,
    /// After a tool ran.
    AfterTool,
    /// The agent produced its final answer for the prompt.
    AfterAgent,
    /// Before the history is compressed.
    PreCompress,
    /// A notification (tool permission).
    Notification,
    /// The session ended.
    SessionEnd,
}

impl Tabled for GeminiEvent {
    /// Every event with its settings-file name and its seam, in Gemini's
    /// documented order.
    #[rustfmt::skip]
    const TABLE: EventTable<GeminiEvent> = EventTable(&[
        (E::SessionStart, "SessionStart", None, Seam::SessionStart),
        (E::BeforeAgent, "BeforeAgent", None, Seam::PromptSubmit),
        (E::BeforeModel, "BeforeModel", None, Seam::ModelRequest),
        (E::BeforeToolSelection, "BeforeToolSelection", None, Seam::ModelRequest),
        (E::AfterModel, "AfterModel", None, Seam::ModelRequest),
        (E::BeforeTool, "BeforeTool", None, Seam::PreExecute),
        (E::AfterTool, "AfterTool", None, Seam::PostExecute),
        (E::AfterAgent, "AfterAgent", None, Seam::TurnContinuation),
        (E::PreCompress, "PreCompress", None, Seam::Compaction),
        (E::Notification, "Notification", None, Seam::Notification),
        (E::SessionEnd, "SessionEnd", None, Seam::SessionEnd),
    ]);
}

impl GeminiEvent {
    /// Parses a settings-file event name (exact, case-sensitive).
    pub fn parse(name: &str) -> Option<GeminiEvent> {
        Self::TABLE.parse(name).map(|(event, _)| event)
    }

    /// Whether the matcher is a regex over tool names (else an exact
    /// lifecycle string such as `startup`).
    pub fn matches_tools(self) -> bool {
        matches!(self, GeminiEvent::BeforeTool | GeminiEvent::AfterTool)
    }
}
