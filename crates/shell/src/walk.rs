//! The AST walker: every simple command a parsed line can run, wherever
//! it sits, with its words, assignments and redirections; wrappers are
//! stripped through [`crate::wrappers`], and code given as a static string
//! (`sh -c`, `trap`, `find -exec`, `eval`) is walked too.

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};

use crate::quoting::{ansi_c, expands, slice};
use crate::workarounds::{options, parse_program};
use crate::wrappers::{Unwrap, unwrap_one};
use crate::{Assignment, Command, MAX_DEPTH, MAX_SALVAGE, Redirect, RedirectKind, Word};

mod programs;

#[derive(Default)]
pub(crate) struct Walker {
    pub(crate) commands: Vec<Command>,
    pub(crate) opaque: Vec<String>,
    pub(crate) depth: usize,
    /// Parse attempts spent salvaging unparsable text (bounded by
    /// `MAX_SALVAGE`).
    pub(crate) salvage_tries: usize,
    /// The code being walked, innermost last (to read source positions).
    pub(crate) texts: Vec<String>,
    /// Static text a here-string or here-doc of the command being walked
    /// puts on its standard input.
    pub(crate) here_input: Option<String>,
    /// What a plain `echo`/`printf` before a `|` writes into the command
    /// being walked.
    pub(crate) pipe_input: Option<String>,
    /// Why words of the simple command being walked are code bash
    /// evaluates (arithmetic, subscripts, prompt expansion).
    pub(crate) evaluating: Vec<String>,
}

impl Walker {
    pub(crate) fn opaque(&mut self, why: impl Into<String>) {
        self.opaque.push(why.into());
    }

    /// Parses shell code and walks it.
    pub(crate) fn code(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            self.opaque("it nests substitutions too deeply");
            return;
        }
        match parse_program(text) {
            Some((text, program)) => {
                self.depth += 1;
                self.texts.push(text);
                for list in &program.complete_commands {
                    self.list(list);
                }
                self.texts.pop();
                self.depth -= 1;
            }
            None => {
                self.opaque("it cannot be parsed as a shell command");
                self.salvage(text);
            }
        }
    }

    pub(crate) fn code_no_salvage(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        if let Some((text, program)) = parse_program(text) {
            self.depth += 1;
            self.texts.push(text);
            for list in &program.complete_commands {
                self.list(list);
            }
            self.texts.pop();
            self.depth -= 1;
        } else {
            self.opaque("it cannot be parsed as a shell command");
            self.salvage_tries += 1;
            if self.salvage_tries <= MAX_SALVAGE {
                self.depth += 1;
                self.salvage_tokens(text);
                self.depth -= 1;
            }
        }
    }

    pub(crate) fn list(&mut self, list: &ast::CompoundList) {
        for item in &list.0 {
            let and_or = &item.0;
            self.pipeline(&and_or.first);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
        }
    }

    pub(crate) fn pipeline(&mut self, pipeline: &ast::Pipeline) {
        let mut output: Option<String> = None;
        for command in &pipeline.seq {
            let start = self.commands.len();
            self.pipe_input = output.take();
            self.command(command);
            self.pipe_input = None;
            if self.commands.len() == start + 1 {
                output = self.commands.get(start).and_then(printed_text);
            }
        }
    }

    pub(crate) fn command(&mut self, command: &ast::Command) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple),
            ast::Command::Compound(compound, redirects) => {
                let start = self.commands.len();
                self.compound(compound);
                self.around(start, redirects.as_ref());
            }
            ast::Command::Function(def) => {
                let start = self.commands.len();
                self.compound(&def.body.0);
                self.around(start, def.body.1.as_ref());
            }
            ast::Command::ExtendedTest(test) => {
                let saved = std::mem::take(&mut self.evaluating);
                self.extended_test(&test.expr);
                let evaluates = std::mem::replace(&mut self.evaluating, saved);
                if !evaluates.is_empty() {
                    self.commands.push(Command {
                        words: vec![Word {
                            raw: "[[".to_owned(),
                            value: Some("[[".to_owned()),
                        }],
                        runs: true,
                        evaluates,
                        ..Command::default()
                    });
                }
            }
        }
    }

    /// Redirections on a compound command apply to every command in it.
    pub(crate) fn around(&mut self, start: usize, redirects: Option<&ast::RedirectList>) {
        let Some(redirects) = redirects else {
            return;
        };
        let seen: Vec<Redirect> = redirects
            .0
            .iter()
            .filter_map(|r| self.redirect(r))
            .collect();
        if seen.is_empty() {
            return;
        }
        if self.commands.len() == start {
            // `{ :; } > f` with nothing seen inside still writes.
            self.commands.push(Command {
                words: Vec::new(),
                program: 0,
                wrappers: Vec::new(),
                assignments: Vec::new(),
                shell_assignments: 0,
                redirects: seen.clone(),
                open_args: false,
                runs: true,
                ..Command::default()
            });
        }
        for c in self.commands.get_mut(start..).unwrap_or_default() {
            c.redirects.extend(seen.iter().cloned());
        }
    }

    pub(crate) fn compound(&mut self, compound: &ast::CompoundCommand) {
        match compound {
            ast::CompoundCommand::Arithmetic(a) => {
                // brush-parser reads `( (cmd) )` as `((…))`; bash runs two
                // subshells there. Only a literal `((` is arithmetic.
                let index = a.loc.start.index;
                let literal = self
                    .texts
                    .last()
                    .and_then(|t| t.get(index..))
                    .is_some_and(|t| t.starts_with("(("));
                if literal {
                    self.arithmetic_code(&a.expr.value);
                    self.arithmetic();
                } else {
                    self.code(&format!("( {} )", a.expr.value));
                }
            }
            ast::CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arithmetic_code(&e.value);
                }
                self.arithmetic();
                self.list(&f.body.list);
            }
            ast::CompoundCommand::BraceGroup(g) => self.list(&g.list),
            ast::CompoundCommand::Subshell(s) => self.list(&s.list),
            ast::CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(&w.value);
                }
                self.list(&f.body.list);
            }
            ast::CompoundCommand::CaseClause(c) => {
                self.word(&c.value.value);
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(&p.value);
                    }
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd);
                    }
                }
            }
            ast::CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c);
                    }
                    self.list(&e.body);
                }
            }
            ast::CompoundCommand::WhileClause(w) | ast::CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
        }
    }

    /// `((…))` can assign any variable (`PATH`, `IFS`): it counts as a
    /// command named `((` that no read-only judgement or prefix rule
    /// covers.
    pub(crate) fn arithmetic(&mut self) {
        self.commands.push(Command {
            words: vec![Word {
                raw: "((".to_owned(),
                value: Some("((".to_owned()),
            }],
            program: 0,
            wrappers: Vec::new(),
            assignments: Vec::new(),
            shell_assignments: 0,
            redirects: Vec::new(),
            open_args: false,
            runs: true,
            ..Command::default()
        });
    }

    pub(crate) fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        match expr {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a);
            }
            ast::ExtendedTestExpr::UnaryTest(op, w) => {
                let word = self.word(&w.value);
                if matches!(
                    op,
                    ast::UnaryPredicate::ShellVariableIsSetAndAssigned
                        | ast::UnaryPredicate::ShellVariableIsSetAndNameRef
                ) {
                    self.variable_name(&word);
                }
            }
            ast::ExtendedTestExpr::BinaryTest(op, a, b) => {
                let words = [self.word(&a.value), self.word(&b.value)];
                if matches!(
                    op,
                    ast::BinaryPredicate::ArithmeticEqualTo
                        | ast::BinaryPredicate::ArithmeticNotEqualTo
                        | ast::BinaryPredicate::ArithmeticLessThan
                        | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
                        | ast::BinaryPredicate::ArithmeticGreaterThan
                        | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
                ) {
                    for word in &words {
                        self.arithmetic_word(word);
                    }
                }
            }
        }
    }

    pub(crate) fn simple(&mut self, simple: &ast::SimpleCommand) {
        let piped = self.pipe_input.take();
        self.here_input = None;
        let saved = std::mem::take(&mut self.evaluating);
        let mut fed = Vec::new();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        let items = simple
            .prefix
            .iter()
            .flat_map(|p| p.0.iter())
            .map(Item::Affix)
            .chain(simple.word_or_name.iter().map(Item::Name))
            .chain(
                simple
                    .suffix
                    .iter()
                    .flat_map(|s| s.0.iter())
                    .map(Item::Affix),
            );
        for item in items {
            match item {
                Item::Name(w) => words.push(self.word(&w.value)),
                Item::Affix(ast::CommandPrefixOrSuffixItem::Word(w)) => {
                    words.push(self.word(&w.value));
                }
                Item::Affix(ast::CommandPrefixOrSuffixItem::IoRedirect(r)) => {
                    if let Some(r) = self.redirect(r) {
                        redirects.push(r);
                    }
                }
                Item::Affix(ast::CommandPrefixOrSuffixItem::AssignmentWord(a, w)) => {
                    if words.is_empty() {
                        assignments.push(self.assignment(a));
                    } else {
                        // `export X=$(…)`, `declare a=b`: an argument.
                        words.push(self.word(&w.value));
                    }
                }
                Item::Affix(ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, sub)) => {
                    let start = self.commands.len();
                    self.list(&sub.list);
                    if self.commands.len() == start + 1
                        && let Some(text) = self.commands.get(start).and_then(printed_text)
                    {
                        fed.push((words.len(), text));
                    }
                    words.push(Word {
                        raw: "<(…)".to_owned(),
                        value: None,
                    });
                }
            }
        }
        let evaluates = std::mem::replace(&mut self.evaluating, saved);
        let input = match (self.here_input.take(), piped) {
            (Some(here), _) => Some((here, true)),
            (None, Some(piped)) => Some((piped, false)),
            (None, None) => None,
        };
        self.finish(Command {
            words,
            program: 0,
            wrappers: Vec::new(),
            shell_assignments: assignments.len(),
            assignments,
            redirects,
            open_args: false,
            runs: true,
            input,
            fed,
            evaluates,
        });
    }

    pub(crate) fn assignment(&mut self, a: &ast::Assignment) -> Assignment {
        let name = match &a.name {
            ast::AssignmentName::VariableName(n) => n.clone(),
            ast::AssignmentName::ArrayElementName(n, index) => {
                self.rescan(index);
                n.clone()
            }
        };
        let value = match &a.value {
            ast::AssignmentValue::Scalar(w) => self.word(&w.value),
            ast::AssignmentValue::Array(items) => {
                for (k, v) in items {
                    if let Some(k) = k {
                        self.word(&k.value);
                    }
                    self.word(&v.value);
                }
                Word {
                    raw: "(…)".to_owned(),
                    value: None,
                }
            }
        };
        Assignment { name, value }
    }

    pub(crate) fn redirect(&mut self, r: &ast::IoRedirect) -> Option<Redirect> {
        match r {
            ast::IoRedirect::File(fd, kind, target) => {
                let fd = *fd;
                let mut dup = None;
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w) => Some(self.word(&w.value)),
                    ast::IoFileRedirectTarget::Fd(n) => {
                        dup = Some(n.to_string());
                        None
                    }
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.list(&sub.list);
                        None
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let w = self.word(&w.value);
                        // `>&2`, `>&-` duplicate; `>&file` writes a file.
                        let is_fd = w
                            .value
                            .as_deref()
                            .is_some_and(|v| v == "-" || v.chars().all(|c| c.is_ascii_digit()));
                        if is_fd {
                            dup = w.value;
                            None
                        } else {
                            return Some(Redirect {
                                kind: match kind {
                                    ast::IoFileRedirectKind::DuplicateInput => RedirectKind::Input,
                                    ast::IoFileRedirectKind::Read
                                    | ast::IoFileRedirectKind::Write
                                    | ast::IoFileRedirectKind::Append
                                    | ast::IoFileRedirectKind::ReadAndWrite
                                    | ast::IoFileRedirectKind::Clobber
                                    | ast::IoFileRedirectKind::DuplicateOutput => {
                                        RedirectKind::Output
                                    }
                                },
                                target: Some(w),
                                fd,
                                dup: None,
                            });
                        }
                    }
                };
                let kind = match kind {
                    ast::IoFileRedirectKind::Read => RedirectKind::Input,
                    ast::IoFileRedirectKind::Write => RedirectKind::Output,
                    ast::IoFileRedirectKind::Append => RedirectKind::Append,
                    ast::IoFileRedirectKind::ReadAndWrite => RedirectKind::ReadWrite,
                    ast::IoFileRedirectKind::Clobber => RedirectKind::Clobber,
                    ast::IoFileRedirectKind::DuplicateInput => RedirectKind::Input,
                    ast::IoFileRedirectKind::DuplicateOutput => {
                        if target.is_some() {
                            RedirectKind::Output
                        } else {
                            RedirectKind::Duplicate
                        }
                    }
                };
                Some(Redirect {
                    kind,
                    target,
                    fd,
                    dup,
                })
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                let body = &doc.doc.value;
                if doc.requires_expansion {
                    self.here_doc(body);
                }
                let literal = !doc.requires_expansion
                    || !(body.contains('$') || body.contains('`') || body.contains('\\'));
                self.here_input = literal.then(|| body.clone());
                None
            }
            ast::IoRedirect::HereString(_, w) => {
                let word = self.word(&w.value);
                self.here_input = word.value;
                None
            }
            ast::IoRedirect::OutputAndError(w, append) => Some(Redirect {
                kind: if *append {
                    RedirectKind::Append
                } else {
                    RedirectKind::Output
                },
                target: Some(self.word(&w.value)),
                fd: None,
                dup: None,
            }),
        }
    }

    /// A here-doc body with an unquoted delimiter: quotes are plain text
    /// there, substitutions run.
    pub(crate) fn here_doc(&mut self, body: &str) {
        if !body.contains("$(") && !body.contains('`') && !body.contains("${") {
            return;
        }
        let escaped = body.replace('\'', "\\'").replace('"', "\\\"");
        self.word(&escaped);
    }

    /// Parses one word: its static value, and every substitution in it.
    pub(crate) fn word(&mut self, raw: &str) -> Word {
        if self.depth >= MAX_DEPTH {
            self.opaque("it nests substitutions too deeply");
            return Word {
                raw: raw.to_owned(),
                value: None,
            };
        }
        let pieces = match std::panic::catch_unwind(|| word::parse(raw, &options())) {
            Ok(Ok(pieces)) => pieces,
            Ok(Err(_)) | Err(_) => {
                self.opaque("a word cannot be parsed");
                self.salvage_word(raw);
                return Word {
                    raw: raw.to_owned(),
                    value: None,
                };
            }
        };
        self.depth += 1;
        let mut value = Some(String::new());
        self.pieces(raw, &pieces, &mut value, false);
        self.depth -= 1;
        Word {
            raw: raw.to_owned(),
            value,
        }
    }

    pub(crate) fn pieces(
        &mut self,
        src: &str,
        pieces: &[WordPieceWithSource],
        value: &mut Option<String>,
        quoted: bool,
    ) {
        let push = |value: &mut Option<String>, s: &str| {
            if let Some(v) = value {
                v.push_str(s);
            }
        };
        for p in pieces {
            match &p.piece {
                WordPiece::Text(t) => {
                    if !quoted && expands(t) {
                        *value = None;
                    }
                    push(value, t);
                }
                WordPiece::SingleQuotedText(t) => push(value, t),
                WordPiece::AnsiCQuotedText(t) => match ansi_c(t) {
                    Some(text) => push(value, &text),
                    None => *value = None,
                },
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces(src, inner, value, true);
                }
                WordPiece::TildePrefix(user) => {
                    push(value, "~");
                    push(value, user);
                }
                WordPiece::EscapeSequence(e) => {
                    let rest = e.strip_prefix('\\').unwrap_or(e);
                    if rest != "\n" {
                        push(value, rest);
                    }
                }
                WordPiece::ParameterExpansion(_) => {
                    *value = None;
                    let text = slice(src, p.start_index..p.end_index);
                    if let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) {
                        self.rescan(inner);
                        if let Some(why) = expansion_evaluates(inner) {
                            self.evaluating.push(why.to_owned());
                        }
                    }
                }
                WordPiece::CommandSubstitution(code)
                | WordPiece::BackquotedCommandSubstitution(code) => {
                    *value = None;
                    let before = self.opaque.len();
                    self.code(code);
                    if self.opaque.len() > before {
                        // The word parser (or the tokenizer, for the code
                        // around it) may have cut the substitution short at
                        // a `case` pattern's `)`.
                        self.salvage_word(src);
                        if let Some(outer) = self.texts.last().cloned()
                            && outer != src
                        {
                            self.salvage_word(&outer);
                        }
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    *value = None;
                    self.arithmetic_code(&e.value);
                }
            }
        }
    }

    /// Text that is not itself a word but may hold substitutions (inside
    /// `${…}`, `$((…))`, array subscripts): read as a word for them.
    pub(crate) fn rescan(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') || text.contains("${") {
            self.word(text);
        }
    }

    /// Code a wrapper runs from a string (`env -S`, `flock -c`).
    fn wrapped_code(&mut self, code: &str, exact: bool, why: &str) {
        if !exact {
            self.opaque(why.to_owned());
        }
        self.code(code);
    }

    /// Strips wrappers, then looks at the program for code it runs.
    pub(crate) fn finish(&mut self, mut cmd: Command) {
        let mut i = 0;
        while let Some(name) = cmd.words.get(i) {
            let Some(name) = name.value.clone() else {
                self.opaque("its command name is computed at run time");
                break;
            };
            let base = name.rsplit('/').next().unwrap_or(&name).to_owned();
            match unwrap_one(&base, &cmd.words, i) {
                Unwrap::NotWrapper => break,
                Unwrap::Stop => break,
                Unwrap::Opaque(why) => {
                    self.opaque(why);
                    break;
                }
                Unwrap::Code { code, exact, why } => {
                    self.wrapped_code(&code, exact, &why);
                    break;
                }
                Unwrap::Inner {
                    next,
                    env,
                    writes,
                    open_args,
                } => {
                    cmd.wrappers.push(base);
                    cmd.assignments.extend(env);
                    cmd.redirects.extend(writes);
                    cmd.open_args |= open_args;
                    // `xargs` alone runs `echo`: `i` may end past the words.
                    i = next;
                }
            }
        }
        cmd.program = i.min(cmd.words.len());
        self.programs(&mut cmd);
        self.commands.push(cmd);
    }
}

enum Item<'a> {
    Name(&'a ast::Word),
    Affix(&'a ast::CommandPrefixOrSuffixItem),
}

/// What a plain `echo` or `printf` with static arguments writes: the
/// arguments joined by spaces (an over-approximation for `printf`
/// formats; the caller only uses it to show deny rules what may run).
pub(crate) fn printed_text(cmd: &Command) -> Option<String> {
    let argv = cmd.argv();
    let name = argv.first()?.value.as_deref()?;
    if !matches!(name, "echo" | "printf") || cmd.is_dynamic() {
        return None;
    }
    let args: Vec<&str> = argv
        .get(1..)
        .unwrap_or_default()
        .iter()
        .map(Word::text)
        .skip_while(|a| name == "echo" && matches!(*a, "-n" | "-e" | "-E" | "-ne" | "-en"))
        .collect();
    Some(args.join(" "))
}

/// Why the body of a `${…}` expansion is code bash evaluates: a prompt
/// expansion (`@P`), an array subscript or a substring offset that is not
/// a number, an indirection (`${!x}`).
fn expansion_evaluates(inner: &str) -> Option<&'static str> {
    if inner.ends_with("@P") {
        return Some("a prompt expansion (`${x@P}`) runs the code in a value");
    }
    if let Some(rest) = inner.strip_prefix('!')
        && !rest.ends_with('*')
        && !rest.ends_with("[@]")
        && !rest.ends_with('@')
    {
        return Some("an indirect expansion (`${!x}`) evaluates a value as a name");
    }
    let name_end = inner
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '#'))
        .unwrap_or(inner.len());
    let rest = inner.get(name_end..).unwrap_or("");
    if let Some(subscript) = rest.strip_prefix('[') {
        let subscript = subscript.split(']').next().unwrap_or("");
        let numeric = subscript.chars().all(|c| c.is_ascii_digit() || c == '-');
        if !(numeric || subscript == "@" || subscript == "*") {
            return Some("an array subscript is evaluated as arithmetic");
        }
    }
    if let Some(offset) = rest.strip_prefix(':')
        && !offset.starts_with(['-', '=', '+', '?'])
        && offset.contains(|c: char| c.is_ascii_alphabetic() || c == '$')
    {
        return Some("a substring offset is evaluated as arithmetic");
    }
    None
}
