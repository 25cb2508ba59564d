//! `ToolContext::elicit`: the order Claude Code follows for an MCP server's
//! question (`ev_elicit_*`): the elicitation seam may answer in the
//! person's place (then nobody is asked and the result seam does not run);
//! else the person is asked (`cancel` when nobody can be), the result seam
//! may change the answer, and an `elicitation_response` notification says
//! what went back.

#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use dsh_seams::{
    ApprovalResponse, CancellationToken, ElicitationAction, ElicitationAnswer, ElicitationMode,
    ElicitationRequest, Notification, Plugin, SeamContext, ToolExecution,
};
use dsh_tools::{ApprovalService, ToolContext};
use serde_json::json;

type Trail = Arc<Mutex<Vec<String>>>;

/// A listener that records what it is asked and answers as told.
struct Listener {
    trail: Trail,
    answer_first: Option<ElicitationAnswer>,
    change_result: Option<ElicitationAnswer>,
}

#[async_trait]
impl Plugin for Listener {
    fn name(&self) -> &str {
        "listener"
    }

    async fn elicitation(
        &self,
        _ctx: &SeamContext,
        request: &ElicitationRequest,
    ) -> Option<ElicitationAnswer> {
        self.trail
            .lock()
            .unwrap()
            .push(format!("elicitation {}", request.server));
        self.answer_first.clone()
    }

    async fn elicitation_result(
        &self,
        _ctx: &SeamContext,
        _request: &ElicitationRequest,
        answer: &ElicitationAnswer,
    ) -> Option<ElicitationAnswer> {
        self.trail
            .lock()
            .unwrap()
            .push(format!("result {}", answer.action.as_str()));
        self.change_result.clone()
    }

    async fn notification(&self, _ctx: &SeamContext, notification: &Notification) {
        self.trail
            .lock()
            .unwrap()
            .push(format!("notification {}", notification.message));
    }
}

/// A person who accepts with a name.
struct Person(Trail);

#[async_trait]
impl ApprovalService for Person {
    async fn request(&self, _exec: &ToolExecution, _reason: Option<&str>) -> ApprovalResponse {
        ApprovalResponse::AllowedOnce
    }

    async fn elicit(&self, _request: &ElicitationRequest) -> ElicitationAnswer {
        self.0.lock().unwrap().push("person".to_owned());
        ElicitationAnswer {
            action: ElicitationAction::Accept,
            content: Some(json!({"name": "Ada"})),
        }
    }
}

fn request() -> ElicitationRequest {
    ElicitationRequest {
        server: "elicit".into(),
        message: "What is your name?".into(),
        mode: ElicitationMode::Form,
        requested_schema: Some(json!({"type": "object", "properties": {}})),
        url: None,
        elicitation_id: None,
    }
}

fn context(
    trail: &Trail,
    answer_first: Option<ElicitationAnswer>,
    change_result: Option<ElicitationAnswer>,
    person: bool,
) -> ToolContext {
    let mut ctx = ToolContext::new(std::env::temp_dir(), CancellationToken::new());
    ctx.seam = Some(SeamContext::detached(std::env::temp_dir()));
    ctx.set_plugins(vec![Arc::new(Listener {
        trail: Arc::clone(trail),
        answer_first,
        change_result,
    })]);
    if person {
        ctx.set_asker(Some(Arc::new(Person(Arc::clone(trail)))));
    }
    ctx
}

#[tokio::test]
async fn a_listeners_answer_skips_the_person_and_the_result_seam() {
    let trail = Trail::default();
    let decline = ElicitationAnswer::bare(ElicitationAction::Decline);
    let ctx = context(&trail, Some(decline.clone()), None, true);
    assert_eq!(ctx.elicit(&request()).await, decline);
    assert_eq!(*trail.lock().unwrap(), ["elicitation elicit"]);
}

#[tokio::test]
async fn the_person_answers_then_the_result_seam_may_change_it() {
    let trail = Trail::default();
    let ctx = context(&trail, None, None, true);
    let answer = ctx.elicit(&request()).await;
    assert_eq!(answer.action, ElicitationAction::Accept);
    assert_eq!(answer.content, Some(json!({"name": "Ada"})));
    assert_eq!(
        *trail.lock().unwrap(),
        [
            "elicitation elicit",
            "person",
            "result accept",
            "notification Elicitation response for server \"elicit\": accept"
        ]
    );

    let trail = Trail::default();
    let cancel = ElicitationAnswer::bare(ElicitationAction::Cancel);
    let ctx = context(&trail, None, Some(cancel.clone()), true);
    assert_eq!(ctx.elicit(&request()).await, cancel);
    assert_eq!(
        trail.lock().unwrap().last().unwrap(),
        "notification Elicitation response for server \"elicit\": cancel"
    );
}

#[tokio::test]
async fn without_a_person_the_answer_is_cancel() {
    let trail = Trail::default();
    let ctx = context(&trail, None, None, false);
    let answer = ctx.elicit(&request()).await;
    assert_eq!(answer, ElicitationAnswer::bare(ElicitationAction::Cancel));
    assert_eq!(
        *trail.lock().unwrap(),
        [
            "elicitation elicit",
            "result cancel",
            "notification Elicitation response for server \"elicit\": cancel"
        ]
    );
}
