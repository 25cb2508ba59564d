//! One `dsh exec` run: the command line checked, the session resolved and
//! assembled through dsh-core (hooks, rules, MCP servers and the log of any
//! dsh session), one turn, and its events printed as Codex prints them.
//!
//! Exit status: 0 when the turn completed (a prompt a hook blocked and a
//! hook's `continue: false` count, as in Codex); 1 when it failed (the
//! model's error, the step bound, an interrupt) or dsh refused the command
//! line's promise (a sandbox, outside a git repository); 2 when the session
//! could not start; 129/130/143 after a signal.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Context as _, bail};
use dsh_agent::Observers;
use dsh_core::AgentOptions;
use dsh_core::sessions::{self, Pick};
use dsh_seams::{NoticeLevel, UserNotice};
use dsh_stdio::stdio::{ExitStatus, errln};

use crate::args::{ExecArgs, ExecCommand, SandboxMode};
use crate::events::{ThreadEvent, Translator};
use crate::overrides;

/// Codex's words when the directory is neither a git repository nor trusted.
pub const NOT_TRUSTED: &str =
    "Not inside a trusted directory and --skip-git-repo-check was not specified.";

/// Where the events go: JSONL on stdout, or people's text on stderr.
#[derive(Clone)]
struct Printer {
    json: bool,
    cwd: String,
    translator: Arc<Mutex<Translator>>,
}

impl Printer {
    fn emit(&self, event: &ThreadEvent) {
        if self.json {
            if let Ok(line) = serde_json::to_string(event) {
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{line}");
                let _ = stdout.flush();
            }
        } else if let Some(text) = crate::human::render(event, &self.cwd) {
            errln!("{text}");
        }
    }

    fn translator(&self) -> std::sync::MutexGuard<'_, Translator> {
        self.translator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The session to run and the prompt argument, from the command line.
fn pick_and_prompt(args: &ExecArgs) -> anyhow::Result<(Pick, Option<String>)> {
    match &args.command {
        None => Ok((Pick::New, args.prompt.clone())),
        Some(ExecCommand::Resume {
            session_id,
            prompt,
            last,
        }) => {
            if args.prompt.is_some() {
                bail!("dsh exec resume: give the prompt after the session id, not before `resume`");
            }
            if *last {
                if session_id.is_some() && prompt.is_some() {
                    bail!(
                        "dsh exec resume --last takes one PROMPT (the newest session here is resumed; name a session without --last)"
                    );
                }
                Ok((
                    Pick::Continue,
                    session_id.clone().or_else(|| prompt.clone()),
                ))
            } else {
                let id = session_id.clone().context(
                    "dsh exec resume: name the session id (thread id), or use --last for the newest one here",
                )?;
                Ok((Pick::Resume(id), prompt.clone()))
            }
        }
    }
}

fn read_prompt(given: Option<String>) -> anyhow::Result<String> {
    let prompt = match given {
        Some(prompt) if prompt != "-" => prompt,
        _ => std::io::read_to_string(std::io::stdin())
            .context("cannot read the prompt from stdin")?,
    };
    if prompt.trim().is_empty() {
        bail!("no prompt: give PROMPT, or pipe it on stdin");
    }
    Ok(prompt)
}

/// Whether `dir` is inside a git work tree (a `.git` directory or file
/// in it or above it).
fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors().any(|dir| dir.join(".git").exists())
}

/// The sandbox the command line asks for: only no sandbox runs; a sandbox
/// dsh cannot enforce is refused in one line.
fn check_sandbox(args: &ExecArgs, from_config: Option<SandboxMode>) -> anyhow::Result<bool> {
    if args.full_auto {
        bail!(
            "--full-auto means Codex's workspace-write sandbox, which dsh cannot enforce (dsh runs commands with your own permissions); use --sandbox danger-full-access, under which dsh's permission rules and hooks still decide"
        );
    }
    let sandbox = args.sandbox.or(from_config);
    match sandbox {
        Some(mode @ (SandboxMode::ReadOnly | SandboxMode::WorkspaceWrite)) => bail!(
            "--sandbox {}: dsh cannot enforce this sandbox (it runs commands with your own permissions); use --sandbox danger-full-access, under which dsh's permission rules and hooks still decide",
            mode.as_str()
        ),
        Some(SandboxMode::DangerFullAccess) => Ok(true),
        None => Ok(args.dangerously_bypass_approvals_and_sandbox),
    }
}

fn read_schema(path: &Path) -> anyhow::Result<serde_json::Value> {
    let text = fs_err::read_to_string(path).context("cannot read --output-schema")?;
    let schema: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--output-schema {}: not JSON", path.display()))?;
    if !schema.is_object() {
        bail!(
            "--output-schema {}: a JSON Schema is an object",
            path.display()
        );
    }
    Ok(schema)
}

/// Writes the final message through `path` (the file is opened for
/// writing and truncated, never removed or replaced).
fn write_last_message(path: &Path, message: Option<&str>) -> anyhow::Result<()> {
    if message.is_none() {
        errln!(
            "Warning: no last agent message; wrote empty content to {}",
            path.display()
        );
    }
    let mut file = fs_err::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    file.write_all(message.unwrap_or_default().as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Runs `dsh exec`.
pub fn run(args: ExecArgs) -> anyhow::Result<ExitStatus> {
    let (pick, prompt) = pick_and_prompt(&args)?;
    let overrides = overrides::parse(&args.config)?;
    let no_sandbox = check_sandbox(&args, overrides.sandbox)?;
    if !args.image.is_empty() {
        bail!("--image: dsh exec sends text only; it cannot attach images");
    }
    for note in &overrides.ignored {
        errln!("dsh: {note}");
    }
    if !args.add_dir.is_empty() {
        errln!(
            "dsh: --add-dir is ignored: dsh runs no sandbox, so every directory is reachable already"
        );
    }
    let schema = args.output_schema.as_deref().map(read_schema).transpose()?;
    let prompt = read_prompt(prompt)?;

    let current = match &args.cd {
        Some(dir) => fs_err::canonicalize(dir).context("-C/--cd")?,
        None => dsh_core::current_dir()?,
    };
    if !current.is_dir() {
        bail!("-C/--cd {}: not a directory", current.display());
    }
    let env = dsh_core::Env::from_process();
    let home = env.dsh_home()?;
    let config = dsh_core::DshConfig::load(&home)?;
    let (cwd, existing) = sessions::pick(&home, &pick, &current)?;

    let mut flags = dsh_core::SessionFlags {
        model: args.model.clone().or_else(|| overrides.model.clone()),
        provider_api: overrides.provider_api,
        ..dsh_core::SessionFlags::default()
    };
    if no_sandbox {
        flags.permissions.permission_mode = Some(dsh_core::perms::Mode::BypassPermissions);
    }
    let mut spec = dsh_core::SessionSpec::resolve(dsh_core::Inputs {
        env: &env,
        config: &config,
        flags: &flags,
        cwd: &cwd,
        policy: dsh_core::TrustPolicy::Headless {
            strict: env.strict_hooks(),
        },
    })?;
    // Codex's check: a git repository, a directory the user trusted, or
    // the flag (Codex skips it under --dangerously-bypass-approvals-and-sandbox too).
    let trusted = !matches!(spec.workspace, dsh_core::perms::WorkspaceTrust::Untrusted);
    if !args.skip_git_repo_check
        && !args.dangerously_bypass_approvals_and_sandbox
        && !trusted
        && !inside_git_repo(&cwd)
    {
        errln!("{NOT_TRUSTED}");
        return Ok(ExitStatus::Failure);
    }
    if let Some(provider) = spec.provider.as_mut() {
        adjust_provider(provider, &env, &overrides);
        if let Some(schema) = schema {
            if provider.api != dsh_provider::ProviderApi::Responses {
                bail!(
                    "--output-schema reaches the model as the Responses API's structured output; this session speaks the {} API (DSH_PROVIDER_API=responses, `-c model_provider=\"openai\"` or [provider] api = \"responses\" selects it)",
                    provider.api.as_str()
                );
            }
            provider.output_schema = Some(schema);
        }
    }
    let model = spec.model()?;
    let model_name = model.name();
    let provider_line = spec.provider.as_ref().map_or_else(String::new, |p| {
        format!("{} ({})", p.api.as_str(), p.base_url)
    });
    spec.decide_headless(&mut std::io::stderr())?;
    let opened = dsh_core::assemble(
        spec,
        sessions::log_target(&home, existing.as_ref(), dsh_core::LockWait::Fail),
    )?;
    sessions::report_torn(&opened);
    for notice in opened.notices() {
        errln!("dsh: {notice}");
    }
    let session_id = opened.session_id().to_owned();

    let printer = Printer {
        json: args.json,
        cwd: cwd.display().to_string(),
        translator: Arc::new(Mutex::new(Translator::new(&cwd))),
    };
    if !args.json {
        errln!(
            "dsh exec (Codex's exec)\n--------\nworkdir: {}\nmodel: {model_name}\nprovider: {provider_line}\napproval: never\nsandbox: {}\nsession id: {session_id}\n--------\nuser\n{}",
            cwd.display(),
            if no_sandbox {
                "danger-full-access (no sandbox; dsh's deny rules and hooks apply)"
            } else {
                "none: dsh's permission rules (what needs approval is denied)"
            },
            prompt.trim_end()
        );
    } else {
        printer.emit(&ThreadEvent::ThreadStarted {
            thread_id: session_id.clone(),
        });
    }
    let on_event = {
        let printer = printer.clone();
        Arc::new(move |event: &dsh_protocol::Event| {
            let out = printer.translator().on_event(event);
            for line in &out {
                printer.emit(line);
            }
        }) as dsh_agent::EventCallback
    };
    let on_notice = {
        let printer = printer.clone();
        Arc::new(move |notice: &UserNotice| match notice.level {
            NoticeLevel::Warning if printer.json => {
                let text = format!("[{}] {}", notice.source, notice.text);
                let event = printer.translator().warning(&text);
                printer.emit(&event);
            }
            NoticeLevel::Warning => errln!("dsh: warning: [{}] {}", notice.source, notice.text),
            NoticeLevel::Info => errln!("dsh: [{}] {}", notice.source, notice.text),
        }) as dsh_agent::NoticeCallback
    };
    let attachments = dsh_agent::mentions::mention_attachments(&prompt, opened.cwd());
    let mut session = dsh_core::Session::from_assembled(
        opened,
        AgentOptions {
            model,
            interactive: false,
            max_steps: dsh_agent::DEFAULT_MAX_STEPS,
            observers: Observers {
                on_event: Some(on_event),
                on_notice: Some(on_notice),
                on_text: None,
            },
            // Exec asks nobody (approval policy `never`): an `ask` is a denial.
            approval: None,
        },
    )?;

    let dsh_core::TurnRun { outcome, stop } = dsh_core::run_one_turn(
        &mut session,
        dsh_core::OneTurn {
            prompt,
            attachments,
            init_only: false,
        },
    )?;

    let (ended, last_message) = {
        let translator = printer.translator();
        (
            translator.ended(),
            translator.last_message().map(str::to_owned),
        )
    };
    if let Some(path) = &args.output_last_message {
        write_last_message(&absolute(path, &current), last_message.as_deref())?;
    }
    if !args.json
        && let Some(message) = &last_message
    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", message.trim_end_matches('\n'));
        let _ = stdout.flush();
    }
    if let Some(stop) = stop {
        errln!("dsh: {} (session {session_id})", stop.name());
        return Ok(ExitStatus::from(stop));
    }
    if outcome.is_none() {
        return Ok(ExitStatus::Failure);
    }
    Ok(exit_status(ended))
}

/// What the Codex SDK and Codex's own flags hand the provider: the SDK's
/// `CODEX_API_KEY` and `-c openai_base_url`.
fn adjust_provider(
    provider: &mut dsh_provider::ProviderSettings,
    env: &dsh_core::Env,
    overrides: &overrides::Overrides,
) {
    // The Codex SDK's `apiKey` arrives as CODEX_API_KEY: the key when
    // dsh has none (kept out of children like every provider key).
    let codex_key = || {
        dsh_provider::key_handoff::handed_off_key(dsh_provider::key_handoff::CODEX_API_KEY_ENV)
            .or_else(|| env.var(dsh_provider::key_handoff::CODEX_API_KEY_ENV))
    };
    if provider.api_key.is_none()
        && let Some(key) = codex_key()
    {
        provider.api_key = Some(key);
        dsh_provider::key_handoff::CODEX_API_KEY_ENV.clone_into(&mut provider.api_key_env);
    }
    if let Some(url) = &overrides.base_url {
        provider.base_url.clone_from(url);
        provider.origins.base_url =
            dsh_provider::SettingOrigin::Flag("-c openai_base_url".to_owned());
    }
}

/// The exit status of a turn that ended as `ended` (none: it never ended).
fn exit_status(ended: Option<dsh_protocol::TurnEndReason>) -> ExitStatus {
    match ended {
        Some(
            dsh_protocol::TurnEndReason::Completed
            | dsh_protocol::TurnEndReason::Rejected
            | dsh_protocol::TurnEndReason::Stopped,
        ) => ExitStatus::Success,
        Some(
            dsh_protocol::TurnEndReason::Error
            | dsh_protocol::TurnEndReason::MaxSteps
            | dsh_protocol::TurnEndReason::Interrupted,
        )
        | None => ExitStatus::Failure,
    }
}

/// `path` as given, or against the directory dsh was started in.
fn absolute(path: &Path, base: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_owned()
    } else {
        std::env::current_dir().map_or_else(|_| base.join(path), |dir| dir.join(path))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        exec: ExecArgs,
    }

    fn parse(argv: &[&str]) -> ExecArgs {
        Cli::try_parse_from(std::iter::once("exec").chain(argv.iter().copied()))
            .unwrap()
            .exec
    }

    #[test]
    fn the_sdk_command_line_parses() {
        let args = parse(&[
            "--experimental-json",
            "--sandbox",
            "danger-full-access",
            "--cd",
            "/tmp",
            "--skip-git-repo-check",
            "--config",
            "approval_policy=\"never\"",
            "--output-schema",
            "/tmp/s.json",
            "resume",
            "abc",
        ]);
        assert!(args.json && args.skip_git_repo_check);
        assert_eq!(args.sandbox, Some(SandboxMode::DangerFullAccess));
        assert_eq!(args.config, ["approval_policy=\"never\""]);
        let (pick, prompt) = pick_and_prompt(&args).unwrap();
        assert_eq!(pick, Pick::Resume("abc".to_owned()));
        assert_eq!(prompt, None);
        assert!(check_sandbox(&args, None).unwrap());
    }

    #[test]
    fn resume_last_takes_the_prompt_and_options_after_it() {
        let args = parse(&["resume", "--last", "--json", "next step"]);
        assert!(args.json);
        let (pick, prompt) = pick_and_prompt(&args).unwrap();
        assert_eq!(pick, Pick::Continue);
        assert_eq!(prompt.as_deref(), Some("next step"));
        let error = pick_and_prompt(&parse(&["resume"])).unwrap_err();
        assert!(error.to_string().contains("--last"), "{error}");
    }

    #[test]
    fn sandboxes_dsh_cannot_enforce_are_refused_in_one_line() {
        for argv in [
            &["-s", "read-only"][..],
            &["--sandbox", "workspace-write"],
            &["--full-auto"],
        ] {
            let error = check_sandbox(&parse(argv), None).unwrap_err().to_string();
            assert!(error.contains("dsh cannot enforce"), "{error}");
            assert!(!error.contains('\n'), "{error}");
        }
        let from_config = check_sandbox(&parse(&[]), Some(SandboxMode::ReadOnly)).unwrap_err();
        assert!(from_config.to_string().contains("read-only"));
        assert!(!check_sandbox(&parse(&[]), None).unwrap());
        assert!(check_sandbox(&parse(&["--yolo"]), None).unwrap());
    }

    #[test]
    fn the_last_message_is_written_through_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("last.txt");
        std::fs::write(&path, "old content that is longer").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        write_last_message(&link, Some("new")).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }
}
