//! Behaviour of the hook runner against real processes.

#![allow(clippy::unwrap_used)]
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use dsh_hook_runner::{
    Completeness, HookExit, HookProgram, HookRun, HookRunner, HookSpec, RunRecord, RunnerConfig,
    signals,
};
use tokio_util::sync::CancellationToken;

fn shell(command: &str) -> HookSpec {
    HookSpec {
        program: HookProgram::Shell {
            shell: PathBuf::from("/bin/sh"),
            command: command.to_owned(),
        },
        cwd: std::env::temp_dir(),
        env: Vec::new(),
        stdin: Vec::new(),
        timeout: Duration::from_secs(30),
    }
}

fn exec(program: &str, args: &[&str]) -> HookSpec {
    HookSpec {
        program: HookProgram::Exec {
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        },
        ..shell("")
    }
}

fn with_timeout(mut spec: HookSpec, timeout: Duration) -> HookSpec {
    spec.timeout = timeout;
    spec
}

fn runner() -> HookRunner {
    HookRunner::new(RunnerConfig::default())
}

async fn run(spec: HookSpec) -> HookRun {
    runner().run(spec, &CancellationToken::new()).await
}

/// Processes in group `pgid` that are still alive (not zombies), from /proc.
fn live_members(pgid: u32) -> Vec<u32> {
    let mut live = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...; comm may contain spaces.
        let Some(after_comm) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
            continue;
        };
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        let (state, group) = (fields[0], fields[2].parse::<u32>().unwrap());
        if group == pgid && state != "Z" && state != "X" {
            live.push(pid);
        }
    }
    live
}

fn group_exists(pgid: u32) -> bool {
    // Signal 0 only checks for existence.
    let target = nix::unistd::Pid::from_raw(-(pgid as libc::pid_t));
    match nix::sys::signal::kill(target, None) {
        Ok(()) => true,
        Err(err) => {
            assert_eq!(err, nix::errno::Errno::ESRCH, "kill(-pgid, 0): {err}");
            false
        }
    }
}

/// The property: no process of the hook's group survives the run. Every
/// member has been sent SIGKILL when `run` returns, but on a loaded machine a
/// member may still be finishing its exit for a moment, so live members get a
/// short grace (a survivor stays live and fails); killed members may then
/// linger as zombies until init reaps them (slow in some containers), after
/// which `kill(-pgid, 0)` must fail with ESRCH.
async fn assert_group_gone(pgid: u32) {
    let start = Instant::now();
    loop {
        let live = live_members(pgid);
        if live.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "group {pgid} has live members: {live:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let start = Instant::now();
    while group_exists(pgid) {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "group {pgid} still exists (zombies never reaped?)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn kill_pid(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as libc::pid_t),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[tokio::test]
async fn exit_code_and_output_are_reported() {
    let run = run(shell("printf out; printf err >&2; exit 3")).await;
    assert_eq!(run.exit, HookExit::Exited(3));
    assert_eq!(run.exit.code(), Some(3));
    assert_eq!(run.stdout.bytes, b"out");
    assert_eq!(run.stderr.bytes, b"err");
    assert_eq!(run.stdout.total_bytes, 3);
    assert!(!run.stdout.truncated());
    assert_eq!(run.describe(), "exited with code 3");
    assert!(run.pid.is_some());
}

#[tokio::test]
async fn sleeping_forever_times_out() {
    let started = Instant::now();
    let run = run(with_timeout(shell("sleep 1000"), Duration::from_secs(1))).await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::TimedOut);
    assert_eq!(run.describe(), "timed out after 1s");
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert_group_gone(run.pid.unwrap()).await;
}

#[tokio::test]
async fn hook_trapping_sigterm_still_ends() {
    let started = Instant::now();
    let run = run(with_timeout(
        shell("trap '' TERM; sleep 100"),
        Duration::from_secs(1),
    ))
    .await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::TimedOut);
    // timeout 1s + grace 0.5s + settle 0.25s, plus generous slack.
    assert!(elapsed < Duration::from_millis(3500), "took {elapsed:?}");
    // It really needed the SIGKILL: it outlived the grace.
    assert!(elapsed >= Duration::from_millis(1400), "took {elapsed:?}");
    assert_group_gone(run.pid.unwrap()).await;
}

#[tokio::test]
async fn grandchild_holding_stdout_is_killed_with_its_group() {
    let started = Instant::now();
    let run = run(with_timeout(
        shell("sleep 100 & echo started; sleep 100"),
        Duration::from_secs(1),
    ))
    .await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::TimedOut);
    assert_eq!(run.stdout.text(), "started\n");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert_group_gone(run.pid.unwrap()).await;
}

#[tokio::test]
async fn grandchild_that_escaped_the_group_does_not_hold_the_run() {
    let started = Instant::now();
    let run = run(with_timeout(
        shell("setsid sleep 100 & echo $!; sleep 100"),
        Duration::from_secs(1),
    ))
    .await;
    let elapsed = started.elapsed();
    let escaped: u32 = run.stdout.text().trim().parse().unwrap();
    kill_pid(escaped);
    assert_eq!(run.exit, HookExit::TimedOut);
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert_group_gone(run.pid.unwrap()).await;
}

#[tokio::test]
async fn background_child_left_after_exit_does_not_hold_the_run() {
    let started = Instant::now();
    let run = run(with_timeout(
        shell("sleep 100 & echo hi"),
        Duration::from_secs(60),
    ))
    .await;
    let elapsed = started.elapsed();
    let pgid = run.pid.unwrap();
    // Clean up the background sleep the hook left (it is not dsh's to kill).
    signals::signal_group(pgid, signals::GroupSignal::SIGKILL);
    assert_eq!(run.exit, HookExit::Exited(0));
    assert_eq!(run.stdout.text(), "hi\n");
    // Drained for at most the grace (0.5s) after the shell exited.
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
}

#[tokio::test]
async fn huge_output_is_counted_but_capped() {
    let cap = 64 * 1024;
    let runner = HookRunner::new(RunnerConfig {
        capture_limit: cap,
        decision_limit: cap,
        ..RunnerConfig::default()
    });
    let run = runner
        .run(
            shell("head -c 200000000 /dev/zero; echo done >&2"),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(run.exit, HookExit::Exited(0));
    assert_eq!(run.stdout.total_bytes, 200_000_000);
    assert_eq!(run.stdout.bytes.len(), cap);
    assert!(run.stdout.truncated());
    assert!(run.stdout.display().ends_with(&format!(
        "\n[dsh: output truncated: kept {cap} of 200000000 bytes]"
    )));
    // stderr was read concurrently and is intact.
    assert_eq!(run.stderr.text(), "done\n");
    assert!(!run.stderr.truncated());
}

#[tokio::test]
async fn default_caps_keep_16_mib_of_stdout_and_store_1_mib() {
    let run = run(shell(
        "head -c 3000000 /dev/zero; head -c 3000000 /dev/zero >&2",
    ))
    .await;
    // stdout: all 3 MB kept for the bridges to parse a decision from.
    assert_eq!(run.stdout.total_bytes, 3_000_000);
    assert_eq!(run.stdout.bytes.len(), 3_000_000);
    assert_eq!(run.stdout.completeness(), Completeness::Whole);
    // stderr: 1 MiB kept.
    assert_eq!(run.stderr.bytes.len(), 1024 * 1024);
    // The log stores 1 MiB of each, with the marker.
    let record = RunRecord::of(&run);
    assert!(
        record.stdout.len() < 1024 * 1024 + 100,
        "{}",
        record.stdout.len()
    );
    assert!(
        record
            .stdout
            .ends_with("\n[dsh: output truncated: kept 1048576 of 3000000 bytes]")
    );
    assert!(
        record
            .stderr
            .ends_with("\n[dsh: output truncated: kept 1048576 of 3000000 bytes]")
    );
}

#[tokio::test]
async fn a_deny_after_a_mebibyte_of_whitespace_is_kept_whole() {
    // The decision sits past the 1 MiB log cap: it must still reach the
    // bridges whole.
    let run = run(shell(
        r#"head -c 1100000 /dev/zero | tr '\0' ' '; printf '{"decision":"block"}'"#,
    ))
    .await;
    assert_eq!(run.stdout.completeness(), Completeness::Whole);
    assert!(
        run.stdout
            .text()
            .trim_start()
            .starts_with(r#"{"decision":"block"}"#)
    );
}

#[tokio::test]
async fn stdout_past_the_decision_limit_is_flagged_cut() {
    let runner = HookRunner::new(RunnerConfig {
        decision_limit: 1000,
        ..RunnerConfig::default()
    });
    let run = runner
        .run(shell("head -c 5000 /dev/zero"), &CancellationToken::new())
        .await;
    assert_eq!(
        run.stdout.completeness(),
        Completeness::Cut {
            kept: 1000,
            total: 5000
        }
    );
}

#[tokio::test]
async fn invalid_utf8_is_kept_lossily_and_flagged() {
    let run = run(shell(r"printf 'ok\377\376end'")).await;
    assert_eq!(run.stdout.bytes, b"ok\xff\xfeend");
    assert!(run.stdout.is_lossy());
    assert_eq!(run.stdout.text(), "ok\u{FFFD}\u{FFFD}end");
    let clean = self::run(shell("printf 'h\\303\\251llo'")).await;
    assert!(!clean.stdout.is_lossy());
    assert_eq!(clean.stdout.text(), "héllo");
}

#[tokio::test]
async fn missing_command_through_the_shell_is_exit_127() {
    let run = run(shell("dsh-no-such-command-xyz")).await;
    assert_eq!(run.exit, HookExit::Exited(127));
    assert!(
        run.stderr.text().contains("not found"),
        "{:?}",
        run.stderr.text()
    );
}

#[tokio::test]
async fn nonexistent_program_is_spawn_failed() {
    let run = run(exec("dsh-no-such-program-xyz", &[])).await;
    let HookExit::SpawnFailed(message) = &run.exit else {
        panic!("expected SpawnFailed, got {:?}", run.exit);
    };
    assert!(
        message.starts_with("command not found: dsh-no-such-program-xyz"),
        "{message}"
    );
    assert_eq!(run.pid, None);
    assert_eq!(run.exit.code(), None);

    let run = self::run(HookSpec {
        program: HookProgram::Shell {
            shell: PathBuf::from("/no/such/shell"),
            command: "true".into(),
        },
        ..shell("")
    })
    .await;
    assert!(
        matches!(&run.exit, HookExit::SpawnFailed(m) if m.starts_with("command not found: /no/such/shell")),
        "{:?}",
        run.exit
    );
}

#[tokio::test]
async fn non_executable_file_is_spawn_failed() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("hook.sh");
    std::fs::write(&script, "#!/bin/sh\nexit 0\n").unwrap();
    // Files are created without execute permission.
    let run = run(exec(script.to_str().unwrap(), &[])).await;
    let HookExit::SpawnFailed(message) = &run.exit else {
        panic!("expected SpawnFailed, got {:?}", run.exit);
    };
    assert!(message.starts_with("permission denied: "), "{message}");
    assert!(message.contains("hook.sh"), "{message}");
}

#[tokio::test]
async fn missing_working_directory_is_spawn_failed() {
    let mut spec = shell("true");
    spec.cwd = PathBuf::from("/no/such/dir/for/dsh");
    let run = run(spec).await;
    assert!(
        matches!(&run.exit, HookExit::SpawnFailed(m) if m.starts_with("working directory not found: /no/such/dir/for/dsh")),
        "{:?}",
        run.exit
    );
}

#[tokio::test]
async fn hook_ignoring_a_large_stdin_payload_is_fine() {
    let payload = vec![b'x'; 5 * 1024 * 1024];
    for spec in [shell("exit 0"), shell("true"), exec("true", &[])] {
        let started = Instant::now();
        let run = run(HookSpec {
            stdin: payload.clone(),
            ..with_timeout(spec, Duration::from_secs(20))
        })
        .await;
        assert_eq!(run.exit, HookExit::Exited(0));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
    // A hook that reads only part of it and exits.
    let run = run(HookSpec {
        stdin: payload,
        ..shell("head -c 10")
    })
    .await;
    assert_eq!(run.exit, HookExit::Exited(0));
    assert_eq!(run.stdout.bytes, b"xxxxxxxxxx");
}

#[tokio::test]
async fn stdin_is_delivered_byte_exact_then_closed() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("stdin.bin");
    let payload: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 256) as u8).collect();
    let run = run(HookSpec {
        stdin: payload.clone(),
        cwd: dir.path().to_path_buf(),
        ..shell("cat > stdin.bin")
    })
    .await;
    assert_eq!(run.exit, HookExit::Exited(0));
    assert_eq!(std::fs::read(&target).unwrap(), payload);

    // An empty payload is still an immediate EOF, not dsh's own stdin.
    let run = self::run(shell("wc -c")).await;
    assert_eq!(run.stdout.text().trim(), "0");
}

#[tokio::test]
async fn env_and_cwd_are_applied() {
    let dir = tempfile::tempdir().unwrap();
    let canonical: &Path = &dir.path().canonicalize().unwrap();
    // SAFETY-free check that dsh's own environment is inherited too.
    let run = run(HookSpec {
        cwd: dir.path().to_path_buf(),
        env: vec![
            ("DSH_TEST_A".into(), "first value".into()),
            ("DSH_TEST_B".into(), "b".into()),
        ],
        ..shell(r#"printf '%s|%s|%s\n' "$DSH_TEST_A" "$DSH_TEST_B" "${PATH:+has-path}"; pwd -P"#)
    })
    .await;
    assert_eq!(run.exit, HookExit::Exited(0));
    assert_eq!(
        run.stdout.text(),
        format!("first value|b|has-path\n{}\n", canonical.display())
    );
}

#[tokio::test]
async fn the_base_environment_is_under_the_hooks_own() {
    let runner = HookRunner::new(RunnerConfig {
        base_env: vec![
            ("DSH_TEST_BASE".into(), "base".into()),
            ("DSH_TEST_BOTH".into(), "base".into()),
        ],
        ..RunnerConfig::default()
    });
    let spec = HookSpec {
        env: vec![("DSH_TEST_BOTH".into(), "hook".into())],
        ..shell(r#"printf '%s|%s' "$DSH_TEST_BASE" "$DSH_TEST_BOTH""#)
    };
    let run = runner.run(spec, &CancellationToken::new()).await;
    assert_eq!(run.stdout.text(), "base|hook");
}

#[tokio::test]
async fn cancellation_kills_the_group() {
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let runner = runner();
    let started = Instant::now();
    let run = runner
        .run(
            with_timeout(shell("sleep 100 & sleep 100"), Duration::from_secs(60)),
            &cancel,
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::Cancelled);
    assert_eq!(run.describe(), "cancelled");
    assert!(elapsed < Duration::from_secs(3), "took {elapsed:?}");
    assert_eq!(runner.live_groups(), 0);
    assert_group_gone(run.pid.unwrap()).await;

    // Already cancelled: nothing is started.
    let run = runner.run(shell("true"), &cancel).await;
    assert_eq!(run.exit, HookExit::Cancelled);
    assert_eq!(run.pid, None);
}

#[tokio::test]
async fn signal_not_sent_by_dsh_is_signaled() {
    let run = run(shell("kill -USR1 $$")).await;
    assert_eq!(run.exit, HookExit::Signaled(libc::SIGUSR1));
    assert_eq!(
        run.describe(),
        format!("killed by signal {} (SIGUSR1)", libc::SIGUSR1)
    );
}

#[tokio::test]
async fn duration_is_measured() {
    let run = run(shell("sleep 0.2")).await;
    assert_eq!(run.exit, HookExit::Exited(0));
    assert!(
        run.duration >= Duration::from_millis(200),
        "{:?}",
        run.duration
    );
    assert!(run.duration < Duration::from_secs(5), "{:?}", run.duration);
}

#[tokio::test]
async fn run_all_is_parallel_and_in_input_order() {
    let specs: Vec<HookSpec> = (0..10)
        .map(|i| {
            // The first finishes last.
            let pause = if i == 0 { "0.4" } else { "0.1" };
            shell(&format!("sleep {pause}; echo {i}"))
        })
        .collect();
    let runner = runner();
    let started = Instant::now();
    let runs = runner.run_all(specs, &CancellationToken::new()).await;
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(2), "took {elapsed:?}");
    let outputs: Vec<String> = runs.iter().map(|r| r.stdout.text()).collect();
    let expected: Vec<String> = (0..10).map(|i| format!("{i}\n")).collect();
    assert_eq!(outputs, expected);
    assert!(runs[0].duration > runs[1].duration);

    // Without the long one: ten 0.1 s hooks take far less than ten times 0.1 s.
    let specs = (0..10).map(|_| shell("sleep 0.1")).collect();
    let started = Instant::now();
    let runs = runner.run_all(specs, &CancellationToken::new()).await;
    let elapsed = started.elapsed();
    assert!(runs.iter().all(|r| r.exit == HookExit::Exited(0)));
    assert!(elapsed < Duration::from_millis(900), "took {elapsed:?}");
}

#[tokio::test]
async fn kill_all_kills_detached_hooks() {
    let runner = runner();
    let clone = runner.clone();
    let first = runner.spawn_detached(shell("sleep 100 & sleep 100"));
    let second = clone.spawn_detached(shell("sleep 100"));
    let started = Instant::now();
    while runner.live_groups() < 2 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "hooks never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    clone.kill_all();
    let first = first.await.unwrap();
    let second = second.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(first.exit, HookExit::Cancelled);
    assert_eq!(second.exit, HookExit::Cancelled);
    assert_eq!(runner.live_groups(), 0);
    assert_group_gone(first.pid.unwrap()).await;
    assert_group_gone(second.pid.unwrap()).await;
}

#[tokio::test]
async fn detached_hook_obeys_its_timeout() {
    let runner = runner();
    let run = runner
        .spawn_detached(with_timeout(shell("sleep 100"), Duration::from_millis(300)))
        .await
        .unwrap();
    assert_eq!(run.exit, HookExit::TimedOut);
    assert_eq!(run.describe(), "timed out after 300ms");
}

#[tokio::test]
async fn abandoned_run_kills_its_group() {
    let runner = runner();
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let spec = HookSpec {
        cwd: dir.path().to_path_buf(),
        ..shell("echo $$ > pid; sleep 100 & sleep 100")
    };
    let gave_up = tokio::time::timeout(
        Duration::from_millis(500),
        runner.run(spec, &CancellationToken::new()),
    )
    .await;
    assert!(gave_up.is_err());
    assert_eq!(runner.live_groups(), 0);
    let pgid: u32 = std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SIGKILL delivery is asynchronous; give it a moment to land.
    let started = Instant::now();
    while !live_members(pgid).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(5), "group survived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_group_gone(pgid).await;
}

#[tokio::test]
async fn stopped_hook_is_continued_so_sigterm_lands() {
    // With a long grace, only SIGTERM (made deliverable by SIGCONT) can end
    // this hook quickly; a pending SIGTERM on a stopped process would wait
    // for the SIGKILL after 5 s.
    let runner = HookRunner::new(RunnerConfig {
        kill_grace: Duration::from_secs(5),
        ..RunnerConfig::default()
    });
    let started = Instant::now();
    let run = runner
        .run(
            with_timeout(shell("kill -STOP $$; sleep 100"), Duration::from_secs(1)),
            &CancellationToken::new(),
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::TimedOut);
    assert!(elapsed < Duration::from_secs(4), "took {elapsed:?}");
    assert_group_gone(run.pid.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_all_from_another_thread_while_hooks_start() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let runner = runner();
    let stop = Arc::new(AtomicBool::new(false));
    let killer = {
        let runner = runner.clone();
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                runner.kill_all();
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let handles: Vec<_> = (0..20)
        .map(|_| runner.spawn_detached(shell("sleep 100")))
        .collect();
    let started = Instant::now();
    let mut runs = Vec::new();
    for handle in handles {
        let run = tokio::time::timeout(Duration::from_secs(10), handle).await;
        runs.push(run);
    }
    stop.store(true, Ordering::SeqCst);
    killer.join().unwrap();
    for run in runs {
        let run = run.expect("a detached hook survived kill_all").unwrap();
        assert_eq!(run.exit, HookExit::Cancelled);
        if let Some(pid) = run.pid {
            assert_eq!(live_members(pid), Vec::<u32>::new());
        }
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(runner.live_groups(), 0);
}
