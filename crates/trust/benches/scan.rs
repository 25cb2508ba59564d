//! What the executed-file scan costs per hook launch (a session's launch
//! check scans each project hook again before it starts), set beside
//! what starting the hook costs: a raw `sh -c true` spawn, in one run.
//!
//! `cargo bench -p dsh-trust --bench scan`

// A bench prints its figures as a report on stdout.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::Path;
use std::time::{Duration, Instant};

use dsh_trust::exec_scan::{Runs, scan_in};

const ROUNDS: usize = 300;

fn write(root: &Path, name: &str, text: &str) {
    let path = root.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    write(p, "hooks/plain.sh", "echo ok\n");
    write(
        p,
        "hooks/guard.sh",
        "HERE=\"$(cd \"$(dirname \"$0\")\" && pwd)\"\nsource \"$HERE/lib/a.sh\"\nsource \"$HERE/lib/b.sh\"\ncheck \"$@\"\n",
    );
    write(p, "hooks/lib/a.sh", "check() { grep -q rm; }\n");
    write(p, "hooks/lib/b.sh", "log() { echo \"$@\" >&2; }\n");
    write(
        p,
        "hooks/guard.py",
        "import json, sys, re\nfrom rules import bash\nimport helpers\n",
    );
    write(p, "hooks/helpers.py", "import os\n");
    write(p, "hooks/rules/__init__.py", "");
    write(p, "hooks/rules/bash.py", "from . import common\n");
    write(p, "hooks/rules/common.py", "");
    let runs = Runs {
        dir: p,
        project: p,
        env: &[],
    };
    let commands = [
        "true",
        "bash hooks/plain.sh",
        "bash hooks/guard.sh",
        "python3 hooks/guard.py",
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); commands.len() + 1];
    for _ in 0..ROUNDS {
        for (i, command) in commands.iter().enumerate() {
            let started = Instant::now();
            let scan = scan_in(command, runs);
            times[i].push(started.elapsed());
            std::hint::black_box(scan);
        }
        let started = Instant::now();
        std::process::Command::new("/bin/sh")
            .args(["-c", "true"])
            .status()
            .unwrap();
        times[commands.len()].push(started.elapsed());
    }
    let spawn = median(times.pop().unwrap());
    println!("scan per launch, median of {ROUNDS} (raw `sh -c true` spawn: {spawn:?})");
    for (command, times) in commands.iter().zip(times) {
        let files = scan_in(command, runs).files.len();
        let scan = median(times);
        println!(
            "  {command:<24} {files} file(s)  {scan:>10?}  {:.1}% of a spawn",
            100.0 * scan.as_secs_f64() / spawn.as_secs_f64()
        );
    }
}
