//! `dsh replay FIXTURE`: a scripted session through the real loop.

use crate::stdio::{ExitStatus, errln};
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use std::sync::{Arc, Mutex, PoisonError};

use dsh_agent::{Fixture, Observers, ReplayOptions, replay_fixture_until};
use dsh_seams::CancellationToken;

use crate::signals::Stop;
use dsh_session::{SessionLog, encode};

use crate::wiring::{self, HookSources};

pub struct ReplayArgs {
    pub fixture: PathBuf,
    pub out: Option<PathBuf>,
    pub requests_out: Option<PathBuf>,
    pub session_id: Option<String>,
    pub settings: Vec<PathBuf>,
    /// Claude Code plugin directories loaded for this run (`--plugin-dir`).
    pub plugin_dirs: Vec<PathBuf>,
    pub max_steps: u64,
    /// `--autocompact`.
    pub autocompact: Option<crate::compact::AutocompactFlag>,
    pub permissions: crate::perms::PermissionFlags,
    /// MCP configuration files (`--mcp-config`).
    pub mcp_config: Vec<PathBuf>,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitStatus> {
    let fixture = Fixture::load(&args.fixture)?;
    let cwd = wiring::current_dir()?;
    let mut sources = HookSources::from_env(cwd.clone(), args.settings.clone());
    sources.claude_plugin_dirs = args.plugin_dirs.clone();
    // Replay is the offline harness: without --permission-mode it runs
    // bypassPermissions (contracts §6), so only deny and ask rules bite.
    let permissions = crate::perms::build(
        &args.permissions,
        &cwd,
        &sources.home,
        &args.settings,
        Some(dsh_permissions::Mode::BypassPermissions),
    )?;
    sources.permission_mode = Some(permissions.mode);
    let mcp_servers = crate::mcp_cmd::discover(
        &cwd,
        &sources.home,
        &args.settings,
        &args.mcp_config,
        crate::mcp_cmd::ProjectServers::StartAll,
    )?;
    sources.mcp_servers = crate::mcp_cmd::tags(&mcp_servers);
    let mut hooks = wiring::load_hooks(&sources)?;
    // After the bridges: PreToolUse hooks fire before the rules decide.
    hooks.plugins.push(permissions.plugin);
    for notice in &hooks.notices {
        errln!("dsh: {notice}");
    }
    let session_id = args
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    dsh_session::validate_session_id(&session_id).context("--session-id")?;
    // MCP servers start before the header is written: it lists them.
    let mcp = crate::mcp_cmd::McpSession::start(&mcp_servers, &cwd, hooks.runner.processes())?;
    for problem in mcp.problems() {
        errln!("dsh: {problem}");
    }
    let mut notices = hooks.notices.clone();
    notices.extend(mcp.notices().iter().cloned());
    let header = wiring::header(&session_id, &cwd, notices);
    // Both outputs are opened (and refused if they are not regular files)
    // before anything runs.
    let requests_file = args
        .requests_out
        .as_deref()
        .map(|path| crate::output::open(path, "requests"))
        .transpose()?;

    // Without --out the log streams to stdout as events are appended, so
    // what was acknowledged is out even if the run dies.
    let log = match &args.out {
        Some(path) => {
            let file = crate::output::open(path, "session log")?;
            SessionLog::over_writer(path, Box::new(file), header)
                .with_context(|| format!("cannot write the session log {}", path.display()))?
        }
        None => {
            let log = SessionLog::in_memory(header)?;
            for event in log.events() {
                wiring::stdout_line(&encode(event)?);
            }
            log
        }
    };
    let observers = Observers {
        on_event: args.out.is_none().then(wiring::stdout_events),
        on_notice: Some(wiring::stderr_notices()),
        on_text: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let runner = hooks.runner.clone();
    let options = ReplayOptions {
        label: args.fixture.display().to_string(),
        cwd: cwd.clone(),
        session_id,
        log,
        resumed: false,
        plugins: hooks.plugins,
        processes: runner.processes().clone(),
        max_steps: args.max_steps,
        system_prompt: wiring::system_prompt(&cwd),
        observers,
        prompt_limit: None,
        skip_prompts: 0,
        auto_compact: crate::compact::auto_compact(args.autocompact, "scripted"),
        project: dsh_agent::ProjectContext::discover(
            &dsh_agent::instructions::ContextRoots::from_env(cwd.clone()),
        ),
        extra_tools: mcp.tools(),
    };
    let ran = runtime.block_on(async {
        // Before the session-start hooks run: from here on SIGINT, SIGTERM
        // and SIGHUP end the replay in order (the open turn closes
        // `interrupted`, session-end hooks run) instead of dropping it.
        let mut signals = crate::signals::Signals::install()?;
        let stop = CancellationToken::new();
        let stopped: Arc<Mutex<Option<Stop>>> = Arc::new(Mutex::new(None));
        let watcher = {
            let stop = stop.clone();
            let stopped = Arc::clone(&stopped);
            let runner = runner.clone();
            tokio::spawn(async move {
                let signal = signals.recv().await;
                *stopped.lock().unwrap_or_else(PoisonError::into_inner) = Some(signal);
                // kill_all first: once the token is cancelled the session-end
                // hooks may start, and they must not be killed.
                runner.kill_all();
                stop.cancel();
                // A second signal while the session ends: stop waiting.
                let again = signals.recv().await;
                runner.kill_all();
                errln!("dsh: {} again; exiting now", again.name());
                ExitStatus::from(signal).exit_now();
            })
        };
        let output = replay_fixture_until(&fixture, options, stop).await;
        mcp.close().await;
        // Detached (async) hooks do not outlive the replay.
        runner.kill_all();
        watcher.abort();
        let signal = *stopped.lock().unwrap_or_else(PoisonError::into_inner);
        anyhow::Ok((output?, signal))
    });
    // The runtime's blocking pool may hold a reader; do not wait for it.
    runtime.shutdown_background();
    let (output, signal) = ran?;
    for outcome in &output.outcomes {
        if let Some(message) = &outcome.message {
            errln!(
                "dsh: turn {} ended {}: {message}",
                outcome.turn,
                outcome.reason.as_str()
            );
        }
    }
    let requests = output.requests;
    if let (Some(path), Some(requests_file)) = (&args.requests_out, requests_file) {
        let mut file = std::io::BufWriter::new(requests_file);
        for request in &requests {
            serde_json::to_writer(&mut file, request)?;
            file.write_all(b"\n")?;
        }
        file.flush()
            .with_context(|| format!("cannot write the requests to {}", path.display()))?;
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
