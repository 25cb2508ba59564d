//! Lines typed while a turn runs: Claude Code and Codex
//! hand them to the running turn (Codex "steer"; Claude Code shows them
//! queued and the model sees them at its next request), so dsh pushes them
//! onto the agent's steering queue (`Agent::steering_queue`), delivered
//! before the turn's next model request, instead of running them as turns
//! of their own afterwards.
//!
//! The approval question reads the same input while the turn runs; the
//! `InputGate` gives it the input whenever it asks, so its answer never
//! becomes a steering message.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use dsh_agent::QueueMode;
use tokio::sync::Notify;

use crate::input::{Input, SharedInput};

/// `--queue-mode`: how many typed messages one delivery takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum QueueModeFlag {
    /// Everything typed since the last request goes with the next one.
    All,
    /// One message per model request; the rest wait their turn.
    OneAtATime,
}

impl From<QueueModeFlag> for QueueMode {
    fn from(flag: QueueModeFlag) -> Self {
        match flag {
            QueueModeFlag::All => QueueMode::All,
            QueueModeFlag::OneAtATime => QueueMode::OneAtATime,
        }
    }
}

/// Who reads the session's input while a turn runs: the steering reader,
/// except while a question (the approval prompt) is asked.
#[derive(Debug, Default)]
pub(crate) struct InputGate {
    /// Questions being asked now.
    asking: AtomicUsize,
    /// Wakes the steering reader so it lets go of the input.
    wake: Notify,
}

/// Held while a question reads the input.
pub(crate) struct Asking<'a>(&'a InputGate);

impl Drop for Asking<'_> {
    fn drop(&mut self) {
        self.0.asking.fetch_sub(1, Ordering::SeqCst);
    }
}

impl InputGate {
    /// Takes the input for a question until the guard is dropped.
    pub(crate) fn ask(&self) -> Asking<'_> {
        self.asking.fetch_add(1, Ordering::SeqCst);
        // `notify_one` keeps a permit when the reader is not waiting yet,
        // so a reader between its check and its wait still lets go.
        self.wake.notify_one();
        Asking(self)
    }

    fn is_asking(&self) -> bool {
        self.asking.load(Ordering::SeqCst) > 0
    }
}

/// How often the steering reader looks again while a question is asked.
const ASKING_POLL: Duration = Duration::from_millis(20);

/// The next input typed while the turn runs that no question takes.
/// Cancel-safe: nothing is lost when the turn ends first.
pub(crate) async fn next_typed(input: &SharedInput, gate: &InputGate) -> Input {
    loop {
        if gate.is_asking() {
            tokio::time::sleep(ASKING_POLL).await;
            continue;
        }
        let mut reader = input.lock().await;
        if gate.is_asking() {
            continue;
        }
        tokio::select! {
            biased;
            () = gate.wake.notified() => {}
            got = reader.recv() => return got.unwrap_or(Input::Eof),
        }
    }
}

/// What the terminal does with a line typed while a turn runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Typed {
    /// Delivered to the running turn before its next model request.
    Steer(String),
    /// Kept for the prompt after the turn (a slash command, end of input).
    Later(Input),
    /// Nothing to do (an empty line).
    Ignore,
}

/// Sorts a line typed while a turn runs.
pub(crate) fn classify(input: Input) -> Typed {
    match input {
        Input::Line(line) => {
            let text = line.trim();
            if text.is_empty() {
                Typed::Ignore
            } else if text.starts_with('/') {
                // Commands act on the session, not on the turn's context.
                Typed::Later(Input::Line(line))
            } else {
                Typed::Steer(text.to_owned())
            }
        }
        Input::Eof | Input::Stopped => Typed::Later(input),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn lines_steer_commands_and_the_end_wait() {
        assert_eq!(
            classify(Input::Line("  also check the tests ".into())),
            Typed::Steer("also check the tests".into())
        );
        assert_eq!(
            classify(Input::Line("/status".into())),
            Typed::Later(Input::Line("/status".into()))
        );
        assert_eq!(classify(Input::Line("   ".into())), Typed::Ignore);
        assert_eq!(classify(Input::Eof), Typed::Later(Input::Eof));
    }

    /// The queue mode as a session resolves it (`config.toml` through dsh-core).
    fn configured(
        flag: Option<QueueModeFlag>,
        home: &std::path::Path,
    ) -> dsh_core::Result<QueueMode> {
        dsh_core::DshConfig::load(home)?.queue_mode(flag.map(Into::into))
    }

    #[test]
    fn the_flag_wins_then_the_config_then_all() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(configured(None, home.path()).unwrap(), QueueMode::All);
        fs_err::write(
            home.path().join(dsh_provider::CONFIG_FILE_NAME),
            "[queue]\nmode = \"one-at-a-time\"\n[provider]\nmodel = \"x\"\n",
        )
        .unwrap();
        assert_eq!(
            configured(None, home.path()).unwrap(),
            QueueMode::OneAtATime
        );
        assert_eq!(
            configured(Some(QueueModeFlag::All), home.path()).unwrap(),
            QueueMode::All
        );
        fs_err::write(
            home.path().join(dsh_provider::CONFIG_FILE_NAME),
            "[queue]\nmode = \"sometimes\"\n",
        )
        .unwrap();
        assert!(configured(None, home.path()).is_err());
    }

    #[tokio::test]
    async fn a_question_takes_the_input_from_the_steering_reader() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let input: SharedInput = Arc::new(tokio::sync::Mutex::new(rx));
        let gate = Arc::new(InputGate::default());
        let steering = {
            let (input, gate) = (Arc::clone(&input), Arc::clone(&gate));
            tokio::spawn(async move { next_typed(&input, &gate).await })
        };
        // Let the reader take the input and wait on it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let answer = {
            let _asking = gate.ask();
            tx.send(Input::Line("y".into())).unwrap();
            crate::input::next_input(&input).await
        };
        assert_eq!(answer, Input::Line("y".into()));
        tx.send(Input::Line("steer me".into())).unwrap();
        assert_eq!(steering.await.unwrap(), Input::Line("steer me".into()));
    }
}
