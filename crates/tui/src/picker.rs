//! The resume picker: `dsh --resume` / `-r` without an id, and `/resume`.
//! It lists this directory's sessions, newest first, numbered, with when
//! they were last used, their turns and their first prompt; the person
//! answers with a number (Enter takes the newest, Esc or `q` starts or
//! keeps the current session).

use std::io::{BufRead, Write};
use std::path::Path;

use dsh_session::store::SessionSummary;

use crate::input::{Input, SharedInput, next_input};
use crate::terminal::{Terminal, Tone, truncate};

/// The most sessions the picker offers.
pub const PICKER_SESSIONS: usize = 20;

/// This directory's sessions, newest first, without `exclude` (the
/// running one) and without sessions no prompt ever reached.
pub fn candidates(
    home: &Path,
    cwd: &Path,
    exclude: Option<&str>,
) -> anyhow::Result<Vec<SessionSummary>> {
    let here = cwd.display().to_string();
    Ok(dsh_core::sessions::list(home)?
        .into_iter()
        .filter(|session| session.cwd == here && Some(session.id.as_str()) != exclude)
        .filter(|session| session.turns > 0)
        .take(PICKER_SESSIONS)
        .collect())
}

/// The numbered list.
pub fn render(sessions: &[SessionSummary]) -> String {
    let mut text = String::from("Resume a session of this directory:\n");
    for (index, session) in sessions.iter().enumerate() {
        let prompt = session.first_prompt.as_deref().unwrap_or("");
        let when: String = session.updated.chars().take(16).collect();
        text.push_str(&format!(
            "  {:>2}. {}  {}  {:>3} turn{}  {}\n",
            index + 1,
            &session.id[..session.id.len().min(8)],
            when.replace('T', " "),
            session.turns,
            if session.turns == 1 { " " } else { "s" },
            truncate(prompt.lines().next().unwrap_or(""), 60)
        ));
    }
    text.trim_end().to_owned()
}

/// What an answer to the picker says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The session at this index.
    Pick(usize),
    /// No session (`q`, Esc).
    Nothing,
    /// Not an answer.
    Invalid,
}

/// Reads an answer for a list of `count` sessions.
pub fn parse_choice(answer: &str, count: usize) -> Answer {
    if answer.starts_with('\u{1b}') {
        return Answer::Nothing;
    }
    match answer.trim() {
        "" if count > 0 => Answer::Pick(0),
        "" | "q" | "n" | "new" => Answer::Nothing,
        number => match number.parse::<usize>() {
            Ok(n) if (1..=count).contains(&n) => Answer::Pick(n - 1),
            _ => Answer::Invalid,
        },
    }
}

fn question(count: usize) -> String {
    format!("resume which? [1-{count}, Enter: 1, q: none] ")
}

/// `dsh -r` without an id, before the session starts: asks on stdin; the
/// id picked, or `None` for a new session.
pub fn pick_at_start(home: &Path, cwd: &Path) -> anyhow::Result<Option<String>> {
    let sessions = candidates(home, cwd, None)?;
    let mut out = std::io::stdout().lock();
    if sessions.is_empty() {
        writeln!(
            out,
            "no session to resume in this directory: starting a new one"
        )?;
        return Ok(None);
    }
    writeln!(out, "{}", render(&sessions))?;
    let stdin = std::io::stdin();
    loop {
        write!(out, "{}", question(sessions.len()))?;
        out.flush()?;
        let mut answer = String::new();
        if stdin.lock().read_line(&mut answer)? == 0 {
            return Ok(None);
        }
        match parse_choice(&answer, sessions.len()) {
            Answer::Pick(index) => return Ok(Some(sessions[index].id.clone())),
            Answer::Nothing => return Ok(None),
            Answer::Invalid => writeln!(out, "answer a number from 1 to {}", sessions.len())?,
        }
    }
}

/// `/resume` in a running session: the id picked, or `None` to stay.
pub(crate) async fn pick_in_session(
    term: &Terminal,
    input: &SharedInput,
    home: &Path,
    cwd: &Path,
    current: &str,
) -> anyhow::Result<Option<String>> {
    let sessions = candidates(home, cwd, Some(current))?;
    if sessions.is_empty() {
        term.lines(Tone::Plain, "no other session in this directory");
        return Ok(None);
    }
    term.lines(Tone::Plain, &render(&sessions));
    loop {
        term.prompt(&question(sessions.len()));
        let answer = match next_input(input).await {
            Input::Line(line) => line,
            Input::Eof | Input::Stopped => return Ok(None),
        };
        match parse_choice(&answer, sessions.len()) {
            Answer::Pick(index) => return Ok(Some(sessions[index].id.clone())),
            Answer::Nothing => return Ok(None),
            Answer::Invalid => term.lines(
                Tone::Dim,
                &format!("answer a number from 1 to {}", sessions.len()),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_pick_by_number_enter_takes_the_newest_and_q_none() {
        assert_eq!(parse_choice("2\n", 3), Answer::Pick(1));
        assert_eq!(parse_choice("\n", 3), Answer::Pick(0));
        assert_eq!(parse_choice("q", 3), Answer::Nothing);
        assert_eq!(parse_choice("\u{1b}", 3), Answer::Nothing);
        assert_eq!(parse_choice("4", 3), Answer::Invalid);
        assert_eq!(parse_choice("x", 3), Answer::Invalid);
    }
}
