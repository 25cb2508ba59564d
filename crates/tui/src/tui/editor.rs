//! The prompt's line editor: `reedline` on a thread of its own.
//!
//! The editor runs only while dsh waits at the prompt (the main loop asks
//! for a line with [`Editor::request`]); while a turn runs the terminal is
//! back in its cooked mode, so a line typed meanwhile (a queued prompt, the
//! answer to an approval question) is read whole by the same thread, and
//! Ctrl-C reaches dsh as SIGINT and interrupts the turn.
//!
//! What the editor offers: persistent history per project
//! (`$DSH_HOME/history/<project-hash>.txt`), Ctrl-R history search,
//! multi-line prompts (Alt-Enter, or a line ending in `\`), Tab completion of
//! slash commands and `@path` file mentions, Ctrl-O for `/verbose`,
//! Shift-Tab for `/mode`.
//!
//! A terminal that cannot be driven (`TERM=dumb`, or reedline failing to
//! start, e.g. a terminal that does not answer the cursor-position query)
//! gets the plain line reader instead.

use std::io::{Read as _, Write as _};
use std::os::fd::AsFd as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use anyhow::Context as _;
use reedline::{
    ColumnarMenu, Completer, EditCommand, Emacs, FileBackedHistory, KeyCode, KeyModifiers,
    MenuBuilder as _, Prompt, PromptEditMode, PromptHistorySearch, PromptHistorySearchStatus,
    Reedline, ReedlineEvent, ReedlineMenu, Signal, Span, Suggestion, ValidationResult, Validator,
};
use sha2::Digest as _;

use super::slash;

/// How many entries the history file keeps.
const HISTORY_ENTRIES: usize = 5_000;
/// How often the thread looks for typed-ahead input while a turn runs.
const COOKED_POLL: Duration = Duration::from_millis(50);
/// The name of the completion menu (Tab).
const COMPLETION_MENU: &str = "completion_menu";

/// What the person at the terminal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorEvent {
    /// A line (or a multi-line prompt) was entered.
    Line(String),
    /// End of input: Ctrl-D on an empty prompt, or stdin closed.
    Eof,
    /// Ctrl-C at the prompt.
    Interrupt,
}

/// Which input reader the session uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMode {
    /// reedline at the prompt (stdin and stdout are a capable terminal).
    Editor,
    /// Whole lines from stdin (a pipe, a file, `TERM=dumb`).
    Lines,
}

impl InputMode {
    /// The mode for this process: the editor needs stdin and stdout on a
    /// terminal that is not `TERM=dumb`.
    pub fn detect(stdin_tty: bool, stdout_tty: bool) -> Self {
        let dumb = std::env::var("TERM").is_ok_and(|term| term == "dumb" || term.is_empty());
        if stdin_tty && stdout_tty && !dumb {
            InputMode::Editor
        } else {
            InputMode::Lines
        }
    }
}

/// The editor's settings.
pub struct EditorConfig {
    /// The history file.
    pub history: PathBuf,
    /// The project directory (`@path` completion is relative to it).
    pub cwd: PathBuf,
    /// Colour in the prompt and menus.
    pub color: bool,
    /// Set while the editor holds the terminal in raw mode (other output
    /// then writes `\r\n` line ends).
    pub editing: Arc<AtomicBool>,
}

/// The handle the main loop keeps: asks the thread for the next line.
pub struct Editor {
    requests: mpsc::Sender<()>,
}

impl Editor {
    /// Asks for the next prompt line; the answer arrives through the
    /// `deliver` callback given to [`spawn`]. A line already typed ahead
    /// (while the last turn ran) is delivered instead of opening the editor.
    pub fn request(&self) {
        let _ = self.requests.send(());
    }
}

/// `$DSH_HOME/history/<hash>.txt`: one history per project directory (the
/// first 16 hex digits of the SHA-256 of its path).
pub fn history_path(dsh_home: &Path, cwd: &Path) -> PathBuf {
    let digest = sha2::Sha256::digest(cwd.as_os_str().as_encoded_bytes());
    let hex: String = digest
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    dsh_home.join("history").join(format!("{hex}.txt"))
}

/// Starts the input thread. In [`InputMode::Lines`] it reads stdin line by
/// line for good; in [`InputMode::Editor`] it opens the editor on each
/// [`Editor::request`] and reads cooked lines in between. `deliver` returns
/// false once nobody listens any more (the thread then ends).
pub fn spawn(
    mode: InputMode,
    config: EditorConfig,
    deliver: Box<dyn Fn(EditorEvent) -> bool + Send>,
) -> anyhow::Result<Editor> {
    let (requests, request_rx) = mpsc::channel::<()>();
    std::thread::Builder::new()
        .name("dsh-input".to_owned())
        .spawn(move || match mode {
            InputMode::Lines => read_lines_forever(&*deliver),
            InputMode::Editor => editor_loop(&config, &request_rx, &*deliver),
        })
        .context("cannot start the input thread")?;
    Ok(Editor { requests })
}

/// Splits cooked input into lines, keeping an unfinished tail.
#[derive(Default)]
struct LineSplitter {
    pending: Vec<u8>,
}

impl LineSplitter {
    fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(end) = self.pending.iter().position(|byte| *byte == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let text = String::from_utf8_lossy(&line[..end]);
            lines.push(text.trim_end_matches('\r').to_owned());
        }
        lines
    }
}

/// One read of stdin: `None` at end of input. In canonical mode a read
/// returns at most one line, so it never blocks once poll said readable.
fn read_chunk() -> Option<Vec<u8>> {
    // At least std's buffer size, so the read goes straight to the fd
    // whenever std holds nothing (what reedline reads must not sit in it).
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match std::io::stdin().lock().read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => {
                buf.truncate(n);
                return Some(buf);
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => {
                tracing::warn!("cannot read stdin: {error}");
                return None;
            }
        }
    }
}

fn read_lines_forever(deliver: &dyn Fn(EditorEvent) -> bool) {
    let mut splitter = LineSplitter::default();
    loop {
        let Some(chunk) = read_chunk() else {
            let tail = std::mem::take(&mut splitter.pending);
            if !tail.is_empty() {
                let _ = deliver(EditorEvent::Line(
                    String::from_utf8_lossy(&tail).into_owned(),
                ));
            }
            let _ = deliver(EditorEvent::Eof);
            return;
        };
        for line in splitter.push(&chunk) {
            if !deliver(EditorEvent::Line(line)) {
                return;
            }
        }
    }
}

/// Whether stdin has something to read right now (in cooked mode: a whole
/// line, or end of input).
fn stdin_ready() -> bool {
    let stdin = std::io::stdin();
    let mut fds = [nix::poll::PollFd::new(
        stdin.as_fd(),
        nix::poll::PollFlags::POLLIN,
    )];
    matches!(nix::poll::poll(&mut fds, nix::poll::PollTimeout::ZERO), Ok(n) if n > 0)
}

fn editor_loop(
    config: &EditorConfig,
    requests: &mpsc::Receiver<()>,
    deliver: &dyn Fn(EditorEvent) -> bool,
) {
    let mut splitter = LineSplitter::default();
    let mut editor: Option<Reedline> = None;
    let mut broken = false;
    // Lines read in cooked mode (typed ahead) go out before any editor
    // opens, and into the history as typed prompts do.
    let cooked = |splitter: &mut LineSplitter, editor: &mut Option<Reedline>| -> bool {
        if !stdin_ready() {
            return true;
        }
        match read_chunk() {
            Some(chunk) => splitter.push(&chunk).into_iter().all(|line| {
                remember(editor.get_or_insert_with(|| build(config)), &line);
                deliver(EditorEvent::Line(line))
            }),
            None => {
                let _ = deliver(EditorEvent::Eof);
                false
            }
        }
    };
    loop {
        match requests.recv_timeout(COOKED_POLL) {
            Ok(()) => {
                if stdin_ready() {
                    // Typed while the last turn ran: that is the next prompt.
                    if !cooked(&mut splitter, &mut editor) {
                        return;
                    }
                    continue;
                }
                if broken {
                    // The editor could not run: wait for a cooked line.
                    match read_chunk() {
                        Some(chunk) => {
                            for line in splitter.push(&chunk) {
                                if !deliver(EditorEvent::Line(line)) {
                                    return;
                                }
                            }
                        }
                        None => {
                            let _ = deliver(EditorEvent::Eof);
                            return;
                        }
                    }
                    continue;
                }
                let reedline = editor.get_or_insert_with(|| build(config));
                let prompt = DshPrompt;
                config.editing.store(true, Ordering::SeqCst);
                let read = reedline.read_line(&prompt);
                config.editing.store(false, Ordering::SeqCst);
                let event = match read {
                    Ok(Signal::Success(text)) => {
                        // On disk before the prompt is sent, as a shell's
                        // history is: nothing waits for this thread at exit.
                        sync_history(reedline);
                        EditorEvent::Line(join_continuations(&text))
                    }
                    // Ctrl-O is bound to `/verbose`, Shift-Tab to `/mode`: shown after the prompt,
                    // as if typed, so its output starts on a line of its own.
                    Ok(Signal::HostCommand(command)) => {
                        let mut stdout = std::io::stdout().lock();
                        let _ = writeln!(stdout, "{command}");
                        let _ = stdout.flush();
                        EditorEvent::Line(command)
                    }
                    Ok(Signal::CtrlC | Signal::ExternalBreak(_)) => EditorEvent::Interrupt,
                    Ok(Signal::CtrlD) => EditorEvent::Eof,
                    // `Signal` is non-exhaustive: anything new ends the
                    // edit without sending (an empty line is ignored).
                    #[allow(clippy::wildcard_enum_match_arm)]
                    Ok(_) => EditorEvent::Line(String::new()),
                    Err(error) => {
                        // e.g. the terminal never answered the cursor query.
                        broken = true;
                        let _ = crossterm::terminal::disable_raw_mode();
                        tracing::warn!("the line editor stopped ({error}); reading plain lines");
                        let _ = deliver(EditorEvent::Line(String::new()));
                        continue;
                    }
                };
                let eof = event == EditorEvent::Eof;
                if !deliver(event) || eof {
                    return;
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                if !cooked(&mut splitter, &mut editor) {
                    return;
                }
            }
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// Writes the history's new entries to its file now (appended and flushed
/// under the file's lock) rather than when the editor is dropped.
fn sync_history(reedline: &mut Reedline) {
    if let Err(error) = reedline.sync_history() {
        tracing::warn!("could not save the prompt history: {error}");
    }
}

/// Adds a prompt read outside the editor (typed ahead while a turn ran) to
/// the history, and saves it.
fn remember(reedline: &mut Reedline, line: &str) {
    if line.trim().is_empty() {
        return;
    }
    let item = reedline::HistoryItem::from_command_line(line);
    if let Err(error) = reedline.history_mut().save(item) {
        tracing::warn!("could not add a prompt to the history: {error}");
        return;
    }
    sync_history(reedline);
}

/// Restores the terminal's cooked mode: for a session that ends (a signal)
/// while the editor holds the terminal in raw mode.
pub fn restore_terminal() {
    let _ = crossterm::terminal::disable_raw_mode();
}

fn build(config: &EditorConfig) -> Reedline {
    let mut keybindings = reedline::default_emacs_keybindings();
    keybindings.add_binding(
        KeyModifiers::ALT,
        KeyCode::Enter,
        ReedlineEvent::Edit(vec![EditCommand::InsertNewline]),
    );
    keybindings.add_binding(
        KeyModifiers::SHIFT,
        KeyCode::Enter,
        ReedlineEvent::Edit(vec![EditCommand::InsertNewline]),
    );
    keybindings.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::Menu(COMPLETION_MENU.to_owned()),
            ReedlineEvent::MenuNext,
        ]),
    );
    keybindings.add_binding(
        KeyModifiers::CONTROL,
        KeyCode::Char('o'),
        ReedlineEvent::ExecuteHostCommand("/verbose".to_owned()),
    );
    // Shift-Tab cycles the permission mode (terminals send it as BackTab,
    // with or without the Shift modifier).
    for modifiers in [KeyModifiers::SHIFT, KeyModifiers::NONE] {
        keybindings.add_binding(
            modifiers,
            KeyCode::BackTab,
            ReedlineEvent::ExecuteHostCommand("/mode".to_owned()),
        );
    }
    let menu = ColumnarMenu::default().with_name(COMPLETION_MENU);
    let mut editor = Reedline::create()
        .with_edit_mode(Box::new(Emacs::new(keybindings)))
        .with_completer(Box::new(DshCompleter {
            cwd: config.cwd.clone(),
        }))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        // One match completes at once; several complete their common prefix
        // and open the menu.
        .with_quick_completions(true)
        .with_partial_completions(true)
        .with_validator(Box::new(ContinuationValidator))
        .with_ansi_colors(config.color);
    if let Some(dir) = config.history.parent() {
        let _ = dsh_session::create_private_dir(dir);
    }
    match FileBackedHistory::with_file(HISTORY_ENTRIES, config.history.clone()) {
        Ok(history) => editor = editor.with_history(Box::new(history)),
        Err(error) => tracing::warn!(
            "no persistent history ({}): {error}",
            config.history.display()
        ),
    }
    editor
}

/// A prompt line ending in `\` continues on the next line.
struct ContinuationValidator;

impl Validator for ContinuationValidator {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// `first \⏎second` → `first ⏎second`: the `\` only asked for the newline.
pub fn join_continuations(text: &str) -> String {
    text.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

struct DshPrompt;

impl Prompt for DshPrompt {
    fn render_prompt_left(&self) -> std::borrow::Cow<'_, str> {
        "".into()
    }
    fn render_prompt_right(&self) -> std::borrow::Cow<'_, str> {
        "".into()
    }
    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> std::borrow::Cow<'_, str> {
        "> ".into()
    }
    fn render_prompt_multiline_indicator(&self) -> std::borrow::Cow<'_, str> {
        "… ".into()
    }
    fn render_prompt_history_search_indicator(
        &self,
        search: PromptHistorySearch,
    ) -> std::borrow::Cow<'_, str> {
        let state = match search.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        format!("({state}history search: {}) ", search.term).into()
    }
    fn get_prompt_color(&self) -> reedline::Color {
        reedline::Color::Cyan
    }
    fn get_indicator_color(&self) -> reedline::Color {
        reedline::Color::Cyan
    }
}

/// Completes `/commands` at the start of the prompt and `@path` mentions
/// anywhere in it.
struct DshCompleter {
    cwd: PathBuf,
}

impl Completer for DshCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> Vec<Suggestion> {
        let Some(before) = line.get(..pos) else {
            return Vec::new();
        };
        let start = before.rfind(char::is_whitespace).map_or(0, |index| {
            index + before[index..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[start..];
        let span = Span::new(start, pos);
        if start == 0 && word.starts_with('/') {
            return slash::COMMANDS
                .iter()
                .filter(|command| command.name.starts_with(word))
                .map(|command| suggestion(command.name.to_owned(), Some(command.about), span, true))
                .collect();
        }
        if let Some(partial) = word.strip_prefix('@') {
            return path_completions(&self.cwd, partial)
                .into_iter()
                .map(|(path, is_dir)| suggestion(format!("@{path}"), None, span, !is_dir))
                .collect();
        }
        Vec::new()
    }
}

fn suggestion(value: String, about: Option<&str>, span: Span, space: bool) -> Suggestion {
    Suggestion {
        value,
        display_override: None,
        description: about.map(str::to_owned),
        style: None,
        extra: None,
        span,
        append_whitespace: space,
        match_indices: None,
    }
}

/// Entries of the directory `partial` names (relative to `cwd`) that start
/// with its last component: (the completed path, whether a directory).
/// Hidden entries only when the component starts with a dot.
pub fn path_completions(cwd: &Path, partial: &str) -> Vec<(String, bool)> {
    let (dir, prefix) = match partial.rfind('/') {
        Some(index) => (&partial[..=index], &partial[index + 1..]),
        None => ("", partial),
    };
    let base = if dir.is_empty() {
        cwd.to_owned()
    } else {
        cwd.join(dir)
    };
    let Ok(entries) = fs_err::read_dir(&base) else {
        return Vec::new();
    };
    let mut found: Vec<(String, bool)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
            let slash = if is_dir { "/" } else { "" };
            Some((format!("{dir}{name}{slash}"), is_dir))
        })
        .collect();
    found.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooked_input_splits_into_lines_and_keeps_the_tail() {
        let mut splitter = LineSplitter::default();
        assert_eq!(splitter.push(b"one\r\ntw"), vec!["one".to_owned()]);
        assert_eq!(
            splitter.push(b"o\nthree\n"),
            vec!["two".to_owned(), "three".to_owned()]
        );
        assert!(splitter.pending.is_empty());
    }

    #[test]
    fn a_trailing_backslash_asks_for_another_line_and_is_dropped() {
        assert!(matches!(
            ContinuationValidator.validate("first \\"),
            ValidationResult::Incomplete
        ));
        assert!(matches!(
            ContinuationValidator.validate("done"),
            ValidationResult::Complete
        ));
        assert_eq!(join_continuations("first \\\nsecond"), "first \nsecond");
    }

    #[test]
    fn history_is_per_project() {
        let home = Path::new("/h/.dsh");
        let a = history_path(home, Path::new("/src/a"));
        let b = history_path(home, Path::new("/src/b"));
        assert_ne!(a, b);
        assert!(a.starts_with("/h/.dsh/history"));
        assert_eq!(a, history_path(home, Path::new("/src/a")));
    }

    #[test]
    fn completion_offers_commands_and_paths() {
        let dir = tempfile::tempdir().unwrap();
        fs_err::create_dir(dir.path().join("src")).unwrap();
        fs_err::write(dir.path().join("src/main.rs"), "").unwrap();
        fs_err::write(dir.path().join(".hidden"), "").unwrap();
        let mut completer = DshCompleter {
            cwd: dir.path().to_owned(),
        };
        let values = |found: Vec<Suggestion>| -> Vec<String> {
            found.into_iter().map(|s| s.value).collect()
        };
        assert_eq!(values(completer.complete("/he", 3)), ["/help"]);
        assert_eq!(values(completer.complete("look at @s", 10)), ["@src/"]);
        assert_eq!(
            values(completer.complete("look at @src/m", 14)),
            ["@src/main.rs"]
        );
        assert!(
            values(completer.complete("@", 1))
                .iter()
                .all(|v| v != "@.hidden")
        );
        // `/` inside a prompt is no command.
        assert!(completer.complete("a /he", 5).is_empty());
    }
}
