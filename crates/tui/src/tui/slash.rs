//! Slash commands typed at the prompt: parsing, the command table (which
//! `/help` and completion read) and "did you mean" suggestions.
//!
//! A line is a command when it starts with `/` followed by a name; `/` with
//! a path after it (`/tmp/x is full`) is sent as a prompt, as in Claude Code.

/// One command in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandInfo {
    /// `/name`.
    pub name: &'static str,
    /// Arguments, for `/help`.
    pub usage: &'static str,
    /// One line for `/help` and the completion menu.
    pub about: &'static str,
}

/// Every command, in `/help` order.
pub const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        name: "/help",
        usage: "",
        about: "list the commands and keys",
    },
    CommandInfo {
        name: "/status",
        usage: "",
        about: "model, session, context used, permission mode",
    },
    CommandInfo {
        name: "/cost",
        usage: "",
        about: "tokens in, out and cached, and their cost, for the last turn and the session",
    },
    CommandInfo {
        name: "/mode",
        usage: "[NAME]",
        about: "the permission mode; Shift-Tab cycles default, acceptEdits, plan",
    },
    CommandInfo {
        name: "/hooks",
        usage: "[trust|untrust [SELECTOR…]]",
        about: "the hooks with their trust state; trust or untrust project hooks",
    },
    CommandInfo {
        name: "/permissions",
        usage: "",
        about: "permission mode and rules",
    },
    CommandInfo {
        name: "/model",
        usage: "",
        about: "the model this session talks to",
    },
    CommandInfo {
        name: "/clear",
        usage: "",
        about: "start a new session (new id, empty context, usage from zero)",
    },
    CommandInfo {
        name: "/resume",
        usage: "[ID]",
        about: "pick one of this directory's sessions, or switch to ID",
    },
    CommandInfo {
        name: "/compact",
        usage: "",
        about: "summarize the conversation to free context",
    },
    CommandInfo {
        name: "/add-dir",
        usage: "PATH",
        about: "add a working directory for this session (DirectoryAdded hooks fire)",
    },
    CommandInfo {
        name: "/mcp",
        usage: "",
        about: "MCP servers and their tools",
    },
    CommandInfo {
        name: "/last",
        usage: "",
        about: "the full text of the last hook or tool outcome",
    },
    CommandInfo {
        name: "/verbose",
        usage: "",
        about: "show every hook run and hook context, or hide them again (Ctrl-O)",
    },
    CommandInfo {
        name: "/exit",
        usage: "",
        about: "end the session (also Ctrl-D)",
    },
];

/// Which `/hooks` action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HooksAction {
    /// List hooks and their trust state.
    List,
    /// Trust project hooks (all untrusted, or those matching a selector).
    Trust(Vec<String>),
    /// Forget trust.
    Untrust(Vec<String>),
}

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    /// `/help`.
    Help,
    /// `/status`.
    Status,
    /// `/hooks …`.
    Hooks(HooksAction),
    /// `/permissions`.
    Permissions,
    /// `/model [NAME]`.
    Model(Option<String>),
    /// `/clear`.
    Clear,
    /// `/resume [ID]`.
    Resume(Option<String>),
    /// `/compact [instructions]`.
    Compact(Option<String>),
    /// `/mcp`.
    Mcp,
    /// `/last`.
    Last,
    /// `/cost`.
    Cost,
    /// `/mode [NAME]`: `None` cycles (Shift-Tab).
    Mode(Option<String>),
    /// `/add-dir PATH`.
    AddDir(Option<String>),
    /// `/verbose` (Ctrl-O).
    Verbose,
    /// `/exit`, `/quit`.
    Exit,
}

/// What a prompt line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// Not a command: send it to the model.
    Prompt,
    /// A command.
    Command(SlashCommand),
    /// `/name` that is no command; the closest one, if any is close.
    Unknown {
        /// What was typed.
        name: String,
        /// The suggestion.
        suggestion: Option<&'static str>,
    },
    /// A command with arguments it does not take.
    Usage(&'static CommandInfo),
}

/// Reads a prompt line.
pub fn parse(line: &str) -> Parsed {
    let text = line.trim();
    let Some(rest) = text.strip_prefix('/') else {
        return Parsed::Prompt;
    };
    let (name, args) = match rest.split_once(char::is_whitespace) {
        Some((name, args)) => (name, args.trim()),
        None => (rest, ""),
    };
    // `/tmp/x …` or `/` alone: a prompt that starts with a path.
    if name.is_empty() || name.contains('/') {
        return Parsed::Prompt;
    }
    let arg = (!args.is_empty()).then(|| args.to_owned());
    let words: Vec<String> = args.split_whitespace().map(str::to_owned).collect();
    let command = match name {
        "help" | "?" => SlashCommand::Help,
        "status" => SlashCommand::Status,
        "hooks" => match words.split_first() {
            None => SlashCommand::Hooks(HooksAction::List),
            Some((first, rest)) if first == "list" && rest.is_empty() => {
                SlashCommand::Hooks(HooksAction::List)
            }
            Some((first, rest)) if first == "trust" => {
                SlashCommand::Hooks(HooksAction::Trust(rest.to_vec()))
            }
            Some((first, rest)) if first == "untrust" => {
                SlashCommand::Hooks(HooksAction::Untrust(rest.to_vec()))
            }
            Some(_) => return usage("/hooks"),
        },
        "permissions" if arg.is_none() => SlashCommand::Permissions,
        "model" => SlashCommand::Model(arg),
        "clear" if arg.is_none() => SlashCommand::Clear,
        "resume" => SlashCommand::Resume(arg),
        "compact" => SlashCommand::Compact(arg),
        "mcp" => SlashCommand::Mcp,
        "last" if arg.is_none() => SlashCommand::Last,
        "cost" if arg.is_none() => SlashCommand::Cost,
        "verbose" if arg.is_none() => SlashCommand::Verbose,
        "mode" => SlashCommand::Mode(arg),
        "add-dir" => SlashCommand::AddDir(arg),
        "exit" | "quit" => SlashCommand::Exit,
        "permissions" | "clear" | "last" | "cost" | "verbose" => {
            return usage(&format!("/{name}"));
        }
        other => {
            return Parsed::Unknown {
                name: format!("/{other}"),
                suggestion: suggest(other),
            };
        }
    };
    Parsed::Command(command)
}

fn usage(name: &str) -> Parsed {
    match COMMANDS.iter().find(|command| command.name == name) {
        Some(info) => Parsed::Usage(info),
        None => Parsed::Prompt,
    }
}

/// The command closest to `name` (without its `/`), when it is close
/// enough to be what was meant: an edit distance of at most 2, or a prefix.
pub fn suggest(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    COMMANDS
        .iter()
        .map(|command| {
            let bare = &command.name[1..];
            let distance = if bare.starts_with(&name) && !name.is_empty() {
                0
            } else {
                strsim::damerau_levenshtein(&name, bare)
            };
            (distance, command.name)
        })
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

/// The `/help` text.
pub fn help() -> String {
    let mut text = String::from("Commands:\n");
    for command in COMMANDS {
        let call = if command.usage.is_empty() {
            command.name.to_owned()
        } else {
            format!("{} {}", command.name, command.usage)
        };
        text.push_str(&format!("  {call:<38} {}\n", command.about));
    }
    text.push_str(
        "Keys: Enter sends · Alt-Enter or a trailing \\ starts a new line · ↑/↓ history · \
         Ctrl-R searches history · Tab completes /commands and @paths · Ctrl-O shows every hook run \
         (and the last outcome in full) or hides them again · Shift-Tab cycles the permission \
         mode · Ctrl-C interrupts a turn (twice at the prompt exits) · Ctrl-D exits\n",
    );
    text.push_str("@path in a prompt attaches that file (or directory listing) for the model.");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(parse("/help"), Parsed::Command(SlashCommand::Help));
        assert_eq!(parse("  /exit "), Parsed::Command(SlashCommand::Exit));
        assert_eq!(parse("/quit"), Parsed::Command(SlashCommand::Exit));
        assert_eq!(
            parse("/hooks trust guard.sh"),
            Parsed::Command(SlashCommand::Hooks(HooksAction::Trust(vec![
                "guard.sh".to_owned()
            ])))
        );
        assert_eq!(
            parse("/resume 3c9a"),
            Parsed::Command(SlashCommand::Resume(Some("3c9a".to_owned())))
        );
        assert_eq!(parse("/model"), Parsed::Command(SlashCommand::Model(None)));
        assert!(matches!(parse("/clear now"), Parsed::Usage(info) if info.name == "/clear"));
        assert!(matches!(parse("/hooks frobnicate"), Parsed::Usage(info) if info.name == "/hooks"));
    }

    #[test]
    fn paths_and_plain_text_are_prompts() {
        assert_eq!(parse("/tmp/build is full, clean it"), Parsed::Prompt);
        assert_eq!(parse("/"), Parsed::Prompt);
        assert_eq!(parse("hello /help"), Parsed::Prompt);
    }

    #[test]
    fn unknown_commands_get_the_nearest_one() {
        assert_eq!(
            parse("/hlep"),
            Parsed::Unknown {
                name: "/hlep".to_owned(),
                suggestion: Some("/help")
            }
        );
        assert_eq!(suggest("perm"), Some("/permissions"));
        assert_eq!(suggest("stauts"), Some("/status"));
        assert_eq!(suggest("xyzzyplugh"), None);
    }

    #[test]
    fn help_names_every_command() {
        let text = help();
        for command in COMMANDS {
            assert!(text.contains(command.name), "{}", command.name);
        }
    }
}
