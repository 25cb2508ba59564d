//! The programs that run code given to them as arguments: shells
//! (`sh -c`, `bash script`, a shell reading a here-string), `sed` scripts,
//! builtins that take variable names or arithmetic (`test -v`, `printf -v`,
//! `read`, `declare`, `let`), `git -c` settings that name a command, and
//! `find -exec`. Each becomes more walked code, write redirections, or an
//! opaque mark on the line.

use super::Walker;
use crate::{Command, Redirect, RedirectKind, Word, join};

impl Walker {
    /// Programs that run code given as an argument.
    pub(crate) fn programs(&mut self, cmd: &mut Command) {
        let argv: Vec<Word> = cmd.argv().to_vec();
        let Some(name) = argv.first().and_then(|w| w.value.clone()) else {
            return;
        };
        let base = name.rsplit('/').next().unwrap_or(&name);
        let args = argv.get(1..).unwrap_or_default();
        match base {
            "eval" => {
                self.opaque("it runs `eval`");
                // Still parse a static string so deny rules see into it.
                if args.iter().all(|w| !w.is_dynamic()) {
                    let code = join(args, |w| w.text().to_owned());
                    self.code(&code);
                }
            }
            "source" | "." => {
                self.opaque(format!("it runs `{base}` on a script"));
                // `. <(echo CODE)`: what it sources is that output.
                if let Some((_, text)) = cmd.fed.iter().find(|(at, _)| *at == cmd.program + 1) {
                    let text = text.clone();
                    self.code(&text);
                }
            }
            "git" if self.git_config(args) => {
                cmd.evaluates
                    .push("a `git -c` setting names a command git runs".to_owned());
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "posh" | "yash" | "hush" => {
                self.shell(cmd, base, args);
            }
            "find" => self.find_exec(args),
            "sed" => self.sed(cmd, args),
            "test" | "[" | "printf" | "read" | "declare" | "typeset" | "local" | "export"
            | "readonly" | "mapfile" | "readarray" | "let" | "unset" | "getopts" | "wait"
            | "alias" => self.builtin_names(cmd, base, args),
            "trap" => {
                if let Some(first) = args.first() {
                    match &first.value {
                        Some(code) if !code.starts_with('-') => self.code(code),
                        Some(_) => {}
                        None => self.opaque("it runs `trap` with a computed string"),
                    }
                }
            }
            _ => {}
        }
    }

    /// `sh -c CODE`, `bash script`, `sh` reading standard input.
    pub(crate) fn shell(&mut self, cmd: &mut Command, base: &str, args: &[Word]) {
        let mut command_string = false;
        let mut i = 0;
        while let Some(w) = args.get(i) {
            // A computed word ends the options: it is the operand.
            let Some(v) = &w.value else {
                break;
            };
            if v == "--" || v == "-" {
                i += 1;
                break;
            }
            if (v.starts_with('-') || v.starts_with('+')) && v.len() > 1 {
                if v.starts_with("--") {
                    // `--rcfile FILE`, `--init-file FILE` take a value.
                    if matches!(v.as_str(), "--rcfile" | "--init-file") {
                        i += 1;
                    }
                } else {
                    if v.contains('c') {
                        command_string = true;
                    }
                    if v.ends_with('o') || v.ends_with('O') {
                        i += 1;
                    }
                }
                i += 1;
                continue;
            }
            break;
        }
        let operand = args.get(i);
        if command_string {
            match operand.map(|w| &w.value) {
                Some(Some(code)) => {
                    let code = code.clone();
                    self.code(&code);
                    cmd.runs = false;
                }
                Some(None) => self.opaque(format!("it runs `{base} -c` with a computed string")),
                None => self.opaque(format!("it runs `{base} -c` without a command")),
            }
        } else if let Some(operand) = operand {
            // `bash <(echo CODE)`: the script is that output.
            let at = cmd.program + 1 + i;
            if operand.is_dynamic()
                && let Some((_, text)) = cmd.fed.iter().find(|(index, _)| *index == at)
            {
                let text = text.clone();
                self.opaque(format!("`{base}` runs the output of a command"));
                self.code(&text);
            }
        } else {
            match cmd.input.clone() {
                // `bash <<< 'CODE'`, `bash <<'EOF'`: the code is static.
                Some((code, true)) => {
                    self.code(&code);
                    cmd.runs = false;
                }
                Some((code, false)) => {
                    self.opaque(format!("`{base}` runs the output of a command"));
                    self.code(&code);
                }
                None => self.opaque(format!("`{base}` reads its commands from standard input")),
            }
        }
    }

    /// `sed`: the shell commands its script runs are walked, the files
    /// it writes besides its operands become write redirections.
    fn sed(&mut self, cmd: &mut Command, args: &[Word]) {
        let words: Vec<Option<&str>> = args.iter().map(|w| w.value.as_deref()).collect();
        let sed = crate::sed::read(&words);
        for code in &sed.runs {
            self.code(code);
        }
        if !sed.runs.is_empty() {
            cmd.evaluates
                .push("its `sed` script runs shell commands".to_owned());
        }
        if sed.runs_unknown {
            cmd.evaluates
                .push("its `sed` script may run shell commands".to_owned());
            self.opaque("its `sed` script runs commands dsh cannot see");
        }
        if let Some(why) = sed.unreadable {
            cmd.evaluates.push(why);
        }
        for file in sed.writes {
            cmd.redirects.push(Redirect {
                kind: RedirectKind::Output,
                target: Some(Word {
                    raw: file.clone(),
                    value: Some(file),
                }),
                fd: None,
                dup: None,
            });
        }
    }

    /// A word bash reads as a variable name (`test -v`, `printf -v`,
    /// `read`, `declare`, …): an array subscript in it is arithmetic, and
    /// the code in it runs.
    pub(super) fn variable_name(&mut self, word: &Word) {
        let Some(name) = word.value.as_deref() else {
            self.evaluating
                .push("a variable name is computed at run time".to_owned());
            return;
        };
        if let Some(open) = name.find('[') {
            let subscript = name.get(open + 1..).unwrap_or("");
            let subscript = subscript.rsplit_once(']').map_or(subscript, |(s, _)| s);
            self.evaluating
                .push("an array subscript is evaluated as arithmetic".to_owned());
            let subscript = subscript.to_owned();
            self.arithmetic_code(&subscript);
        }
    }

    /// A word whose value bash evaluates as arithmetic (`[[ A -eq B ]]`,
    /// `let`, `declare -i`): anything but a number is code.
    pub(super) fn arithmetic_word(&mut self, word: &Word) {
        match word.value.as_deref() {
            Some(v) => {
                let v = v.to_owned();
                self.arithmetic_code(&v);
            }
            None => self
                .evaluating
                .push("a computed value is evaluated as arithmetic".to_owned()),
        }
    }

    /// Arithmetic text: variables in it are evaluated (a variable holding
    /// `a[$(CMD)]` runs CMD), so anything but numbers and operators is
    /// code; substitutions in it are walked, whatever quotes surround
    /// them.
    pub(super) fn arithmetic_code(&mut self, text: &str) {
        let numeric = text
            .chars()
            .all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%()<>=!&|^~?:,".contains(c));
        if numeric {
            return;
        }
        self.evaluating
            .push("an arithmetic expression is evaluated".to_owned());
        if text.contains("$(") || text.contains('`') || text.contains("${") {
            let unquoted: String = text.chars().filter(|c| !matches!(c, '\'' | '"')).collect();
            self.word(&unquoted);
        }
    }

    /// Builtins that take variable names (`test -v`, `printf -v`, `read`,
    /// `declare`, `mapfile`, …) or arithmetic (`let`): they assign or
    /// evaluate, so they are never read-only, and subscripts in the names
    /// are walked as code.
    fn builtin_names(&mut self, cmd: &mut Command, base: &str, args: &[Word]) {
        let saved = std::mem::take(&mut self.evaluating);
        let static_args: Vec<Option<&str>> = args.iter().map(|w| w.value.as_deref()).collect();
        match base {
            "test" | "[" => {
                for (i, a) in static_args.iter().enumerate() {
                    if *a == Some("-v")
                        && let Some(name) = args.get(i + 1)
                    {
                        self.variable_name(name);
                    }
                }
            }
            "let" => {
                for a in args {
                    self.arithmetic_word(a);
                }
                self.evaluating
                    .push("`let` evaluates arithmetic".to_owned());
            }
            "alias" => {
                for a in args {
                    if let Some((_, value)) = a.value.as_deref().and_then(|v| v.split_once('=')) {
                        let value = value.to_owned();
                        self.code(&value);
                    }
                }
                self.evaluating.push("`alias` defines a command".to_owned());
            }
            _ => {
                self.evaluating
                    .push(format!("`{base}` assigns shell variables"));
                // Which arguments are names: every operand, and the value
                // of the options that take a name.
                let name_options: &[&str] = match base {
                    "printf" => &["-v"],
                    "read" => &["-a"],
                    "wait" => &["-p"],
                    _ => &[],
                };
                let value_options: &[&str] = match base {
                    "read" => &["-d", "-i", "-n", "-N", "-p", "-t", "-u"],
                    "mapfile" | "readarray" => &["-d", "-n", "-O", "-s", "-u", "-c"],
                    _ => &[],
                };
                let arithmetic = base != "printf"
                    && static_args
                        .iter()
                        .any(|a| a.is_some_and(|a| a.starts_with('-') && a.contains('i')));
                let mut i = 0;
                let mut operands_done = false;
                while let Some(w) = args.get(i) {
                    i += 1;
                    let Some(v) = w.value.as_deref() else {
                        self.variable_name(w);
                        continue;
                    };
                    if base == "printf" && operands_done {
                        break;
                    }
                    if let Some(option) = name_options.iter().find(|o| v.starts_with(**o)) {
                        let attached = v.get(option.len()..).unwrap_or("");
                        if attached.is_empty() {
                            if let Some(name) = args.get(i) {
                                self.variable_name(name);
                            }
                            i += 1;
                        } else {
                            self.variable_name(&Word {
                                raw: attached.to_owned(),
                                value: Some(attached.to_owned()),
                            });
                        }
                        continue;
                    }
                    if (base == "mapfile" || base == "readarray") && v == "-C" {
                        // The callback is code.
                        if let Some(code) = args.get(i).and_then(|w| w.value.clone()) {
                            self.code(&code);
                        } else {
                            self.opaque("it runs `mapfile -C` with a computed callback");
                        }
                        i += 1;
                        continue;
                    }
                    if value_options.contains(&v) {
                        i += 1;
                        continue;
                    }
                    if v.starts_with('-') || v.starts_with('+') {
                        continue;
                    }
                    if base == "printf" {
                        // The format and its arguments are not names.
                        operands_done = true;
                        continue;
                    }
                    let (name, value) = match v.split_once('=') {
                        Some((name, value)) => (name, Some(value)),
                        None => (v, None),
                    };
                    self.variable_name(&Word {
                        raw: name.to_owned(),
                        value: Some(name.to_owned()),
                    });
                    if arithmetic && let Some(value) = value {
                        let value = value.to_owned();
                        self.arithmetic_code(&value);
                    }
                }
            }
        }
        let found = std::mem::replace(&mut self.evaluating, saved);
        cmd.evaluates.extend(found);
    }

    /// `git -c KEY=VALUE`: configuration that names a command git runs
    /// (an alias starting with `!`, a pager, an editor, a filter, …) is
    /// walked as code; configuration read from elsewhere is opaque.
    fn git_config(&mut self, args: &[Word]) -> bool {
        let mut i = 0;
        let mut evaluates = false;
        while let Some(w) = args.get(i) {
            i += 1;
            let Some(v) = w.value.as_deref() else {
                break;
            };
            let setting = if v == "-c" {
                let Some(next) = args.get(i) else { break };
                i += 1;
                match next.value.as_deref() {
                    Some(s) => s.to_owned(),
                    None => {
                        self.opaque("it runs `git -c` with a computed setting");
                        return evaluates;
                    }
                }
            } else if let Some(s) = v.strip_prefix("-c") {
                s.to_owned()
            } else if v.starts_with("--config-env") {
                self.opaque(
                    "it runs `git --config-env`, which reads settings from the environment",
                );
                return evaluates;
            } else if v.starts_with('-') {
                continue;
            } else {
                break;
            };
            let Some((key, value)) = setting.split_once('=') else {
                continue;
            };
            match git_setting_runs(key, value) {
                GitSetting::Inert => {}
                GitSetting::Code(code) => {
                    evaluates = true;
                    self.code(code);
                }
                GitSetting::Opaque => {
                    self.opaque(format!(
                        "it runs `git -c {key}=…`, which git may run as a command"
                    ));
                }
            }
        }
        evaluates
    }

    /// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`) runs CMD.
    pub(crate) fn find_exec(&mut self, args: &[Word]) {
        let mut i = 0;
        while let Some(w) = args.get(i) {
            i += 1;
            if !matches!(
                w.value.as_deref(),
                Some("-exec" | "-execdir" | "-ok" | "-okdir")
            ) {
                continue;
            }
            let mut words = Vec::new();
            while let Some(w) = args.get(i) {
                i += 1;
                if matches!(w.value.as_deref(), Some(";" | "+")) {
                    break;
                }
                words.push(w.clone());
            }
            if words.is_empty() {
                continue;
            }
            self.finish(Command {
                words,
                program: 0,
                wrappers: Vec::new(),
                assignments: Vec::new(),
                shell_assignments: 0,
                redirects: Vec::new(),
                open_args: true,
                runs: true,
                ..Command::default()
            });
        }
    }
}

/// What a `git -c KEY=VALUE` setting does with its value.
enum GitSetting<'a> {
    /// Nothing runs.
    Inert,
    /// Git runs this shell code.
    Code(&'a str),
    /// Git may run something dsh cannot see (a hooks path, an include).
    Opaque,
}

/// Settings whose value git runs as a shell command (compared in lower
/// case; `*` stands for one name part).
fn git_setting_runs<'a>(key: &str, value: &'a str) -> GitSetting<'a> {
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    let (first, last) = (parts.first().copied(), parts.last().copied());
    if first == Some("alias") {
        return match value.strip_prefix('!') {
            Some(code) => GitSetting::Code(code),
            None => GitSetting::Inert,
        };
    }
    if matches!(
        key.as_str(),
        "core.hookspath" | "include.path" | "core.gitproxy" | "core.worktree"
    ) || first == Some("includeif")
    {
        return GitSetting::Opaque;
    }
    let runs = matches!(
        key.as_str(),
        "core.pager"
            | "core.editor"
            | "core.sshcommand"
            | "core.fsmonitor"
            | "core.askpass"
            | "diff.external"
            | "sequence.editor"
            | "gpg.program"
            | "credential.helper"
            | "uploadpack.packobjectshook"
            | "web.browser"
            | "sendemail.sendmailcmd"
    ) || first == Some("pager")
        || (parts.len() >= 2 && last == Some("program"))
        || (first == Some("filter") && matches!(last, Some("clean" | "smudge" | "process")))
        || (first == Some("diff") && matches!(last, Some("textconv" | "command")))
        || (first == Some("merge") && last == Some("driver"))
        || (matches!(first, Some("mergetool" | "difftool")) && last == Some("cmd"))
        || (first == Some("credential") && last == Some("helper"));
    if runs {
        GitSetting::Code(value.strip_prefix('!').unwrap_or(value))
    } else {
        GitSetting::Inert
    }
}
