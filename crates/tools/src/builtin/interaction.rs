//! Tools that talk to the user: `ask_user_question` (Claude Code's
//! `AskUserQuestion`) and `exit_plan_mode` (`ExitPlanMode`).
//!
//! `ask_user_question` returns the answers its input carries (`answers`,
//! question text → chosen label, as Claude Code's hooks and approval
//! surfaces supply them through an updated input). Without answers it puts
//! the questions to the person through the session's approval surface (the
//! terminal's numbered options, an ACP permission request per question).
//! When nobody can answer (a headless run, a cancelled question) the call
//! fails with a text telling the model to state its assumption and go on.
//!
//! `exit_plan_mode` carries the plan. The permission stage asks the user to
//! approve it while the session is in plan mode, and ends plan mode when the
//! call succeeds; a rejected plan never reaches the tool.

use std::collections::BTreeSet;

use async_trait::async_trait;
use dsh_protocol::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{TypedTool, spec};
use crate::{Rendered, ToolContext, ToolError};

/// `ask_user_question`'s name.
pub const ASK: &str = "ask_user_question";
/// `exit_plan_mode`'s name.
pub const EXIT_PLAN: &str = "exit_plan_mode";

/// The model-facing text when nobody could answer the questions.
pub const NO_ANSWER_TEXT: &str = "No one could answer these questions: this session has no way to put questions to the user. Do not wait for an answer. Choose the option you think best, say which one and why, and continue.";

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// What the user picks.
    pub label: String,
    /// What picking it means.
    pub description: String,
}

/// One question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Question {
    /// The full question.
    pub question: String,
    /// A short label (a dozen characters) shown as its heading.
    pub header: String,
    /// Two to four options.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskArgs {
    questions: Vec<Question>,
    #[serde(default)]
    answers: Option<std::collections::BTreeMap<String, GivenAnswer>>,
}

/// An answer as a hook or an approval surface supplies it.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum GivenAnswer {
    /// One label, or the person's own words.
    One(String),
    /// Several labels (joined with `, `).
    Several(Vec<String>),
    /// Anything else, kept as its JSON text.
    Other(serde_json::Value),
}

/// `ask_user_question`'s value: Claude Code's `AskUserQuestion` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskOutput {
    /// The questions asked.
    pub questions: Vec<Question>,
    /// Question text → the chosen label(s), comma-separated for several.
    pub answers: std::collections::BTreeMap<String, String>,
}

/// The `ask_user_question` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct AskUserQuestionTool;

fn check_questions(questions: &[Question]) -> Result<(), ToolError> {
    if questions.is_empty() || questions.len() > 4 {
        return Err(ToolError(format!(
            "{ASK}: ask one to four questions, not {}",
            questions.len()
        )));
    }
    let mut seen = BTreeSet::new();
    for question in questions {
        if !seen.insert(question.question.as_str()) {
            return Err(ToolError(format!(
                "{ASK}: the question `{}` is asked twice",
                question.question
            )));
        }
        if question.options.len() < 2 || question.options.len() > 4 {
            return Err(ToolError(format!(
                "{ASK}: `{}` needs two to four options, not {}",
                question.question,
                question.options.len()
            )));
        }
    }
    Ok(())
}

#[async_trait]
impl TypedTool for AskUserQuestionTool {
    const NAME: &'static str = ASK;
    type Args = AskArgs;
    type Output = AskOutput;

    fn describe(&self) -> ToolSpec {
        let option = json!({
            "type": "object",
            "properties": {
                "label": {"type": "string", "description": "The choice, in a few words."},
                "description": {"type": "string", "description": "What choosing it means."}
            },
            "required": ["label", "description"]
        });
        spec(
            ASK,
            "Asks the user one to four multiple-choice questions and returns the answers. The \
             user may also answer in their own words. Fails when nobody can answer.",
            json!({
                "questions": {
                    "type": "array",
                    "description": "One to four questions.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string", "description": "The full question, ending with a question mark."},
                            "header": {"type": "string", "description": "A very short label for the question."},
                            "options": {"type": "array", "items": option, "description": "Two to four options."},
                            "multiSelect": {"type": "boolean", "description": "Whether several options may be chosen."}
                        },
                        "required": ["question", "header", "options"]
                    }
                },
                "answers": {"type": "object", "description": "Filled in by dsh with the user's answers; leave it out."}
            }),
            &["questions"],
        )
    }

    async fn call(&self, ctx: &ToolContext, args: AskArgs) -> Result<AskOutput, ToolError> {
        check_questions(&args.questions)?;
        let Some(given) = args.answers.filter(|answers| !answers.is_empty()) else {
            // Nobody answered through the input: ask the person, if the
            // session has one.
            return match ctx.ask_questions(&args.questions).await {
                Some(answers) => Ok(AskOutput {
                    questions: args.questions,
                    answers,
                }),
                None => Err(ToolError(NO_ANSWER_TEXT.to_owned())),
            };
        };
        let answers = given
            .into_iter()
            .map(|(question, answer)| {
                let answer = match answer {
                    GivenAnswer::One(text) => text,
                    GivenAnswer::Several(labels) => labels.join(", "),
                    GivenAnswer::Other(other) => other.to_string(),
                };
                (question, answer)
            })
            .collect();
        Ok(AskOutput {
            questions: args.questions,
            answers,
        })
    }

    fn show(&self, output: AskOutput) -> Result<Rendered, ToolError> {
        let lines: Vec<String> = output
            .questions
            .iter()
            .map(|question| {
                let answer = output
                    .answers
                    .get(&question.question)
                    .map_or("(no answer)", String::as_str);
                format!("\"{}\" = \"{answer}\"", question.question)
            })
            .collect();
        Ok(Rendered {
            content: format!(
                "The user answered:\n{}\nGo on with these answers in mind.",
                lines.join("\n")
            ),
            is_error: false,
        })
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlanArgs {
    plan: String,
}

/// `exit_plan_mode`'s value: Claude Code's `ExitPlanMode` output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PlanOutput {
    /// The plan the user approved.
    pub plan: String,
    /// Whether a subagent proposed it (dsh's subagents have no plan mode).
    pub is_agent: bool,
}

/// The `exit_plan_mode` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPlanModeTool;

#[async_trait]
impl TypedTool for ExitPlanModeTool {
    const NAME: &'static str = EXIT_PLAN;
    type Args = PlanArgs;
    type Output = PlanOutput;

    fn describe(&self) -> ToolSpec {
        spec(
            EXIT_PLAN,
            "In plan mode: presents the plan to the user for approval. When the user approves, \
             plan mode ends and you may start the changes; when they reject it, revise the plan \
             with their feedback.",
            json!({
                "plan": {"type": "string", "description": "The plan, in Markdown: the steps, the files involved, how the result will be checked."}
            }),
            &["plan"],
        )
    }

    async fn call(&self, _ctx: &ToolContext, args: PlanArgs) -> Result<PlanOutput, ToolError> {
        if args.plan.trim().is_empty() {
            return Err(ToolError(format!("{EXIT_PLAN}: the plan is empty")));
        }
        Ok(PlanOutput {
            plan: args.plan,
            is_agent: false,
        })
    }

    fn show(&self, _output: PlanOutput) -> Result<Rendered, ToolError> {
        Ok(Rendered {
            content: "The user approved the plan and plan mode has ended. Start on it now, \
                      keeping to the plan."
                .to_owned(),
            is_error: false,
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;
    use crate::Tool;
    use serde_json::Value;
    use tokio_util::sync::CancellationToken;

    fn ctx() -> ToolContext {
        ToolContext::new("/", CancellationToken::new())
    }

    fn question() -> Value {
        json!({"question": "Which database?", "header": "Database", "options": [
            {"label": "SQLite", "description": "a file"},
            {"label": "Postgres", "description": "a server"}]})
    }

    #[tokio::test]
    async fn without_answers_the_model_is_told_to_go_on() {
        let err = AskUserQuestionTool
            .run(&ctx(), &json!({"questions": [question()]}))
            .await
            .unwrap_err();
        assert_eq!(err.0, NO_ANSWER_TEXT);
    }

    #[tokio::test]
    async fn supplied_answers_are_returned_and_rendered() {
        let value = AskUserQuestionTool
            .run(
                &ctx(),
                &json!({"questions": [question()], "answers": {"Which database?": "SQLite"}}),
            )
            .await
            .unwrap();
        assert_eq!(value["answers"], json!({"Which database?": "SQLite"}));
        let rendered = AskUserQuestionTool.render(&value).unwrap();
        assert_eq!(
            rendered.content,
            "The user answered:\n\"Which database?\" = \"SQLite\"\nGo on with these answers in mind."
        );
    }

    #[tokio::test]
    async fn malformed_questions_are_refused() {
        let one_option = json!({"question": "Q?", "header": "Q", "options": [
            {"label": "a", "description": "a"}]});
        for (args, expected) in [
            (json!({"questions": []}), "one to four questions"),
            (json!({"questions": [one_option]}), "two to four options"),
            (
                json!({"questions": [question(), question()]}),
                "asked twice",
            ),
        ] {
            let err = AskUserQuestionTool.run(&ctx(), &args).await.unwrap_err();
            assert!(err.0.contains(expected), "{args}: {err}");
        }
    }

    #[tokio::test]
    async fn exit_plan_mode_returns_the_plan() {
        let value = ExitPlanModeTool
            .run(&ctx(), &json!({"plan": "1. do it"}))
            .await
            .unwrap();
        assert_eq!(value, json!({"plan": "1. do it", "isAgent": false}));
        assert!(
            ExitPlanModeTool
                .run(&ctx(), &json!({"plan": " "}))
                .await
                .is_err()
        );
    }
}
