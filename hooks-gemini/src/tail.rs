//! What an AfterTool `tailToolCallRequest` comes to, as Gemini CLI 0.61's
//! scheduler treats it (`at_tail_*` captures in `fixtures/gemini/`).
//!
//! Gemini looks the name up among its tools first, then checks the
//! arguments against the tool's parameters; either failure is the call's
//! error result in place of the original one (the model's
//! `functionResponse` keeps the original call's name and id), and no
//! BeforeTool or AfterTool fires for the refused call. A name that is
//! missing, `null` or an array makes Gemini's `Did you mean` suggestion
//! throw, and the whole run fails: dsh ends the turn instead, saying why.

use serde_json::Map;

use crate::output::{TailArgs, TailCall, TailName};
use crate::tools;

/// What a tail call request comes to.
#[derive(Debug, Clone, PartialEq)]
pub enum TailOutcome {
    /// The tool runs next: dsh's tool name and the arguments under dsh's
    /// names.
    Run {
        /// dsh's tool.
        tool: String,
        /// Its arguments.
        arguments: serde_json::Value,
        /// The name the request gave, which the tail call's BeforeTool and
        /// AfterTool hooks see (a legacy name stays legacy).
        name: String,
    },
    /// Gemini refuses the call: the model gets this error text in place of
    /// the original result.
    Refused(String),
    /// Gemini's run fails here: dsh ends the turn with this text.
    Fails(String),
}

/// The text dsh ends the turn with when a tail call request names no tool.
pub const UNNAMED_TAIL: &str = "Agent execution stopped: an AfterTool hook's tailToolCallRequest \
     has no usable `name` (missing, null or an array; Gemini CLI 0.61 fails the whole run with a \
     TypeError here)";

/// `tail` over the tools the model was offered, under Gemini's names and
/// in the request's order (empty: not known, and any name is tried).
pub fn resolve(tail: &TailCall, offered: &[String]) -> TailOutcome {
    let name = match &tail.name {
        TailName::Unusable => return TailOutcome::Fails(UNNAMED_TAIL.to_owned()),
        TailName::Printed(printed) => {
            return TailOutcome::Refused(not_found(printed, &first(offered)));
        }
        TailName::Named(name) => name,
    };
    // Gemini looks the name up, then its legacy alias.
    let found = if offered.contains(name) {
        name.as_str()
    } else {
        current_name(name)
    };
    if !offered.is_empty() && !offered.iter().any(|tool| tool == found) {
        return TailOutcome::Refused(not_found(name, &closest(name, offered)));
    }
    let args = match &tail.args {
        TailArgs::NotObject => {
            return TailOutcome::Refused("Value of params must be an object".to_owned());
        }
        TailArgs::Array => return TailOutcome::Refused("params must be object".to_owned()),
        TailArgs::Object(args) => args.clone().into(),
    };
    if let Err(problem) = tools::validate_tool_input(found, &args) {
        return TailOutcome::Refused(problem);
    }
    let tool = tools::dsh_tool_name(found).to_owned();
    let arguments = tools::arguments_from_tool_input(&tool, &Map::new().into(), &args);
    TailOutcome::Run {
        tool,
        arguments,
        name: name.clone(),
    }
}

/// Gemini's former tool names, which it still resolves to the current
/// ones (`TOOL_LEGACY_ALIASES`): a tail call naming `search_file_content`
/// runs `grep_search`, and its hooks see `search_file_content`
/// (`at_tail_name_legacy`).
const LEGACY_NAMES: [(&str, &str); 1] = [("search_file_content", "grep_search")];

/// The current name of a legacy one; any other name as it is.
fn current_name(name: &str) -> &str {
    LEGACY_NAMES
        .iter()
        .find(|(legacy, _)| *legacy == name)
        .map_or(name, |(_, current)| current)
}

/// Gemini's error for a name no tool has, with its suggestion.
fn not_found(name: &str, suggested: &[&str]) -> String {
    let quoted: Vec<String> = suggested.iter().map(|name| format!("\"{name}\"")).collect();
    let suggestion = match quoted.as_slice() {
        [] => String::new(),
        [one] => format!(" Did you mean {one}?"),
        many => format!(" Did you mean one of: {}?", many.join(", ")),
    };
    format!("Tool \"{name}\" not found.{suggestion}")
}

/// How many tools Gemini suggests.
const SUGGESTED: usize = 3;

/// The first tools in order (Gemini measures no distance to a name that
/// is not a string, and its stable sort keeps the order).
fn first(offered: &[String]) -> Vec<&str> {
    offered.iter().take(SUGGESTED).map(String::as_str).collect()
}

/// The tools closest to `name` by edit distance, ties in order.
fn closest<'a>(name: &str, offered: &'a [String]) -> Vec<&'a str> {
    let mut ranked: Vec<(usize, &str)> = offered
        .iter()
        .map(|tool| (levenshtein(name, tool), tool.as_str()))
        .collect();
    ranked.sort_by_key(|(distance, _)| *distance);
    ranked
        .into_iter()
        .take(SUGGESTED)
        .map(|(_, tool)| tool)
        .collect()
}

/// Edit distance over UTF-16 code units, as npm `fast-levenshtein`
/// measures it.
fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<u16> = a.encode_utf16().collect();
    let b: Vec<u16> = b.encode_utf16().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, unit) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, other) in b.iter().enumerate() {
            let replace = previous[j] + usize::from(unit != other);
            current.push(replace.min(current[j] + 1).min(previous[j + 1] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    /// The tools Gemini CLI 0.61 declared, in order
    /// (`a_baseline_all_events/tools.json` in the reference).
    const GEMINI_TOOLS: [&str; 15] = [
        "update_topic",
        "list_directory",
        "read_file",
        "grep_search",
        "glob",
        "replace",
        "write_file",
        "web_fetch",
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
        "google_web_search",
        "enter_plan_mode",
        "invoke_agent",
        "activate_skill",
    ];

    /// The tools Gemini CLI 0.61 declared to its `generalist` subagent, in
    /// order (`at_tail_subagent_main_only/model.json`): the main agent's
    /// without `update_topic` and `invoke_agent`, with `complete_task`.
    const SUBAGENT_TOOLS: [&str; 14] = [
        "list_directory",
        "read_file",
        "grep_search",
        "glob",
        "replace",
        "write_file",
        "web_fetch",
        "run_shell_command",
        "list_background_processes",
        "read_background_output",
        "google_web_search",
        "enter_plan_mode",
        "activate_skill",
        "complete_task",
    ];

    fn gemini_tools() -> Vec<String> {
        GEMINI_TOOLS.map(str::to_owned).to_vec()
    }

    fn tail(answer: serde_json::Value) -> TailCall {
        let output = json!({"hookSpecificOutput": {"tailToolCallRequest": answer}});
        let read = crate::output::interpret(
            (&dsh_hook_runner::HookExit::Exited(0), 0),
            &output.to_string(),
            "",
        );
        read.tail_call.given().cloned().unwrap()
    }

    fn refused(text: &str) -> TailOutcome {
        TailOutcome::Refused(text.to_owned())
    }

    /// The model-facing texts of the `at_tail_*` captures, over Gemini's
    /// own tool list.
    #[test]
    fn gemini_refuses_a_tail_call_with_its_own_texts() {
        let tools = gemini_tools();
        let suggestion = r#" Did you mean one of: "update_topic", "list_directory", "read_file"?"#;
        for (answer, outcome) in [
            (
                json!({"name": "read_file", "args": null}),
                refused("Value of params must be an object"),
            ),
            (
                json!({"name": "read_file"}),
                refused("Value of params must be an object"),
            ),
            (
                json!({"name": "read_file", "args": "notes.txt"}),
                refused("Value of params must be an object"),
            ),
            (
                json!({"name": "read_file", "args": ["notes.txt"]}),
                refused("params must be object"),
            ),
            (
                json!({"name": "read_file", "args": {}}),
                refused("params must have required property 'file_path'"),
            ),
            (
                json!({"name": "no_such_tool", "args": {}}),
                refused(&format!("Tool \"no_such_tool\" not found.{suggestion}")),
            ),
            (
                json!({"name": 5, "args": {"file_path": "notes.txt"}}),
                refused(&format!("Tool \"5\" not found.{suggestion}")),
            ),
            (
                json!({"name": {}, "args": {"file_path": "notes.txt"}}),
                refused(&format!("Tool \"[object Object]\" not found.{suggestion}")),
            ),
            // `at_tail_name_empty_array`: `[]` is `""` to Gemini, and the
            // suggestion is the shortest names.
            (
                json!({"name": [], "args": {"file_path": "notes.txt"}}),
                refused(
                    r#"Tool "" not found. Did you mean one of: "glob", "replace", "read_file"?"#,
                ),
            ),
        ] {
            assert_eq!(resolve(&tail(answer.clone()), &tools), outcome, "{answer}");
        }
    }

    /// `at_tail_subagent_main_only`: inside a subagent, Gemini looks the
    /// name up among the subagent's tools, and suggests from them.
    #[test]
    fn a_subagents_tail_call_is_checked_against_the_subagents_tools() {
        let subagent = SUBAGENT_TOOLS.map(str::to_owned).to_vec();
        let answer = json!({"name": "update_topic", "args": {}});
        assert_eq!(
            resolve(&tail(answer), &subagent),
            refused(
                r#"Tool "update_topic" not found. Did you mean one of: "write_file", "complete_task", "read_file"?"#
            )
        );
    }

    #[test]
    fn a_tail_call_without_a_usable_name_fails_the_run() {
        for answer in [
            json!({"args": {"file_path": "notes.txt"}}),
            json!({"name": null, "args": {"file_path": "notes.txt"}}),
            json!({"name": ["read_file"], "args": {"file_path": "notes.txt"}}),
            json!({}),
        ] {
            assert_eq!(
                resolve(&tail(answer.clone()), &gemini_tools()),
                TailOutcome::Fails(UNNAMED_TAIL.to_owned()),
                "{answer}"
            );
        }
    }

    #[test]
    fn a_valid_tail_call_runs_under_dshs_names() {
        let answer = json!({"name": "read_file", "args": {"file_path": "a.txt", "start_line": 2}});
        assert_eq!(
            resolve(&tail(answer), &gemini_tools()),
            TailOutcome::Run {
                tool: "read".to_owned(),
                arguments: json!({"file_path": "a.txt", "offset": 2}),
                name: "read_file".to_owned(),
            }
        );
        // The offered tools unknown: the name is tried.
        let answer = json!({"name": "glob", "args": {"pattern": "*.rs"}});
        assert_eq!(
            resolve(&tail(answer), &[]),
            TailOutcome::Run {
                tool: "glob".to_owned(),
                arguments: json!({"pattern": "*.rs"}),
                name: "glob".to_owned(),
            }
        );
        // `at_tail_name_legacy`: a legacy name runs the current tool, and
        // keeps its name for the hooks; unless the current tool is not
        // offered.
        let answer = json!({"name": "search_file_content", "args": {"pattern": "alpha"}});
        let grep = TailOutcome::Run {
            tool: "grep".to_owned(),
            arguments: json!({"pattern": "alpha"}),
            name: "search_file_content".to_owned(),
        };
        assert_eq!(resolve(&tail(answer.clone()), &gemini_tools()), grep);
        assert_eq!(resolve(&tail(answer.clone()), &[]), grep);
        let shell = ["run_shell_command".to_owned()];
        assert_eq!(
            resolve(&tail(answer), &shell),
            refused(r#"Tool "search_file_content" not found. Did you mean "run_shell_command"?"#)
        );
    }

    #[test]
    fn suggestions_are_the_closest_names_ties_in_order() {
        let tools: Vec<String> = ["read", "bash", "grep"].map(str::to_owned).to_vec();
        assert_eq!(closest("bsh", &tools), ["bash", "read", "grep"]);
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(
            not_found("x", &["a"]),
            r#"Tool "x" not found. Did you mean "a"?"#
        );
        assert_eq!(not_found("x", &[]), r#"Tool "x" not found."#);
    }
}
