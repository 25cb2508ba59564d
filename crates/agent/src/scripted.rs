//! A model that serves a fixture's scripted replies and records every request.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use async_trait::async_trait;
use dsh_model::{Model, ModelError, StreamSink};
use dsh_protocol::{ModelReply, ModelRequest, RequestRecord};

/// One scripted model step.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptStep {
    /// A reply.
    Reply(ModelReply),
    /// A simulated provider failure.
    Error(ModelError),
}

/// Called with each request as it is received (`--requests-out` writes it
/// out), in place of keeping it.
pub type RequestSink = Box<dyn FnMut(&RequestRecord) + Send>;

/// What happens to each request the model receives.
enum Recording {
    /// Kept in memory for [`ScriptedModel::requests`] (tests, resumes).
    Keep(Vec<RequestRecord>),
    /// Handed to a sink and dropped: every request carries the whole
    /// conversation, so keeping them all grows with the square of the steps.
    Stream(RequestSink),
}

struct ScriptState {
    steps: VecDeque<ScriptStep>,
    served: usize,
    recording: Recording,
}

impl std::fmt::Debug for ScriptState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptState")
            .field("steps", &self.steps)
            .field("served", &self.served)
            .field(
                "recording",
                &match &self.recording {
                    Recording::Keep(requests) => format!("kept ({})", requests.len()),
                    Recording::Stream(_) => "streamed".to_owned(),
                },
            )
            .finish()
    }
}

/// Serves scripted replies in order, one per request, across the whole
/// session; fails with a clear error (naming the fixture and the step) when
/// the script runs out.
#[derive(Debug)]
pub struct ScriptedModel {
    label: String,
    state: Mutex<ScriptState>,
}

impl ScriptedModel {
    /// A model serving `steps`; `label` names the fixture in errors.
    pub fn new(label: impl Into<String>, steps: Vec<ScriptStep>) -> Self {
        ScriptedModel {
            label: label.into(),
            state: Mutex::new(ScriptState {
                steps: steps.into(),
                served: 0,
                recording: Recording::Keep(Vec::new()),
            }),
        }
    }

    /// A model serving `steps` that hands each request to `sink` instead of
    /// keeping it ([`ScriptedModel::requests`] is then empty): memory stays
    /// linear in the session's length.
    pub fn streaming(label: impl Into<String>, steps: Vec<ScriptStep>, sink: RequestSink) -> Self {
        ScriptedModel {
            label: label.into(),
            state: Mutex::new(ScriptState {
                steps: steps.into(),
                served: 0,
                recording: Recording::Stream(sink),
            }),
        }
    }

    /// Every request received so far, in order (none when streaming).
    pub fn requests(&self) -> Vec<RequestRecord> {
        match &self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recording
        {
            Recording::Keep(requests) => requests.clone(),
            Recording::Stream(_) => Vec::new(),
        }
    }

    /// The requests received after the first `skip` (none when streaming).
    pub fn requests_since(&self, skip: usize) -> Vec<RequestRecord> {
        match &self
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recording
        {
            Recording::Keep(requests) => requests.get(skip..).unwrap_or_default().to_vec(),
            Recording::Stream(_) => Vec::new(),
        }
    }

    /// How many requests were received so far.
    pub fn served(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .served
    }

    /// Steps not yet served.
    pub fn remaining(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .steps
            .len()
    }
}

#[async_trait]
impl Model for ScriptedModel {
    async fn complete(
        &self,
        request: &ModelRequest,
        sink: &mut dyn StreamSink,
    ) -> Result<ModelReply, ModelError> {
        let step = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let record = RequestRecord::from(request);
            match &mut state.recording {
                Recording::Keep(requests) => requests.push(record),
                Recording::Stream(sink) => sink(&record),
            }
            state.served += 1;
            match state.steps.pop_front() {
                Some(step) => step,
                None => {
                    return Err(ModelError::new(format!(
                        "{}: the script ran out of model steps: request {} (turn {}, step {}) has no `model` entry left",
                        self.label, state.served, request.turn, request.step
                    )));
                }
            }
        };
        match step {
            ScriptStep::Reply(reply) => {
                if !reply.text.is_empty() {
                    sink.text_delta(&reply.text);
                }
                Ok(reply)
            }
            ScriptStep::Error(error) => Err(error),
        }
    }

    fn name(&self) -> String {
        "scripted".to_owned()
    }
}
