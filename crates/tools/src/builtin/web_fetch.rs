//! `web_fetch`: fetches a URL and returns its content as Markdown (Claude
//! Code's `WebFetch`, Gemini CLI's `web_fetch`).
//!
//! Limits: the request times out after [`FetchLimits::timeout`], at most
//! [`FetchLimits::max_bytes`] of the body are read, and the Markdown the
//! model sees is cut at [`FetchLimits::max_chars`]. HTML becomes Markdown
//! (`htmd`); other text types are returned as they are; binary types are
//! refused. Redirects are followed only within the same host: a redirect to
//! another host is reported to the model instead of followed, so a domain
//! permission rule (`WebFetch(domain:example.com)`, judged on the `url`
//! argument) cannot be walked around by a redirect.
//!
//! Unlike Claude Code, dsh does not run a second model over the page: the
//! `prompt` argument is echoed above the content, and the calling model
//! reads the page itself.

use std::time::{Duration, Instant};

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{TypedTool, spec};
use crate::{Rendered, ToolContext, ToolError};

/// The tool's name.
pub const NAME: &str = "web_fetch";

/// How much `web_fetch` reads and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchLimits {
    /// The whole request, connect to last byte.
    pub timeout: Duration,
    /// Body bytes read; the rest is not downloaded.
    pub max_bytes: usize,
    /// Characters of Markdown the model sees.
    pub max_chars: usize,
    /// Same-host redirects followed.
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            timeout: Duration::from_secs(30),
            max_bytes: 10 * 1024 * 1024,
            max_chars: 100_000,
            max_redirects: 10,
        }
    }
}

/// The `web_fetch` tool.
#[derive(Debug, Clone)]
pub struct WebFetchTool {
    client: reqwest::Client,
    limits: FetchLimits,
}

impl Default for WebFetchTool {
    fn default() -> Self {
        WebFetchTool::new(FetchLimits::default())
    }
}

impl WebFetchTool {
    /// A tool with these limits.
    pub fn new(limits: FetchLimits) -> Self {
        let max_redirects = limits.max_redirects;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            let same_host = attempt
                .previous()
                .first()
                .is_some_and(|first| first.host_str() == attempt.url().host_str());
            if !same_host || attempt.previous().len() > max_redirects {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(policy)
            .timeout(limits.timeout)
            .user_agent(concat!("dsh/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        WebFetchTool { client, limits }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    url: String,
    #[serde(default)]
    prompt: Option<String>,
}

/// The canonical value of a `web_fetch` call: Claude Code's `WebFetch`
/// output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebFetchOutput {
    /// Body bytes read.
    pub bytes: u64,
    /// The HTTP status code.
    pub code: u16,
    /// The status's reason phrase.
    pub code_text: String,
    /// What the model is given: the page as Markdown, or a note.
    pub result: String,
    /// Wall time of the fetch.
    pub duration_ms: u64,
    /// The URL fetched.
    pub url: String,
}

fn fail(message: impl std::fmt::Display) -> ToolError {
    ToolError(format!("{NAME}: {message}"))
}

fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}\n\n[Content cut at {max_chars} characters]", &text[..at]),
    }
}

impl WebFetchTool {
    async fn fetch(&self, ctx: &ToolContext, args: &Args) -> Result<WebFetchOutput, ToolError> {
        let url = reqwest::Url::parse(&args.url)
            .map_err(|err| fail(format!("invalid URL `{}`: {err}", args.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(fail(format!(
                "only http and https URLs can be fetched, not `{}`",
                url.scheme()
            )));
        }
        let started = Instant::now();
        let mut response = tokio::select! {
            response = self.client.get(url.clone()).send() => response
                .map_err(|err| fail(format!("could not fetch {url}: {err}")))?,
            _ = ctx.cancel.cancelled() => return Err(fail("interrupted")),
        };
        let status = response.status();
        let code_text = status.canonical_reason().unwrap_or("").to_owned();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(|location| {
                    url.join(location)
                        .map_or_else(|_| location.to_owned(), |u| u.to_string())
                })
                .unwrap_or_default();
            return Ok(WebFetchOutput {
                bytes: 0,
                code: status.as_u16(),
                code_text,
                result: format!(
                    "{url} redirects to a different host: {location}\nFetch that URL with \
                     web_fetch to read it."
                ),
                duration_ms: elapsed_ms(started),
                url: url.to_string(),
            });
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = Vec::new();
        let mut truncated = false;
        loop {
            let chunk = tokio::select! {
                chunk = response.chunk() => chunk
                    .map_err(|err| fail(format!("reading {url} failed: {err}")))?,
                _ = ctx.cancel.cancelled() => return Err(fail("interrupted")),
            };
            let Some(chunk) = chunk else { break };
            let room = self.limits.max_bytes.saturating_sub(body.len());
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let bytes = body.len() as u64;
        let text = String::from_utf8_lossy(&body);
        let is_html = content_type.contains("html")
            || (content_type.is_empty() && text.trim_start().starts_with('<'));
        let is_text = content_type.starts_with("text/")
            || content_type.contains("json")
            || content_type.contains("xml")
            || content_type.contains("javascript")
            || content_type.is_empty();
        let markdown = if is_html {
            htmd::convert(&text).map_err(|err| fail(format!("could not read the HTML: {err}")))?
        } else if is_text {
            text.into_owned()
        } else {
            return Err(fail(format!(
                "{url} is `{content_type}`, not text; it cannot be shown"
            )));
        };
        let mut result = cut(markdown.trim(), self.limits.max_chars);
        if truncated {
            result.push_str(&format!(
                "\n\n[Download stopped after {} bytes]",
                self.limits.max_bytes
            ));
        }
        if let Some(prompt) = args.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
            result = format!("Fetched to answer: {prompt}\n\n{result}");
        }
        Ok(WebFetchOutput {
            bytes,
            code: status.as_u16(),
            code_text,
            result,
            duration_ms: elapsed_ms(started),
            url: url.to_string(),
        })
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[async_trait]
impl TypedTool for WebFetchTool {
    const NAME: &'static str = NAME;
    type Args = Args;
    type Output = WebFetchOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            NAME,
            "Fetches an http(s) URL and returns the page as Markdown (HTML is converted, other \
             text is returned as it is). Redirects to another host are reported, not followed. \
             Long pages are cut.",
            json!({
                "url": {"type": "string", "description": "The URL to fetch."},
                "prompt": {"type": "string", "description": "What you want to learn from the page."}
            }),
            &["url", "prompt"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: Args) -> Result<WebFetchOutput, ToolError> {
        let output = self.fetch(ctx, &args).await?;
        Ok(output)
    }

    fn overlap(&self, _args: &Self::Args, _cwd: &std::path::Path) -> crate::Concurrency {
        crate::Concurrency::Shared
    }

    fn show(&self, output: WebFetchOutput) -> Result<Rendered, ToolError> {
        if output.code >= 400 {
            return Ok(Rendered {
                content: format!(
                    "{} answered {} {}\n\n{}",
                    output.url, output.code, output.code_text, output.result
                ),
                is_error: true,
            });
        }
        Ok(Rendered {
            content: output.result,
            is_error: false,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio_util::sync::CancellationToken;

    /// A loopback HTTP server answering every request with `response(path)`.
    async fn serve(
        response: impl Fn(&str) -> String + Send + Sync + 'static,
    ) -> (String, tokio::task::JoinHandle<()>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let handle = tokio::spawn(async move {
            loop {
                let Ok((mut socket, _)) = listener.accept().await else {
                    return;
                };
                let mut buf = vec![0u8; 4096];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..n]).into_owned();
                let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let _ = socket.write_all(response(&path).as_bytes()).await;
                let _ = socket.shutdown().await;
            }
        });
        (base, handle)
    }

    fn http(status: &str, headers: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n{body}",
            body.len()
        )
    }

    async fn fetch(tool: &WebFetchTool, url: &str) -> Result<WebFetchOutput, ToolError> {
        let ctx = ToolContext::new("/", CancellationToken::new());
        let value = tool
            .run(&ctx, &json!({"url": url, "prompt": "what is it"}))
            .await?;
        tool.render(&value).unwrap();
        Ok(serde_json::from_value(value).unwrap())
    }

    #[tokio::test]
    async fn html_becomes_markdown_and_limits_hold() {
        let (base, server) = serve(|path| match path {
            "/page" => http(
                "200 OK",
                "Content-Type: text/html\r\n",
                "<html><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>",
            ),
            "/big" => http("200 OK", "Content-Type: text/plain\r\n", &"x".repeat(5000)),
            "/same" => http("302 Found", "Location: /page\r\n", ""),
            "/away" => http("302 Found", "Location: http://other.invalid/x\r\n", ""),
            "/missing" => http("404 Not Found", "Content-Type: text/plain\r\n", "nope"),
            "/image" => http("200 OK", "Content-Type: image/png\r\n", "\u{1}PNG"),
            _ => http("500 Internal Server Error", "", ""),
        })
        .await;
        let tool = WebFetchTool::default();
        let page = fetch(&tool, &format!("{base}/page")).await.unwrap();
        assert_eq!(page.code, 200);
        assert_eq!(page.code_text, "OK");
        assert_eq!(
            page.result,
            "Fetched to answer: what is it\n\n# Title\n\nSome **bold** text."
        );

        let same = fetch(&tool, &format!("{base}/same")).await.unwrap();
        assert!(
            same.result.ends_with("Some **bold** text."),
            "{}",
            same.result
        );

        let away = fetch(&tool, &format!("{base}/away")).await.unwrap();
        assert_eq!(away.code, 302);
        assert!(
            away.result
                .contains("redirects to a different host: http://other.invalid/x"),
            "{}",
            away.result
        );

        let missing = fetch(&tool, &format!("{base}/missing")).await.unwrap();
        assert_eq!(missing.code, 404);
        let rendered = tool
            .render(&serde_json::to_value(&missing).unwrap())
            .unwrap();
        assert!(rendered.is_error);

        let image = fetch(&tool, &format!("{base}/image")).await.unwrap_err();
        assert!(image.0.contains("image/png"), "{image}");

        let small = WebFetchTool::new(FetchLimits {
            max_bytes: 1000,
            max_chars: 100,
            ..FetchLimits::default()
        });
        let big = fetch(&small, &format!("{base}/big")).await.unwrap();
        assert_eq!(big.bytes, 1000);
        assert!(big.result.contains("[Content cut at 100 characters]"));
        assert!(big.result.ends_with("[Download stopped after 1000 bytes]"));

        let bad = fetch(&tool, "file:///etc/passwd").await.unwrap_err();
        assert!(bad.0.contains("only http and https"), "{bad}");
        server.abort();
    }

    #[tokio::test]
    async fn a_slow_server_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/slow", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (_socket, _) = listener.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(30)).await;
        });
        let tool = WebFetchTool::new(FetchLimits {
            timeout: Duration::from_millis(300),
            ..FetchLimits::default()
        });
        let started = Instant::now();
        let err = fetch(&tool, &url).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(err.0.contains("could not fetch"), "{err}");
        server.abort();
    }
}
