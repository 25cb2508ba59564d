//! A handler's `if` permission rule (`Tool` or `Tool(pattern)`), matched
//! against a tool call as Claude Code matches its permission rules.

use serde_json::Value;

use crate::matcher::wildcard;

/// Evaluates a handler's `if` permission rule (`Tool` or `Tool(pattern)`)
/// against a tool call. For Bash the pattern is matched against each
/// subcommand (split on `&&`, `||`, `;`, `|`, leading `VAR=value` stripped),
/// `prefix:*` meaning "starts with prefix"; for file tools against the
/// absolute or project-relative `file_path`. Unparseable rules fail open.
pub fn if_rule_matches(rule: &str, tool_name: &str, tool_input: &Value, cwd: &str) -> bool {
    let rule = rule.trim();
    let (tool, pattern) = match rule.split_once('(') {
        Some((tool, rest)) => match rest.strip_suffix(')') {
            Some(pattern) => (tool.trim(), Some(pattern.trim())),
            None => return true,
        },
        None => (rule, None),
    };
    if tool != tool_name {
        return false;
    }
    let Some(pattern) = pattern else {
        return true;
    };
    let glob = |text: &str| -> bool {
        match pattern.strip_suffix(":*") {
            Some(prefix) => text == prefix || text.starts_with(&format!("{prefix} ")),
            None => wildcard(pattern, text),
        }
    };
    if let Some(command) = tool_input.get("command").and_then(Value::as_str) {
        return command
            .split("&&")
            .flat_map(|p| p.split("||"))
            .flat_map(|p| p.split(';'))
            .flat_map(|p| p.split('|'))
            .map(|sub| {
                let mut sub = sub.trim();
                while let Some((first, rest)) = sub.split_once(char::is_whitespace) {
                    let is_assignment = first.split_once('=').is_some_and(|(n, _)| {
                        !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                    });
                    if !is_assignment {
                        break;
                    }
                    sub = rest.trim_start();
                }
                sub.to_owned()
            })
            .any(|sub| glob(&sub));
    }
    if let Some(path) = tool_input.get("file_path").and_then(Value::as_str) {
        let relative = path
            .strip_prefix(cwd)
            .map(|r| r.trim_start_matches('/'))
            .unwrap_or(path);
        let pattern_rel = pattern.trim_start_matches("./");
        return wildcard(pattern, path) || wildcard(pattern_rel, relative);
    }
    true
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn if_rules() {
        let bash = json!({"command": "FOO=1 git push origin && echo ok"});
        assert!(if_rule_matches("Bash(git *)", "Bash", &bash, "/p"));
        assert!(if_rule_matches("Bash(git push:*)", "Bash", &bash, "/p"));
        assert!(!if_rule_matches("Bash(rm *)", "Bash", &bash, "/p"));
        assert!(!if_rule_matches("Edit(*.ts)", "Bash", &bash, "/p"));
        let edit = json!({"file_path": "/p/src/a.ts"});
        assert!(if_rule_matches("Edit(*.ts)", "Edit", &edit, "/p"));
        assert!(if_rule_matches("Edit(src/*)", "Edit", &edit, "/p"));
        assert!(!if_rule_matches("Edit(*.rs)", "Edit", &edit, "/p"));
    }
}
