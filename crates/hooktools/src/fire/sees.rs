//! Where a firing's "the model sees" / "the user sees" lines go.

/// Where a firing's "the model sees" / "the user sees" lines go.
pub(crate) struct Sees<'a> {
    pub model: &'a mut Vec<String>,
    pub user: &'a mut Vec<String>,
}

/// The "the model sees" lines of added context.
pub(crate) fn context_lines(contexts: &[dsh_seams::ContextEntry]) -> Vec<String> {
    contexts
        .iter()
        .map(|c| format!("system message: {}", c.content))
        .collect()
}
