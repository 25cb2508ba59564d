//! End-to-end tests: the real `dsh` binary and the real loop over fixtures.

// Test code: a failed unwrap or expect is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests report what they measured or skipped on stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod support;

// The crate structure: no import circles, a thin binary.
mod acp_sdk;
mod acp_server;
mod acpx;
mod architecture;
// Bounds on what a repository's files make dsh build.
mod bounds;
// The Claude Agent SDKs (TypeScript and Python) drive dsh.
mod claude_sdk;
mod cli_headless;
// `dsh -p` as Claude Code's print mode, against the captures.
mod claude_print;
// `dsh completions` and `dsh man`.
mod cli_install;
mod cli_interactive;
// First contact: the trust question, sessions, provider errors, man pages.
mod cli_onboarding;
mod cli_replay;
mod cli_sessions_safety;
mod cli_signals;
mod cli_tui;
mod codex_notify;
// `dsh exec`: Codex's exec command and its JSONL events.
mod codex_exec;
// `dsh exec` under the official Codex SDK.
mod codex_sdk;
mod compaction;
mod conformance_claude;
mod conformance_codex;
// Gemini CLI hooks.
mod conformance_gemini;
// Gemini model events against the captures.
mod conformance_gemini_model;
// GitHub Copilot CLI hooks.
mod conformance_copilot;
mod conformance_copilot_mcp;
// One session core for every front end; MCP consent.
mod core_frontends;
mod docs;
mod durability;
mod fail_closed;
mod hook_scenarios;
mod hooks_cmd;
// The installed release binary, as users run it (`DSH_TEST_BIN` in CI).
mod installed_smoke;
// The provider key out of dsh's own environment.
mod key_environ;
mod many_hooks;
mod mcp;
mod native_fixtures;
mod permissions;
mod plugin_scenarios;
mod prompt_commands;
// A repository's own settings and hooks before and after trust.
mod project_trust;
// The model APIs (Chat Completions, Anthropic Messages) end to end.
mod provider_apis;
// Mentions and lines typed during a turn.
mod prompt_input;
mod provider_responses;
// The terminal's prompt history on every exit path.
mod prompt_history;
mod replay_determinism;
mod replay_fixtures;
mod replay_signals;
// Subagents.
mod subagents;
mod task_hooks;
// `--worktree` and `/add-dir`.
mod watch_events;
mod worktree;
