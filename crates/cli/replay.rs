//! `dsh replay FIXTURE`: a scripted session through the real loop.

use crate::stdio::{ExitStatus, errln};
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_agent::{Fixture, Observers, ScriptedModel};
use dsh_seams::SessionEndReason;
use dsh_session::encode;

use crate::wiring;

/// The `dsh replay` options.
pub struct ReplayArgs {
    /// The fixture.
    pub fixture: PathBuf,
    /// `--out`: the session log's file instead of stdout.
    pub out: Option<PathBuf>,
    /// `--requests-out`.
    pub requests_out: Option<PathBuf>,
    /// `--session-id`.
    pub session_id: Option<String>,
    /// The session flags.
    pub session: dsh_core::SessionFlags,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitStatus> {
    if args.session.model.is_some() {
        anyhow::bail!("dsh replay runs the fixture's scripted model; --model does not apply");
    }
    let fixture = Fixture::load(&args.fixture)?;
    let cwd = wiring::current_dir()?;
    let env = dsh_core::Env::from_process();
    // Replay runs offline and reads no config.toml (its model is scripted).
    let config = dsh_core::DshConfig::empty(&env.dsh_home_or_default());
    // Replay's contract: every hook runs whatever its trust state, and
    // every configured MCP server starts (contracts.md).
    let spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &args.session,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::RunAll,
    })?;
    let session_id = args
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    dsh_session::validate_session_id(&session_id).context("--session-id")?;
    // Both outputs are opened (and refused if they are not regular files)
    // before anything runs.
    let requests_file = args
        .requests_out
        .as_deref()
        .map(|path| crate::output::open(path, "requests"))
        .transpose()?;
    // Without --out the log streams to stdout as events are appended, so
    // what was acknowledged is out even if the run dies.
    let target = match &args.out {
        Some(path) => dsh_core::LogTarget::Writer {
            id: session_id.clone(),
            path: path.clone(),
            writer: Box::new(crate::output::open(path, "session log")?),
        },
        None => dsh_core::LogTarget::InMemory {
            id: session_id.clone(),
        },
    };
    // `--worktree`: the fixture's session runs in the worktree.
    let spec = match &args.session.worktree {
        Some(name) => dsh_core::worktree::enter(&spec, name, &session_id)??.0,
        None => spec,
    };
    let assembled = dsh_core::assemble(spec, target)?;
    for notice in assembled.hook_notices() {
        errln!("dsh: {notice}");
    }
    for problem in assembled.problems() {
        errln!("dsh: {problem}");
    }
    if args.out.is_none() {
        for event in assembled.log().events() {
            wiring::stdout_line(&encode(event)?);
        }
    }
    let observers = Observers {
        on_event: args.out.is_none().then(wiring::stdout_events),
        on_notice: Some(wiring::stderr_notices()),
        on_text: None,
    };
    // Each request goes to `--requests-out` as it is made: keeping them
    // (each carries the whole conversation) would grow with the square of
    // the steps. The first write error is kept and reported at the end.
    let requests_out = requests_file.map(|file| {
        Arc::new(Mutex::new(RequestsOut {
            file: std::io::BufWriter::new(file),
            error: None,
        }))
    });
    let requests_sink: dsh_agent::RequestSink = match &requests_out {
        Some(out) => {
            let out = Arc::clone(out);
            Box::new(move |request| {
                out.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .write(request);
            })
        }
        None => Box::new(|_| {}),
    };
    // A session like any other, with the fixture's scripted model.
    let label = args.fixture.display().to_string();
    dsh_agent::check_prompts(&fixture, assembled.commands(), &label)?;
    let model = Arc::new(ScriptedModel::streaming(
        label,
        fixture.script(),
        requests_sink,
    ));
    let mut session = dsh_core::Session::from_assembled(
        assembled,
        dsh_core::AgentOptions {
            model,
            interactive: false,
            max_steps: args
                .session
                .max_steps
                .unwrap_or(dsh_agent::DEFAULT_MAX_STEPS),
            observers,
            approval: None,
        },
    )?;
    // Replay's prompt names the project, nothing else (stable snapshots).
    session
        .agent()
        .replace_system_prompt(dsh_core::replay_system_prompt(&cwd));
    let prompts = dsh_agent::PromptRange {
        skip: 0,
        // `--init-only`: the set-up and session-start hooks, then no prompt.
        limit: args.session.init_only.then_some(0),
    };
    let ran = dsh_core::block_on(async {
        // Before the session-start hooks run: from here on SIGINT, SIGTERM
        // and SIGHUP end the replay in order (the open turn closes
        // `interrupted`, session-end hooks run) instead of dropping it.
        session.watch_signals()?;
        session.begin().await;
        let stop = session.agent().session_cancel().child_token();
        let outcomes =
            dsh_agent::run_prompts(session.agent(), &fixture, &cwd, prompts, &stop).await;
        session.shutdown(SessionEndReason::Other).await;
        anyhow::Ok((outcomes?, session.stopped()))
    })?;
    let (outcomes, signal) = ran?;
    for outcome in &outcomes {
        if let Some(message) = &outcome.message {
            errln!(
                "dsh: turn {} ended {}: {message}",
                outcome.turn,
                outcome.reason.as_str()
            );
        }
    }
    if let (Some(path), Some(out)) = (&args.requests_out, requests_out) {
        let mut out = out.lock().unwrap_or_else(PoisonError::into_inner);
        let flushed = match out.error.take() {
            Some(error) => Err(error),
            None => out.file.flush(),
        };
        flushed.with_context(|| format!("cannot write the requests to {}", path.display()))?;
    }
    if let Some(signal) = signal {
        errln!(
            "dsh: replay interrupted ({}); the open turn was closed interrupted and hook processes were killed",
            signal.name()
        );
        return Ok(ExitStatus::from(signal));
    }
    Ok(ExitStatus::Success)
}

/// `--requests-out`, written one request per line as the model receives it.
struct RequestsOut {
    file: std::io::BufWriter<std::fs::File>,
    /// The first write error; later requests are not written.
    error: Option<std::io::Error>,
}

impl RequestsOut {
    fn write(&mut self, request: &dsh_protocol::RequestRecord) {
        if self.error.is_some() {
            return;
        }
        let written = serde_json::to_writer(&mut self.file, request)
            .map_err(std::io::Error::from)
            .and_then(|()| self.file.write_all(b"\n"));
        if let Err(error) = written {
            self.error = Some(error);
        }
    }
}
