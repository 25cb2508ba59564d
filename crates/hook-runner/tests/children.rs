//! Process-wide behaviour of the process layer, tested in a helper process
//! (this test binary re-run with `DSH_RUNNER_HELPER` set), because each
//! property concerns the whole process: what happens to hooks when dsh is
//! SIGKILLed, what a child inherits from dsh's environment, and how many
//! children fit under dsh's file-descriptor limit.

#![allow(clippy::unwrap_used)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use dsh_hook_runner::{HookExit, HookProgram, HookRunner, HookSpec, RunnerConfig, signals};
use tokio_util::sync::CancellationToken;

const HELPER: &str = "DSH_RUNNER_HELPER";
const HELPER_DIR: &str = "DSH_RUNNER_HELPER_DIR";

fn shell(command: &str) -> HookSpec {
    HookSpec {
        program: HookProgram::Shell {
            shell: PathBuf::from("/bin/sh"),
            command: command.to_owned(),
        },
        cwd: std::env::temp_dir(),
        env: Vec::new(),
        stdin: Vec::new(),
        timeout: Duration::from_secs(60),
    }
}

/// Runs this test binary's `helper` test in a child process with `mode`.
fn start_helper(mode: &str, dir: &Path, env: &[(&str, &str)]) -> std::process::Child {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", "helper", "--nocapture", "--test-threads=1"])
        .env(HELPER, mode)
        .env(HELPER_DIR, dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap()
}

fn wait_for_file(path: &Path, within: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        assert!(
            start.elapsed() < within,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Live (non-zombie) processes whose process group is `pgid`, from /proc.
fn live_members(pgid: u32) -> Vec<String> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, after_comm)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            live.push(stat);
        }
    }
    live
}

/// The helper side: does nothing in a normal test run.
#[test]
fn helper() {
    let Ok(mode) = std::env::var(HELPER) else {
        return;
    };
    let dir = PathBuf::from(std::env::var(HELPER_DIR).unwrap());
    match mode.as_str() {
        "pdeathsig" => helper_pdeathsig(&dir),
        "env" => helper_env(&dir),
        "emfile" => helper_emfile(&dir),
        other => panic!("unknown helper mode {other}"),
    }
}

/// Starts one `sleep 30` hook from a tokio worker thread, one from a
/// blocking-pool thread, and one whose shell forks two sleepers (not the
/// group leader), says where they are, and waits to be killed.
fn helper_pdeathsig(dir: &Path) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let runner = HookRunner::new(RunnerConfig::default());
    let worker_file = dir.join("worker");
    let blocking_file = dir.join("blocking");
    let command = |file: &Path| {
        format!(
            "echo $$ > '{}.tmp'; mv '{0}.tmp' '{0}'; exec sleep 30",
            file.display()
        )
    };
    runtime.spawn({
        let runner = runner.clone();
        let spec = shell(&command(&worker_file));
        async move { runner.run(spec, &CancellationToken::new()).await }
    });
    runtime.spawn({
        let runner = runner.clone();
        let file = dir.join("forked");
        let spec = shell(&format!(
            "sleep 30 & sleep 30 & echo $$ > '{}.tmp'; mv '{0}.tmp' '{0}'; wait",
            file.display()
        ));
        async move { runner.run(spec, &CancellationToken::new()).await }
    });
    let handle = runtime.handle().clone();
    runtime.spawn_blocking({
        let spec = shell(&command(&blocking_file));
        move || handle.block_on(runner.run(spec, &CancellationToken::new()))
    });
    // Killed by the test long before this ends.
    std::thread::sleep(Duration::from_secs(60));
}

fn helper_env(dir: &Path) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runner = HookRunner::new(RunnerConfig {
        scrub_env: vec![
            "DSH_API_KEY".into(),
            "DEEPSEEK_API_KEY".into(),
            "OLLAMA_API_KEY".into(),
        ],
        ..RunnerConfig::default()
    });
    let run = runtime.block_on(runner.run(shell("env"), &CancellationToken::new()));
    assert_eq!(run.exit, HookExit::Exited(0));
    std::fs::write(dir.join("env"), run.stdout.bytes).unwrap();
}

/// With a soft limit of 256 descriptors, 300 simultaneous hooks would need
/// about 900 pipe ends: without the concurrency budget most fail to spawn
/// (EMFILE).
fn helper_emfile(dir: &Path) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, 256, hard).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let runner = HookRunner::new(RunnerConfig::default());
    let specs = (0..300).map(|_| shell("sleep 0.01")).collect();
    let runs = runtime.block_on(runner.run_all(specs, &CancellationToken::new()));
    let exited = runs
        .iter()
        .filter(|run| run.exit == HookExit::Exited(0))
        .count();
    let failures: Vec<String> = runs
        .iter()
        .filter(|run| run.exit != HookExit::Exited(0))
        .map(|run| run.describe())
        .take(3)
        .collect();
    std::fs::write(
        dir.join("emfile"),
        format!(
            "{exited} {}\n{failures:?}\n",
            dsh_hook_runner::ProcessLayer::concurrency_limit()
        ),
    )
    .unwrap();
}

#[test]
fn whole_hook_groups_die_with_a_sigkilled_dsh() {
    let dir = tempfile::tempdir().unwrap();
    let mut helper = start_helper("pdeathsig", dir.path(), &[]);
    let worker = wait_for_file(&dir.path().join("worker"), Duration::from_secs(20));
    let blocking = wait_for_file(&dir.path().join("blocking"), Duration::from_secs(20));
    let forked = wait_for_file(&dir.path().join("forked"), Duration::from_secs(20));
    let groups: Vec<u32> = [worker, blocking, forked]
        .iter()
        .map(|text| text.trim().parse().unwrap())
        .collect();
    for &pgid in &groups {
        assert!(!live_members(pgid).is_empty(), "hook {pgid} not running");
    }
    // The shell and its two forked sleepers.
    let forked_group = groups[2];
    let start = Instant::now();
    while live_members(forked_group).len() < 3 && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(live_members(forked_group).len(), 3);

    helper.kill().unwrap();
    helper.wait().unwrap();
    let killed_at = Instant::now();
    let mut survivors = Vec::new();
    while killed_at.elapsed() < Duration::from_secs(1) {
        survivors = groups.iter().flat_map(|&pgid| live_members(pgid)).collect();
        if survivors.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Clean up whatever a regression left behind before failing.
    for &pgid in &groups {
        signals::signal_group(pgid, signals::GroupSignal::SIGKILL);
    }
    assert_eq!(survivors, Vec::<String>::new(), "hooks outlived dsh");
}

#[test]
fn api_keys_never_reach_a_hook() {
    let dir = tempfile::tempdir().unwrap();
    let mut helper = start_helper(
        "env",
        dir.path(),
        &[
            ("DSH_API_KEY", "sk-dsh-secret"),
            ("DEEPSEEK_API_KEY", "sk-deepseek-secret"),
            ("OLLAMA_API_KEY", "sk-configured-secret"),
            ("DSH_HARMLESS", "still-here"),
        ],
    );
    assert!(helper.wait().unwrap().success());
    let env = std::fs::read_to_string(dir.path().join("env")).unwrap();
    assert!(!env.contains("secret"), "{env}");
    assert!(env.contains("DSH_HARMLESS=still-here"), "{env}");
}

#[test]
fn three_hundred_hooks_under_a_256_fd_limit_all_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut helper = start_helper("emfile", dir.path(), &[]);
    assert!(helper.wait().unwrap().success());
    let report = std::fs::read_to_string(dir.path().join("emfile")).unwrap();
    let first = report.lines().next().unwrap();
    let (exited, limit) = first.split_once(' ').unwrap();
    assert_eq!(exited, "300", "{report}");
    // (256 - 64 reserved) / 9 per child.
    assert_eq!(limit, "21");
}
