//! The signals that end a session: SIGINT (Ctrl-C), SIGTERM and SIGHUP (the
//! terminal went away).
//!
//! All three are taken over as soon as the async runtime exists, before the
//! session-start hooks run, so none of them kills dsh outright: each cancels
//! what is running, the owners of hook and tool processes kill their
//! process groups, the open turn closes `interrupted`, the session-end hooks
//! run within their budget, and dsh exits with the shell's code for the
//! signal (130, 143, 129). A second signal while that happens kills the
//! remaining process groups and exits at once.

use anyhow::Context as _;
use tokio::signal::unix::{Signal, SignalKind, signal};

/// Which signal asked dsh to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGINT.
    Interrupt,
    /// SIGTERM.
    Terminate,
    /// SIGHUP.
    Hangup,
}

impl Stop {
    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Stop::Interrupt => "SIGINT",
            Stop::Terminate => "SIGTERM",
            Stop::Hangup => "SIGHUP",
        }
    }
}

/// The three handlers. Must be created inside the runtime.
pub struct Signals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl Signals {
    /// Installs the handlers (from now on these signals no longer kill dsh).
    pub fn install() -> anyhow::Result<Self> {
        let install = |kind, name| signal(kind).with_context(|| format!("cannot handle {name}"));
        Ok(Signals {
            interrupt: install(SignalKind::interrupt(), "SIGINT")?,
            terminate: install(SignalKind::terminate(), "SIGTERM")?,
            hangup: install(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// The next signal.
    pub async fn recv(&mut self) -> Stop {
        let stop = tokio::select! {
            got = self.interrupt.recv() => got.map(|()| Stop::Interrupt),
            got = self.terminate.recv() => got.map(|()| Stop::Terminate),
            got = self.hangup.recv() => got.map(|()| Stop::Hangup),
        };
        match stop {
            Some(stop) => stop,
            // A stream only ends when the runtime shuts down: wait forever
            // rather than report a signal nobody sent.
            None => std::future::pending().await,
        }
    }

    /// Only SIGTERM and SIGHUP (the interactive loop reads Ctrl-C itself).
    pub fn split(self) -> (Signal, Terminations) {
        (
            self.interrupt,
            Terminations {
                terminate: self.terminate,
                hangup: self.hangup,
            },
        )
    }
}

/// SIGTERM and SIGHUP without SIGINT.
pub struct Terminations {
    terminate: Signal,
    hangup: Signal,
}

impl Terminations {
    /// The next SIGTERM or SIGHUP.
    pub async fn recv(&mut self) -> Stop {
        let stop = tokio::select! {
            got = self.terminate.recv() => got.map(|()| Stop::Terminate),
            got = self.hangup.recv() => got.map(|()| Stop::Hangup),
        };
        match stop {
            Some(stop) => stop,
            None => std::future::pending().await,
        }
    }
}
