//! `dsh replay FIXTURE`: a scripted session through the real loop.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use dsh_agent::{Fixture, Observers, ReplayOptions, replay_fixture};
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
    pub permissions: crate::perms::PermissionFlags,
}

pub fn run(args: ReplayArgs) -> anyhow::Result<ExitCode> {
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
    let mut hooks = wiring::load_hooks(&sources)?;
    // After the bridges: PreToolUse hooks fire before the rules decide.
    hooks.plugins.push(permissions.plugin);
    for notice in &hooks.notices {
        eprintln!("dsh: {notice}");
    }
    let session_id = args
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    dsh_session::validate_session_id(&session_id).context("--session-id")?;
    let header = wiring::header(&session_id, &cwd, hooks.notices.clone());
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
    };
    let output = runtime.block_on(async {
        let mut signals = crate::signals::Signals::install()?;
        tokio::select! {
            output = replay_fixture(&fixture, options) => Ok(Ok(output?)),
            stop = signals.recv() => {
                // Ctrl-C, SIGTERM or SIGHUP ends the replay; no hook process
                // group outlives dsh.
                runner.kill_all();
                anyhow::Ok(Err(stop))
            }
        }
    })?;
    let output = match output {
        Ok(output) => output,
        Err(stop) => {
            eprintln!(
                "dsh: replay interrupted ({}); hook processes were killed",
                stop.name()
            );
            return Ok(stop.exit_code());
        }
    };
    for outcome in &output.outcomes {
        if let Some(message) = &outcome.message {
            eprintln!(
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
    Ok(ExitCode::SUCCESS)
}
