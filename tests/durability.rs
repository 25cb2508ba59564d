//! Kills `dsh -p` at random moments of turns with tools and hooks (SIGKILL,
//! SIGTERM, SIGINT, SIGHUP in turn) and checks after each kill: the log
//! loads, every event a `stream-json` consumer saw is in the file, the
//! session resumes, and no hook or tool process of that run is left.
//!
//! Leftovers are strict for SIGTERM, SIGINT and SIGHUP (dsh kills its
//! process groups). After SIGKILL dsh cannot act: its children die through
//! the hook runner's watchdog, which kills every registered process group
//! when dsh's end of its pipe closes, so they get a longer grace.
//!
//! `DSH_DURABILITY_SEED` replays a run's kill moments; `DSH_DURABILITY_KILLS`
//! changes the number of kills (default 32).

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::io::Read as _;
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockResponse, MockToolCall};
use serde_json::{Value, json};

use crate::cli_headless::{mock, session_logs};
use crate::cli_signals::{marked_processes, send, wait_for};
use crate::support::TestContext;

const SIGNALS: [&str; 4] = ["KILL", "TERM", "INT", "HUP"];

/// A small xorshift: the test needs spread, not quality, and a seed that
/// can be printed and replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn sleeper(marker: &str, millis: u64) -> String {
    format!(
        "python3 -c 'import time; time.sleep({})' {marker}",
        millis as f64 / 1000.0
    )
}

/// User-level hooks (trusted): SessionStart, PreToolUse and PostToolUse
/// sleep a little with the run's marker, SessionEnd is quick.
fn install_hooks(ctx: &TestContext, marker: &str) {
    let claude = ctx.home().join(".claude");
    std::fs::create_dir_all(&claude).unwrap();
    let hook = |millis| json!([{"matcher": "Bash", "hooks": [{"type": "command", "command": sleeper(marker, millis)}]}]);
    let settings = json!({"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": sleeper(marker, 80)}]}],
        "PreToolUse": hook(100),
        "PostToolUse": hook(80),
        "SessionEnd": [{"hooks": [{"type": "command", "command": "true"}]}],
    }});
    std::fs::write(claude.join("settings.json"), settings.to_string()).unwrap();
}

fn script(marker: &str) -> Vec<MockResponse> {
    let call = |id: &str, millis| {
        MockToolCall::new(id, "bash", &json!({"command": sleeper(marker, millis)}))
    };
    vec![
        MockResponse::tool_calls("first", vec![call("call_1", 350)]),
        MockResponse::tool_calls("second", vec![call("call_2", 250), call("call_3", 200)]),
        MockResponse::tool_calls("third", vec![call("call_4", 350)]),
        MockResponse::text("done"),
    ]
}

#[derive(Default)]
struct Tally {
    kills: usize,
    before_log: usize,
    torn_tails: usize,
    streamed_events: usize,
}

/// One run killed with `signal` after `delay`; panics on a broken promise.
fn one_kill(run: usize, signal: &str, delay: Duration, tally: &mut Tally) {
    let ctx = TestContext::new();
    let marker = format!("dsh-durability-{}-{run}", std::process::id());
    install_hooks(&ctx, &marker);
    let provider = mock(script(&marker));
    let mut cmd = ctx.dsh_std();
    cmd.env("DSH_BASE_URL", provider.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["-p", "work", "--output-format", "stream-json", "--verbose"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    std::thread::sleep(delay);
    send(&child, signal);
    let exited = wait_for(Duration::from_secs(20), || {
        child.try_wait().unwrap().is_some()
    });
    if !exited {
        let _ = child.kill();
    }
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let _ = child.wait();
    let context = format!("run {run}, SIG{signal} after {delay:?}\nstderr:\n{stderr}");
    assert!(exited, "dsh did not exit: {context}");
    tally.kills += 1;

    // Leftover hook and tool processes of this run: dsh has exited, so
    // after a short grace for the kernel anything still running with the
    // marker outlived it.
    let graceful = signal != "KILL";
    let grace = if graceful {
        Duration::from_millis(150)
    } else {
        Duration::from_millis(1500)
    };
    let gone = wait_for(grace, || marked_processes(&marker).is_empty());
    if !gone {
        let left = marked_processes(&marker);
        for pid in &left {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
        panic!("processes left behind ({left:?}): {context}");
    }

    // Every complete line a stream-json reader saw (a kill may cut the last).
    let streamed: Vec<Value> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let logs = session_logs(&ctx);
    let Some(log) = logs.first() else {
        assert!(
            streamed.is_empty(),
            "messages streamed but no log: {context}"
        );
        tally.before_log += 1;
        return;
    };
    let loaded = dsh_session::load(log).unwrap_or_else(|err| panic!("{err}: {context}"));
    if loaded.torn_tail.is_some() {
        tally.torn_tails += 1;
    }
    let file: Vec<Value> = loaded
        .events
        .iter()
        .map(|event| serde_json::from_str(&dsh_session::encode(event).unwrap()).unwrap())
        .collect();
    let checked = crate::support::claude_stream_in_log(&streamed, &file)
        .unwrap_or_else(|lost| panic!("acknowledged message lost: {lost}: {context}"));
    tally.streamed_events += checked;

    // The session resumes and ends balanced.
    let id = log.file_stem().unwrap().to_str().unwrap().to_owned();
    let again = mock(vec![MockResponse::text("resumed")]);
    let resumed = resume(&ctx, &again, &id);
    assert!(
        resumed.status.success(),
        "resume failed: {}\n{context}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let after = dsh_session::load(log).unwrap();
    let count = |kind: &str| {
        after
            .events
            .iter()
            .filter(|event| event.body.type_name() == kind)
            .count()
    };
    assert_eq!(count("turn/start"), count("turn/end"), "{context}");
    assert_eq!(after.torn_tail, None, "{context}");
}

fn resume(ctx: &TestContext, provider: &MockProvider, id: &str) -> std::process::Output {
    let mut cmd = ctx.dsh();
    cmd.env("DSH_BASE_URL", provider.base_url())
        .env("DSH_API_KEY", "sk-test")
        .args(["-p", "again", "--resume", id])
        .timeout(Duration::from_secs(20));
    cmd.output().unwrap()
}

#[test]
fn killing_dsh_at_random_moments_loses_no_acknowledged_event() {
    let seed = std::env::var("DSH_DURABILITY_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    let kills: usize = std::env::var("DSH_DURABILITY_KILLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(32);
    eprintln!("durability: seed {seed} (DSH_DURABILITY_SEED replays it), {kills} kills");
    let started = Instant::now();
    // Two workers: the machine's cores, each running one dsh at a time.
    let workers: Vec<_> = (0..2)
        .map(|worker| {
            std::thread::spawn(move || {
                let mut rng = Rng(seed.wrapping_add(worker as u64 * 0x9E37_79B9_7F4A_7C15) | 1);
                let mut tally = Tally::default();
                for run in (worker..kills).step_by(2) {
                    let signal = SIGNALS[run % SIGNALS.len()];
                    // Spread over start-up, hooks, tools and model requests.
                    let delay = Duration::from_millis(20 + rng.below(2200));
                    one_kill(run, signal, delay, &mut tally);
                }
                tally
            })
        })
        .collect();
    let mut total = Tally::default();
    for worker in workers {
        let tally = worker.join().unwrap();
        total.kills += tally.kills;
        total.before_log += tally.before_log;
        total.torn_tails += tally.torn_tails;
        total.streamed_events += tally.streamed_events;
    }
    eprintln!(
        "durability: {} kills in {:.1} s; {} before the log existed; {} acknowledged events checked; {} torn tails; no process left behind",
        total.kills,
        started.elapsed().as_secs_f64(),
        total.before_log,
        total.streamed_events,
        total.torn_tails,
    );
    assert_eq!(total.kills, kills);
}
