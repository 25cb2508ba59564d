//! The status line (model, session, context used, permission mode), the
//! one-line explanations of provider errors, and the placeholder for
//! commands whose engine side has not landed.

use dsh_protocol::TokenUsage;

/// What the status line shows.
#[derive(Debug, Clone, Default)]
pub struct StatusInfo {
    /// The model's name.
    pub model: String,
    /// The session id.
    pub session_id: String,
    /// The permission mode (as Claude Code names it).
    pub mode: String,
    /// Tokens of the last request's prompt plus its reply: what the
    /// conversation occupies now.
    pub context_tokens: Option<u64>,
    /// The last request's prompt-cache figures (tokens read, written),
    /// when the provider reported any.
    pub cache: Option<(u64, u64)>,
    /// Tokens and cost of the session so far.
    pub meter: crate::tui::usage::Meter,
}

impl StatusInfo {
    /// Takes the usage a reply reported.
    pub fn record_usage(&mut self, usage: &TokenUsage) {
        self.context_tokens = Some(usage.input_tokens + usage.output_tokens);
        self.cache = cache_of(usage);
    }

    /// `/status`'s line on the prompt cache, when the provider reported it.
    pub fn cache_line(&self) -> Option<String> {
        let (read, written) = self.cache?;
        Some(format!(
            "prompt cache (last request): {} read, {} written",
            tokens(read),
            tokens(written)
        ))
    }

    /// `deepseek-chat · 3c9a51e2 · context 12.3k/128k (10%) · 12.0k in ·
    /// 300 out · $0.0035 · default mode` (no cost for a model without a
    /// known price).
    pub fn line(&self) -> String {
        let session: String = self.session_id.chars().take(8).collect();
        let context = match (self.context_tokens, context_window(&self.model)) {
            (Some(used), Some(window)) => format!(
                "context {}/{} ({}%)",
                tokens(used),
                tokens(window),
                (used.saturating_mul(100) / window.max(1)).min(100)
            ),
            (Some(used), None) => format!("context {}", tokens(used)),
            (None, Some(window)) => format!("context 0/{}", tokens(window)),
            (None, None) => "context —".to_owned(),
        };
        let usage = self
            .meter
            .short(&self.model)
            .map(|usage| format!("{usage} · "))
            .unwrap_or_default();
        format!(
            "{} · {session} · {context} · {usage}{} mode",
            self.model, self.mode
        )
    }
}

use crate::tui::usage::tokens;

/// The prompt-cache figures of `usage` (read, written), when there are any.
pub fn cache_of(usage: &TokenUsage) -> Option<(u64, u64)> {
    let figures = (
        usage.cache_read_input_tokens,
        usage.cache_creation_input_tokens,
    );
    (figures != (0, 0)).then_some(figures)
}

/// The context window of well-known models, in tokens; `None` when dsh
/// does not know the model (the status line then shows the count alone).
pub fn context_window(model: &str) -> Option<u64> {
    dsh_model::context_window(model)
}

/// A provider error in one line with what to do about it, when dsh
/// recognizes it; `None` leaves the message as it is.
///
/// SEAM (terminal ↔ typed provider errors): this reads the provider's
/// message text until the typed error categories land; then it becomes a
/// match on the category.
pub fn explain_provider_error(message: &str) -> Option<String> {
    let lower = message.to_ascii_lowercase();
    let retry = lower
        .find("retrying in ")
        .map(|index| &message[index + "retrying in ".len()..])
        .and_then(|rest| rest.split([')', ';', ' ']).next())
        .filter(|time| !time.is_empty());
    if lower.contains("authentication failed")
        || lower.contains("http 401")
        || lower.contains("http 403")
    {
        // The provider names the variable the key came from.
        let variable = message
            .find("set a valid key in ")
            .map(|index| &message[index + "set a valid key in ".len()..])
            .map(|rest| {
                rest.chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
            })
            .filter(|name| !name.is_empty());
        return Some(match variable {
            Some(name) => format!(
                "the provider rejected the API key in {name} (HTTP 401/403) — set a valid key in \
                 {name} and restart dsh"
            ),
            None => "the provider rejected the API key (HTTP 401/403) — set DSH_API_KEY (or the \
                     variable `api_key_env` names) to a valid key and restart dsh"
                .to_owned(),
        });
    }
    if lower.contains("no api key") {
        // The provider's text names every variable it looked at.
        return Some(match message.split_once("): ") {
            Some((_, fix)) => format!("no API key — {fix}, and restart dsh"),
            None => "no API key — set DSH_API_KEY or DEEPSEEK_API_KEY and restart dsh".to_owned(),
        });
    }
    if lower.contains("http 429") || lower.contains("too many requests") {
        let when = match retry {
            Some(time) => format!("the provider asked for {time} between attempts"),
            None => "dsh already retried".to_owned(),
        };
        return Some(format!(
            "rate limited by the provider (HTTP 429; {when}) — wait a moment and send again, or \
             raise `max_retries` in [provider] of $DSH_HOME/config.toml"
        ));
    }
    if lower.contains("cannot connect") {
        return Some(
            "cannot reach the provider — check DSH_BASE_URL / `base_url` and your network"
                .to_owned(),
        );
    }
    if lower.contains("timed out") {
        return Some(
            "the provider did not answer in time — send again, or raise `request_timeout_secs` \
             in [provider]"
                .to_owned(),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_names_model_session_context_and_mode() {
        let mut status = StatusInfo {
            model: "deepseek-chat".to_owned(),
            session_id: "3c9a51e2-6f0b-4a57".to_owned(),
            mode: "default".to_owned(),
            context_tokens: None,
            cache: None,
            meter: Default::default(),
        };
        assert_eq!(
            status.line(),
            "deepseek-chat · 3c9a51e2 · context 0/128k · default mode"
        );
        status.record_usage(&TokenUsage {
            input_tokens: 12_000,
            output_tokens: 300,
            cache_read_input_tokens: 11_000,
            cache_creation_input_tokens: 0,
        });
        assert_eq!(
            status.cache_line().as_deref(),
            Some("prompt cache (last request): 11k read, 0 written")
        );
        assert_eq!(
            status.line(),
            "deepseek-chat · 3c9a51e2 · context 12.3k/128k (9%) · default mode"
        );
        status.model = "local-model".to_owned();
        assert_eq!(
            status.line(),
            "local-model · 3c9a51e2 · context 12.3k · default mode"
        );
    }

    #[test]
    fn provider_errors_come_with_the_fix() {
        let auth = explain_provider_error(
            "authentication failed (HTTP 401 Unauthorized) at http://x/chat/completions: check DSH_API_KEY or DEEPSEEK_API_KEY",
        )
        .unwrap();
        assert!(auth.contains("DSH_API_KEY"), "{auth}");
        let named = explain_provider_error(
            "authentication failed (HTTP 401 Unauthorized) at http://x/v1/messages: the key in ANTHROPIC_API_KEY was refused; set a valid key in ANTHROPIC_API_KEY",
        )
        .unwrap();
        assert!(
            named.contains("set a valid key in ANTHROPIC_API_KEY"),
            "{named}"
        );
        assert!(!named.contains("DSH_API_KEY"), "{named}");
        let limited = explain_provider_error(
            "HTTP 429 Too Many Requests from http://x (gave up after 4 attempts)",
        )
        .unwrap();
        assert!(limited.contains("HTTP 429"), "{limited}");
        let with_time =
            explain_provider_error("HTTP 429 Too Many Requests from http://x; retrying in 7.0s")
                .unwrap();
        assert!(with_time.contains("7.0s"), "{with_time}");
        assert_eq!(explain_provider_error("the model said no"), None);
    }
}
