//! `dsh hooks test`, and the firing engine `dsh hooks replay` shares: one
//! event's hooks run through the real bridge plugins' seam methods with a
//! hand-built [`SeamContext`] whose recording sink captures every
//! `hook/invoked` / `hook/result` and user notice. No model, no tool.

use dsh_stdio::stdio::{ExitStatus, out, outln};
use std::path::Path;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use dsh_seams::{CancellationToken, Plugin, SeamContext, SessionEnv, SessionInfo, TurnControl};

use crate::common::Format;
use dsh_core::{LogTarget, SessionSpec};
use dsh_protocol::Dialect;

mod decided;
mod event;
mod fields;
mod firing;
mod lifecycle;
mod payload;
mod report;
mod sees;
mod tools;
mod turn_events;
use decided::Decided;
pub(super) use event::TestEvent;
pub(super) use firing::Firing;
pub(crate) use payload::TestPayload;
pub(super) use report::RunReport;
use report::{FireReport, Recorder, pair_runs, render};
use sees::{Sees, context_lines};

/// Fires `firing` through `plugins` the way the loop and the tool registry
/// would, and reports what the hooks decided.
pub(super) async fn fire(plugins: &[Arc<dyn Plugin>], cwd: &Path, firing: &Firing) -> FireReport {
    let recorder = Arc::new(Recorder::default());
    // Instruction files are read before the session-start seam.
    let in_turn = !matches!(
        firing.event,
        TestEvent::SessionStart | TestEvent::SessionEnd | TestEvent::InstructionsLoaded
    );
    let in_subagent = matches!(
        firing.event,
        TestEvent::SubagentStart | TestEvent::SubagentStop
    );
    let ctx = SeamContext {
        session: Arc::new(SessionInfo {
            session_id: firing.session_id.clone(),
            cwd: cwd.to_owned(),
            model: "none".to_owned(),
            log_path: None,
            env: SessionEnv::default(),
            // PermissionRequest hooks run where a person could answer.
            interactive: firing.event == TestEvent::PermissionRequest,
        }),
        turn: in_turn.then_some(firing.turn),
        cancel: CancellationToken::new(),
        sink: recorder.clone(),
        control: TurnControl::default(),
        agent: in_subagent.then(|| firing.lifecycle.identity()),
        subagents: None,
    };
    let mut model_sees = Vec::new();
    let mut user_sees = Vec::new();
    let mut arguments_used = None;
    let (decision, summary) = match firing.event {
        TestEvent::PreToolUse
        | TestEvent::PermissionRequest
        | TestEvent::PostToolUse
        | TestEvent::PostToolUseFailure => {
            let sees = Sees {
                model: &mut model_sees,
                user: &mut user_sees,
            };
            let (decision, summary, arguments) = tools::fire(plugins, &ctx, firing, sees).await;
            arguments_used = arguments;
            (decision, summary)
        }
        TestEvent::UserPromptSubmit => {
            let sees = Sees {
                model: &mut model_sees,
                user: &mut user_sees,
            };
            turn_events::prompt_submit(plugins, &ctx, firing, sees).await
        }
        TestEvent::SessionStart => {
            let mut contexts = Vec::new();
            for plugin in plugins {
                contexts.extend(plugin.session_start(&ctx, firing.source).await);
            }
            model_sees.extend(context_lines(&contexts));
            let summary = format!("{} context(s)", contexts.len());
            (Decided::Contexts { contexts }, summary)
        }
        TestEvent::Stop => {
            let sees = Sees {
                model: &mut model_sees,
                user: &mut user_sees,
            };
            turn_events::continuation(plugins, &ctx, firing, sees).await
        }
        TestEvent::SessionEnd => {
            for plugin in plugins {
                plugin.session_end(&ctx, firing.end_reason).await;
            }
            (
                Decided::Nothing,
                "observed (SessionEnd cannot change anything)".to_owned(),
            )
        }
        TestEvent::Notification => {
            for plugin in plugins {
                plugin.notification(&ctx, &firing.notification).await;
            }
            (
                Decided::Nothing,
                "observed (Notification cannot change anything)".to_owned(),
            )
        }
        TestEvent::SubagentStart
        | TestEvent::SubagentStop
        | TestEvent::PreCompact
        | TestEvent::PostCompact
        | TestEvent::StopFailure
        | TestEvent::UserPromptExpansion
        | TestEvent::InstructionsLoaded
        | TestEvent::PermissionDenied => {
            if firing.event == TestEvent::PermissionDenied {
                arguments_used = Some(firing.arguments.clone());
            }
            let sees = Sees {
                model: &mut model_sees,
                user: &mut user_sees,
            };
            lifecycle::fire(plugins, &ctx, firing, sees).await
        }
    };
    if let Some(stop) = ctx.control.stop_requested() {
        user_sees.push(format!(
            "turn stopped after this phase: {} ({})",
            stop.reason, stop.source
        ));
    }
    for entry in ctx.control.take_injected() {
        model_sees.push(format!("system message: {}", entry.content));
    }
    for notice in recorder
        .notices
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        user_sees.push(format!("{}: {}", notice.source, notice.text));
    }
    let events = recorder
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    FireReport {
        event: firing.event.name().to_owned(),
        tool: firing.event.is_tool_event().then(|| firing.tool.clone()),
        arguments: arguments_used,
        runs: pair_runs(&events),
        decision,
        summary,
        model_sees,
        user_sees,
    }
}

/// The hooks of a session assembled from `spec` (dsh-core's
/// [`dsh_core::assemble`], as every front end starts its sessions), in
/// memory: the bridge plugins, every hook the trust decision left in
/// (`excluded_hooks` stay out), split by dialect. The permission stage
/// is left out: the tools show what hooks decide.
pub(super) struct Hooks {
    /// Each dialect's bridge with its dialect, in pipeline order (a dialect
    /// with nothing configured has none).
    pub bridges: Vec<(Dialect, Arc<dyn Plugin>)>,
    /// The runner every hook process goes through.
    pub runner: dsh_core::HookRunner,
    /// The bridges' start-up notices (a hook that will not run, and why).
    pub notices: Vec<String>,
}

impl Hooks {
    /// Assembles `spec` in memory; no MCP server starts (the caller took
    /// them out), no log is written.
    pub(super) fn assemble(spec: &SessionSpec) -> anyhow::Result<Hooks> {
        let assembled = dsh_core::assemble(
            spec.clone(),
            LogTarget::InMemory {
                id: "hooks-tooling".to_owned(),
            },
        )?;
        let dsh_core::HookBridges {
            bridges,
            runner,
            notices,
        } = assembled.into_hook_bridges();
        Ok(Hooks {
            bridges,
            runner,
            notices,
        })
    }

    /// One dialect's plugins, or all of them in pipeline order.
    pub(super) fn of(&self, dialect: Option<Dialect>) -> Vec<Arc<dyn Plugin>> {
        self.bridges
            .iter()
            .filter(|(of, _)| dialect.is_none_or(|wanted| *of == wanted))
            .map(|(_, plugin)| Arc::clone(plugin))
            .collect()
    }
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// `dsh hooks test` arguments.
pub(super) struct TestArgs {
    pub event: String,
    pub tool: Option<String>,
    pub input: Option<String>,
    pub dialect: Option<Dialect>,
    pub format: Format,
    /// Event fields given as flags: (payload key, value), written over the
    /// payload's own.
    pub fields: Vec<(&'static str, String)>,
}

/// Lets hooks that were started but not awaited (StopFailure's) do their
/// work before the runner kills what is left: they are spawned on the
/// runtime after the seam returned, so first wait (briefly) for one to
/// show up, then for all to end.
fn wait_for_detached(runner: &dsh_core::HookRunner) {
    let start = std::time::Instant::now();
    while runner.live_groups() == 0 && start.elapsed() < DETACHED_START {
        std::thread::sleep(Duration::from_millis(5));
    }
    while runner.live_groups() > 0 && start.elapsed() < DETACHED_GRACE {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long a detached hook may take to be spawned (a quick one may also
/// have come and gone by then).
const DETACHED_START: Duration = Duration::from_secs(1);

/// How long `dsh hooks test StopFailure` lets its detached hooks finish
/// before they are killed (a session waits about a second at teardown; a
/// test run is there to see them work, so it is more patient).
const DETACHED_GRACE: Duration = Duration::from_secs(10);

fn read_input(input: Option<&str>) -> anyhow::Result<TestPayload> {
    let Some(input) = input else {
        return Ok(TestPayload::default());
    };
    let (text, origin) = match input.strip_prefix('@') {
        // `-`: the payload on stdin, as a hook gets it.
        None if input == "-" => (
            std::io::read_to_string(std::io::stdin()).context("cannot read --input from stdin")?,
            "stdin".to_owned(),
        ),
        Some(path) => (
            fs_err::read_to_string(path).context("cannot read the --input file")?,
            path.to_owned(),
        ),
        None => (input.to_owned(), "--input".to_owned()),
    };
    let dialects: Vec<_> = dsh_core::dialects::registry().iter().cloned().collect();
    TestPayload::read(&text, &dialects).map_err(|error| match error {
        payload::PayloadError::Syntax(error) => anyhow::anyhow!(
            "{origin}:{}:{}: not valid JSON: {error}",
            error.line(),
            error.column()
        ),
        payload::PayloadError::NotAnObject => {
            anyhow::anyhow!("{origin}: the hook payload must be a JSON object")
        }
        payload::PayloadError::Fields(error) => anyhow::anyhow!("{origin}: {error}"),
    })
}

/// `dsh hooks test`: the event, payload and flags are checked before
/// `spec` resolves the session (which may ask about trust), so a mistyped
/// payload is the first thing said.
pub(super) fn run_test(
    spec: impl FnOnce() -> anyhow::Result<SessionSpec>,
    args: TestArgs,
) -> anyhow::Result<ExitStatus> {
    let event = TestEvent::parse(&args.event)?;
    let mut payload = read_input(args.input.as_deref())?;
    for (key, _) in &args.fields {
        event.check_flag(key)?;
    }
    for (key, value) in args.fields {
        payload.set_flag(key, value);
    }
    let firing = Firing::from_fields(event, args.tool.as_deref(), payload)?;
    let spec = spec()?;
    let hooks = Hooks::assemble(&spec)?;
    let runtime = runtime()?;
    let report = runtime.block_on(fire(&hooks.of(args.dialect), &spec.cwd, &firing));
    if report.runs.iter().any(|run| run.outcome == "detached") {
        wait_for_detached(&hooks.runner);
    }
    hooks.runner.kill_all();
    match args.format {
        Format::Json => outln!("{}", serde_json::to_string_pretty(&report)?)?,
        Format::Text => {
            out!("{}", render(&report, &spec.cwd))?;
            // Nothing ran: the notices say why a configured hook may not
            // (a folder Gemini CLI does not trust, an unsupported event, …).
            if report.runs.is_empty() && !hooks.notices.is_empty() {
                outln!("notices:")?;
                for notice in &hooks.notices {
                    outln!("  {notice}")?;
                }
            }
        }
    }
    Ok(ExitStatus::Success)
}
