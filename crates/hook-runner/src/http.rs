//! HTTP hooks (Claude Code's `type: "http"` handlers), run by the same
//! [`crate::HookRunner`] as command hooks: the same deadline, cancellation,
//! `kill_all` (which aborts requests in flight), concurrency budget, output
//! caps and [`HookRun`] shape.
//!
//! The request is a POST of the hook's stdin payload with
//! `Content-Type: application/json` and the configured headers, whose values
//! may reference environment variables (`$VAR`, `${VAR}`) named in
//! `allowed_env_vars` only ([`interpolate_header`]). The response body is
//! streamed: the first `decision_limit` bytes are kept as the run's stdout,
//! the rest is read (bounded by the deadline) and counted, never stored.
//! Any status ends the run as [`HookExit::Responded`]; what a status means
//! (Claude Code: 2xx is success, anything else a non-blocking error) is the
//! bridge's call. A request that gets no response at all (bad URL or header,
//! connection refused, TLS failure) is [`HookExit::SpawnFailed`]: it never
//! ran.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::outcome::{CappedSink, HookExit, HookRun};
use crate::process::OutputSink;

/// An HTTP hook: where to POST and with which headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpHook {
    /// The URL the payload is POSTed to.
    pub url: String,
    /// Extra request headers; values are interpolated with
    /// [`interpolate_header`].
    pub headers: Vec<(String, String)>,
    /// The environment variables header values may reference. Only these
    /// are ever sent; this is the one way an API key may leave dsh.
    pub allowed_env_vars: Vec<String>,
}

/// Replaces `$NAME` and `${NAME}` in a header value by the value of the
/// environment variable `NAME` (empty when unset) when `NAME` is in
/// `allowed`; references to any other name are left as written, so a header
/// never carries a variable nobody allowed, and so are `${NAME:-default}`
/// and stray `$`s. Names are those of [`crate::vars`] (`$TOKEN_2` is
/// `TOKEN_2`, never `TOKEN` followed by `_2`). `lookup` reads the environment
/// (`|name| std::env::var(name).ok()` in dsh).
pub fn interpolate_header(
    value: &str,
    allowed: &[String],
    lookup: impl Fn(&str) -> Option<String>,
) -> String {
    let forms = crate::vars::Forms {
        bare: true,
        defaults: false,
        tilde: false,
    };
    crate::vars::expand(value, forms, |name| {
        allowed
            .iter()
            .any(|a| a == name)
            .then(|| lookup(name).unwrap_or_default())
    })
    .text
}

/// Why the exchange stopped early.
enum Stop {
    Deadline,
    Cancel,
}

/// Everything [`run_http`] needs from the runner.
pub(crate) struct HttpRun<'a> {
    pub(crate) client: &'a reqwest::Client,
    pub(crate) hook: HttpHook,
    pub(crate) body: Vec<u8>,
    pub(crate) timeout: Duration,
    pub(crate) decision_limit: usize,
    pub(crate) capture_limit: usize,
    /// Cancelled by the caller or by `kill_all`.
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) killed: CancellationToken,
}

/// Runs one HTTP hook to completion, within its deadline.
pub(crate) async fn run_http(run: HttpRun<'_>) -> HookRun {
    let HttpRun {
        client,
        hook,
        body,
        timeout,
        decision_limit,
        capture_limit,
        cancel,
        killed,
    } = run;
    let started = Instant::now();
    let mut stdout = CappedSink::new(decision_limit);
    let mut request = client
        .post(&hook.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(body);
    for (name, value) in &hook.headers {
        let value = interpolate_header(value, &hook.allowed_env_vars, |name| {
            std::env::var(name).ok()
        });
        request = request.header(name.as_str(), value);
    }

    let exchange = async {
        let mut response = request.send().await.map_err(|err| {
            HookExit::SpawnFailed(format!("cannot reach {}: {}", hook.url, error_chain(&err)))
        })?;
        let status = response.status().as_u16();
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => stdout.push(&chunk),
                Ok(None) => break,
                Err(err) => {
                    // The status arrived; a body cut short is what it is.
                    debug!(url = %hook.url, error = %error_chain(&err), "reading HTTP hook body failed");
                    break;
                }
            }
        }
        Ok::<_, HookExit>(HookExit::Responded(status))
    };
    let stopped = tokio::select! {
        biased;
        () = cancel.cancelled() => Err(Stop::Cancel),
        () = killed.cancelled() => Err(Stop::Cancel),
        () = tokio::time::sleep(timeout) => Err(Stop::Deadline),
        ended = exchange => Ok(ended),
    };
    // Dropping the exchange future (on a stop) aborts the request and closes
    // the connection.
    let exit = match stopped {
        Ok(Ok(exit) | Err(exit)) => exit,
        Err(Stop::Deadline) => HookExit::TimedOut,
        Err(Stop::Cancel) => HookExit::Cancelled,
    };
    debug!(url = %hook.url, exit = ?exit, "HTTP hook finished");
    HookRun {
        exit,
        stdout: stdout.captured,
        stderr: crate::Captured::default(),
        duration: started.elapsed(),
        pid: None,
        timeout,
        record_limit: capture_limit,
    }
}

/// The error and its sources on one line (reqwest's own message alone says
/// little: "error sending request").
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".to_owned()),
            "TOKEN_2" => Some("second".to_owned()),
            "SECRET" => Some("do-not-send".to_owned()),
            _ => None,
        }
    }

    fn allowed(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn allowed_variables_are_interpolated_in_both_forms() {
        let allow = allowed(&["TOKEN", "TOKEN_2", "UNSET"]);
        assert_eq!(
            interpolate_header("Bearer $TOKEN", &allow, env),
            "Bearer t0k"
        );
        assert_eq!(
            interpolate_header("Bearer ${TOKEN}x", &allow, env),
            "Bearer t0kx"
        );
        assert_eq!(interpolate_header("$TOKEN_2", &allow, env), "second");
        assert_eq!(interpolate_header("[$UNSET]", &allow, env), "[]");
    }

    #[test]
    fn other_variables_and_stray_dollars_stay_literal() {
        let allow = allowed(&["TOKEN"]);
        assert_eq!(
            interpolate_header("$SECRET ${SECRET}", &allow, env),
            "$SECRET ${SECRET}"
        );
        // A longer name that merely starts with an allowed one.
        assert_eq!(interpolate_header("$TOKEN_2", &allow, env), "$TOKEN_2");
        assert_eq!(
            interpolate_header("cost: 5$ ${ $1 ${TOKEN", &allow, env),
            "cost: 5$ ${ $1 ${TOKEN"
        );
        assert_eq!(interpolate_header("", &allow, env), "");
        assert_eq!(interpolate_header("é$TOKENé", &allow, env), "ét0ké");
    }
}
