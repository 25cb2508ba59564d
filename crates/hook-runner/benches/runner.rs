//! Measures the hook runner against raw process spawning, in one run.
//!
//! `CARGO_TARGET_DIR=/work/target-runner cargo bench -p dsh-hook-runner --bench runner`
//!
//! 1. Per-invocation cost of `HookRunner::run` for `sh -c true` with a small
//!    JSON stdin, against raw spawns (std `status()`, std `output()` with
//!    piped stdio, tokio `status()`), interleaved call by call so machine
//!    noise hits every variant alike. Target: runner ≤ 1.3× raw.
//! 2. Ten parallel `sleep 0.1` hooks through `run_all`. Target: < 150 ms.
//! 3. Peak-memory growth while a hook prints 200 MB. Target: about the
//!    stdout cap (`decision_limit`, 16 MiB), not 200 MB.
//!
//! The end-to-end figure (dsh replay with 100 hook runs against 100 raw
//! spawns) is `scripts/dispatch-overhead.sh`.

// A bench prints its figures as a report on stdout.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use dsh_hook_runner::{HookExit, HookProgram, HookRunner, HookSpec, RunnerConfig};
use tokio_util::sync::CancellationToken;

const CALLS: usize = 200;
const PAYLOAD: &[u8] = br#"{"session_id":"abc123","cwd":"/tmp","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"npm test"}}"#;

fn shell(command: &str) -> HookSpec {
    HookSpec {
        program: HookProgram::Shell {
            shell: PathBuf::from("/bin/sh"),
            command: command.to_owned(),
        },
        cwd: std::env::temp_dir(),
        env: vec![("CLAUDE_PROJECT_DIR".into(), "/tmp".into())],
        stdin: PAYLOAD.to_vec(),
        timeout: Duration::from_secs(60),
    }
}

/// A kB figure from /proc/self/status (`VmHWM`, `VmRSS`).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets VmHWM to the current RSS (Linux ≥ 4.0); false when not possible.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

struct Stats {
    mean: Duration,
    median: Duration,
    p90: Duration,
}

fn stats(samples: &mut [Duration]) -> Stats {
    samples.sort();
    let total: Duration = samples.iter().sum();
    Stats {
        mean: total / samples.len() as u32,
        median: samples[samples.len() / 2],
        p90: samples[samples.len() * 9 / 10],
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

async fn memory_phase(runner: &HookRunner) {
    let cap = runner.config().decision_limit;
    let record_cap = runner.config().capture_limit;
    let reset = reset_peak_rss();
    let before = status_kib("VmHWM:").unwrap_or(0);
    let run = runner
        .run(
            shell("head -c 200000000 /dev/zero"),
            &CancellationToken::new(),
        )
        .await;
    let after = status_kib("VmHWM:").unwrap_or(0);
    assert_eq!(run.exit, HookExit::Exited(0));
    let growth = after.saturating_sub(before);
    println!("## 3. peak memory while a hook prints 200 MB");
    println!("| figure | value |");
    println!("|---|---|");
    println!("| bytes printed (counted) | {} |", run.stdout.total_bytes);
    println!("| bytes kept | {} |", run.stdout.bytes.len());
    println!("| stdout cap (decision_limit) | {} KiB |", cap / 1024);
    println!(
        "| stored in the log (capture_limit) | {} KiB |",
        record_cap / 1024
    );
    println!("| VmHWM before / after | {before} KiB / {after} KiB (peak reset: {reset}) |");
    println!("| peak growth | {growth} KiB |");
    println!("| time to drain 200 MB | {} |", ms(run.duration));
    println!();
}

async fn spawn_phase(runner: &HookRunner) {
    let cancel = CancellationToken::new();
    let mut std_status = Vec::with_capacity(CALLS);
    let mut std_output = Vec::with_capacity(CALLS);
    let mut tokio_status = Vec::with_capacity(CALLS);
    let mut hook_runner = Vec::with_capacity(CALLS);

    // Warm up every path once (page cache, lazy runtime set-up).
    for _ in 0..5 {
        let _ = std::process::Command::new("sh")
            .arg("-c")
            .arg("true")
            .status();
        let _ = runner.run(shell("true"), &cancel).await;
    }

    for i in 0..CALLS {
        // Rotate the order each round so no variant always goes first.
        for k in 0..4 {
            match (i + k) % 4 {
                0 => {
                    let t = Instant::now();
                    let status = std::process::Command::new("sh")
                        .arg("-c")
                        .arg("true")
                        .status();
                    std_status.push(t.elapsed());
                    assert!(status.is_ok_and(|s| s.success()));
                }
                1 => {
                    let t = Instant::now();
                    let output = std::process::Command::new("sh")
                        .arg("-c")
                        .arg("true")
                        .stdin(Stdio::null())
                        .output();
                    std_output.push(t.elapsed());
                    assert!(output.is_ok_and(|o| o.status.success()));
                }
                2 => {
                    let t = Instant::now();
                    let status = tokio::process::Command::new("sh")
                        .arg("-c")
                        .arg("true")
                        .status()
                        .await;
                    tokio_status.push(t.elapsed());
                    assert!(status.is_ok_and(|s| s.success()));
                }
                _ => {
                    let t = Instant::now();
                    let run = runner.run(shell("true"), &cancel).await;
                    hook_runner.push(t.elapsed());
                    assert_eq!(run.exit, HookExit::Exited(0));
                }
            }
        }
    }

    let raw = stats(&mut std_status);
    let piped = stats(&mut std_output);
    let tok = stats(&mut tokio_status);
    let ours = stats(&mut hook_runner);
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();

    println!("## 1. per-invocation cost, `sh -c true`, N={CALLS} each, interleaved");
    println!("| variant | mean | median | p90 |");
    println!("|---|---|---|---|");
    for (name, s) in [
        ("std Command::status() (raw)", &raw),
        ("std Command::output(), piped", &piped),
        ("tokio Command::status()", &tok),
        ("HookRunner::run (group, stdin JSON, capture)", &ours),
    ] {
        println!(
            "| {name} | {} | {} | {} |",
            ms(s.mean),
            ms(s.median),
            ms(s.p90)
        );
    }
    println!();
    println!(
        "ratio HookRunner / std status: mean {:.2}x, median {:.2}x (target <= 1.3x)",
        ratio(ours.mean, raw.mean),
        ratio(ours.median, raw.median)
    );
    println!(
        "ratio HookRunner / tokio status: mean {:.2}x, median {:.2}x",
        ratio(ours.mean, tok.mean),
        ratio(ours.median, tok.median)
    );
    println!();
}

async fn parallel_phase(runner: &HookRunner) {
    const ROUNDS: usize = 10;
    let mut walls = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let specs = (0..10).map(|_| shell("sleep 0.1")).collect();
        let t = Instant::now();
        let runs = runner.run_all(specs, &CancellationToken::new()).await;
        walls.push(t.elapsed());
        assert!(runs.iter().all(|r| r.exit == HookExit::Exited(0)));
    }
    let s = stats(&mut walls);
    println!("## 2. run_all of 10 hooks each `sleep 0.1`, {ROUNDS} rounds");
    println!("| figure | wall time |");
    println!("|---|---|");
    println!("| min | {} |", ms(walls[0]));
    println!("| median | {} |", ms(s.median));
    println!("| max | {} |", ms(walls[ROUNDS - 1]));
    println!("(target < 150 ms)");
    println!();
}

fn main() {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("cannot build tokio runtime: {err}");
            std::process::exit(1);
        }
    };
    // `cargo bench` passes `--bench`; nothing to parse.
    runtime.block_on(async {
        let runner = HookRunner::new(RunnerConfig::default());
        // Memory first, so nothing else has raised the high-water mark.
        memory_phase(&runner).await;
        spawn_phase(&runner).await;
        parallel_phase(&runner).await;
    });
}
