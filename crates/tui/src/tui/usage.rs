//! Tokens and cost: what the providers reported for each model request
//! (`assistant/message` usage: input, output, cache reads and writes),
//! summed per turn and per session, priced by `dsh_model::pricing`. A model
//! without a list price shows its tokens and no cost: a price is never
//! guessed.

use dsh_protocol::{AssistantMessageEvent, Event, EventBody, TokenUsage};

/// The usage of the running (or last) turn and of the whole session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meter {
    /// The requests of the latest turn.
    pub turn: TokenUsage,
    /// Every request of the session.
    pub session: TokenUsage,
    /// Model requests in the session that reported usage.
    pub requests: u64,
}

fn add(total: &mut TokenUsage, usage: &TokenUsage) {
    total.input_tokens = total.input_tokens.saturating_add(usage.input_tokens);
    total.output_tokens = total.output_tokens.saturating_add(usage.output_tokens);
    total.cache_read_input_tokens = total
        .cache_read_input_tokens
        .saturating_add(usage.cache_read_input_tokens);
    total.cache_creation_input_tokens = total
        .cache_creation_input_tokens
        .saturating_add(usage.cache_creation_input_tokens);
}

impl Meter {
    /// Takes an event: a turn's start resets the turn's figures, a reply's
    /// usage adds to both.
    pub fn observe(&mut self, event: &Event) {
        if let EventBody::TurnStart(_) = &event.body {
            self.turn = TokenUsage::default();
        }
        if let EventBody::AssistantMessage(AssistantMessageEvent {
            usage: Some(usage), ..
        }) = &event.body
        {
            add(&mut self.turn, usage);
            add(&mut self.session, usage);
            self.requests += 1;
        }
    }

    /// The figures of a stored session (a resumed one).
    pub fn of_events(events: &[Event]) -> Meter {
        let mut meter = Meter::default();
        for event in events {
            meter.observe(event);
        }
        meter
    }

    /// The status line's part: `12.0k in · 300 out · $0.0042` (no price
    /// for a model dsh has none for); `None` before any usage.
    pub fn short(&self, model: &str) -> Option<String> {
        if self.requests == 0 {
            return None;
        }
        let mut text = format!(
            "{} in · {} out",
            tokens(self.session.input_tokens),
            tokens(self.session.output_tokens)
        );
        if let Some(cost) = cost(model, &self.session) {
            text.push_str(&format!(" · {}", dollars(cost)));
        }
        Some(text)
    }

    /// `/cost`: the last turn and the session, with cache figures and cost.
    pub fn report(&self, model: &str) -> String {
        if self.requests == 0 {
            return "no usage yet: the provider has reported no tokens in this session".to_owned();
        }
        let mut text = format!(
            "last turn: {}\nsession:   {} ({} model request{})\n",
            line(model, &self.turn),
            line(model, &self.session),
            self.requests,
            if self.requests == 1 { "" } else { "s" }
        );
        if dsh_model::pricing::price(model).is_some() {
            text.push_str(&format!(
                "cost at {model}'s list prices (USD), as the provider reported the tokens"
            ));
        } else {
            text.push_str(&format!(
                "no price known for {model}: tokens only (dsh never guesses a price)"
            ));
        }
        text
    }
}

/// `12.0k in (11.0k cache read, 0 cache write) · 300 out · $0.0042`.
fn line(model: &str, usage: &TokenUsage) -> String {
    let mut text = format!("{} in", tokens(usage.input_tokens));
    if usage.cache_read_input_tokens > 0 || usage.cache_creation_input_tokens > 0 {
        text.push_str(&format!(
            " ({} cache read, {} cache write)",
            tokens(usage.cache_read_input_tokens),
            tokens(usage.cache_creation_input_tokens)
        ));
    }
    text.push_str(&format!(" · {} out", tokens(usage.output_tokens)));
    if let Some(cost) = cost(model, usage) {
        text.push_str(&format!(" · {}", dollars(cost)));
    }
    text
}

/// What `usage` cost on `model`, when dsh knows its price.
pub fn cost(model: &str, usage: &TokenUsage) -> Option<f64> {
    dsh_model::pricing::price(model).map(|price| price.cost_usd(usage))
}

/// `$0.0042`, `$1.23`.
pub fn dollars(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// `950`, `12.3k`, `128k`, `1.2M`.
pub fn tokens(count: u64) -> String {
    if count < 1000 {
        count.to_string()
    } else if count >= 1_000_000 {
        format!("{:.1}M", count as f64 / 1_000_000.0)
    } else if count.is_multiple_of(1000) || count >= 100_000 {
        format!("{}k", count / 1000)
    } else {
        format!("{:.1}k", count as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn reply(input: u64, output: u64, read: u64) -> Event {
        Event {
            seq: 1,
            ts: "2026-01-01T00:00:00Z".to_owned(),
            body: EventBody::AssistantMessage(AssistantMessageEvent {
                turn: 1,
                step: 1,
                content: "x".to_owned(),
                tool_calls: Vec::new(),
                usage: Some(TokenUsage {
                    input_tokens: input,
                    output_tokens: output,
                    cache_read_input_tokens: read,
                    cache_creation_input_tokens: 0,
                }),
                thinking: None,
            }),
            agent_id: None,
        }
    }

    #[test]
    fn turns_and_sessions_add_up_and_known_models_are_priced() {
        let mut meter = Meter::default();
        meter.observe(&reply(10_000, 200, 8_000));
        meter.observe(&reply(12_000, 300, 0));
        assert_eq!(meter.session.input_tokens, 22_000);
        assert_eq!(meter.turn.output_tokens, 500);
        assert_eq!(meter.requests, 2);
        // deepseek-chat: $0.28 in, $0.028 cache read, $0.42 out per million.
        let expected = (14_000.0 * 0.28 + 8_000.0 * 0.028 + 500.0 * 0.42) / 1_000_000.0;
        assert_eq!(
            meter.short("deepseek-chat").as_deref(),
            Some(format!("22k in · 500 out · {}", dollars(expected)).as_str())
        );
        let report = meter.report("deepseek-chat");
        assert!(report.contains("8k cache read, 0 cache write"), "{report}");
        assert!(report.contains("(2 model requests)"), "{report}");
    }

    #[test]
    fn an_unknown_model_shows_tokens_and_no_price() {
        let mut meter = Meter::default();
        assert_eq!(meter.short("local-model"), None);
        meter.observe(&reply(1_500, 20, 0));
        assert_eq!(
            meter.short("local-model").as_deref(),
            Some("1.5k in · 20 out")
        );
        let report = meter.report("local-model");
        assert!(!report.contains('$'), "{report}");
        assert!(
            report.contains("no price known for local-model"),
            "{report}"
        );
    }
}
