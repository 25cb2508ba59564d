//! What the SDK writes on the CLI's stdin: user messages, its control
//! requests, and its answers to the CLI's control requests.

use std::collections::BTreeMap;

use dsh_protocol::PermissionUpdate;
use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// Why a stdin line is not a protocol message.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// Not JSON at all.
    #[error("not a JSON object: {0}")]
    Json(#[source] serde_json::Error),
    /// JSON without a string `type`.
    #[error("the line has no string \"type\"")]
    NoType,
    /// A `type` this protocol does not have.
    #[error("unknown message type {0:?}")]
    UnknownType(String),
    /// A known `type` whose fields do not fit.
    #[error("{kind}: {source}")]
    Fields {
        /// The `type` (and `subtype`, for control requests).
        kind: String,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
}

/// One line from the SDK.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A user message: the next turn's prompt.
    User(UserLine),
    /// A request the SDK sends (`initialize`, `interrupt`, …).
    ControlRequest {
        /// Echoed in the answer.
        request_id: String,
        /// The request.
        request: SdkRequest,
    },
    /// The SDK's answer to a request of the CLI's.
    ControlResponse(ControlAnswer),
    /// The SDK withdraws a request it sent (`control_cancel_request`).
    ControlCancel {
        /// The request withdrawn.
        request_id: String,
    },
    /// `keep_alive`: nothing to do.
    KeepAlive,
}

/// A user message line:
/// `{"type":"user","session_id":"","message":{"role":"user","content":…},"parent_tool_use_id":null}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserLine {
    /// The SDK sends `""`; a resumed session is named by `--resume`.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The Anthropic-style message.
    pub message: UserMessage,
    /// Set for messages inside a subagent; `null` from applications.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// An id the application chose, if any.
    #[serde(default)]
    pub uuid: Option<String>,
}

/// The `message` of a user line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserMessage {
    /// Always `user`.
    #[serde(default)]
    pub role: Option<String>,
    /// A string (Python, async iterables) or content blocks (TypeScript).
    pub content: UserContent,
}

/// User content: a string or a list of content blocks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// Plain text.
    Text(String),
    /// Anthropic content blocks (`{"type":"text","text":…}`, images, …).
    Blocks(Vec<Loose<InputBlock>>),
}

/// What dsh reads of a user message's content block: its `type` and
/// `text` (a key of another type reads as absent).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct InputBlock {
    #[serde(rename = "type", default)]
    kind: Option<Loose<String>>,
    #[serde(default)]
    text: Option<Loose<String>>,
}

impl InputBlock {
    /// `type` and `text`, each when a string.
    fn fields(&self) -> (Option<&str>, Option<&str>) {
        (
            self.kind.as_ref().and_then(Loose::get).map(String::as_str),
            self.text.as_ref().and_then(Loose::get).map(String::as_str),
        )
    }
}

/// A value of the expected type, or a note that the SDK sent another.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Loose<T> {
    /// The expected type.
    Is(T),
    /// Something else, not kept.
    Not(IgnoredAny),
}

impl<T> Loose<T> {
    /// The value, when it has the expected type.
    pub fn get(&self) -> Option<&T> {
        match self {
            Loose::Is(value) => Some(value),
            Loose::Not(_) => None,
        }
    }

    /// The value, when it has the expected type, taken.
    pub fn ok(self) -> Option<T> {
        match self {
            Loose::Is(value) => Some(value),
            Loose::Not(_) => None,
        }
    }
}

impl UserContent {
    /// The text of the message: a string as it is, text blocks joined by
    /// newlines. `Err` names the first block that is not text (dsh takes
    /// text prompts).
    pub fn text(&self) -> Result<String, String> {
        match self {
            UserContent::Text(text) => Ok(text.clone()),
            UserContent::Blocks(blocks) => {
                let mut parts = Vec::with_capacity(blocks.len());
                for block in blocks {
                    let fields = block.get().map_or((None, None), InputBlock::fields);
                    match fields {
                        (Some("text"), Some(text)) => parts.push(text.to_owned()),
                        (kind, _) => {
                            return Err(format!(
                                "dsh takes text prompts; this message holds a {:?} block",
                                kind.unwrap_or("untyped")
                            ));
                        }
                    }
                }
                Ok(parts.join("\n"))
            }
        }
    }
}

/// A control request from the SDK, by `subtype`.
#[derive(Debug, Clone, PartialEq)]
pub enum SdkRequest {
    /// Always first: hooks, SDK MCP servers, the system prompt.
    Initialize(InitializeRequest),
    /// Stop the running turn.
    Interrupt,
    /// `{"subtype":"set_permission_mode","mode":"acceptEdits"}`.
    SetPermissionMode {
        /// Claude Code's mode name.
        mode: String,
    },
    /// `{"subtype":"set_model","model":"claude-haiku-4-5"}`; no model: the default.
    SetModel {
        /// The model.
        model: Option<String>,
    },
    /// A subtype dsh does not serve (`mcp_status`, `rewind_files`, …): answered
    /// with an error naming it.
    Other {
        /// The subtype.
        subtype: String,
    },
}

/// `initialize`. TypeScript leaves undefined fields out; Python sends
/// `"hooks": null` when there are none.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequest {
    /// SDK hook callbacks by event, in registration order.
    #[serde(default)]
    pub hooks: Option<HookRegistrations>,
    /// Names of in-process MCP servers (TypeScript).
    #[serde(default)]
    pub sdk_mcp_servers: Option<Vec<String>>,
    /// Their `initialize` and `tools/list` results (TypeScript).
    #[serde(default)]
    pub sdk_mcp_server_manifests: Option<BTreeMap<String, crate::ServerManifest>>,
    /// The system prompt: `[""]` by default, `["<text>"]` for a string.
    #[serde(default, deserialize_with = "string_or_list")]
    pub system_prompt: Option<Vec<String>>,
    /// Text appended to the default system prompt (`preset` + `append`).
    #[serde(default)]
    pub append_system_prompt: Option<String>,
}

fn string_or_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        One(String),
        Many(Vec<String>),
    }
    Ok(
        Option::<Either>::deserialize(d)?.map(|either| match either {
            Either::One(text) => vec![text],
            Either::Many(list) => list,
        }),
    )
}

/// One matcher group of an event's SDK hooks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HookMatcher {
    /// The tool-name matcher (Claude Code's syntax); absent or `null`: all.
    #[serde(default)]
    pub matcher: Option<String>,
    /// `hook_0`, `hook_1`, … counted across all events.
    pub hook_callback_ids: Vec<String>,
    /// Seconds, when the application set one.
    #[serde(default)]
    pub timeout: Option<f64>,
}

/// `initialize.hooks`: event name → matcher groups, in the order sent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookRegistrations(pub Vec<(String, Vec<HookMatcher>)>);

impl<'de> Deserialize<'de> for HookRegistrations {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Ordered;
        impl<'de> Visitor<'de> for Ordered {
            type Value = HookRegistrations;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of hook event names to matcher lists")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut events = Vec::new();
                while let Some((event, matchers)) = map.next_entry::<String, Vec<HookMatcher>>()? {
                    events.push((event, matchers));
                }
                Ok(HookRegistrations(events))
            }
        }
        d.deserialize_map(Ordered)
    }
}

/// The SDK's answer to one of the CLI's control requests.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlAnswer {
    /// The request answered.
    pub request_id: String,
    /// `success` with its payload, or `error` with its message.
    pub result: Result<AnswerLine, String>,
}

/// A `success` answer's payload, kept as the line it came in: its type is
/// the request's (a [`PermissionAnswer`], an [`McpAnswer`], a hook's
/// output), which only the side that asked knows, so that side reads it
/// with [`AnswerLine::read`], straight from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerLine {
    line: String,
}

/// `{"response": {"response": T}}`: a `control_response` line read again
/// for its payload.
#[derive(Deserialize)]
struct WholeAnswer<T> {
    response: AnswerBody<T>,
}

/// The `response` of a `control_response` line, for its payload.
#[derive(Deserialize)]
struct AnswerBody<T> {
    /// Absent (or `null`) when the SDK sent no payload.
    response: Option<T>,
}

impl AnswerLine {
    /// The payload (`response.response`) as a `T`; an answer without one
    /// reads as JSON `null` does.
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let whole: WholeAnswer<T> = serde_json::from_str(&self.line)?;
        match whole.response.response {
            Some(payload) => Ok(payload),
            None => serde_json::from_str("null"),
        }
    }
}

/// An SDK `canUseTool` answer (the inner `response` of a `can_use_tool`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "behavior", rename_all = "camelCase")]
pub enum PermissionAnswer {
    /// Run the call, with `updatedInput` in place of the model's input when given.
    #[serde(rename_all = "camelCase")]
    Allow {
        /// The input to run (Python always sends one).
        #[serde(default)]
        updated_input: Option<Value>,
        /// Permission updates to apply (rules, mode); one dsh cannot read
        /// is left out, the others still apply.
        #[serde(default)]
        updated_permissions: Option<Vec<Loose<PermissionUpdate>>>,
    },
    /// Refuse the call; the model gets `message` as an error tool result.
    #[serde(rename_all = "camelCase")]
    Deny {
        /// Model-facing text.
        #[serde(default)]
        message: String,
        /// Also stop the turn.
        #[serde(default)]
        interrupt: Option<bool>,
    },
}

/// An `mcp_message` answer: `{"mcp_response": <JSON-RPC reply>}`, whose
/// result is an `R`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct McpAnswer<R> {
    /// The server's JSON-RPC reply.
    pub mcp_response: crate::RpcReply<R>,
}

/// A `control_request` line read again whole, its `request` as a `T`.
#[derive(Deserialize)]
struct WholeRequest<T> {
    request: T,
}

/// The `request` of a `control_request` line, as the `T` its subtype says.
fn fields<T: serde::de::DeserializeOwned>(kind: &str, line: &str) -> Result<T, LineError> {
    serde_json::from_str::<WholeRequest<T>>(line)
        .map(|whole| whole.request)
        .map_err(|source| LineError::Fields {
            kind: kind.to_owned(),
            source,
        })
}

/// The key of a control request that says which request it is.
#[derive(Deserialize)]
struct RequestHead {
    #[serde(default)]
    subtype: Option<Loose<String>>,
}

/// A line's keys that its `type` decides on; `user` lines are read again
/// whole, as a [`UserLine`].
#[derive(Deserialize)]
struct Envelope {
    #[serde(rename = "type", default)]
    kind: Option<Loose<String>>,
    #[serde(default)]
    request_id: Option<Loose<String>>,
    /// Its `subtype`; the line is read again by it ([`sdk_request`]).
    #[serde(default)]
    request: Option<Loose<RequestHead>>,
    #[serde(default)]
    response: Option<Loose<ResponseEnvelope>>,
}

/// The `response` of a `control_response` line.
#[derive(Deserialize)]
struct ResponseEnvelope {
    #[serde(default)]
    request_id: Option<Loose<String>>,
    #[serde(default)]
    subtype: Option<Loose<String>>,
    #[serde(default)]
    error: Option<Loose<String>>,
}

fn text(field: Option<Loose<String>>) -> Option<String> {
    field.and_then(Loose::ok)
}

/// Reads one stdin line.
pub fn parse_line(line: &str) -> Result<Inbound, LineError> {
    let envelope: Envelope = serde_json::from_str(line).map_err(|error| {
        // Well-formed JSON that is not an object has no `type` either.
        match serde_json::from_str::<IgnoredAny>(line) {
            Ok(_) => LineError::NoType,
            Err(_) => LineError::Json(error),
        }
    })?;
    let kind = text(envelope.kind).ok_or(LineError::NoType)?;
    match kind.as_str() {
        "user" => Ok(Inbound::User(serde_json::from_str(line).map_err(
            |source| LineError::Fields {
                kind: kind.clone(),
                source,
            },
        )?)),
        "control_request" => {
            let request_id =
                text(envelope.request_id).ok_or_else(|| missing(&kind, "request_id"))?;
            let head = envelope.request.ok_or_else(|| missing(&kind, "request"))?;
            let subtype = head
                .ok()
                .and_then(|head| text(head.subtype))
                .ok_or_else(|| missing(&kind, "request.subtype"))?;
            Ok(Inbound::ControlRequest {
                request_id,
                request: sdk_request(line, subtype)?,
            })
        }
        "control_response" => {
            let response = envelope
                .response
                .and_then(Loose::ok)
                .ok_or_else(|| missing(&kind, "response"))?;
            let request_id =
                text(response.request_id).ok_or_else(|| missing(&kind, "response.request_id"))?;
            let result = match text(response.subtype).as_deref() {
                Some("success") => Ok(AnswerLine {
                    line: line.to_owned(),
                }),
                _ => Err(text(response.error)
                    .unwrap_or_else(|| "the SDK answered with an error".to_owned())),
            };
            Ok(Inbound::ControlResponse(ControlAnswer {
                request_id,
                result,
            }))
        }
        "control_cancel_request" => Ok(Inbound::ControlCancel {
            request_id: text(envelope.request_id).ok_or_else(|| missing(&kind, "request_id"))?,
        }),
        "keep_alive" => Ok(Inbound::KeepAlive),
        _ => Err(LineError::UnknownType(kind)),
    }
}

fn missing(kind: &str, key: &str) -> LineError {
    LineError::Fields {
        kind: kind.to_owned(),
        source: serde::de::Error::custom(format!("missing {key}")),
    }
}

/// The request of a `control_request` line whose subtype is `subtype`.
fn sdk_request(line: &str, subtype: String) -> Result<SdkRequest, LineError> {
    let kind = format!("control_request {subtype}");
    Ok(match subtype.as_str() {
        "initialize" => SdkRequest::Initialize(fields(&kind, line)?),
        "interrupt" => SdkRequest::Interrupt,
        "set_permission_mode" => {
            #[derive(Deserialize)]
            struct Mode {
                mode: String,
            }
            SdkRequest::SetPermissionMode {
                mode: fields::<Mode>(&kind, line)?.mode,
            }
        }
        "set_model" => {
            #[derive(Deserialize)]
            struct Model {
                #[serde(default)]
                model: Option<String>,
            }
            SdkRequest::SetModel {
                model: fields::<Model>(&kind, line)?.model,
            }
        }
        _ => SdkRequest::Other { subtype },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn user_lines_of_both_sdks_read_as_text() {
        // TS: content blocks; Python and async iterables: a string.
        let ts = r#"{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":"Say hello"}]},"parent_tool_use_id":null}"#;
        let py = r#"{"type":"user","message":{"role":"user","content":"First message"},"parent_tool_use_id":null,"session_id":""}"#;
        let Inbound::User(ts) = parse_line(ts).unwrap() else {
            panic!()
        };
        let Inbound::User(py) = parse_line(py).unwrap() else {
            panic!()
        };
        assert_eq!(ts.message.content.text().unwrap(), "Say hello");
        assert_eq!(py.message.content.text().unwrap(), "First message");
        let image: UserContent = serde_json::from_value(json!([{"type":"image"}])).unwrap();
        assert!(image.text().unwrap_err().contains("\"image\""));
        // A block that is not an object, or whose text is not a string,
        // is named rather than dropped.
        let odd: UserContent = serde_json::from_value(json!(["hi"])).unwrap();
        assert!(odd.text().unwrap_err().contains("\"untyped\""));
        let odd: UserContent =
            serde_json::from_value(json!([{"type": "text", "text": 5}])).unwrap();
        assert!(odd.text().unwrap_err().contains("\"text\""));
        let two: UserContent = serde_json::from_value(json!([
            {"type": "text", "text": "a"},
            {"type": "text", "text": "b", "cache_control": {"type": "ephemeral"}}
        ]))
        .unwrap();
        assert_eq!(two.text().unwrap(), "a\nb");
    }

    #[test]
    fn initialize_keeps_hook_registration_order_and_callback_ids() {
        let line = r#"{"request_id":"5ko43wwuk6x","type":"control_request","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}],"PostToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_1"]}],"UserPromptSubmit":[{"hookCallbackIds":["hook_2"]}],"Stop":[{"matcher":null,"hookCallbackIds":["hook_3"],"timeout":5}]},"systemPrompt":[""]}}"#;
        let Inbound::ControlRequest {
            request_id,
            request: SdkRequest::Initialize(init),
        } = parse_line(line).unwrap()
        else {
            panic!()
        };
        assert_eq!(request_id, "5ko43wwuk6x");
        let hooks = init.hooks.unwrap().0;
        let events: Vec<&str> = hooks.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            events,
            ["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"]
        );
        assert_eq!(hooks[0].1[0].matcher.as_deref(), Some("Bash"));
        assert_eq!(hooks[2].1[0].matcher, None);
        assert_eq!(hooks[3].1[0].hook_callback_ids, ["hook_3"]);
        assert_eq!(hooks[3].1[0].timeout, Some(5.0));
        assert_eq!(init.system_prompt, Some(vec![String::new()]));
        // Python: hooks null, no system prompt key.
        let py = r#"{"type":"control_request","request_id":"req_1_abcd","request":{"subtype":"initialize","hooks":null}}"#;
        let Inbound::ControlRequest {
            request: SdkRequest::Initialize(init),
            ..
        } = parse_line(py).unwrap()
        else {
            panic!()
        };
        assert_eq!(init, InitializeRequest::default());
    }

    #[test]
    fn session_requests_and_answers_parse() {
        let mode = r#"{"request_id":"zp3l4n38h7","type":"control_request","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}"#;
        assert!(matches!(
            parse_line(mode).unwrap(),
            Inbound::ControlRequest { request: SdkRequest::SetPermissionMode { mode }, .. } if mode == "acceptEdits"
        ));
        let other =
            r#"{"request_id":"x","type":"control_request","request":{"subtype":"rewind_files"}}"#;
        assert!(matches!(
            parse_line(other).unwrap(),
            Inbound::ControlRequest { request: SdkRequest::Other { subtype }, .. } if subtype == "rewind_files"
        ));
        let allow = r#"{"type":"control_response","response":{"subtype":"success","request_id":"184715e0","response":{"behavior":"allow","updatedInput":{"file_path":"a.txt"},"toolUseID":"toolu_1"}}}"#;
        let Inbound::ControlResponse(answer) = parse_line(allow).unwrap() else {
            panic!()
        };
        assert_eq!(answer.request_id, "184715e0");
        let permission: PermissionAnswer = answer.result.unwrap().read().unwrap();
        assert_eq!(
            permission,
            PermissionAnswer::Allow {
                updated_input: Some(json!({"file_path":"a.txt"})),
                updated_permissions: None
            }
        );
        // An update dsh cannot read is left out; the others still apply.
        let updates: PermissionAnswer = serde_json::from_value(json!({"behavior":"allow",
            "updatedPermissions": [{"type":"addRules","rules":[{"toolName":"Bash"}],
            "behavior":"allow","destination":"session"}, {"type":"teleport"}, 7]}))
        .unwrap();
        let PermissionAnswer::Allow {
            updated_permissions: Some(updates),
            ..
        } = updates
        else {
            panic!()
        };
        let read: Vec<_> = updates.into_iter().filter_map(Loose::ok).collect();
        assert_eq!(
            read,
            [PermissionUpdate::AddRules {
                rules: vec![dsh_protocol::RuleValue {
                    tool_name: "Bash".to_owned(),
                    rule_content: None
                }],
                behavior: dsh_protocol::RuleBehavior::Allow,
                destination: dsh_protocol::UpdateDestination::Session
            }]
        );
        let deny: PermissionAnswer =
            serde_json::from_value(json!({"behavior":"deny","message":"no","interrupt":true}))
                .unwrap();
        assert_eq!(
            deny,
            PermissionAnswer::Deny {
                message: "no".to_owned(),
                interrupt: Some(true)
            }
        );
        let error = r#"{"type":"control_response","response":{"subtype":"error","request_id":"r","error":"boom"}}"#;
        let Inbound::ControlResponse(answer) = parse_line(error).unwrap() else {
            panic!()
        };
        assert_eq!(answer.result, Err("boom".to_owned()));
    }

    /// A `success` answer is read as the asker's type, from its line; a
    /// missing payload reads as `null`, a payload of another shape fails
    /// only the read.
    #[test]
    fn answers_are_read_as_the_askers_type() {
        let read = |line: &str| match parse_line(line).unwrap() {
            Inbound::ControlResponse(answer) => answer.result.unwrap(),
            other => panic!("{other:?}"),
        };
        let hook = read(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"h","response":{"continue":true,"hookSpecificOutput":{"a":[1,2]}}}}"#,
        );
        assert_eq!(
            hook.read::<Value>().unwrap(),
            json!({"continue": true, "hookSpecificOutput": {"a": [1, 2]}})
        );
        assert!(hook.read::<PermissionAnswer>().is_err());
        let bare = read(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"b"}}"#,
        );
        assert_eq!(bare.read::<Value>().unwrap(), Value::Null);
        assert_eq!(bare.read::<Option<u8>>().unwrap(), None);
        let error = bare.read::<PermissionAnswer>().unwrap_err();
        assert!(error.to_string().contains("null"), "{error}");
        let mcp = read(
            r#"{"type":"control_response","response":{"subtype":"success","request_id":"m","response":{"mcp_response":{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t"}]}}}}}"#,
        );
        let listed: McpAnswer<crate::ToolsList> = mcp.read().unwrap();
        assert_eq!(
            listed.mcp_response.result.unwrap().tools[0].name.as_deref(),
            Some("t")
        );
    }

    #[test]
    fn bad_lines_say_why() {
        assert!(matches!(parse_line("hi"), Err(LineError::Json(_))));
        assert!(matches!(parse_line("{}"), Err(LineError::NoType)));
        assert!(
            matches!(parse_line(r#"{"type":"nope"}"#), Err(LineError::UnknownType(t)) if t == "nope")
        );
        let err = parse_line(r#"{"type":"control_request","request_id":"r","request":{"subtype":"set_permission_mode"}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("set_permission_mode") && err.contains("mode"),
            "{err}"
        );
        // A request that is not an object, or whose subtype is not a
        // string, has no subtype; one without `request` says so.
        for request in [r#"5"#, r#"{"subtype":7}"#, r#"{}"#] {
            let line =
                format!(r#"{{"type":"control_request","request_id":"r","request":{request}}}"#);
            let err = parse_line(&line).unwrap_err().to_string();
            assert_eq!(err, "control_request: missing request.subtype", "{line}");
        }
        let err = parse_line(r#"{"type":"control_request","request_id":"r"}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "control_request: missing request");
        // The wrong type of a request's own field is named.
        let err = parse_line(r#"{"type":"control_request","request_id":"r","request":{"subtype":"set_model","model":3}}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("control_request set_model: invalid type"),
            "{err}"
        );
    }
}
