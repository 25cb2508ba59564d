//! The YAML frontmatter of the Markdown files Claude Code and Codex read
//! for commands, skills, prompts, rules and agents: a first line `---`, a
//! YAML mapping, a closing `---` line, then the body.
//!
//! The block is read as real YAML (`yaml-rust2`), so everything an agent
//! file can hold (nested `hooks`, flow lists, block scalars, anchors) reads
//! as it does in Claude Code. Hand-written files often hold values strict
//! YAML rejects, such as `argument-hint: [file] [line]` or
//! `description: Use when: tests fail`; Claude Code reads those as text,
//! so when the strict parse fails, each top-level `key: value` line whose
//! value does not parse on its own is read again as a quoted string. What
//! still fails is an error naming the line and column in the file.
//!
//! The block comes from files anyone can put in a repository, so it is
//! bounded before it is built: aliases are counted as the nodes they
//! repeat, and a block that would expand to more than [`MAX_NODES`] nodes,
//! uses more than [`MAX_ALIASES`] aliases or nests deeper than
//! [`MAX_DEPTH`] is refused ([`FrontmatterError::TooLarge`]) without being
//! expanded (a 476-byte "billion laughs" block would otherwise need
//! gigabytes).
//!
//! The block itself is arbitrary YAML and held as such; callers read the
//! keys they know through a typed view ([`Frontmatter::read`] with the
//! lenient field readers of [`view`]).
//!
//! What it is not: it knows no field's meaning. Which keys a command, a
//! rule or an agent reads, and what a missing or odd value means for it,
//! stays with the code that owns that file kind.

pub mod view;

pub use view::{ListField, list, text};

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::{Yaml, YamlLoader};

/// The most nodes one block may hold once its aliases are expanded (every
/// scalar, list and mapping counts one). Real frontmatter holds a few
/// dozen; an agent with many hooks a few hundred.
pub const MAX_NODES: usize = 10_000;

/// The most aliases (`*name`) one block may use.
pub const MAX_ALIASES: usize = 100;

/// The deepest one block may nest lists and mappings.
pub const MAX_DEPTH: usize = 64;

/// A file split into its frontmatter and body.
#[derive(Debug, Clone, PartialEq)]
pub struct Document<'a> {
    /// The frontmatter, or `None` when the file has no `---` block (or an
    /// unclosed one, which is then body text).
    pub frontmatter: Option<Frontmatter>,
    /// Everything after the closing `---` line (the whole text without a
    /// block).
    pub body: &'a str,
}

/// The fields of one frontmatter block, in file order. The block is a
/// user's YAML, any shape; what a file kind reads of it is a typed view
/// ([`Frontmatter::read`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frontmatter {
    fields: Map<String, Value>,
}

/// Why a frontmatter block could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The block is not YAML, even with plain values read as text.
    #[error("frontmatter line {line}, column {column}: {message}")]
    Yaml {
        /// The line in the file (the opening `---` is line 1).
        line: usize,
        /// The column, from 1.
        column: usize,
        /// The parser's description.
        message: String,
    },
    /// The block is YAML but not a mapping of fields.
    #[error("the frontmatter is not a mapping of `key: value` fields")]
    NotAMapping,
    /// A mapping key is itself a list or a mapping.
    #[error("the frontmatter has a key that is not plain text")]
    ComplexKey,
    /// The block is over one of the bounds ([`MAX_NODES`], [`MAX_ALIASES`],
    /// [`MAX_DEPTH`]); it is not read at all.
    #[error(
        "frontmatter line {line}: more than {limit} {what} (aliases count as the nodes they repeat)"
    )]
    TooLarge {
        /// The line in the file where the bound was passed.
        line: usize,
        /// What is counted: `nodes`, `aliases` or `levels of nesting`.
        what: &'static str,
        /// The bound.
        limit: usize,
    },
    /// The block is YAML but a field does not fit the typed view it is
    /// read into ([`Frontmatter::read`]).
    #[error("frontmatter fields: {message}")]
    Fields {
        /// What serde said.
        message: String,
    },
}

/// Splits `text` and reads its frontmatter.
pub fn parse(text: &str) -> Result<Document<'_>, FrontmatterError> {
    let Some((block, body)) = split(text) else {
        return Ok(Document {
            frontmatter: None,
            body: text,
        });
    };
    Ok(Document {
        frontmatter: Some(Frontmatter::from_yaml(block)?),
        body,
    })
}

/// The text between a first `---` line and the next `---` line, and what
/// follows that line; `None` without a closed block.
pub fn split(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

impl Frontmatter {
    /// Reads a block's YAML (without its `---` lines).
    pub fn from_yaml(block: &str) -> Result<Self, FrontmatterError> {
        let document = match load(block) {
            Ok(document) => document,
            // Over a bound: not read again as text either.
            Err(too_large @ FrontmatterError::TooLarge { .. }) => return Err(too_large),
            Err(strict) => {
                let lenient = quote_unparsable_values(block)?;
                match load(&lenient) {
                    Ok(document) => document,
                    // The first error names what the user wrote.
                    Err(_) => return Err(strict),
                }
            }
        };
        match document {
            // An empty block, or one of comments only.
            None | Some(Yaml::Null) => Ok(Frontmatter::default()),
            Some(Yaml::Hash(hash)) => {
                let mut fields = Map::new();
                for (key, value) in hash {
                    fields.insert(key_text(&key)?, to_json(value)?);
                }
                Ok(Frontmatter { fields })
            }
            Some(_) => Err(FrontmatterError::NotAMapping),
        }
    }

    /// The block read into a typed view: a serde struct naming the keys a
    /// file kind reads (see [`view`]). With the lenient readers ([`text`],
    /// [`list`], [`ListField`]) and `#[serde(default)]` this never fails;
    /// a stricter field type that does not match is
    /// [`FrontmatterError::Fields`].
    pub fn read<T: DeserializeOwned>(&self) -> Result<T, FrontmatterError> {
        T::deserialize(&self.fields).map_err(|error| FrontmatterError::Fields {
            message: error.to_string(),
        })
    }

    /// The field `key` written as JSON (a notice quoting what a key of the
    /// wrong type held); `None` when it is missing.
    pub fn json_text(&self, key: &str) -> Option<String> {
        self.fields.get(key).map(ToString::to_string)
    }
}

/// The block's one document; a block line is the file's line + 1. The
/// block is measured ([`measure`]) before it is built.
fn load(block: &str) -> Result<Option<Yaml>, FrontmatterError> {
    measure(block)?;
    match YamlLoader::load_from_str(block) {
        Ok(documents) => Ok(documents.into_iter().next()),
        Err(error) => Err(yaml_error(&error)),
    }
}

fn yaml_error(error: &yaml_rust2::ScanError) -> FrontmatterError {
    FrontmatterError::Yaml {
        line: error.marker().line() + 1,
        column: error.marker().col() + 1,
        message: error.info().to_owned(),
    }
}

/// Reads `block`'s events without building anything: a syntax error as
/// [`FrontmatterError::Yaml`], a block over a bound as
/// [`FrontmatterError::TooLarge`] (found as soon as the bound is passed).
/// An alias counts as the nodes of what it names, so the count is the size
/// of the document the loader would build.
fn measure(block: &str) -> Result<(), FrontmatterError> {
    let mut parser = Parser::new_from_str(block);
    // Expanded size of each anchored node, by anchor id.
    let mut anchored: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    // Open lists and mappings: (anchor id, node count when they opened).
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut nodes: usize = 0;
    let mut aliases: usize = 0;
    loop {
        let (event, mark) = parser.next_token().map_err(|error| yaml_error(&error))?;
        let over = |what: &'static str, limit: usize| FrontmatterError::TooLarge {
            line: mark.line() + 1,
            what,
            limit,
        };
        match event {
            Event::StreamEnd => return Ok(()),
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => {}
            Event::Scalar(_, _, anchor, _) => {
                nodes = nodes.saturating_add(1);
                if anchor > 0 {
                    anchored.insert(anchor, 1);
                }
            }
            Event::Alias(anchor) => {
                aliases += 1;
                if aliases > MAX_ALIASES {
                    return Err(over("aliases", MAX_ALIASES));
                }
                nodes = nodes.saturating_add(anchored.get(&anchor).copied().unwrap_or(1));
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                open.push((anchor, nodes));
                nodes = nodes.saturating_add(1);
                if open.len() > MAX_DEPTH {
                    return Err(over("levels of nesting", MAX_DEPTH));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((anchor, start)) = open.pop()
                    && anchor > 0
                {
                    anchored.insert(anchor, nodes - start);
                }
            }
        }
        if nodes > MAX_NODES {
            return Err(over("nodes", MAX_NODES));
        }
    }
}

/// The block with every top-level `key: value` line whose value is not
/// YAML on its own rewritten as `key: "value"`. A line over a bound is
/// not made text: the block is refused.
fn quote_unparsable_values(block: &str) -> Result<String, FrontmatterError> {
    let mut out = String::with_capacity(block.len() + 16);
    for (index, line) in block.split_inclusive('\n').enumerate() {
        let content = line.trim_end_matches(['\n', '\r']);
        let ending = &line[content.len()..];
        let unparsable = |content: &str| match measure(content) {
            // The line in the file, not in the one-line document.
            Err(FrontmatterError::TooLarge { what, limit, .. }) => {
                Err(FrontmatterError::TooLarge {
                    line: index + 2,
                    what,
                    limit,
                })
            }
            Err(_) => Ok(true),
            Ok(()) => Ok(YamlLoader::load_from_str(content).is_err()),
        };
        match top_level_entry(content) {
            Some((key, value)) if unparsable(content)? => {
                let quoted = value.replace('\\', "\\\\").replace('"', "\\\"");
                out.push_str(&format!("{key}: \"{quoted}\"{ending}"));
            }
            Some(_) | None => out.push_str(line),
        }
    }
    Ok(out)
}

/// `key: value` at column 0 with a plain key and a non-empty value that is
/// not already quoted.
fn top_level_entry(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let plain_key = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let value = value.strip_prefix([' ', '\t'])?.trim();
    let quoted = value.starts_with('"') || value.starts_with('\'');
    (plain_key && !value.is_empty() && !quoted).then_some((key, value))
}

fn key_text(key: &Yaml) -> Result<String, FrontmatterError> {
    match key {
        Yaml::String(text) | Yaml::Real(text) => Ok(text.clone()),
        Yaml::Integer(number) => Ok(number.to_string()),
        Yaml::Boolean(flag) => Ok(flag.to_string()),
        Yaml::Null => Ok("null".to_owned()),
        Yaml::Array(_) | Yaml::Hash(_) | Yaml::Alias(_) | Yaml::BadValue => {
            Err(FrontmatterError::ComplexKey)
        }
    }
}

fn to_json(value: Yaml) -> Result<Value, FrontmatterError> {
    Ok(match value {
        Yaml::String(text) => Value::String(text),
        Yaml::Integer(number) => Value::from(number),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        Yaml::Boolean(flag) => Value::Bool(flag),
        Yaml::Null | Yaml::Alias(_) | Yaml::BadValue => Value::Null,
        Yaml::Array(items) => Value::Array(
            items
                .into_iter()
                .map(to_json)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                map.insert(key_text(&key)?, to_json(value)?);
            }
            Value::Object(map)
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    fn front(text: &str) -> Frontmatter {
        parse(text).unwrap().frontmatter.unwrap()
    }

    #[derive(Deserialize)]
    struct Text(#[serde(deserialize_with = "super::text")] Option<String>);

    #[derive(Deserialize)]
    struct List(#[serde(deserialize_with = "super::list")] Vec<String>);

    /// Every field read as text, as a typed view with `text` fields reads it.
    trait Views {
        fn text(&self, key: &str) -> Option<String>;
        fn list(&self, key: &str) -> Vec<String>;
    }

    impl Views for Frontmatter {
        fn text(&self, key: &str) -> Option<String> {
            let mut all: std::collections::HashMap<String, Text> = self.read().unwrap();
            all.remove(key).and_then(|text| text.0)
        }

        fn list(&self, key: &str) -> Vec<String> {
            let mut all: std::collections::HashMap<String, List> = self.read().unwrap();
            all.remove(key).map(|list| list.0).unwrap_or_default()
        }
    }

    #[test]
    fn scalars_lists_and_body() {
        let doc = parse(
            "---\ndescription: \"do x\"\npaths:\n  - \"**/*.py\"\n  - src/**\nallowed-tools: Bash, Read\n---\nBODY $1\n",
        )
        .unwrap();
        let front = doc.frontmatter.unwrap();
        assert_eq!(front.text("description").as_deref(), Some("do x"));
        assert_eq!(front.list("paths"), vec!["**/*.py", "src/**"]);
        assert_eq!(front.list("allowed-tools"), vec!["Bash", "Read"]);
        assert_eq!(doc.body, "BODY $1\n");
    }

    #[test]
    fn no_or_unclosed_frontmatter_is_all_body() {
        for text in ["hello\n", "---\nkey: v\nno end\n"] {
            let doc = parse(text).unwrap();
            assert_eq!(doc.frontmatter, None);
            assert_eq!(doc.body, text);
        }
        let doc = parse("---\n---\nx").unwrap();
        assert_eq!(doc.frontmatter, Some(Frontmatter::default()));
        assert_eq!(doc.body, "x");
        assert_eq!(parse("---\r\na: 1\r\n---\r\nx").unwrap().body, "x");
    }

    #[test]
    fn real_yaml_nests_and_types() {
        let front = front(
            "---\nname: reviewer\ntools: [Bash, 'Read']\ncount: 3 # a comment\non: true\nratio: 0.5\nnothing: ~\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: \"echo 'x: y'\"}\nprompt: |\n  line one\n  line two\n---\n",
        );
        assert_eq!(
            Value::Object(front.fields),
            json!({
                "name": "reviewer",
                "tools": ["Bash", "Read"],
                "count": 3,
                "on": true,
                "ratio": 0.5,
                "nothing": null,
                "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "echo 'x: y'"}]}]},
                "prompt": "line one\nline two\n",
            })
        );
    }

    /// Values people write that strict YAML rejects read as the text they
    /// wrote; the other fields keep their YAML meaning.
    #[test]
    fn values_strict_yaml_rejects_read_as_text() {
        let front = front(
            "---\nargument-hint: [file] [line]\ndescription: Use when: tests fail\ntools: [Bash, Read]\nmodel: sonnet\n---\n",
        );
        assert_eq!(
            front.text("argument-hint").as_deref(),
            Some("[file] [line]")
        );
        assert_eq!(
            front.text("description").as_deref(),
            Some("Use when: tests fail")
        );
        assert_eq!(front.list("tools"), vec!["Bash", "Read"]);
        assert_eq!(front.text("model").as_deref(), Some("sonnet"));
        // A flow list as the whole value is YAML, shown as written.
        assert_eq!(
            self::front("---\nargument-hint: [message]\n---\n")
                .text("argument-hint")
                .as_deref(),
            Some("[message]")
        );
        // Quotes inside the salvaged value survive.
        assert_eq!(
            self::front("---\nd: say \"hi\": [now] \\o/\n---\n")
                .text("d")
                .as_deref(),
            Some("say \"hi\": [now] \\o/")
        );
    }

    #[test]
    fn errors_name_the_line_in_the_file() {
        let error = parse("---\na: 1\n   b: 2\n---\n").unwrap_err();
        let FrontmatterError::Yaml { line, .. } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(*line, 3, "{error}");
        assert!(
            error.to_string().starts_with("frontmatter line 3"),
            "{error}"
        );
        assert_eq!(
            parse("---\n- a\n- b\n---\n").unwrap_err(),
            FrontmatterError::NotAMapping
        );
        assert_eq!(
            parse("---\n? [a]\n: b\n---\n").unwrap_err(),
            FrontmatterError::ComplexKey
        );
    }

    #[test]
    fn text_and_list_of_other_shapes() {
        let front = front("---\nn: 7\nmap: {a: 1}\nnested: [[a]]\nempty:\n---\n");
        assert_eq!(front.text("n").as_deref(), Some("7"));
        assert_eq!(front.list("n"), vec!["7"]);
        assert_eq!(front.text("map"), None);
        assert!(front.list("map").is_empty());
        assert_eq!(front.text("nested"), None);
        assert!(front.list("empty").is_empty());
        assert_eq!(front.text("missing"), None);
    }

    /// A typed view reads the keys it names; a key of a shape it does not
    /// take reads as absent, without failing the other keys.
    #[test]
    fn typed_views_are_lenient() {
        #[derive(Debug, Default, Deserialize)]
        #[serde(default)]
        struct View {
            #[serde(deserialize_with = "super::text")]
            name: Option<String>,
            #[serde(deserialize_with = "super::text")]
            description: Option<String>,
            #[serde(rename = "allowed-tools", deserialize_with = "super::list")]
            allowed_tools: Vec<String>,
            #[serde(deserialize_with = "super::list")]
            paths: Vec<String>,
            tools: ListField,
            other: ListField,
            missing: ListField,
            null: ListField,
        }
        let view: View = front(
            "---
name: {a: 1}
description: [x, 2, true]
allowed-tools: [Bash, [nested], ~, Read]
paths: 3
tools: Bash, Read
other: 4
null: ~
extra: {deep: [1]}
---
",
        )
        .read()
        .unwrap();
        assert_eq!(view.name, None);
        assert_eq!(view.description.as_deref(), Some("[x, 2, true]"));
        assert_eq!(view.allowed_tools, ["Bash", "Read"]);
        assert_eq!(view.paths, ["3"]);
        assert_eq!(
            view.tools,
            ListField::Items(vec!["Bash".into(), "Read".into()])
        );
        assert_eq!(view.other, ListField::NotAList);
        assert_eq!(view.missing, ListField::Absent);
        assert_eq!(view.null, ListField::Absent);
        let front = front(
            "---
map: {a: [1, x]}
list: [[a]]
---
",
        );
        assert_eq!(front.json_text("map").as_deref(), Some(r#"{"a":[1,"x"]}"#));
        assert_eq!(front.json_text("missing"), None);
        // A strict field type that does not match is an error naming it.
        #[derive(Debug, Deserialize)]
        struct Strict {
            #[allow(dead_code)]
            list: String,
        }
        let error = front.read::<Strict>().unwrap_err();
        assert!(
            matches!(&error, FrontmatterError::Fields { message } if message.contains("expected a string")),
            "{error:?}"
        );
    }

    /// Nine lines of nine aliases each name the line before: 9^9 strings
    /// once expanded, from a few hundred bytes.
    pub(crate) fn billion_laughs() -> String {
        let mut text =
            String::from("---\nname: x\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for level in 1..9 {
            let previous = format!("*a{}", level - 1);
            let items = [previous.as_str(); 9].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
        }
        text.push_str("---\nbody\n");
        text
    }

    #[test]
    fn alias_expansion_is_bounded_before_anything_is_built() {
        let text = billion_laughs();
        assert!(text.len() < 600, "{}", text.len());
        let started = std::time::Instant::now();
        let error = parse(&text).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(
            error,
            FrontmatterError::TooLarge {
                line: 7,
                what: "nodes",
                limit: MAX_NODES
            }
        );
        assert!(
            error
                .to_string()
                .starts_with("frontmatter line 7: more than 10000 nodes"),
            "{error}"
        );
        // A line strict YAML rejects before the laugh sends the block down
        // the lenient path: each alias line on its own names an anchor it
        // lacks, so it reads as the text written, never expanded.
        let broken = text.replace("name: x\n", "name: x\ndescription: Use when: x\n");
        let front = parse(&broken).unwrap().frontmatter.unwrap();
        assert_eq!(
            front.text("a8").as_deref(),
            Some(["*a7"; 9].join(", "))
                .map(|items| format!("&a8 [{items}]"))
                .as_deref()
        );
        // Nor does a whole laugh on one line next to a broken one.
        let one_line = "---\nd: Use when: x\nl: [&a [x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a], &c [*b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c], &e [*d, *d, *d, *d, *d, *d, *d, *d, *d], [*e, *e, *e, *e, *e, *e, *e, *e, *e]]\n---\n";
        assert!(
            matches!(
                parse(one_line),
                Err(FrontmatterError::TooLarge { line: 3, .. })
            ),
            "{:?}",
            parse(one_line)
        );
    }

    #[test]
    fn aliases_and_depth_within_the_bounds_read_and_beyond_them_do_not() {
        let front = front("---\nbase: &b {type: command, command: x}\nhooks: [*b, *b]\n---\n");
        assert_eq!(
            front.fields.get("hooks"),
            Some(
                &json!([{"type": "command", "command": "x"}, {"type": "command", "command": "x"}])
            )
        );
        let many = format!(
            "---\nx: &x 1\nl: [{}]\n---\n",
            vec!["*x"; MAX_ALIASES + 1].join(", ")
        );
        assert_eq!(
            parse(&many).unwrap_err(),
            FrontmatterError::TooLarge {
                line: 3,
                what: "aliases",
                limit: MAX_ALIASES
            }
        );
        let deep = format!(
            "---\nx: {}1{}\n---\n",
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        );
        assert!(matches!(
            parse(&deep).unwrap_err(),
            FrontmatterError::TooLarge {
                what: "levels of nesting",
                ..
            }
        ));
        let wide = format!("---\nl: [{}]\n---\n", vec!["1"; MAX_NODES + 1].join(", "));
        assert!(matches!(
            parse(&wide).unwrap_err(),
            FrontmatterError::TooLarge { what: "nodes", .. }
        ));
        let fine = format!("---\nl: [{}]\n---\n", vec!["1"; MAX_NODES - 10].join(", "));
        assert!(parse(&fine).is_ok());
    }
}
