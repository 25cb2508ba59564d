//! Describes Gemini CLI to the shared hook engine.
