//! A dialect's names as tables read both ways: its events ([`EventTable`]:
//! configured name → event, event → names and seam), and dsh's tools and
//! their arguments (dsh → dialect for payloads and matchers, dialect → dsh
//! for a hook's rewritten input and `dsh hooks test --tool`).

use dsh_protocol::Seam;
use serde_json::{Map, Value};

/// One event of a dialect: its name, a second name it may also be
/// configured under (a tool that also reads another tool's event names),
/// and the seam it runs on.
pub type EventRow<E> = (E, &'static str, Option<&'static str>, Seam);

/// A dialect's events as one table, in the dialect's documented order:
/// names both ways and seams, with no per-dialect lookup code.
#[derive(Debug, Clone, Copy)]
pub struct EventTable<E: 'static>(pub &'static [EventRow<E>]);

impl<E: Copy + PartialEq> EventTable<E> {
    /// Every event, in table order.
    pub fn all(&self) -> impl Iterator<Item = E> + use<E> {
        self.0.iter().map(|row| row.0)
    }

    fn row(&self, event: E) -> Option<&'static EventRow<E>> {
        self.0.iter().find(|row| row.0 == event)
    }

    /// The event's name (`""` for an event not in the table).
    pub fn name(&self, event: E) -> &'static str {
        self.row(event).map_or("", |row| row.1)
    }

    /// The event's second name, if it has one.
    pub fn alias(&self, event: E) -> Option<&'static str> {
        self.row(event).and_then(|row| row.2)
    }

    /// The seam the event runs on.
    pub fn seam(&self, event: E) -> Seam {
        self.row(event).map_or(Seam::Notification, |row| row.3)
    }

    /// Parses a configured name (exact, case-sensitive): the event and
    /// whether the name was its second one.
    pub fn parse(&self, name: &str) -> Option<(E, bool)> {
        self.0.iter().find_map(|(event, first, second, _)| {
            if *first == name {
                Some((*event, false))
            } else if *second == Some(name) {
                Some((*event, true))
            } else {
                None
            }
        })
    }

    /// Every name, first and second, in table order (for suggestions).
    pub fn names(&self) -> impl Iterator<Item = &'static str> + use<E> {
        self.0
            .iter()
            .flat_map(|row| std::iter::once(row.1).chain(row.2))
    }
}

/// A dialect's event enum described by its [`EventTable`]: the table's
/// lookups as methods, so the dialect writes the table and no forwards.
pub trait Tabled: Copy + PartialEq + 'static {
    /// The events, in the dialect's documented order.
    const TABLE: EventTable<Self>;

    /// Every event, in table order.
    fn all() -> impl Iterator<Item = Self> {
        Self::TABLE.all()
    }

    /// Every configurable name, first and second, in table order.
    fn names() -> impl Iterator<Item = &'static str> {
        Self::TABLE.names()
    }

    /// The event's name.
    fn as_str(self) -> &'static str {
        Self::TABLE.name(self)
    }

    /// The event's second name, if it has one.
    fn alias(self) -> Option<&'static str> {
        Self::TABLE.alias(self)
    }

    /// The canonical seam the event runs on.
    fn seam(self) -> Seam {
        Self::TABLE.seam(self)
    }
}

/// Pairs of (dsh name, dialect name); names in neither column are the same
/// in both vocabularies.
#[derive(Debug, Clone, Copy)]
pub struct ToolNames(pub &'static [(&'static str, &'static str)]);

impl ToolNames {
    /// The dialect's name for dsh's `tool`.
    pub fn dialect_name<'a>(&self, tool: &'a str) -> &'a str {
        self.0
            .iter()
            .find(|(dsh, _)| *dsh == tool)
            .map_or(tool, |(_, dialect)| *dialect)
    }

    /// The dsh tool the dialect's `name` stands for.
    pub fn dsh_name<'a>(&self, name: &'a str) -> &'a str {
        self.0
            .iter()
            .find(|(_, dialect)| *dialect == name)
            .map_or(name, |(dsh, _)| *dsh)
    }

    /// Whether `name` is one of the dialect's own names (not dsh's).
    pub fn is_dialect_name(&self, name: &str) -> bool {
        self.0.iter().any(|(_, dialect)| *dialect == name)
    }
}

/// Per dsh tool, the pairs (dsh argument, dialect argument) its call
/// arguments are renamed by, both ways; a tool not listed keeps its
/// arguments whole, and keys in no pair are left out.
#[derive(Debug, Clone, Copy)]
pub struct ArgumentNames(pub &'static [(&'static str, &'static [(&'static str, &'static str)])]);

impl ArgumentNames {
    fn pairs(&self, tool: &str) -> Option<&'static [(&'static str, &'static str)]> {
        self.0
            .iter()
            .find(|(name, _)| *name == tool)
            .map(|(_, pairs)| *pairs)
    }

    /// Copies the arguments `args` of `tool` into `out` under the other
    /// vocabulary's names (the dialect's when `to_dialect`, else dsh's),
    /// in table order; `false` (nothing copied) for a tool not listed.
    pub fn rename(
        &self,
        tool: &str,
        to_dialect: bool,
        args: &Value,
        out: &mut Map<String, Value>,
    ) -> bool {
        let Some(pairs) = self.pairs(tool) else {
            return false;
        };
        for (dsh, dialect) in pairs {
            let pair = if to_dialect {
                (*dsh, *dialect)
            } else {
                (*dialect, *dsh)
            };
            copy_keys(args, out, &[pair]);
        }
        true
    }
}

/// Copies the keys of `from` named in `pairs` (from key, to key) into
/// `to` under their new names; absent keys stay absent.
pub fn copy_keys(from: &Value, to: &mut Map<String, Value>, pairs: &[(&str, &str)]) {
    for (key, as_key) in pairs {
        if let Some(value) = from.get(*key) {
            to.insert((*as_key).to_owned(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NAMES: ToolNames = ToolNames(&[("bash", "run_shell_command"), ("read", "read_file")]);

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Toy {
        Start,
        Stop,
    }

    const EVENTS: EventTable<Toy> = EventTable(&[
        (Toy::Start, "start", Some("Start"), Seam::SessionStart),
        (Toy::Stop, "stop", None, Seam::TurnContinuation),
    ]);

    impl Tabled for Toy {
        const TABLE: EventTable<Toy> = EVENTS;
    }

    #[test]
    fn a_tabled_event_reads_its_names_and_seam_from_the_table() {
        assert_eq!(Toy::all().collect::<Vec<_>>(), [Toy::Start, Toy::Stop]);
        assert_eq!(Toy::names().collect::<Vec<_>>(), ["start", "Start", "stop"]);
        assert_eq!((Toy::Stop.as_str(), Toy::Stop.alias()), ("stop", None));
        assert_eq!(Toy::Start.alias(), Some("Start"));
        assert_eq!(Toy::Stop.seam(), Seam::TurnContinuation);
    }

    #[test]
    fn an_event_table_reads_both_names_and_the_seam() {
        assert_eq!(EVENTS.all().collect::<Vec<_>>(), [Toy::Start, Toy::Stop]);
        assert_eq!(EVENTS.parse("Start"), Some((Toy::Start, true)));
        assert_eq!(EVENTS.parse("stop"), Some((Toy::Stop, false)));
        assert_eq!(EVENTS.parse("Stop"), None);
        assert_eq!(
            (EVENTS.name(Toy::Stop), EVENTS.alias(Toy::Stop)),
            ("stop", None)
        );
        assert_eq!(EVENTS.seam(Toy::Start), Seam::SessionStart);
        assert_eq!(
            EVENTS.names().collect::<Vec<_>>(),
            ["start", "Start", "stop"]
        );
    }

    #[test]
    fn names_map_both_ways_and_others_pass_through() {
        assert_eq!(NAMES.dialect_name("bash"), "run_shell_command");
        assert_eq!(NAMES.dsh_name("read_file"), "read");
        assert_eq!(NAMES.dialect_name("glob"), "glob");
        assert_eq!(NAMES.dsh_name("glob"), "glob");
        assert!(NAMES.is_dialect_name("read_file"));
        assert!(!NAMES.is_dialect_name("read"));
    }

    #[test]
    fn arguments_are_renamed_both_ways_and_unlisted_tools_are_not() {
        const ARGS: ArgumentNames =
            ArgumentNames(&[("write", &[("file_path", "path"), ("content", "file_text")])]);
        let mut out = Map::new();
        assert!(ARGS.rename(
            "write",
            true,
            &json!({"content": "x", "file_path": "/a", "mode": 1}),
            &mut out
        ));
        assert_eq!(
            Value::Object(out.clone()).to_string(),
            r#"{"path":"/a","file_text":"x"}"#
        );
        let mut back = Map::new();
        assert!(ARGS.rename("write", false, &Value::Object(out), &mut back));
        assert_eq!(
            Value::Object(back).to_string(),
            r#"{"file_path":"/a","content":"x"}"#
        );
        assert!(!ARGS.rename("glob", true, &json!({"pattern": "*"}), &mut Map::new()));
    }

    #[test]
    fn keys_are_copied_under_their_new_names_in_table_order() {
        let mut out = Map::new();
        copy_keys(
            &json!({"content": "x", "file_path": "/a", "other": 1}),
            &mut out,
            &[
                ("file_path", "path"),
                ("content", "file_text"),
                ("missing", "m"),
            ],
        );
        assert_eq!(
            Value::Object(out).to_string(),
            r#"{"path":"/a","file_text":"x"}"#
        );
    }
}
