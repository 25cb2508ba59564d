//! What dsh knows about the models its APIs serve: their context windows,
//! for the status line and automatic compaction.

/// The context window, in tokens, of a model one of dsh's APIs serves;
/// `None` for a model dsh has no figure for (the configuration's
/// `[compaction] context_windows` can name it).
pub fn context_window(model: &str) -> Option<u64> {
    crate::responses::responses_context_window(model)
}
