//! Reading text the parser rejects. A shell may still run the lines
//! before a syntax error, and brush-parser rejects some valid lines, so
//! the commands are salvaged from the tokens or the raw text for deny and
//! ask rules to match. The line stays opaque: salvage only ever adds
//! commands.

use crate::quoting::{is_assignment, loose_word, slice};
use crate::walk::Walker;
use crate::{Command, MAX_DEPTH, MAX_SALVAGE, Word};

impl Walker {
    /// The parse failed (a shell may still run the lines before a syntax
    /// error, and brush-parser rejects some valid lines, like a `case`
    /// inside `( … )`). So that a deny rule still sees what may run, every
    /// word that starts a command after an operator or keyword — as the
    /// tokenizer sees them — is taken as a command. The line stays opaque:
    /// this only ever adds commands for deny and ask rules to match.
    pub(crate) fn salvage(&mut self, text: &str) {
        self.salvage_tries += 1;
        if self.salvage_tries > MAX_SALVAGE || self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        self.salvage_tokens(text);
        self.salvage_word(text);
        self.depth -= 1;
    }

    pub(crate) fn salvage_tokens(&mut self, text: &str) {
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
    pub(crate) fn salvage_flat(&mut self, text: &str) {
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
                ..Command::default()
            });
        }
    }

    pub(crate) fn salvaged(&mut self, raw: Vec<String>) {
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
            ..Command::default()
        });
    }

    /// A word the word parser rejects (it loses track of `case … )` inside
    /// `$(…)`): try each `$(` with each later `)` as its end, longest
    /// first, so a deny rule still sees the commands inside.
    pub(crate) fn salvage_word(&mut self, raw: &str) {
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
}
