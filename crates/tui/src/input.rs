//! What the interactive session reads from stdin, shared by the session
//! loop, the approval prompt and steering.

use std::sync::{Arc, Mutex};

use dsh_seams::CancellationToken;
use tokio::sync::mpsc;

/// One thing read from stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    Line(String),
    Eof,
    /// Not typed: a signal ended the session while dsh waited for input.
    Stopped,
}

pub(crate) type SharedInput = Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Input>>>;
/// The running turn's token, when a turn runs.
pub(crate) type TurnSlot = Arc<Mutex<Option<CancellationToken>>>;

pub(crate) async fn next_input(input: &SharedInput) -> Input {
    input.lock().await.recv().await.unwrap_or(Input::Eof)
}
