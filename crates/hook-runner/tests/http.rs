//! HTTP hooks through the runner, against a loopback server.

#![allow(clippy::unwrap_used)]
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use dsh_hook_runner::{
    Completeness, HookExit, HookProgram, HookRunner, HookSpec, HttpHook, RunRecord, RunnerConfig,
};
use dsh_protocol::HookOutcomeKind;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What the server does with each request.
#[derive(Clone)]
enum Reply {
    /// Answer with this status and body.
    Status(u16, &'static str),
    /// Answer 200 with this many bytes of body, written in chunks.
    Stream(u64),
    /// Read the request, never answer.
    Hang,
}

/// A request as the server saw it.
#[derive(Debug)]
struct Seen {
    head: String,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

async fn serve(reply: Reply) -> (String, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (seen_tx, seen_rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            tokio::spawn(handle(stream, reply.clone(), seen_tx.clone()));
        }
    });
    (url, seen_rx)
}

async fn handle(mut stream: TcpStream, reply: Reply, seen: mpsc::UnboundedSender<Seen>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut body = buf[head_end + 4..].to_vec();
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    while body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let _ = seen.send(Seen { head, body });
    match reply {
        Reply::Status(status, body) => {
            let response = format!(
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(response.as_bytes()).await;
        }
        Reply::Stream(total) => {
            let head =
                format!("HTTP/1.1 200 OK\r\ncontent-length: {total}\r\nconnection: close\r\n\r\n");
            if stream.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            let block = vec![b' '; 256 * 1024];
            let mut left = total;
            while left > 0 {
                let n = usize::try_from(left.min(block.len() as u64)).unwrap();
                if stream.write_all(&block[..n]).await.is_err() {
                    return;
                }
                left -= n as u64;
            }
        }
        Reply::Hang => {
            // Hold the connection open until the client goes away.
            let _ = stream.read(&mut chunk).await;
        }
    }
}

fn http(url: &str, headers: &[(&str, &str)], allowed: &[&str]) -> HookSpec {
    HookSpec {
        program: HookProgram::Http(HttpHook {
            url: url.to_owned(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            allowed_env_vars: allowed.iter().map(|a| (*a).to_owned()).collect(),
        }),
        cwd: PathBuf::from("/"),
        env: Vec::new(),
        stdin: br#"{"hook_event_name":"PreToolUse"}"#.to_vec(),
        timeout: Duration::from_secs(30),
    }
}

#[tokio::test]
async fn a_2xx_answer_is_the_hooks_stdout_and_the_request_carries_the_payload() {
    let (url, mut seen) = serve(Reply::Status(200, r#"{"decision":"block","reason":"no"}"#)).await;
    let home = std::env::var("HOME").unwrap_or_default();
    let run = HookRunner::default()
        .run(
            http(
                &url,
                &[("Authorization", "Bearer ${HOME}"), ("X-Other", "$PATH")],
                &["HOME"],
            ),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(run.exit, HookExit::Responded(200));
    assert_eq!(run.stdout.text(), r#"{"decision":"block","reason":"no"}"#);
    assert_eq!(run.pid, None);
    let request = seen.recv().await.unwrap();
    assert!(
        request.head.starts_with("POST /hook HTTP/1.1"),
        "{}",
        request.head
    );
    assert_eq!(request.body, br#"{"hook_event_name":"PreToolUse"}"#);
    assert_eq!(
        request.header("content-type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {home}"))
    );
    // Not allowed: sent as written, never expanded.
    assert_eq!(request.header("x-other").as_deref(), Some("$PATH"));

    let record = RunRecord::of(&run);
    assert_eq!(record.outcome, HookOutcomeKind::Exited);
    assert_eq!(record.exit_code, Some(0));
    assert_eq!(record.http_status, Some(200));
}

#[tokio::test]
async fn a_non_2xx_answer_is_its_own_outcome_with_the_status() {
    let (url, _seen) = serve(Reply::Status(503, "busy")).await;
    let run = HookRunner::default()
        .run(http(&url, &[], &[]), &CancellationToken::new())
        .await;
    assert_eq!(run.exit, HookExit::Responded(503));
    let record = RunRecord::of(&run);
    assert_eq!(record.outcome, HookOutcomeKind::HttpError);
    assert_eq!(record.exit_code, None);
    assert_eq!(record.http_status, Some(503));
    assert_eq!(record.error.as_deref(), Some("HTTP status 503"));
    assert_eq!(record.stdout, "busy");
    let event = serde_json::to_value(record.into_event(
        Some(1),
        "inv".into(),
        None,
        dsh_protocol::HookDecision::default(),
    ))
    .unwrap();
    assert_eq!(event["outcome"], "http_error");
    assert_eq!(event["http_status"], 503);
}

#[tokio::test]
async fn a_300_mb_body_is_streamed_capped_and_counted() {
    const TOTAL: u64 = 300_000_000;
    let (url, _seen) = serve(Reply::Stream(TOTAL)).await;
    let runner = HookRunner::new(RunnerConfig {
        decision_limit: 2 * 1024 * 1024,
        ..RunnerConfig::default()
    });
    let run = runner
        .run(http(&url, &[], &[]), &CancellationToken::new())
        .await;
    assert_eq!(run.exit, HookExit::Responded(200));
    assert_eq!(
        run.stdout.completeness(),
        Completeness::Cut {
            kept: 2 * 1024 * 1024,
            total: TOTAL
        }
    );
    assert!(run.stdout.bytes.capacity() <= 4 * 1024 * 1024);
    let record = RunRecord::of(&run);
    // The log keeps 1 MiB and says how much there was.
    assert!(record.stdout.len() < 1024 * 1024 + 100);
    assert!(
        record
            .stdout
            .ends_with("[dsh: output truncated: kept 1048576 of 300000000 bytes]")
    );
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_at_the_deadline() {
    let (url, _seen) = serve(Reply::Hang).await;
    let mut spec = http(&url, &[], &[]);
    spec.timeout = Duration::from_millis(400);
    let started = Instant::now();
    let run = HookRunner::default()
        .run(spec, &CancellationToken::new())
        .await;
    let elapsed = started.elapsed();
    assert_eq!(run.exit, HookExit::TimedOut);
    assert_eq!(run.describe(), "timed out after 400ms");
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    let record = RunRecord::of(&run);
    assert_eq!(record.outcome, HookOutcomeKind::TimedOut);
    assert!(record.timed_out);
}

#[tokio::test]
async fn cancellation_and_kill_all_abort_a_request_in_flight() {
    let (url, mut seen) = serve(Reply::Hang).await;
    let runner = HookRunner::default();

    let cancel = CancellationToken::new();
    let run = tokio::spawn({
        let runner = runner.clone();
        let spec = http(&url, &[], &[]);
        let cancel = cancel.clone();
        async move { runner.run(spec, &cancel).await }
    });
    seen.recv().await.unwrap();
    cancel.cancel();
    let run = tokio::time::timeout(Duration::from_secs(3), run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.exit, HookExit::Cancelled);

    let run = tokio::spawn({
        let runner = runner.clone();
        let spec = http(&url, &[], &[]);
        async move { runner.run(spec, &CancellationToken::new()).await }
    });
    seen.recv().await.unwrap();
    runner.kill_all();
    let run = tokio::time::timeout(Duration::from_secs(3), run)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.exit, HookExit::Cancelled);

    // kill_all stops what was in flight, not what starts afterwards.
    let (url, _seen) = serve(Reply::Status(204, "")).await;
    let run = runner
        .run(http(&url, &[], &[]), &CancellationToken::new())
        .await;
    assert_eq!(run.exit, HookExit::Responded(204));
}

#[tokio::test]
async fn no_server_is_a_spawn_failure_naming_the_url() {
    // Bind then drop: nothing listens on that port any more.
    let port = {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).unwrap();
        listener.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}/hook");
    let run = HookRunner::default()
        .run(http(&url, &[], &[]), &CancellationToken::new())
        .await;
    let HookExit::SpawnFailed(why) = &run.exit else {
        panic!("{:?}", run.exit);
    };
    assert!(why.contains(&url), "{why}");
    assert_eq!(RunRecord::of(&run).outcome, HookOutcomeKind::SpawnFailed);

    let run = HookRunner::default()
        .run(http("not a url", &[], &[]), &CancellationToken::new())
        .await;
    assert!(
        matches!(run.exit, HookExit::SpawnFailed(_)),
        "{:?}",
        run.exit
    );
}
