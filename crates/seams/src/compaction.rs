//! The compaction seams (seed 004's `session_before_compact`): before the
//! history is summarized a listener may cancel the compaction, add to the
//! summary instructions, or supply the summary itself; after it, listeners
//! see the summary and may add contexts that join the compacted history.

pub use dsh_protocol::CompactionTrigger;

/// What the before-compaction seam is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionInput {
    /// Manual (`/compact`) or automatic.
    pub trigger: CompactionTrigger,
    /// The user's `/compact` text, if any.
    pub custom_instructions: Option<String>,
    /// dsh's estimate of the conversation's size in tokens.
    pub estimated_tokens: u64,
    /// How many model-facing messages the summary would replace.
    pub messages_to_summarize: usize,
}

/// A before-compaction listener's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompactionDecision {
    /// Go ahead; `instructions` are appended to the summary instructions
    /// (Claude Code appends a PreCompact hook's plain stdout there).
    Proceed {
        /// Extra instructions for the summary request, in order.
        instructions: Vec<String>,
    },
    /// Do not compact; the history stays as it is and the turn goes on.
    Cancel {
        /// Why (user-facing; recorded in `compaction/failed`).
        reason: String,
    },
    /// Use this summary instead of asking the model.
    Summary {
        /// The summary text (recorded as written).
        summary: String,
    },
}

impl CompactionDecision {
    /// Go ahead with nothing to add.
    pub fn proceed() -> Self {
        CompactionDecision::Proceed {
            instructions: Vec::new(),
        }
    }
}

/// What the after-compaction seam is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionOutcome {
    /// Manual or automatic.
    pub trigger: CompactionTrigger,
    /// The summary exactly as written (the model's raw reply).
    pub summary: String,
    /// `model`, or the plugin that supplied the summary.
    pub summarized_by: String,
}
