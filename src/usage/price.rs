//! What a generation would have cost at the API's list prices.
//!
//! agy is paid for by subscription, so a cost here is the API-equivalent
//! price: what the same tokens cost bought from Google, Anthropic or a
//! host of GPT-OSS. The built-in table names, for each model agy names,
//! its price and where it comes from; `--prices FILE` (LiteLLM's
//! `model_prices_and_context_window.json`, or any file in its shape) takes
//! precedence. A model neither knows is not guessed at: its tokens are
//! counted, its cost is not, and it is named.
//!
//! Thinking tokens are output tokens (usage field 3 holds both). Gemini's
//! Pro models charge a request whose prompt (input and cache reads) passes
//! 200,000 tokens at their higher rates, all of it, as Google's price list
//! says.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

use super::Tokens;

/// A model's prices, in US dollars per token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// The prices of a request whose prompt passes 200,000 tokens.
    pub above_200k: Option<[f64; 4]>,
}

/// Where the built-in prices come from.
pub const SOURCE: &str =
    "LiteLLM's model_prices_and_context_window.json (litellm 1.110.2, read 2026-12-04), \
                          which follows Google's and Anthropic's price lists";

/// Per million tokens, as price lists give them.
const fn per_million(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
    Price {
        input: input / 1e6,
        output: output / 1e6,
        cache_read: cache_read / 1e6,
        cache_write: cache_write / 1e6,
        above_200k: None,
    }
}

const fn tiered(base: Price, input: f64, output: f64, cache_read: f64) -> Price {
    Price {
        above_200k: Some([
            input / 1e6,
            output / 1e6,
            cache_read / 1e6,
            base.cache_write,
        ]),
        ..base
    }
}

/// The models agy offers, by the start of the name agy gives each (what
/// follows, `-preview`, `-agent`, `-thinking`, `-a`, is a variant of the
/// same model), longest first where one starts another; each with its
/// LiteLLM key.
const BUILT_IN: &[(&str, &str, Price)] = &[
    (
        "gemini-3.1-pro",
        "gemini/gemini-3.1-pro-preview",
        tiered(per_million(2.0, 12.0, 0.20, 0.0), 4.0, 18.0, 0.40),
    ),
    (
        "gemini-3-pro",
        "vertex_ai/gemini-3-pro-preview",
        tiered(per_million(2.0, 12.0, 0.20, 0.0), 4.0, 18.0, 0.40),
    ),
    (
        "gemini-3.5-flash",
        "gemini/gemini-3.5-flash",
        per_million(1.50, 9.0, 0.15, 0.0),
    ),
    (
        "gemini-3-flash",
        "gemini/gemini-3-flash-preview",
        per_million(0.50, 3.0, 0.05, 0.0),
    ),
    (
        "gemini-2.5-pro",
        "gemini/gemini-2.5-pro",
        tiered(per_million(1.25, 10.0, 0.125, 0.0), 2.50, 15.0, 0.25),
    ),
    (
        "gemini-2.5-flash",
        "gemini/gemini-2.5-flash",
        per_million(0.30, 2.50, 0.03, 0.0),
    ),
    (
        "claude-opus-4-6",
        "claude-opus-4-6",
        per_million(5.0, 25.0, 0.50, 6.25),
    ),
    (
        "claude-opus-4-5",
        "claude-opus-4-5",
        per_million(5.0, 25.0, 0.50, 6.25),
    ),
    (
        "claude-opus-4-1",
        "anthropic.claude-opus-4-1-20250805-v1:0",
        per_million(15.0, 75.0, 1.50, 18.75),
    ),
    (
        "claude-sonnet-4-6",
        "claude-sonnet-4-6",
        per_million(3.0, 15.0, 0.30, 3.75),
    ),
    (
        "claude-sonnet-4-5",
        "claude-sonnet-4-5",
        per_million(3.0, 15.0, 0.30, 3.75),
    ),
    (
        "gpt-oss-120b",
        "vertex_ai/openai/gpt-oss-120b-maas",
        per_million(0.09, 0.36, 0.0, 0.0),
    ),
];

/// The prices in use: the built-in table, and a file's over it.
#[derive(Clone, Debug, Default)]
pub struct Prices {
    /// LiteLLM's entries from `--prices`, by key.
    file: BTreeMap<String, Price>,
}

impl Prices {
    /// The built-in table alone.
    pub fn built_in() -> Prices {
        Prices::default()
    }

    /// The built-in table under the entries of a LiteLLM-shaped file.
    pub fn with_file(path: &Path) -> Result<Prices> {
        let text = std::fs::read(path).map_err(|e| Error::io(path.display(), e))?;
        let json: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&text)
            .map_err(|e| Error::data(format!("{}: not a JSON object: {e}", path.display())))?;
        let mut file = BTreeMap::new();
        for (key, entry) in json {
            let field = |name: &str| entry.get(name).and_then(serde_json::Value::as_f64);
            let (Some(input), Some(output)) = (
                field("input_cost_per_token"),
                field("output_cost_per_token"),
            ) else {
                continue;
            };
            let cache_read = field("cache_read_input_token_cost").unwrap_or(0.0);
            let cache_write = field("cache_creation_input_token_cost").unwrap_or(0.0);
            let above_200k = field("input_cost_per_token_above_200k_tokens").map(|high_input| {
                [
                    high_input,
                    field("output_cost_per_token_above_200k_tokens").unwrap_or(output),
                    field("cache_read_input_token_cost_above_200k_tokens").unwrap_or(cache_read),
                    field("cache_creation_input_token_cost_above_200k_tokens")
                        .unwrap_or(cache_write),
                ]
            });
            file.insert(
                key,
                Price {
                    input,
                    output,
                    cache_read,
                    cache_write,
                    above_200k,
                },
            );
        }
        Ok(Prices { file })
    }

    /// The price of `model` (a name as agy gives it): the file's entry of
    /// that name, else of the built-in table's key for it (with or without
    /// a provider's prefix), else the built-in price; `None` when no one
    /// knows it.
    pub fn of(&self, model: &str) -> Option<Price> {
        let name = model.strip_prefix("models/").unwrap_or(model);
        if let Some(price) = self.file.get(name) {
            return Some(*price);
        }
        let (_, key, price) = BUILT_IN
            .iter()
            .find(|(start, ..)| starts_model(name, start))?;
        let bare = key.rsplit('/').next().unwrap_or(key);
        let keys = [
            key.to_string(),
            bare.to_string(),
            format!("gemini/{bare}"),
            format!("vertex_ai/{bare}"),
            format!("anthropic/{bare}"),
        ];
        let in_file = keys.iter().find_map(|k| self.file.get(k));
        Some(*in_file.unwrap_or(price))
    }

    /// What `tokens` of one request cost at `price`.
    pub fn cost(price: &Price, tokens: &Tokens) -> f64 {
        let prompt = tokens.input + tokens.cache_read;
        let [input, output, cache_read, cache_write] = match price.above_200k {
            Some(high) if prompt > 200_000 => high,
            _ => [
                price.input,
                price.output,
                price.cache_read,
                price.cache_write,
            ],
        };
        tokens.input as f64 * input
            + tokens.output as f64 * output
            + tokens.cache_read as f64 * cache_read
            + tokens.cache_write as f64 * cache_write
    }
}

/// Whether `name` is the model `start` names: it is `start`, or `start`
/// and a variant after a `-`.
fn starts_model(name: &str, start: &str) -> bool {
    name == start
        || name
            .strip_prefix(start)
            .is_some_and(|rest| rest.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_are_known_by_their_names_and_variants_only() {
        let prices = Prices::built_in();
        for name in [
            "gemini-3-pro",
            "gemini-3-pro-preview",
            "gemini-3-pro-high",
            "models/gemini-3-pro",
        ] {
            assert_eq!(prices.of(name).unwrap().input, 2.0 / 1e6, "{name}");
        }
        assert_eq!(prices.of("gemini-3-flash-agent").unwrap().output, 3.0 / 1e6);
        assert_eq!(
            prices.of("claude-opus-4-6-thinking").unwrap().cache_write,
            6.25 / 1e6
        );
        // A routing label, a name no list gives, a version not priced.
        for unknown in [
            "gemini-pro-default",
            "gemini-default",
            "gemini-3-proto",
            "model-1132",
            "gemini-4-pro",
        ] {
            assert_eq!(prices.of(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn a_long_prompt_is_charged_at_the_higher_rate_all_of_it() {
        let price = Prices::built_in().of("gemini-3-pro").unwrap();
        let short = Tokens {
            input: 100_000,
            output: 1_000,
            cache_read: 100_000,
            ..Tokens::default()
        };
        let cost = Prices::cost(&price, &short);
        assert!((cost - (0.2 + 0.012 + 0.02)).abs() < 1e-9, "{cost}");
        let long = Tokens {
            input: 100_001,
            ..short
        };
        let cost = Prices::cost(&price, &long);
        assert!((cost - (100_001.0 * 4e-6 + 1_000.0 * 18e-6 + 100_000.0 * 0.4e-6)).abs() < 1e-9);
    }

    #[test]
    fn a_file_in_litellms_shape_comes_first() {
        let dir = std::env::temp_dir().join(format!("agy-prices-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("prices.json");
        std::fs::write(
            &path,
            r#"{"gemini/gemini-3-flash-preview": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
                "my-model": {"input_cost_per_token": 3e-6, "output_cost_per_token": 4e-6, "cache_read_input_token_cost": 1e-7},
                "sample_spec": {"max_tokens": 1}}"#,
        )
        .unwrap();
        let prices = Prices::with_file(&path).unwrap();
        assert_eq!(prices.of("gemini-3-flash-a").unwrap().input, 1e-6);
        assert_eq!(prices.of("my-model").unwrap().cache_read, 1e-7);
        assert_eq!(prices.of("claude-sonnet-4-5").unwrap().input, 3.0 / 1e6);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
