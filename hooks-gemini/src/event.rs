//! Gemini CLI's hook events, by their settings-file names.

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

impl GeminiEvent {
    /// Every event, in Gemini's documented order.
    pub const ALL: [GeminiEvent; 11] = [
        GeminiEvent::SessionStart,
        GeminiEvent::BeforeAgent,
        GeminiEvent::BeforeModel,
        GeminiEvent::BeforeToolSelection,
        GeminiEvent::AfterModel,
        GeminiEvent::BeforeTool,
        GeminiEvent::AfterTool,
        GeminiEvent::AfterAgent,
        GeminiEvent::PreCompress,
        GeminiEvent::Notification,
        GeminiEvent::SessionEnd,
    ];

    /// The name used in `settings.json` and as `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            GeminiEvent::SessionStart => "SessionStart",
            GeminiEvent::BeforeAgent => "BeforeAgent",
            GeminiEvent::BeforeModel => "BeforeModel",
            GeminiEvent::BeforeToolSelection => "BeforeToolSelection",
            GeminiEvent::AfterModel => "AfterModel",
            GeminiEvent::BeforeTool => "BeforeTool",
            GeminiEvent::AfterTool => "AfterTool",
            GeminiEvent::AfterAgent => "AfterAgent",
            GeminiEvent::PreCompress => "PreCompress",
            GeminiEvent::Notification => "Notification",
            GeminiEvent::SessionEnd => "SessionEnd",
        }
    }

    /// Parses a settings-file event name (exact, case-sensitive).
    pub fn parse(name: &str) -> Option<GeminiEvent> {
        GeminiEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// The canonical seam the event runs on.
    pub fn seam(self) -> dsh_protocol::Seam {
        use dsh_protocol::Seam;
        match self {
            GeminiEvent::SessionStart => Seam::SessionStart,
            GeminiEvent::BeforeAgent => Seam::PromptSubmit,
            GeminiEvent::BeforeModel
            | GeminiEvent::BeforeToolSelection
            | GeminiEvent::AfterModel => Seam::ModelRequest,
            GeminiEvent::BeforeTool => Seam::PreExecute,
            GeminiEvent::AfterTool => Seam::PostExecute,
            GeminiEvent::AfterAgent => Seam::TurnContinuation,
            GeminiEvent::PreCompress => Seam::Compaction,
            GeminiEvent::Notification => Seam::Notification,
            GeminiEvent::SessionEnd => Seam::SessionEnd,
        }
    }

    /// Whether the matcher is a regex over tool names (else an exact
    /// lifecycle string such as `startup`).
    pub fn matches_tools(self) -> bool {
        matches!(self, GeminiEvent::BeforeTool | GeminiEvent::AfterTool)
    }
}
