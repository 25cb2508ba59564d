//! Attachments of the next prompt: context the person attached to what
//! they typed (an `@path` mention's file), kept apart from the prompt so
//! that the prompt-submit seam (UserPromptSubmit hooks) sees the prompt as
//! typed, as Claude Code hands it to them, while the model still gets the
//! content. They are recorded as durable `context/message`s right after the
//! turn's `user/message`; a prompt the seam blocks drops them.

use dsh_seams::ContextEntry;

use super::Agent;

impl Agent {
    /// Attaches `entries` to the next turn's prompt (replacing anything
    /// attached before and not yet sent).
    pub fn attach_to_next_prompt(&mut self, entries: impl IntoIterator<Item = ContextEntry>) {
        self.prompt_attachments = entries.into_iter().collect();
    }

    /// Takes the attachments for the turn that starts now.
    pub(super) fn take_prompt_attachments(&mut self) -> Vec<ContextEntry> {
        std::mem::take(&mut self.prompt_attachments)
    }
}
