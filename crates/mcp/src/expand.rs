//! `${VAR}` and `${VAR:-default}` in Claude Code's MCP configuration.
//!
//! Claude Code expands these in a server's `command`, `args`, `env` values,
//! `url` and `headers` (dsh reads all but `headers`). A variable that is unset (and has no default) stays
//! as written and makes the entry unusable: the server is reported with the
//! missing names instead of being started with a broken command line. A
//! bare `$VAR` is not expanded, nor is a `${` without its closing brace.

use dsh_hook_runner::vars::{self, Forms};

/// What one entry's expansion ran into.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    missing: Vec<String>,
}

impl Expansion {
    /// The entry's problem, if any variable was missing.
    pub(crate) fn problem(&self) -> Option<String> {
        if self.missing.is_empty() {
            None
        } else {
            Some(format!(
                "missing environment variables: {}",
                self.missing.join(", ")
            ))
        }
    }
}

/// Expands every `${…}` in `text` (through dsh's one expander,
/// [`dsh_hook_runner::vars`], with bare names off and defaults on).
pub(crate) fn expand(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
    expansion: &mut Expansion,
) -> String {
    let forms = Forms {
        bare: false,
        defaults: true,
        tilde: false,
    };
    let expanded = vars::expand(text, forms, env);
    for name in expanded.unset {
        if !expansion.missing.contains(&name) {
            expansion.missing.push(name);
        }
    }
    expanded.text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn run(text: &str) -> (String, Option<String>) {
        let mut expansion = Expansion::default();
        let out = expand(text, &env, &mut expansion);
        (out, expansion.problem())
    }

    #[test]
    fn expands_set_variables_and_defaults() {
        assert_eq!(run("${HOME}/x").0, "/home/u/x");
        assert_eq!(run("${NOPE:-dflt}/${HOME:-z}").0, "dflt//home/u");
        // A set but empty variable is used as it is.
        assert_eq!(run("a${EMPTY:-d}b").0, "ab");
    }

    #[test]
    fn leaves_other_dollar_forms_alone() {
        assert_eq!(run("$HOME ${unclosed").0, "$HOME ${unclosed");
        assert_eq!(run("$$ $${HOME}").0, "$$ $/home/u");
    }

    #[test]
    fn reports_every_missing_variable_once() {
        let (out, problem) = run("${A}/${B}/${A}/${C:-c}");
        assert_eq!(out, "${A}/${B}/${A}/c");
        assert_eq!(
            problem.as_deref(),
            Some("missing environment variables: A, B")
        );
    }
}
