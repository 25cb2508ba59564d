//! dsh's model of a bash command line: a real parse (with `brush-parser`)
//! of everything a line can run, for the permission model, hook trust and
//! the hook linter.
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
//! recorded in [`Line::opaque`]; a caller must never auto-approve such a
//! line.
//!
//! The modules, by job: [`walk`] (the AST walker), `salvage` (reading
//! text the parser rejects, for deny rules), `workarounds` (brush-parser
//! gaps), [`wrappers`] (the wrapper table), [`getopt`] (options read as GNU getopt does), [`sed`] (what a `sed` script runs or writes), `quoting` (ANSI-C
//! decoding and word helpers) and [`compound`] (the old quote-aware
//! splitter).
//!
//! What it is not: it decides nothing. Which commands only read, which
//! rules match and what a mode does are `dsh-permissions`' business.

pub mod compound;
pub mod getopt;
mod quoting;
mod salvage;
pub mod sed;
pub mod walk;
mod workarounds;
pub mod wrappers;

use crate::walk::Walker;

/// How deep substitutions and `sh -c` strings may nest before the line is
/// treated as opaque.
pub(crate) const MAX_DEPTH: usize = 24;

/// How many extra parses salvaging one line may cost.
pub(crate) const MAX_SALVAGE: usize = 256;

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
    /// The descriptor it redirects, when written (`3` of `3<file`).
    pub fd: Option<i32>,
    /// The descriptor it duplicates or closes (`3` of `>&3`, `-`).
    pub dup: Option<String>,
}

impl Redirect {
    /// True when it opens a network connection: bash treats
    /// `/dev/tcp/HOST/PORT` and `/dev/udp/HOST/PORT` as sockets.
    pub fn network(&self) -> bool {
        self.target.as_ref().is_some_and(|t| {
            let text = t.text();
            text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/")
        })
    }

    /// The descriptor this redirection opens (a file redirection's `fd`,
    /// or the default for its kind), if it opens one.
    fn opens(&self) -> Option<i32> {
        if self.dup.is_some() || self.target.is_none() {
            return None;
        }
        Some(self.fd.unwrap_or(match self.kind {
            RedirectKind::Input | RedirectKind::ReadWrite => 0,
            RedirectKind::Output
            | RedirectKind::Append
            | RedirectKind::Clobber
            | RedirectKind::Duplicate => 1,
        }))
    }

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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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
    /// Why some word of the command is code bash or the program evaluates
    /// (an array subscript, arithmetic, a prompt expansion, a `sed`
    /// script's `e` or `w`, a git alias); empty when none is. Such a
    /// command is never read-only, and the code found is walked as well.
    pub evaluates: Vec<String>,
    /// Static text on its standard input (a here-string, a here-doc, or
    /// the output of a plain `echo`/`printf` piped into it), and whether
    /// that text is exact (`false` when it is read from a command's
    /// output, which may differ).
    pub input: Option<(String, bool)>,
    /// The output of a plain `echo`/`printf` in a `<(…)` argument, by the
    /// index of that argument in `words`.
    pub fed: Vec<(usize, String)>,
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

    /// True when a redirection duplicates a descriptor the command's
    /// redirections did not open and that is not standard input, output or
    /// error (`>&3`): it writes to, or reads from, whatever the descriptor
    /// was left open on.
    pub fn duplicates_unopened(&self) -> bool {
        let opened: Vec<i32> = self.redirects.iter().filter_map(Redirect::opens).collect();
        self.redirects.iter().any(|r| {
            r.dup
                .as_deref()
                .and_then(|d| d.parse::<i32>().ok())
                .is_some_and(|d| d > 2 && !opened.contains(&d))
        })
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

pub(crate) fn join(words: &[Word], f: impl Fn(&Word) -> String) -> String {
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

/// A word after quote removal with its parameter expansions kept as
/// written (`"$HOME"/x` reads `$HOME/x`), for a caller that expands
/// variables it knows; `None` when the word holds a substitution, or does
/// not parse.
pub fn template(raw: &str) -> Option<String> {
    use brush_parser::word::{WordPiece, WordPieceWithSource};
    fn build(src: &str, pieces: &[WordPieceWithSource], out: &mut String) -> Option<()> {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => out.push_str(t),
                WordPiece::AnsiCQuotedText(t) => out.push_str(&quoting::ansi_c(t)?),
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => build(src, inner, out)?,
                WordPiece::TildePrefix(user) => {
                    out.push('~');
                    out.push_str(user);
                }
                WordPiece::EscapeSequence(e) => {
                    let rest = e.strip_prefix('\\').unwrap_or(e);
                    if rest != "\n" {
                        out.push_str(rest);
                    }
                }
                WordPiece::ParameterExpansion(_) => {
                    out.push_str(quoting::slice(src, p.start_index..p.end_index));
                }
                WordPiece::CommandSubstitution(_)
                | WordPiece::BackquotedCommandSubstitution(_)
                | WordPiece::ArithmeticExpression(_) => return None,
            }
        }
        Some(())
    }
    let pieces = std::panic::catch_unwind(|| {
        brush_parser::word::parse(raw, &brush_parser::ParserOptions::default())
    })
    .ok()?
    .ok()?;
    let mut out = String::new();
    build(raw, &pieces, &mut out)?;
    Some(out)
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
