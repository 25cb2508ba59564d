//! How dsh starts again in another session (`/resume`, `/clear`): the
//! session ended (its end hooks ran) and dsh replaces itself with a fresh
//! process for the next one, keeping its own arguments but the session
//! choice.

/// The environment variable a `/clear` restart sets so the new session's
/// SessionStart hooks see `clear` as its source.
/// `clear:<pid>` after `/clear`, `restart:<pid>` after `/resume`: either
/// way the first prompt of the command line (`dsh "PROMPT"`) was already
/// sent. `exec` keeps the process id, so only the restarted dsh itself
/// honours it; a dsh that a hook or tool starts inherits a marker naming
/// another pid and ignores it.
const START_SOURCE_ENV: &str = "DSH_START_SOURCE";

/// How this process was restarted (`clear`, `restart`), if it was.
fn restart_kind() -> Option<String> {
    let value = std::env::var(START_SOURCE_ENV).ok()?;
    let (kind, pid) = value.split_once(':')?;
    (pid == std::process::id().to_string()).then(|| kind.to_owned())
}

/// Whether this process is dsh started again by `/clear` or `/resume`.
pub(crate) fn restarted() -> bool {
    restart_kind().is_some()
}

/// How the session starts: `clear` after a `/clear` restart, else as the
/// session was opened (`startup`, `resume`).
pub(crate) fn start_source(opened: dsh_seams::SessionStartSource) -> dsh_seams::SessionStartSource {
    match restart_kind().as_deref() {
        Some("clear") => dsh_seams::SessionStartSource::Clear,
        _ => opened,
    }
}

/// `/clear`: a new session with the model in use.
pub(crate) fn cleared(model: String) -> Next {
    Next::Restart(Restart {
        resume: None,
        model: Some(model),
        clear: true,
    })
}

/// `/resume ID`.
pub(crate) fn resume(id: String) -> Next {
    Next::Restart(Restart {
        resume: Some(id),
        model: None,
        clear: false,
    })
}

/// What follows the session loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// dsh exits.
    Exit,
    /// dsh starts again in another session (`/resume`, `/clear`; `/model
    /// NAME` acts on the running session): the session ended (its end
    /// hooks ran) and dsh replaces itself with a fresh process for the
    /// next one, so no state of the old session (hooks, trust answers,
    /// runtime, usage) leaks into it.
    Restart(Restart),
}

/// How dsh is started again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Restart {
    /// `--resume ID`, or a new session.
    pub resume: Option<String>,
    /// `--model NAME` replacing the current one.
    pub model: Option<String>,
    /// `/clear`: the new session starts with the source `clear`.
    pub clear: bool,
}

/// The arguments this dsh was started with, without the session choice
/// (`-r`/`--resume`, `-c`/`--continue`) and, when `drop_model`, `--model`.
fn restart_args(args: &[std::ffi::OsString], drop_model: bool) -> Vec<std::ffi::OsString> {
    let mut kept = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        let text = arg.to_string_lossy();
        if text == "-r" || text == "--resume" {
            // Its id is optional (`-r` alone opens the picker).
            if iter
                .clone()
                .next()
                .is_some_and(|next| !next.to_string_lossy().starts_with('-'))
            {
                iter.next();
            }
            continue;
        }
        if drop_model && text == "--model" {
            iter.next();
            continue;
        }
        if text == "-c"
            || text == "--continue"
            || text.starts_with("--resume=")
            || (drop_model && text.starts_with("--model="))
        {
            continue;
        }
        kept.push(arg.clone());
    }
    kept
}

/// Replaces this process with `dsh` in the next session; returns only on failure.
pub(crate) fn reexec(restart: &Restart) -> anyhow::Error {
    use std::os::unix::process::CommandExt as _;
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => return anyhow::Error::new(error).context("cannot find dsh to restart it"),
    };
    let original: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let mut args = restart_args(&original, restart.model.is_some());
    if let Some(id) = &restart.resume {
        args.push("--resume".into());
        args.push(id.into());
    }
    if let Some(model) = &restart.model {
        args.push("--model".into());
        args.push(model.into());
    }
    let mut command = std::process::Command::new(exe);
    command.args(args);
    if restart.clear {
        command.env(START_SOURCE_ENV, format!("clear:{}", std::process::id()));
    } else {
        command.env(START_SOURCE_ENV, format!("restart:{}", std::process::id()));
    }
    // The keys are no longer in this environment: the next image gets them back and hands them off anew.
    dsh_provider::key_handoff::restore_keys_for_exec(&mut command);
    let error = command.exec();
    anyhow::Error::new(error).context("cannot restart dsh for the next session")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restarting_drops_the_session_choice_and_keeps_the_rest() {
        let args: Vec<std::ffi::OsString> = [
            "--resume",
            "abc",
            "--settings",
            "x.json",
            "-c",
            "--model",
            "m1",
            "--resume=def",
        ]
        .iter()
        .map(Into::into)
        .collect();
        let kept: Vec<String> = restart_args(&args, false)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(kept, ["--settings", "x.json", "--model", "m1"]);
        let kept = restart_args(&args, true);
        assert_eq!(kept.len(), 2);
    }
}
