//! dsh's permission model, as Claude Code has it: modes, rule syntax and
//! matching, layer precedence, workspace trust, which calls need approval
//! in each mode, and the texts the model gets. Pure functions; the tool
//! pipeline applies them.

pub mod always;
pub mod compound;
pub mod layer;
pub mod mode;
pub mod plugin;
pub mod policy;
pub mod rule;
pub mod store;
pub mod texts;

pub use layer::{Behavior, Layer, LayerError, Source, SourcedRule};
pub use mode::{Mode, UnknownMode};
pub use plugin::PermissionsPlugin;
pub use policy::{Decider, DenyHooks, Permissions, PromptSurface, Trust, Verdict};
pub use rule::{PathContext, Rule, RuleSyntaxError};

#[cfg(test)]
mod tests;
