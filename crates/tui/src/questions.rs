//! Questions put to the person at the terminal on someone else's behalf:
//! the model's `ask_user_question` (pick an option by its number, or type
//! an answer) and an MCP server's elicitation (a form, field by field, or
//! a URL to visit). Esc (then Enter) or Ctrl-C cancels either.

use std::collections::BTreeMap;

use dsh_seams::{ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest};
use dsh_tools::builtin::interaction::Question;
use serde_json::{Map, Value};

use crate::approval_prompt::{Read, TerminalApproval};
use crate::terminal::Tone;

/// Reads an answer to `question`: option numbers (several, comma-separated,
/// when it allows several) become their labels, anything else is the
/// person's own words. `None` for an empty line or a number out of range.
pub(crate) fn parse_pick(question: &Question, line: &str) -> Option<String> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let picks: Vec<&str> = line.split(',').map(str::trim).collect();
    let numbers: Option<Vec<usize>> = picks.iter().map(|p| p.parse::<usize>().ok()).collect();
    let Some(numbers) = numbers else {
        return Some(line.to_owned());
    };
    if numbers.len() > 1 && !question.multi_select {
        return None;
    }
    let labels: Option<Vec<&str>> = numbers
        .iter()
        .map(|n| {
            n.checked_sub(1)
                .and_then(|i| question.options.get(i))
                .map(|o| o.label.as_str())
        })
        .collect();
    labels.map(|labels| labels.join(", "))
}

/// One form field's value from what the person typed, by the field's JSON
/// schema type; `Err` says what is expected.
pub(crate) fn parse_field(schema: &Value, line: &str) -> Result<Value, String> {
    let line = line.trim();
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => match line {
            "y" | "Y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "N" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer y or n".to_owned()),
        },
        Some("integer") => line
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| "a whole number".to_owned()),
        Some("number") => line
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "a number".to_owned()),
        _ => {
            let allowed: Vec<&str> = schema
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if allowed.is_empty() || allowed.contains(&line) {
                Ok(Value::String(line.to_owned()))
            } else {
                Err(format!("one of: {}", allowed.join(", ")))
            }
        }
    }
}

impl TerminalApproval {
    /// `ask_user_question`: each question with its numbered options.
    pub(crate) async fn ask_here(
        &self,
        questions: &[Question],
    ) -> Option<BTreeMap<String, String>> {
        let mut answers = BTreeMap::new();
        for question in questions {
            self.term.lines(
                Tone::Warn,
                &format!("? {}: {}", question.header, question.question),
            );
            for (number, option) in question.options.iter().enumerate() {
                self.term.lines(
                    Tone::Plain,
                    &format!("  {} {} — {}", number + 1, option.label, option.description),
                );
            }
            let how = if question.multi_select {
                "  numbers separated by commas, or type your own answer; Esc cancels"
            } else {
                "  a number, or type your own answer; Esc cancels"
            };
            self.term.lines(Tone::Dim, how);
            let answer = loop {
                let line = match self.read("  answer: ").await {
                    Read::Line(line) if line.starts_with('\u{1b}') => return None,
                    Read::Line(line) => line,
                    Read::Cancelled => return None,
                };
                match parse_pick(question, &line) {
                    Some(answer) => break answer,
                    None => self.term.lines(Tone::Dim, how),
                }
            };
            self.term
                .lines(Tone::Good, &format!("  answered: {answer}"));
            answers.insert(question.question.clone(), answer);
        }
        Some(answers)
    }

    /// An MCP elicitation: answer (then the form's fields), decline or cancel.
    pub(crate) async fn elicit_here(&self, request: &ElicitationRequest) -> ElicitationAnswer {
        let cancel = ElicitationAnswer::bare(ElicitationAction::Cancel);
        self.term.lines(
            Tone::Warn,
            &format!("? MCP server {} asks: {}", request.server, request.message),
        );
        if let Some(url) = &request.url {
            self.term.lines(Tone::Plain, &format!("  open {url}"));
        }
        let first = match request.mode {
            ElicitationMode::Form => "  1 (y) answer",
            ElicitationMode::Url => "  1 (y) done: I finished there",
        };
        self.term.lines(Tone::Plain, first);
        self.term.lines(Tone::Plain, "  2 (n) decline");
        self.term.lines(Tone::Dim, "  Esc or Ctrl-C cancels");
        loop {
            let line = match self.read("  choice [1/2]: ").await {
                Read::Line(line) => line,
                Read::Cancelled => return cancel,
            };
            match line.trim() {
                "1" | "y" | "Y" | "yes" => break,
                "2" | "n" | "N" | "no" => {
                    self.term.lines(Tone::Bad, "  declined");
                    return ElicitationAnswer::bare(ElicitationAction::Decline);
                }
                _ if line.starts_with('\u{1b}') => return cancel,
                _ => self
                    .term
                    .lines(Tone::Dim, "  answer 1 or 2 (y, n); Esc cancels"),
            }
        }
        let Some(schema) = &request.requested_schema else {
            return ElicitationAnswer::bare(ElicitationAction::Accept);
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut content = Map::new();
        let empty = Map::new();
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        for (name, field) in properties {
            let title = field.get("title").and_then(Value::as_str).unwrap_or(name);
            let needed = required.contains(&name.as_str());
            if let Some(about) = field.get("description").and_then(Value::as_str) {
                self.term.lines(Tone::Dim, &format!("  {title}: {about}"));
            }
            let kind = field
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string");
            let prompt = format!(
                "  {title} ({kind}{}): ",
                if needed { "" } else { ", Enter skips" }
            );
            loop {
                let line = match self.read(&prompt).await {
                    Read::Line(line) if line.starts_with('\u{1b}') => return cancel,
                    Read::Line(line) => line,
                    Read::Cancelled => return cancel,
                };
                if line.trim().is_empty() && !needed {
                    break;
                }
                match parse_field(field, &line) {
                    Ok(value) => {
                        content.insert(name.clone(), value);
                        break;
                    }
                    Err(expected) => self
                        .term
                        .lines(Tone::Dim, &format!("  expected {expected}")),
                }
            }
        }
        self.term.lines(Tone::Good, "  answered");
        ElicitationAnswer {
            action: ElicitationAction::Accept,
            content: Some(Value::Object(content)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_tools::builtin::interaction::QuestionOption;
    use serde_json::json;

    fn question(multi_select: bool) -> Question {
        Question {
            question: "Which color?".into(),
            header: "Color".into(),
            options: ["Red", "Blue", "Green"]
                .into_iter()
                .map(|label| QuestionOption {
                    label: label.into(),
                    description: format!("{label} it is"),
                })
                .collect(),
            multi_select,
        }
    }

    #[test]
    fn numbers_pick_labels_and_words_are_the_persons_own() {
        assert_eq!(parse_pick(&question(false), " 2 ").as_deref(), Some("Blue"));
        assert_eq!(parse_pick(&question(false), "1,3"), None);
        assert_eq!(
            parse_pick(&question(true), "1, 3").as_deref(),
            Some("Red, Green")
        );
        assert_eq!(parse_pick(&question(false), "4"), None);
        assert_eq!(parse_pick(&question(false), "0"), None);
        assert_eq!(parse_pick(&question(false), ""), None);
        assert_eq!(
            parse_pick(&question(false), "teal, please").as_deref(),
            Some("teal, please")
        );
    }

    #[test]
    fn form_fields_follow_their_schema_type() {
        let boolean = json!({"type": "boolean"});
        assert_eq!(parse_field(&boolean, "y"), Ok(json!(true)));
        assert!(parse_field(&boolean, "maybe").is_err());
        assert_eq!(
            parse_field(&json!({"type": "integer"}), "42"),
            Ok(json!(42))
        );
        assert!(parse_field(&json!({"type": "integer"}), "4.2").is_err());
        assert_eq!(
            parse_field(&json!({"type": "number"}), "4.5"),
            Ok(json!(4.5))
        );
        assert_eq!(
            parse_field(&json!({"type": "string"}), " Ada "),
            Ok(json!("Ada"))
        );
        let choice = json!({"type": "string", "enum": ["low", "high"]});
        assert_eq!(parse_field(&choice, "high"), Ok(json!("high")));
        assert!(parse_field(&choice, "mid").is_err());
    }
}
