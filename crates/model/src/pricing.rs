//! List prices of well-known models, for the cost a session reports
//! (`claude -p`'s `total_cost_usd` and `modelUsage`, the terminal's `/cost`).
//!
//! Prices are USD per million tokens, as the providers publish them for
//! their standard (non-batch, non-priority) tier:
//! - Anthropic: <https://docs.anthropic.com/en/docs/about-claude/pricing>
//!   (read 2025-11; "cache write" is the 5-minute cache write);
//! - OpenAI: <https://openai.com/api/pricing/> (read 2025-11; OpenAI bills
//!   no cache write, so it costs what an input token costs);
//! - DeepSeek: <https://api-docs.deepseek.com/quick_start/pricing>
//!   (read 2025-11, the V3.2 prices of 2025-09-29: `deepseek-chat` and
//!   `deepseek-reasoner` cost the same).
//!
//! A model that is not in the table has no price: [`price`] answers `None`
//! and callers report a cost of 0 with a note. No price is ever guessed
//! from a name's family (`gpt-5-pro` is not `gpt-5`).

use dsh_protocol::TokenUsage;

/// What one million tokens of each kind cost, in USD.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Output tokens (reasoning tokens included).
    pub output: f64,
    /// Input tokens read from the prompt cache.
    pub cache_read: f64,
    /// Input tokens written to the prompt cache.
    pub cache_write: f64,
}

const fn p(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input,
        output,
        cache_read,
        cache_write,
    }
}

/// Anthropic models: their aliases; a dated snapshot (`…-20250929`) or a
/// `-latest` alias of one of these names costs the same.
const ANTHROPIC: &[(&str, Price)] = &[
    ("claude-opus-4-5", p(5.0, 25.0, 0.5, 6.25)),
    ("claude-opus-4-1", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4-0", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-opus-4", p(15.0, 75.0, 1.5, 18.75)),
    ("claude-sonnet-4-5", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4-0", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-sonnet-4", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-7-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-3-5-sonnet", p(3.0, 15.0, 0.3, 3.75)),
    ("claude-haiku-4-5", p(1.0, 5.0, 0.1, 1.25)),
    ("claude-3-5-haiku", p(0.8, 4.0, 0.08, 1.0)),
    ("claude-3-haiku", p(0.25, 1.25, 0.03, 0.3)),
    ("claude-3-opus", p(15.0, 75.0, 1.5, 18.75)),
];

/// OpenAI and DeepSeek models, by exact name (aliases and the dated
/// snapshots that share the alias's price).
const EXACT: &[(&str, Price)] = &[
    ("gpt-4o", p(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-2024-08-06", p(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-2024-11-20", p(2.5, 10.0, 1.25, 2.5)),
    ("gpt-4o-mini", p(0.15, 0.6, 0.075, 0.15)),
    ("gpt-4o-mini-2024-07-18", p(0.15, 0.6, 0.075, 0.15)),
    ("gpt-4.1", p(2.0, 8.0, 0.5, 2.0)),
    ("gpt-4.1-2025-04-14", p(2.0, 8.0, 0.5, 2.0)),
    ("gpt-4.1-mini", p(0.4, 1.6, 0.1, 0.4)),
    ("gpt-4.1-mini-2025-04-14", p(0.4, 1.6, 0.1, 0.4)),
    ("gpt-4.1-nano", p(0.1, 0.4, 0.025, 0.1)),
    ("gpt-4.1-nano-2025-04-14", p(0.1, 0.4, 0.025, 0.1)),
    ("gpt-5", p(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-2025-08-07", p(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", p(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-mini-2025-08-07", p(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-nano", p(0.05, 0.4, 0.005, 0.05)),
    ("gpt-5-nano-2025-08-07", p(0.05, 0.4, 0.005, 0.05)),
    ("deepseek-chat", p(0.28, 0.42, 0.028, 0.28)),
    ("deepseek-reasoner", p(0.28, 0.42, 0.028, 0.28)),
];

/// The list price of `model`, when dsh knows it.
pub fn price(model: &str) -> Option<Price> {
    let model = model.trim().to_ascii_lowercase();
    if let Some((_, price)) = EXACT.iter().find(|(name, _)| *name == model) {
        return Some(*price);
    }
    ANTHROPIC
        .iter()
        .find(|(name, _)| {
            model.strip_prefix(name).is_some_and(|rest| {
                rest.is_empty()
                    || rest == "-latest"
                    || rest.strip_prefix('-').is_some_and(|date| {
                        date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())
                    })
            })
        })
        .map(|(_, price)| *price)
}

impl Price {
    /// What `usage` costs at this price, in USD. dsh's `input_tokens`
    /// count the cached ones too; those are billed at the cache prices.
    pub fn cost_usd(&self, usage: &TokenUsage) -> f64 {
        let cached = usage
            .cache_read_input_tokens
            .saturating_add(usage.cache_creation_input_tokens);
        let uncached = usage.input_tokens.saturating_sub(cached);
        let per_million = uncached as f64 * self.input
            + usage.cache_read_input_tokens as f64 * self.cache_read
            + usage.cache_creation_input_tokens as f64 * self.cache_write
            + usage.output_tokens as f64 * self.output;
        per_million / 1_000_000.0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn known_models_aliases_and_snapshots_have_a_price() {
        assert_eq!(price("claude-sonnet-4-5").unwrap().input, 3.0);
        assert_eq!(price("claude-sonnet-4-5-20250929").unwrap().output, 15.0);
        assert_eq!(price("claude-3-7-sonnet-latest").unwrap().input, 3.0);
        assert_eq!(price("claude-haiku-4-5").unwrap().output, 5.0);
        assert_eq!(price("GPT-4o").unwrap().input, 2.5);
        assert_eq!(price("gpt-4o-mini").unwrap().input, 0.15);
        assert_eq!(price("deepseek-reasoner").unwrap().output, 0.42);
    }

    #[test]
    fn unknown_models_and_other_family_members_have_none() {
        for model in [
            "gpt-5-pro",
            "gpt-4o-2024-05-13",
            "claude-opus-5-5",
            "claude-sonnet-4-5-preview",
            "llama3",
            "",
        ] {
            assert_eq!(price(model), None, "{model}");
        }
    }

    #[test]
    fn cost_bills_cached_input_at_the_cache_prices() {
        let sonnet = price("claude-sonnet-4-5").unwrap();
        let usage = TokenUsage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_input_tokens: 400_000,
            cache_creation_input_tokens: 100_000,
        };
        // 500K uncached × $3 + 400K × $0.30 + 100K × $3.75 + 100K × $15
        let expected = 1.5 + 0.12 + 0.375 + 1.5;
        assert!((sonnet.cost_usd(&usage) - expected).abs() < 1e-9);
        assert_eq!(sonnet.cost_usd(&TokenUsage::default()), 0.0);
    }
}
