//! A question an MCP server puts to the user during one of its tool calls
//! (MCP `elicitation/create`), and the answer that goes back to it.
//!
//! The order is Claude Code's (`ev_elicit_*` captures): the elicitation
//! seam first, where a listener may answer in the user's place (then nobody
//! is asked and the result seam does not fire); else the user is asked
//! (a headless session cannot ask: its answer is `cancel`); then the result
//! seam, where a listener may change or refuse the answer before it is sent.

use serde::Serialize;

/// How the server wants the answer given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationMode {
    /// Fill in a form (`requested_schema`).
    Form,
    /// Open a URL and finish there.
    Url,
}

impl ElicitationMode {
    /// The wire name (`form`, `url`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationMode::Form => "form",
            ElicitationMode::Url => "url",
        }
    }
}

/// What an MCP server asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// The server's configured name.
    pub server: String,
    /// The question.
    pub message: String,
    /// Form or URL.
    pub mode: ElicitationMode,
    /// The form's JSON schema (an object of primitive properties), in form mode.
    pub requested_schema: Option<serde_json::Value>,
    /// Where to go, in URL mode.
    pub url: Option<String>,
    /// The server's id for a URL elicitation.
    pub elicitation_id: Option<String>,
}

/// What a form field holds, as a person types it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Text (possibly one of `choices`).
    Text,
    /// Yes or no.
    YesNo,
    /// A whole number.
    Integer,
    /// A number.
    Number,
}

impl FieldKind {
    /// The JSON schema type's name.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldKind::Text => "string",
            FieldKind::YesNo => "boolean",
            FieldKind::Integer => "integer",
            FieldKind::Number => "number",
        }
    }
}

/// One field of a form elicitation (a property of `requested_schema`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormField {
    /// The property's name (the answer's key).
    pub name: String,
    /// What to call it (its `title`, else its name).
    pub title: String,
    /// Its `description`.
    pub description: Option<String>,
    /// Its type.
    pub kind: FieldKind,
    /// Whether the form needs it (`required`).
    pub required: bool,
    /// The allowed texts (`enum`), if any.
    pub choices: Vec<String>,
}

impl FormField {
    /// The field's value from what a person typed; `Err` says what is
    /// expected.
    pub fn read(&self, typed: &str) -> Result<serde_json::Value, String> {
        let typed = typed.trim();
        match self.kind {
            FieldKind::YesNo => match typed {
                "y" | "Y" | "yes" | "true" => Ok(true.into()),
                "n" | "N" | "no" | "false" => Ok(false.into()),
                _ => Err("y or n".to_owned()),
            },
            FieldKind::Integer => typed
                .parse::<i64>()
                .map(Into::into)
                .map_err(|_| "a whole number".to_owned()),
            FieldKind::Number => typed
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map(Into::into)
                .ok_or_else(|| "a number".to_owned()),
            FieldKind::Text
                if self.choices.is_empty() || self.choices.iter().any(|c| c == typed) =>
            {
                Ok(typed.into())
            }
            FieldKind::Text => Err(format!("one of: {}", self.choices.join(", "))),
        }
    }
}

impl ElicitationRequest {
    /// The form's fields in the schema's order (none in URL mode).
    pub fn form_fields(&self) -> Vec<FormField> {
        let Some(schema) = &self.requested_schema else {
            return Vec::new();
        };
        let required: Vec<&str> = schema
            .get("required")
            .and_then(|names| names.as_array())
            .map(|names| names.iter().filter_map(|name| name.as_str()).collect())
            .unwrap_or_default();
        let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
            return Vec::new();
        };
        properties
            .iter()
            .map(|(name, field)| {
                let text = |key: &str| field.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                FormField {
                    name: name.clone(),
                    title: text("title").unwrap_or_else(|| name.clone()),
                    description: text("description"),
                    kind: match text("type").as_deref() {
                        Some("boolean") => FieldKind::YesNo,
                        Some("integer") => FieldKind::Integer,
                        Some("number") => FieldKind::Number,
                        Some(_) | None => FieldKind::Text,
                    },
                    required: required.contains(&name.as_str()),
                    choices: field
                        .get("enum")
                        .and_then(|values| values.as_array())
                        .map(|values| {
                            values
                                .iter()
                                .filter_map(|v| v.as_str().map(str::to_owned))
                                .collect()
                        })
                        .unwrap_or_default(),
                }
            })
            .collect()
    }
}

/// The three answers MCP knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// The user answered (`content` holds the form's values).
    Accept,
    /// The user said no.
    Decline,
    /// The user dismissed the question (or nobody could answer it).
    Cancel,
}

impl ElicitationAction {
    /// The wire name (`accept`, `decline`, `cancel`).
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }

    /// Reads a wire name.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "accept" => Some(ElicitationAction::Accept),
            "decline" => Some(ElicitationAction::Decline),
            "cancel" => Some(ElicitationAction::Cancel),
            _ => None,
        }
    }
}

/// An answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationAnswer {
    /// What was answered.
    pub action: ElicitationAction,
    /// The form's values (with `accept`).
    pub content: Option<serde_json::Value>,
}

impl ElicitationAnswer {
    /// An answer without content.
    pub fn bare(action: ElicitationAction) -> Self {
        ElicitationAnswer {
            action,
            content: None,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(schema: serde_json::Value) -> ElicitationRequest {
        ElicitationRequest {
            server: "s".into(),
            message: "m".into(),
            mode: ElicitationMode::Form,
            requested_schema: Some(schema),
            url: None,
            elicitation_id: None,
        }
    }

    #[test]
    fn fields_come_in_schema_order_with_their_types() {
        let request = form(json!({"type": "object", "properties": {
            "name": {"type": "string", "title": "Name", "description": "Your name"},
            "ok": {"type": "boolean"},
            "size": {"type": "string", "enum": ["low", "high"]},
            "count": {"type": "integer"},
            "ratio": {"type": "number"}
        }, "required": ["name"]}));
        let fields = request.form_fields();
        let names: Vec<(&str, &str, FieldKind, bool)> = fields
            .iter()
            .map(|f| (f.name.as_str(), f.title.as_str(), f.kind, f.required))
            .collect();
        assert_eq!(
            names,
            [
                ("name", "Name", FieldKind::Text, true),
                ("ok", "ok", FieldKind::YesNo, false),
                ("size", "size", FieldKind::Text, false),
                ("count", "count", FieldKind::Integer, false),
                ("ratio", "ratio", FieldKind::Number, false),
            ]
        );
        assert_eq!(fields[0].read(" Ada "), Ok(json!("Ada")));
        assert_eq!(fields[1].read("y"), Ok(json!(true)));
        assert!(fields[1].read("maybe").is_err());
        assert_eq!(fields[2].read("high"), Ok(json!("high")));
        assert!(fields[2].read("mid").is_err());
        assert_eq!(fields[3].read("42"), Ok(json!(42)));
        assert!(fields[3].read("4.2").is_err());
        assert_eq!(fields[4].read("4.5"), Ok(json!(4.5)));
    }
}
