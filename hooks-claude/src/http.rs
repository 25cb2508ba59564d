//! HTTP hooks: the payload is POSTed to the configured URL and a 2xx
//! answer's body is read like a command's stdout. They run inside the
//! shared engine's firing as custom runs (the hook runner will take them
//! over).

use std::time::{Duration, Instant};

use dsh_hook_runner::RunRecord;
use dsh_protocol::HookOutcomeKind;
use dsh_seams::CancellationToken;

use crate::dialect::HttpRun;
use crate::output::{ExitFact, HookFacts};

/// POSTs `body` to `url` with `timeout`, cancelled by `cancel`.
pub(crate) async fn http_call(
    client: reqwest::Client,
    url: String,
    headers: Vec<(String, String)>,
    allowed_env_vars: Vec<String>,
    body: Vec<u8>,
    timeout: Duration,
    cancel: CancellationToken,
) -> HttpRun {
    let started = Instant::now();
    let mut request = client
        .post(&url)
        .header("Content-Type", "application/json")
        .timeout(timeout)
        .body(body);
    for (name, value) in &headers {
        request = request.header(name.as_str(), interpolate_header(value, &allowed_env_vars));
    }
    let outcome = tokio::select! {
        () = cancel.cancelled() => Err(None),
        response = async {
            let response = request.send().await?;
            let status = response.status();
            let text = response.text().await?;
            Ok::<_, reqwest::Error>((status, text))
        } => response.map_err(Some),
    };
    let duration = started.elapsed();
    let record =
        |outcome: HookOutcomeKind, exit_code: Option<i32>, stdout: String, error| RunRecord {
            outcome,
            exit_code,
            signal: None,
            timed_out: outcome == HookOutcomeKind::TimedOut,
            duration,
            stdout,
            stderr: String::new(),
            error,
        };
    let failed = |exit: ExitFact, outcome: HookOutcomeKind, error: String| HttpRun {
        facts: HookFacts {
            exit,
            stdout: String::new(),
            stderr: String::new(),
        },
        record: record(outcome, None, String::new(), Some(error)),
    };
    match outcome {
        Ok((status, text)) if status.is_success() => HttpRun {
            facts: HookFacts {
                exit: ExitFact::Exited(0),
                stdout: text.clone(),
                stderr: String::new(),
            },
            record: record(HookOutcomeKind::Exited, Some(0), text, None),
        },
        Ok((status, text)) => HttpRun {
            facts: HookFacts {
                exit: ExitFact::Failed(format!("HTTP status {status}")),
                stdout: String::new(),
                stderr: String::new(),
            },
            record: record(
                HookOutcomeKind::Exited,
                None,
                text,
                Some(format!(
                    "HTTP status {status} from {url} (non-blocking error)"
                )),
            ),
        },
        Err(None) => failed(
            ExitFact::Cancelled,
            HookOutcomeKind::Cancelled,
            "cancelled".to_owned(),
        ),
        Err(Some(error)) if error.is_timeout() => failed(
            ExitFact::TimedOut,
            HookOutcomeKind::TimedOut,
            format!("HTTP hook {url} timed out after {timeout:?}"),
        ),
        Err(Some(error)) => failed(
            ExitFact::Failed(error.to_string()),
            HookOutcomeKind::SpawnFailed,
            format!("HTTP hook {url} failed: {error}"),
        ),
    }
}

fn interpolate_header(value: &str, allowed: &[String]) -> String {
    let mut out = value.to_owned();
    for name in allowed {
        let replacement = std::env::var(name).unwrap_or_default();
        out = out
            .replace(&format!("${{{name}}}"), &replacement)
            .replace(&format!("${name}"), &replacement);
    }
    out
}
