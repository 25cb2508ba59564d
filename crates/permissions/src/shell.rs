//! A real shell parse of a `Bash` command line, for permission decisions.
//!
//! [`parse`] runs `brush-parser` over the line and walks every simple
//! command wherever it sits — pipelines, `&&`/`||`/`;`/`&` lists,
//! subshells, `{ …; }` groups, `$(…)` and backtick substitutions (also
//! inside double quotes, assignments, redirection targets and here-doc
//! bodies), `<(…)`/`>(…)`, `if`/`for`/`while`/`until`/`case`, function
//! bodies — and strips assignments and well-known wrappers (`env`, `nice`,
//! `timeout`, `xargs`, `sudo`, …) so a rule sees the program that really
//! runs. Code given as a static string to `sh -c`, `bash -c`, `trap`,
//! `find -exec` is parsed too. What the parse cannot see through is
//! recorded in [`Line::opaque`]; [`crate::policy`] never auto-approves such
//! a line. This module does not decide anything itself.

use std::ops::Range;

use brush_parser::ast;
use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::{Parser, ParserOptions, SourceInfo};

/// How deep substitutions and `sh -c` strings may nest before the line is
/// treated as opaque.
const MAX_DEPTH: usize = 24;

/// One word of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word as written (quotes and all).
    pub raw: String,
    /// The word after quote removal, when nothing in it is expanded at run
    /// time (no parameter, substitution, glob or brace expansion).
    pub value: Option<String>,
}

impl Word {
    /// The static value, or the text as written when it is dynamic.
    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.raw)
    }

    /// True when the shell computes part of this word at run time.
    pub fn is_dynamic(&self) -> bool {
        self.value.is_none()
    }
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `<`, `<<`, `<<<`, `<&`.
    Input,
    /// `>` (and `>&file`, `&>`).
    Output,
    /// `>>`, `&>>`.
    Append,
    /// `>|`.
    Clobber,
    /// `<>`.
    ReadWrite,
    /// `>&N`, `>&-`: duplicates or closes a descriptor.
    Duplicate,
}

/// One redirection of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// What it does.
    pub kind: RedirectKind,
    /// The file it names (`None` for descriptors and here-docs).
    pub target: Option<Word>,
}

impl Redirect {
    /// True when the redirection can create or change a file: output,
    /// append, clobber or read-write to anything but `/dev/null`.
    pub fn writes(&self) -> bool {
        match self.kind {
            RedirectKind::Input | RedirectKind::Duplicate => false,
            RedirectKind::Output
            | RedirectKind::Append
            | RedirectKind::Clobber
            | RedirectKind::ReadWrite => self
                .target
                .as_ref()
                .is_none_or(|t| t.value.as_deref() != Some("/dev/null")),
        }
    }
}

/// A shell variable assignment in front of a command (or an `env NAME=VAL`
/// argument).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: Word,
}

/// One simple command the line can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Every word, wrappers included, assignments excluded.
    pub words: Vec<Word>,
    /// Index in `words` of the program that really runs, after the
    /// wrappers; `words.len()` when there is none (only assignments or
    /// redirections).
    pub program: usize,
    /// The wrapper programs stripped in front of it (`env`, `nice`, …).
    pub wrappers: Vec<String>,
    /// Assignments in front of it, then `env NAME=VAL` arguments.
    pub assignments: Vec<Assignment>,
    /// How many of `assignments` are written in front of the command (the
    /// rest come from `env`).
    pub shell_assignments: usize,
    /// Its redirections, and those of every compound command around it.
    pub redirects: Vec<Redirect>,
    /// More arguments are appended at run time (`xargs`, `find -exec`).
    pub open_args: bool,
    /// False when the words are only a carrier for code this parse has
    /// already walked (`sh -c 'literal'`): the carrier itself needs no
    /// approval of its own, the code inside does.
    pub runs: bool,
}

impl Command {
    /// The program and its arguments, after the wrappers.
    pub fn argv(&self) -> &[Word] {
        self.words.get(self.program..).unwrap_or_default()
    }

    /// The program's static name, if it has one.
    pub fn program_name(&self) -> Option<&str> {
        self.argv().first().and_then(|w| w.value.as_deref())
    }

    /// True when some word of the program or its arguments is dynamic.
    pub fn is_dynamic(&self) -> bool {
        self.argv().iter().any(Word::is_dynamic)
    }

    /// The command as a rule sees it: the program and its arguments, words
    /// quoted where needed; with `…` appended when more arguments come at
    /// run time.
    pub fn rule_text(&self) -> String {
        let mut out = join(self.argv(), quote_word);
        if self.open_args {
            out.push_str(" \"$@\"");
        }
        out
    }

    /// The command as written: its own assignments, wrappers, program
    /// and arguments.
    pub fn written(&self) -> String {
        let assignments = self
            .assignments
            .iter()
            .take(self.shell_assignments)
            .map(|a| format!("{}={}", a.name, a.value.raw));
        assignments
            .chain(self.words.iter().map(|w| w.raw.clone()))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Every form of the command a deny or ask rule is matched against:
    /// as written, with wrappers, unwrapped, after quote removal, and with
    /// a path-qualified program reduced to its name.
    pub fn deny_texts(&self) -> Vec<String> {
        let mut texts = vec![
            join(&self.words, |w| w.raw.clone()),
            join(&self.words, |w| w.text().to_owned()),
            join(self.argv(), |w| w.raw.clone()),
            join(self.argv(), |w| w.text().to_owned()),
            self.rule_text(),
        ];
        if let Some(name) = self.program_name()
            && let Some((_, base)) = name.rsplit_once('/')
            && !base.is_empty()
        {
            let rest = join(self.argv().get(1..).unwrap_or_default(), |w| {
                w.text().to_owned()
            });
            texts.push(format!("{base} {rest}").trim_end().to_owned());
        }
        texts.retain(|t| !t.is_empty());
        texts.dedup();
        texts
    }
}

fn join(words: &[Word], f: impl Fn(&Word) -> String) -> String {
    words.iter().map(f).collect::<Vec<_>>().join(" ")
}

/// A static word quoted so that it reads back as one word; a dynamic word
/// as written.
fn quote_word(w: &Word) -> String {
    match &w.value {
        None => w.raw.clone(),
        Some(v) if v.is_empty() => "''".to_owned(),
        Some(v)
            if v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,^~".contains(c)) =>
        {
            v.clone()
        }
        Some(v) => format!("'{}'", v.replace('\'', "'\\''")),
    }
}

/// Everything a command line can run, as far as the parse can see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// Every simple command, in source order (a substitution's commands
    /// before the command whose word holds it).
    pub commands: Vec<Command>,
    /// Why parts of the line cannot be seen (empty when all of it can).
    pub opaque: Vec<String>,
}

impl Line {
    /// True when everything the line can run was seen.
    pub fn is_transparent(&self) -> bool {
        self.opaque.is_empty()
    }
}

/// Parses `line` and collects every simple command it can run.
pub fn parse(line: &str) -> Line {
    let mut walker = Walker::default();
    walker.code(line);
    if !walker.opaque.is_empty() {
        walker.salvage_flat(line);
    }
    let Walker {
        commands, opaque, ..
    } = walker;
    let mut opaque = opaque;
    opaque.dedup();
    Line { commands, opaque }
}

thread_local! {
    /// The last line parsed on this thread: one decision asks for the same
    /// line up to four times (deny, ask, allow, the mode).
    static LAST: std::cell::RefCell<Option<(String, std::rc::Rc<Line>)>> =
        const { std::cell::RefCell::new(None) };
}

/// [`parse`], remembering the last line parsed on this thread.
pub fn parse_cached(line: &str) -> std::rc::Rc<Line> {
    let hit = LAST.with(|last| {
        last.borrow()
            .as_ref()
            .filter(|(text, _)| text == line)
            .map(|(_, parsed)| std::rc::Rc::clone(parsed))
    });
    if let Some(parsed) = hit {
        return parsed;
    }
    let parsed = std::rc::Rc::new(parse(line));
    LAST.with(|last| {
        *last.borrow_mut() = Some((line.to_owned(), std::rc::Rc::clone(&parsed)));
    });
    parsed
}

#[derive(Default)]
struct Walker {
    commands: Vec<Command>,
    opaque: Vec<String>,
    depth: usize,
    /// Parse attempts spent salvaging unparsable text (bounded by
    /// [`MAX_SALVAGE`]).
    salvage_tries: usize,
    /// The code being walked, innermost last (to read source positions).
    texts: Vec<String>,
}

/// How many extra parses salvaging one line may cost.
const MAX_SALVAGE: usize = 256;

fn options() -> ParserOptions {
    ParserOptions::default()
}

impl Walker {
    fn opaque(&mut self, why: impl Into<String>) {
        self.opaque.push(why.into());
    }

    /// Parses shell code and walks it.
    fn code(&mut self, text: &str) {
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

    /// The parse failed (a shell may still run the lines before a syntax
    /// error, and brush-parser rejects some valid lines, like a `case`
    /// inside `( … )`). So that a deny rule still sees what may run, every
    /// word that starts a command after an operator or keyword — as the
    /// tokenizer sees them — is taken as a command. The line stays opaque:
    /// this only ever adds commands for deny and ask rules to match.
    fn salvage(&mut self, text: &str) {
        self.salvage_tries += 1;
        if self.salvage_tries > MAX_SALVAGE || self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.salvage_tokens(text);
        self.salvage_word(text);
        self.depth -= 1;
    }

    fn salvage_tokens(&mut self, text: &str) {
        const KEYWORDS: &[&str] = &[
            "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "case",
            "esac", "in", "!", "{", "}", "time", "function", "select", "coproc",
        ];
        const REDIRECTS: &[&str] = &[
            "<", ">", ">>", "<<", "<<-", "<<<", ">&", "<&", ">|", "<>", "&>", "&>>",
        ];
        let Ok(Ok(tokens)) = std::panic::catch_unwind(|| brush_parser::tokenize_str(text)) else {
            // An open quote: try each `;`/`&&`/`|` segment on its own.
            if let crate::compound::Split::Commands(parts) = crate::compound::split(text) {
                for part in parts {
                    self.code_no_salvage(&part);
                }
            }
            return;
        };
        let mut current: Vec<String> = Vec::new();
        let mut target_next = false;
        for token in &tokens {
            match token {
                brush_parser::Token::Word(w, _) => {
                    if target_next {
                        target_next = false;
                        self.word(w);
                    } else if current.is_empty() && KEYWORDS.contains(&w.as_str()) {
                    } else if current.is_empty() && is_assignment(w) {
                        self.word(w);
                    } else {
                        current.push(w.clone());
                    }
                }
                brush_parser::Token::Operator(op, _) => {
                    if REDIRECTS.contains(&op.as_str()) {
                        target_next = true;
                    } else {
                        self.salvaged(std::mem::take(&mut current));
                    }
                }
            }
        }
        self.salvaged(current);
    }

    /// The last resort for a line that is opaque anyway: cut the text at
    /// every character that can start a command (`(`, `)`, `` ` ``, `;`,
    /// `&`, `|`, `{`, `}`, newline), whatever the nesting, drop quote
    /// characters, and take
    /// each piece as a command. Over-approximate on purpose: it can only
    /// add commands for deny and ask rules to match, on a line no rule or
    /// shortcut approves.
    fn salvage_flat(&mut self, text: &str) {
        const KEYWORDS: &[&str] = &[
            "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "case", "esac",
            "!", "time", "$",
        ];
        let pieces: Vec<Vec<String>> = text
            .split(['(', ')', '`', ';', '&', '|', '{', '}', '\n'])
            .map(|piece| {
                piece
                    .split_whitespace()
                    .map(loose_word)
                    .filter(|w| !w.is_empty())
                    .skip_while(|w| KEYWORDS.contains(&w.as_str()) || is_assignment(w))
                    .collect()
            })
            .filter(|words: &Vec<String>| !words.is_empty())
            .collect();
        for words in pieces {
            self.salvage_tries += 1;
            if self.salvage_tries > MAX_SALVAGE * 2 {
                return;
            }
            let words = words
                .into_iter()
                .map(|w| Word {
                    raw: w.clone(),
                    value: Some(w),
                })
                .collect();
            self.finish(Command {
                words,
                program: 0,
                wrappers: Vec::new(),
                assignments: Vec::new(),
                shell_assignments: 0,
                redirects: Vec::new(),
                open_args: false,
                runs: true,
            });
        }
    }

    fn salvaged(&mut self, raw: Vec<String>) {
        if raw.is_empty() {
            return;
        }
        let words = raw.iter().map(|w| self.word(w)).collect();
        self.finish(Command {
            words,
            program: 0,
            wrappers: Vec::new(),
            assignments: Vec::new(),
            shell_assignments: 0,
            redirects: Vec::new(),
            open_args: false,
            runs: true,
        });
    }

    fn code_no_salvage(&mut self, text: &str) {
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

    fn list(&mut self, list: &ast::CompoundList) {
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

    fn pipeline(&mut self, pipeline: &ast::Pipeline) {
        for command in &pipeline.seq {
            self.command(command);
        }
    }

    fn command(&mut self, command: &ast::Command) {
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
            ast::Command::ExtendedTest(test) => self.extended_test(&test.expr),
        }
    }

    /// Redirections on a compound command apply to every command in it.
    fn around(&mut self, start: usize, redirects: Option<&ast::RedirectList>) {
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
            });
        }
        for c in self.commands.get_mut(start..).unwrap_or_default() {
            c.redirects.extend(seen.iter().cloned());
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand) {
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
                    self.rescan(&a.expr.value);
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
                    self.rescan(&e.value);
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
    fn arithmetic(&mut self) {
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
        });
    }

    fn extended_test(&mut self, expr: &ast::ExtendedTestExpr) {
        match expr {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                self.extended_test(a);
                self.extended_test(b);
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => {
                self.extended_test(a);
            }
            ast::ExtendedTestExpr::UnaryTest(_, w) => {
                self.word(&w.value);
            }
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                self.word(&a.value);
                self.word(&b.value);
            }
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand) {
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
                    self.list(&sub.list);
                    words.push(Word {
                        raw: "<(…)".to_owned(),
                        value: None,
                    });
                }
            }
        }
        self.finish(Command {
            words,
            program: 0,
            wrappers: Vec::new(),
            shell_assignments: assignments.len(),
            assignments,
            redirects,
            open_args: false,
            runs: true,
        });
    }

    fn assignment(&mut self, a: &ast::Assignment) -> Assignment {
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

    fn redirect(&mut self, r: &ast::IoRedirect) -> Option<Redirect> {
        match r {
            ast::IoRedirect::File(_, kind, target) => {
                let target = match target {
                    ast::IoFileRedirectTarget::Filename(w) => Some(self.word(&w.value)),
                    ast::IoFileRedirectTarget::Fd(_) => None,
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, sub) => {
                        self.list(&sub.list);
                        None
                    }
                    ast::IoFileRedirectTarget::Duplicate(w) => {
                        let w = self.word(&w.value);
                        // `>&2`, `>&-` duplicate; `>&file` writes a file.
                        let fd = w
                            .value
                            .as_deref()
                            .is_some_and(|v| v == "-" || v.chars().all(|c| c.is_ascii_digit()));
                        if fd {
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
                Some(Redirect { kind, target })
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    self.here_doc(&doc.doc.value);
                }
                None
            }
            ast::IoRedirect::HereString(_, w) => {
                self.word(&w.value);
                None
            }
            ast::IoRedirect::OutputAndError(w, append) => Some(Redirect {
                kind: if *append {
                    RedirectKind::Append
                } else {
                    RedirectKind::Output
                },
                target: Some(self.word(&w.value)),
            }),
        }
    }

    /// A here-doc body with an unquoted delimiter: quotes are plain text
    /// there, substitutions run.
    fn here_doc(&mut self, body: &str) {
        if !body.contains("$(") && !body.contains('`') && !body.contains("${") {
            return;
        }
        let escaped = body.replace('\'', "\\'").replace('"', "\\\"");
        self.word(&escaped);
    }

    /// Parses one word: its static value, and every substitution in it.
    fn word(&mut self, raw: &str) -> Word {
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

    fn pieces(
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
                    self.rescan(&e.value);
                }
            }
        }
    }

    /// A word the word parser rejects (it loses track of `case … )` inside
    /// `$(…)`): try each `$(` with each later `)` as its end, longest
    /// first, so a deny rule still sees the commands inside.
    fn salvage_word(&mut self, raw: &str) {
        let opens: Vec<usize> = ["$(", "<(", ">("]
            .iter()
            .flat_map(|o| raw.match_indices(o).map(|(i, _)| i))
            .collect();
        for open in opens {
            let body_start = open + 2;
            let mut closes: Vec<usize> = raw
                .get(body_start..)
                .unwrap_or("")
                .match_indices(')')
                .map(|(i, _)| body_start + i)
                .collect();
            // The text may have been cut before its closing `)`.
            closes.push(raw.len());
            for close in closes.into_iter().rev() {
                self.salvage_tries += 1;
                if self.salvage_tries > MAX_SALVAGE {
                    return;
                }
                let body = slice(raw, body_start..close);
                let before = (self.commands.len(), self.opaque.len());
                self.code_no_salvage(body);
                if self.opaque.len() == before.1 {
                    break;
                }
                self.commands.truncate(before.0);
                self.opaque.truncate(before.1);
            }
        }
    }

    /// Text that is not itself a word but may hold substitutions (inside
    /// `${…}`, `$((…))`, array subscripts): read as a word for them.
    fn rescan(&mut self, text: &str) {
        if text.contains("$(") || text.contains('`') || text.contains("${") {
            self.word(text);
        }
    }

    /// Strips wrappers, then looks at the program for code it runs.
    fn finish(&mut self, mut cmd: Command) {
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

    /// Programs that run code given as an argument.
    fn programs(&mut self, cmd: &mut Command) {
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
            "source" | "." => self.opaque(format!("it runs `{base}` on a script")),
            "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" | "posh" | "yash" | "hush" => {
                self.shell(cmd, base, args);
            }
            "find" => self.find_exec(args),
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
    fn shell(&mut self, cmd: &mut Command, base: &str, args: &[Word]) {
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
        } else if operand.is_none() {
            self.opaque(format!("`{base}` reads its commands from standard input"));
        }
    }

    /// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`) runs CMD.
    fn find_exec(&mut self, args: &[Word]) {
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
            });
        }
    }
}

enum Item<'a> {
    Name(&'a ast::Word),
    Affix(&'a ast::CommandPrefixOrSuffixItem),
}

/// Parses shell code; returns the text the program was parsed from.
fn parse_program(text: &str) -> Option<(String, ast::Program)> {
    let parse = |text: &str| {
        std::panic::catch_unwind(|| {
            Parser::new(text.as_bytes(), &options(), &SourceInfo::default()).parse_program()
        })
        .ok()
        .and_then(Result::ok)
    };
    if let Some(program) = parse(text) {
        return Some((text.to_owned(), program));
    }
    let repaired = repair_here_docs(text)?;
    parse(&repaired).map(|program| (repaired, program))
}

/// brush-parser 0.3 hands the code of a `$( … )` holding a here-doc with a
/// quoted delimiter (`<<'EOF'`) back with the closing line quoted too
/// (`'EOF'`), which then never closes. Unquotes such closing lines.
fn repair_here_docs(text: &str) -> Option<String> {
    let mut tags = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("<<") {
        let after = rest.get(at + 2..).unwrap_or("");
        let after = after.strip_prefix('-').unwrap_or(after).trim_start();
        for q in ['\'', '"'] {
            if let Some(tag) = after
                .strip_prefix(q)
                .and_then(|t| t.split_once(q))
                .map(|(tag, _)| tag)
                && !tag.is_empty()
            {
                tags.push((format!("{q}{tag}{q}"), tag.to_owned()));
            }
        }
        rest = after;
    }
    if tags.is_empty() {
        return None;
    }
    let mut changed = false;
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            let trimmed = line.trim_start_matches('\t');
            match tags.iter().find(|(quoted, _)| trimmed == quoted) {
                Some((_, tag)) => {
                    changed = true;
                    tag.clone()
                }
                None => line.to_owned(),
            }
        })
        .collect();
    changed.then(|| lines.join("\n"))
}

/// `NAME=…` (a shell assignment word).
/// What bash makes of the body of `$'…'` (ANSI-C quoting): its escapes
/// decoded, cut at a NUL as bash cuts it. `None` when the result is not
/// text: a `\\x`/octal byte above 0x7f, or a `\\u`/`\\U` that is not a
/// character.
fn ansi_c(body: &str) -> Option<String> {
    // A byte escape is a character only in the ASCII range.
    let byte = |value: u32| (value < 0x80).then(|| char::from_u32(value)).flatten();
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    // Up to `max` digits of `radix`, as one number.
    let digits = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut value: Option<u32> = None;
        for _ in 0..max {
            let Some(digit) = chars.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            chars.next();
            value = Some(value.unwrap_or(0) * radix + digit);
        }
        value
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(escape) = chars.next() else {
            out.push('\\');
            break;
        };
        let decoded = match escape {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'e' | 'E' => '\u{1b}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\\' | '\'' | '"' | '?' => escape,
            '0'..='7' => {
                let mut value = escape.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let Some(digit) = chars.peek().and_then(|c| c.to_digit(8)) else {
                        break;
                    };
                    chars.next();
                    value = value * 8 + digit;
                }
                byte(value)?
            }
            'x' => match digits(&mut chars, 16, 2) {
                Some(value) => byte(value)?,
                None => {
                    out.push_str("\\x");
                    continue;
                }
            },
            'u' | 'U' => {
                let max = if escape == 'u' { 4 } else { 8 };
                match digits(&mut chars, 16, max) {
                    Some(value) => char::from_u32(value)?,
                    None => {
                        out.push('\\');
                        out.push(escape);
                        continue;
                    }
                }
            }
            'c' => match chars.next() {
                Some(control) => char::from_u32(u32::from(control) & 0x1f).unwrap_or('\0'),
                None => {
                    out.push_str("\\c");
                    continue;
                }
            },
            other => {
                out.push('\\');
                other
            }
        };
        if decoded == '\0' {
            break;
        }
        out.push(decoded);
    }
    Some(out)
}

/// A word of text the parse could not read, as a command name would run:
/// `$'…'` decoded, other quotes and backslashes dropped, a trailing `$`
/// gone.
fn loose_word(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut rest = word.trim_start_matches('\\');
    while !rest.is_empty() {
        if let Some(body) = rest.strip_prefix("$'") {
            let end = ansi_c_end(body);
            out.push_str(&ansi_c(&body[..end]).unwrap_or_default());
            rest = body.get(end + 1..).unwrap_or("");
            continue;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else { break };
        // `$"…"` is a (translatable) double-quoted string.
        let gettext = c == '$' && chars.as_str().starts_with('"');
        if !(gettext || matches!(c, '\'' | '"' | '\\')) {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out.trim_end_matches('$').to_owned()
}

/// Where the `'` that closes a `$'…'` body is (a `\\'` does not close it);
/// the body's length when it is not closed.
fn ansi_c_end(body: &str) -> usize {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '\'') => return i,
            (false, _) => {}
        }
    }
    body.len()
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn slice(s: &str, r: Range<usize>) -> &str {
    s.get(r).unwrap_or("")
}

/// Unquoted text the shell expands: globs (`*`, `?`, `[…]`) and brace
/// expansion (`{a,b}`, `{1..3}`).
fn expands(t: &str) -> bool {
    if t.contains(['*', '?']) {
        return true;
    }
    if let Some(open) = t.find('[')
        && t.get(open + 1..).is_some_and(|rest| rest.contains(']'))
    {
        return true;
    }
    if let Some(open) = t.find('{') {
        let rest = t.get(open..).unwrap_or("");
        if let Some(close) = rest.find('}') {
            let inner = rest.get(1..close).unwrap_or("");
            return inner.contains(',') || inner.contains("..");
        }
    }
    false
}

/// What one wrapper word does.
enum Unwrap {
    /// Not a wrapper: this is the program.
    NotWrapper,
    /// A wrapper used in a way that runs no other command (`command -v`,
    /// `sudo -l`): it is the program.
    Stop,
    /// The command it runs cannot be seen.
    Opaque(String),
    /// It runs the command starting at `next`.
    Inner {
        next: usize,
        env: Vec<Assignment>,
        writes: Vec<Redirect>,
        open_args: bool,
    },
}

/// Options a wrapper takes: which take a separate value, and which make it
/// run nothing else.
struct Spec {
    /// Short options taking a value (`-n` of `nice`), as letters.
    short_value: &'static str,
    /// Long options taking a value when not written `--opt=value`.
    long_value: &'static [&'static str],
    /// Letters or long options after which nothing else runs.
    stop: &'static [&'static str],
    /// Positional words between the options and the command (`timeout`'s
    /// duration, `chrt`'s priority, `taskset`'s mask).
    positional: usize,
}

const NO_SPEC: Spec = Spec {
    short_value: "",
    long_value: &[],
    stop: &[],
    positional: 0,
};

fn spec(base: &str) -> Option<Spec> {
    Some(match base {
        "command" => Spec {
            stop: &["-v", "-V"],
            ..NO_SPEC
        },
        // `busybox APPLET …` runs the applet.
        "builtin" | "nohup" | "setsid" | "exec" | "busybox" => Spec {
            short_value: if base == "exec" { "a" } else { "" },
            ..NO_SPEC
        },
        "nice" => Spec {
            short_value: "n",
            long_value: &["--adjustment"],
            ..NO_SPEC
        },
        "time" => Spec {
            short_value: "fo",
            long_value: &["--format", "--output"],
            ..NO_SPEC
        },
        "timeout" => Spec {
            short_value: "sk",
            long_value: &["--signal", "--kill-after"],
            positional: 1,
            ..NO_SPEC
        },
        "xargs" => Spec {
            short_value: "adEILnPs",
            long_value: &[
                "--arg-file",
                "--delimiter",
                "--max-lines",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            stop: &["--help", "--version"],
            ..NO_SPEC
        },
        "sudo" => Spec {
            short_value: "ughpCDrtTUR",
            long_value: &[
                "--user",
                "--group",
                "--host",
                "--prompt",
                "--close-from",
                "--chdir",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--chroot",
            ],
            stop: &[
                "-l", "-v", "-k", "-K", "-V", "-e", "--list", "--edit", "--help",
            ],
            ..NO_SPEC
        },
        "doas" => Spec {
            short_value: "uC",
            ..NO_SPEC
        },
        "stdbuf" => Spec {
            short_value: "ioe",
            long_value: &["--input", "--output", "--error"],
            ..NO_SPEC
        },
        "ionice" => Spec {
            short_value: "cnP",
            long_value: &["--class", "--classdata"],
            stop: &["-p", "--pid", "-P", "--pgid", "-u", "--uid"],
            ..NO_SPEC
        },
        "chrt" => Spec {
            short_value: "TPD",
            long_value: &["--sched-runtime", "--sched-period", "--sched-deadline"],
            stop: &["-p", "--pid", "-m", "--max"],
            positional: 1,
        },
        "taskset" => Spec {
            stop: &["-p", "--pid"],
            positional: 1,
            ..NO_SPEC
        },
        _ => return None,
    })
}

/// Strips one wrapper at `words[at]`.
fn unwrap_one(base: &str, words: &[Word], at: usize) -> Unwrap {
    if base == "env" {
        return unwrap_env(words, at);
    }
    let Some(spec) = spec(base) else {
        return Unwrap::NotWrapper;
    };
    let mut i = at + 1;
    let mut writes = Vec::new();
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque(format!("`{base}` has computed options"));
        };
        if v == "--" {
            i += 1;
            break;
        }
        if !v.starts_with('-') || v == "-" {
            break;
        }
        // `nice -5`: a numeric adjustment.
        if base == "nice"
            && v.get(1..)
                .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit()))
        {
            i += 1;
            continue;
        }
        if spec.stop.contains(&v) {
            return Unwrap::Stop;
        }
        let value_follows = if let Some(long) = v.strip_prefix("--") {
            !long.contains('=') && spec.long_value.contains(&v)
        } else {
            // A cluster like `-pn5`: the first letter taking a value ends it.
            let letters = v.get(1..).unwrap_or("");
            let mut follows = false;
            for (n, c) in letters.char_indices() {
                if spec.stop.iter().any(|s| s.len() == 2 && s.ends_with(c)) {
                    return Unwrap::Stop;
                }
                if spec.short_value.contains(c) {
                    follows = n + c.len_utf8() == letters.len();
                    break;
                }
            }
            follows
        };
        // GNU time's `-o FILE` writes the timing to FILE.
        let writes_to = base == "time" && (v == "-o" || v.starts_with("--output"));
        if writes_to {
            let target = if value_follows {
                words.get(i + 1).cloned()
            } else {
                v.split_once('=').map(|(_, f)| Word {
                    raw: f.to_owned(),
                    value: Some(f.to_owned()),
                })
            };
            writes.push(Redirect {
                kind: RedirectKind::Output,
                target,
            });
        }
        i += if value_follows { 2 } else { 1 };
    }
    for _ in 0..spec.positional {
        match words.get(i) {
            Some(w) if w.is_dynamic() => {
                return Unwrap::Opaque(format!("`{base}` has computed arguments"));
            }
            Some(_) => i += 1,
            None => return Unwrap::Stop,
        }
    }
    if i >= words.len() && base != "xargs" {
        // `sudo -i`, `nohup` alone, `command` alone: nothing wrapped.
        return Unwrap::Stop;
    }
    Unwrap::Inner {
        next: i,
        env: Vec::new(),
        writes,
        open_args: base == "xargs",
    }
}

/// `env [-i] [-u NAME] [-C DIR] [NAME=VALUE]… [COMMAND …]`.
fn unwrap_env(words: &[Word], at: usize) -> Unwrap {
    let mut i = at + 1;
    let mut env = Vec::new();
    while let Some(w) = words.get(i) {
        let Some(v) = w.value.as_deref() else {
            return Unwrap::Opaque("`env` has computed arguments".to_owned());
        };
        if v == "--" {
            i += 1;
            continue;
        }
        if v.starts_with("-S") || v.starts_with("--split-string") {
            return Unwrap::Opaque("it runs `env -S` with a command string".to_owned());
        }
        if matches!(v, "-u" | "-C" | "--unset" | "--chdir") {
            i += 2;
            continue;
        }
        if v.starts_with('-') {
            i += 1;
            continue;
        }
        if let Some((name, value)) = v.split_once('=')
            && !name.is_empty()
        {
            env.push(Assignment {
                name: name.to_owned(),
                value: Word {
                    raw: value.to_owned(),
                    value: Some(value.to_owned()),
                },
            });
            i += 1;
            continue;
        }
        break;
    }
    if i >= words.len() {
        return Unwrap::Stop;
    }
    Unwrap::Inner {
        next: i,
        env,
        writes: Vec::new(),
        open_args: false,
    }
}
