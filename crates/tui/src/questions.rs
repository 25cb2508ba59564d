//! Questions put to the person at the terminal on someone else's behalf:
//! the model's `ask_user_question` (pick an option by its number, or type
//! an answer) and an MCP server's elicitation (a form, field by field, or
//! a URL to visit). Esc (then Enter) or Ctrl-C cancels either.

use std::collections::BTreeMap;

use dsh_seams::{ElicitationAction, ElicitationAnswer, ElicitationMode, ElicitationRequest};
use dsh_tools::builtin::interaction::Question;

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
        let mut content = serde_json::Map::new();
        for field in request.form_fields() {
            if let Some(about) = &field.description {
                self.term
                    .lines(Tone::Dim, &format!("  {}: {about}", field.title));
            }
            let prompt = format!(
                "  {} ({}{}): ",
                field.title,
                field.kind.as_str(),
                if field.required { "" } else { ", Enter skips" }
            );
            loop {
                let line = match self.read(&prompt).await {
                    Read::Line(line) if line.starts_with('\u{1b}') => return cancel,
                    Read::Line(line) => line,
                    Read::Cancelled => return cancel,
                };
                if line.trim().is_empty() && !field.required {
                    break;
                }
                match field.read(&line) {
                    Ok(value) => {
                        content.insert(field.name.clone(), value);
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
            content: Some(content.into()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use dsh_tools::builtin::interaction::QuestionOption;

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
}
