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

#[derive(Debug, Default)]
struct ScriptState {
    steps: VecDeque<ScriptStep>,
    served: usize,
    requests: Vec<RequestRecord>,
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
                requests: Vec::new(),
            }),
        }
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
            .clone()
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
            state.requests.push(RequestRecord::from(request));
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
