//! The bytes of one log line (contracts: "The session log"): `type`, `seq`,
//! `ts` and `agent_id` first, then the body's own fields in their declared
//! order. The body is written straight from its typed [`EventBody`]; only its
//! `type` tag moves to the front.

use dsh_protocol::{Event, EventBody};
use serde::ser::{Error as _, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};

/// An [`Event`] in log-line key order.
pub(crate) struct Line<'a>(pub(crate) &'a Event);

impl Serialize for Line<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let event = self.0;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", event.body.type_name())?;
        map.serialize_entry("seq", &event.seq)?;
        map.serialize_entry("ts", &event.ts)?;
        if let Some(agent_id) = &event.agent_id {
            map.serialize_entry("agent_id", agent_id)?;
        }
        event.body.serialize(BodyFields {
            map: &mut map,
            body: &event.body,
        })?;
        map.end()
    }
}

/// Writes a tagged body's fields into the line's map, leaving out the tag
/// (already written first). A body that is not a struct variant is refused.
struct BodyFields<'m, M> {
    map: &'m mut M,
    body: &'m EventBody,
}

impl<M: SerializeMap> BodyFields<'_, M> {
    fn refuse(&self) -> M::Error {
        M::Error::custom(format!(
            "the `{}` event body is not an object",
            self.body.type_name()
        ))
    }
}

impl<M: SerializeMap> SerializeStruct for BodyFields<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        if key == "type" {
            return Ok(());
        }
        self.map.serialize_entry(key, value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

/// The serializer methods a tagged struct variant never calls: each refuses.
macro_rules! refuse {
    ($($method:ident($($arg:ty),*);)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<(), M::Error> {
            Err(self.refuse())
        })*
    };
}

impl<'m, M: SerializeMap> Serializer for BodyFields<'m, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = Impossible<(), M::Error>;
    type SerializeTuple = Impossible<(), M::Error>;
    type SerializeTupleStruct = Impossible<(), M::Error>;
    type SerializeTupleVariant = Impossible<(), M::Error>;
    type SerializeMap = Impossible<(), M::Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), M::Error>;

    refuse! {
        serialize_bool(bool);
        serialize_i8(i8);
        serialize_i16(i16);
        serialize_i32(i32);
        serialize_i64(i64);
        serialize_u8(u8);
        serialize_u16(u16);
        serialize_u32(u32);
        serialize_u64(u64);
        serialize_f32(f32);
        serialize_f64(f64);
        serialize_char(char);
        serialize_str(&str);
        serialize_bytes(&[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(&'static str);
        serialize_unit_variant(&'static str, u32, &'static str);
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), M::Error> {
        Err(self.refuse())
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), M::Error> {
        Err(self.refuse())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), M::Error> {
        Err(self.refuse())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, M::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, M::Error> {
        Err(self.refuse())
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Err(self.refuse())
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, M::Error> {
        Err(self.refuse())
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, M::Error> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, M::Error> {
        Err(self.refuse())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use dsh_protocol::{
        CompactionStartedEvent, CompactionTrigger, Event, EventBody, ModelSwitchedEvent, Seam,
        SeamNoteDetail, SeamNoteEvent, SeamNoteKind, ShownText,
    };
    use pretty_assertions::assert_eq;
    use serde_json::{Map, Value, json};

    use super::Line;

    /// What the line was before it was typed: the body as a JSON object,
    /// its `type` moved first, then `seq`, `ts`, `agent_id`, the rest.
    fn reordered(event: &Event) -> String {
        let Value::Object(mut fields) = serde_json::to_value(&event.body).unwrap() else {
            panic!("not an object");
        };
        let mut ordered = Map::new();
        ordered.insert("type".to_owned(), fields.shift_remove("type").unwrap());
        ordered.insert("seq".to_owned(), json!(event.seq));
        ordered.insert("ts".to_owned(), json!(event.ts));
        if let Some(agent_id) = &event.agent_id {
            ordered.insert("agent_id".to_owned(), json!(agent_id));
        }
        ordered.extend(fields);
        Value::Object(ordered).to_string()
    }

    fn event(seq: u64, body: EventBody, agent_id: Option<&str>) -> Event {
        Event {
            seq,
            ts: "2026-01-01T00:00:00.000Z".to_owned(),
            body,
            agent_id: agent_id.map(str::to_owned),
        }
    }

    #[test]
    fn recorded_log_lines_encode_to_their_own_bytes() {
        // Every log line the end-to-end snapshots recorded, read back and
        // written again: the same bytes (durations were redacted to a string).
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/snapshots");
        let mut kinds = std::collections::BTreeSet::new();
        let mut lines = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for line in text.lines().filter(|line| line.starts_with("{\"type\":")) {
                let line = line.replace("\"duration_ms\":\"[MS]\"", "\"duration_ms\":7");
                let Ok(event) = serde_json::from_str::<Event>(&line) else {
                    continue;
                };
                let encoded = serde_json::to_string(&Line(&event)).unwrap();
                assert_eq!(encoded, line);
                assert_eq!(encoded, reordered(&event));
                kinds.insert(event.body.type_name());
                lines += 1;
            }
        }
        assert!(lines > 300, "only {lines} recorded lines read");
        assert!(kinds.len() >= 12, "only {kinds:?}");
        // A hook's stdin is written as the exact text it was sent.
        assert!(kinds.contains("hook/invoked"), "{kinds:?}");
    }

    #[test]
    fn unrecorded_kinds_and_subagent_lines_keep_the_key_order() {
        let events = [
            event(
                1,
                EventBody::SeamNote(SeamNoteEvent {
                    turn: Some(2),
                    seam: Seam::PostExecute,
                    plugin: "p".to_owned(),
                    kind: SeamNoteKind::DisplayReplaced,
                    message: "shown".to_owned(),
                    detail: Some(SeamNoteDetail::Shown(ShownText {
                        text: "hi".to_owned(),
                    })),
                }),
                Some("a0123456789abcdef"),
            ),
            event(
                2,
                EventBody::CompactionStarted(CompactionStartedEvent {
                    turn: 3,
                    trigger: CompactionTrigger::Auto,
                    custom_instructions: None,
                    estimated_tokens: 9,
                }),
                None,
            ),
            event(3, EventBody::SessionCleared {}, Some("a1")),
            event(
                4,
                EventBody::ModelSwitched(ModelSwitchedEvent {
                    from: "a".to_owned(),
                    to: "b".to_owned(),
                }),
                None,
            ),
        ];
        for event in &events {
            assert_eq!(
                serde_json::to_string(&Line(event)).unwrap(),
                reordered(event)
            );
        }
        assert_eq!(
            serde_json::to_string(&Line(&events[2])).unwrap(),
            r#"{"type":"session/cleared","seq":3,"ts":"2026-01-01T00:00:00.000Z","agent_id":"a1"}"#
        );
    }
}
