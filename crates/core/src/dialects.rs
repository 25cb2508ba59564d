//! The registered hook dialects. A dialect crate plugs in with one line
//! here (and its crate in Cargo.toml); core, `dsh status`, the hook tools,
//! trust and ACP iterate the registry and name no dialect.

use std::sync::Arc;

use dsh_hooks::registry::Registry;

/// Every hook dialect dsh runs, in the order their hooks run on a shared
/// seam (and are listed).
pub fn registry() -> Registry {
    Registry::new()
        .register(Arc::new(dsh_hooks_claude::ClaudeDialect))
        .register(Arc::new(dsh_hooks_codex::CodexDialect))
        .register(Arc::new(dsh_hooks_gemini::GeminiDialect))
        .register(Arc::new(dsh_hooks_copilot::CopilotDialect))
}
