//! dsh's one `$VAR` / `${VAR}` / `${VAR:-default}` / `~` expander.
//!
//! Every place that expands variables in text it did not write — a hook
//! command scanned for the scripts it runs (`dsh-trust`, `dsh hooks`), an
//! MCP server's command line (`dsh-mcp`), an HTTP hook's headers, a plugin
//! marketplace path — goes through [`expand`] or [`tilde`], each with the
//! [`Forms`] it accepts and a lookup closure that decides which names exist.
//! The substitution itself is `shellexpand`'s; what is in front of it only
//! switches forms off (a form that is off stays as written) and keeps
//! shell names ASCII.
//!
//! A name is `[A-Za-z0-9_]+` (`$TOKEN_2` is `TOKEN_2`, never `TOKEN`
//! followed by `_2`). A `$` that starts no reference stays as written, and
//! so does `$$` (it is not an escape here). A reference whose name the
//! lookup does not know stays as written and is listed in
//! [`Expanded::unset`].

use std::borrow::Cow;

/// The forms a caller expands. `${NAME}` always is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Forms {
    /// `$NAME` as well as `${NAME}`. When this is on, braces hold a name
    /// or nothing: `${a b}` stays as written and is [`Expanded::dynamic`].
    /// When it is off, whatever the braces hold is looked up.
    pub bare: bool,
    /// `${NAME:-default}`: the default when the lookup does not know NAME.
    /// When off, such a reference stays as written and is
    /// [`Expanded::dynamic`].
    pub defaults: bool,
    /// A leading `~` or `~/` is the lookup's `HOME` (`~user` is not
    /// expanded).
    pub tilde: bool,
}

/// What [`expand`] made of a text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Expanded {
    /// The text with every known reference replaced.
    pub text: String,
    /// The names the lookup did not know, each once, in order of first use
    /// (`HOME` for a `~` when the lookup has none).
    pub unset: Vec<String>,
    /// Whether the text holds a form the caller does not expand and a shell
    /// would decide at run time: a `${` without its `}`, a default when
    /// defaults are off, braces around something other than a name.
    pub dynamic: bool,
}

impl Expanded {
    /// The text, when every reference was expanded.
    pub fn complete(self) -> Option<String> {
        (self.unset.is_empty() && !self.dynamic).then_some(self.text)
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Expands the `forms` in `text`; `lookup` gives a name's value, or `None`
/// for a name that is unknown (or not allowed) here.
pub fn expand(
    text: &str,
    forms: Forms,
    mut lookup: impl FnMut(&str) -> Option<String>,
) -> Expanded {
    let mut out = Expanded::default();
    let mut rest = text;
    let mut home = String::new();
    if forms.tilde && (rest == "~" || rest.starts_with("~/")) {
        match lookup("HOME") {
            Some(value) => home = value,
            None => {
                out.unset.push("HOME".to_owned());
                home.push('~');
            }
        }
        rest = &rest[1..];
    }
    let (escaped, dynamic, with_default) = escape(rest, forms);
    out.dynamic = dynamic;
    let mut unset = Vec::new();
    // `shellexpand` looks up each reference left unescaped once, in order.
    let mut with_default = with_default.into_iter();
    let expanded =
        shellexpand::env_with_context(&escaped, |name: &str| -> Result<Option<String>, ()> {
            let has_default = with_default.next().unwrap_or(false);
            // `${:-x}`: the empty name is never set.
            if let Some(default) = name.strip_prefix(":-") {
                return Ok(Some(default.to_owned()));
            }
            // A bare name ends at the first non-ASCII character
            // (`shellexpand` would go on through any alphanumeric one);
            // braces around a non-name are escaped when bare names are on.
            let end = match forms.bare {
                true => name.find(|c: char| !is_name_char(c)).unwrap_or(name.len()),
                false => name.len(),
            };
            let (name, tail) = name.split_at(end);
            match lookup(name) {
                Some(value) => Ok(Some(value + tail)),
                None => {
                    if !has_default {
                        unset.push(name.to_owned());
                    }
                    Ok(None)
                }
            }
        });
    let expanded = match expanded {
        Ok(text) => text,
        // The lookup above never fails.
        Err(_) => Cow::Borrowed(rest),
    };
    for name in unset {
        if !out.unset.contains(&name) {
            out.unset.push(name);
        }
    }
    out.text = home + &expanded;
    out
}

/// `text` with every `$` that `forms` does not expand doubled (`$$` is
/// `shellexpand`'s literal `$`); whether any of them is a form a shell
/// would decide at run time; and for each reference left, in order,
/// whether it has a default.
fn escape(text: &str, forms: Forms) -> (String, bool, Vec<bool>) {
    let mut out = String::with_capacity(text.len() + 8);
    let mut dynamic = false;
    let mut with_default = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let keep = if let Some(braced) = after.strip_prefix('{') {
            match braced.find('}') {
                None => {
                    dynamic = true;
                    false
                }
                Some(close) => {
                    let inner = &braced[..close];
                    let has_default = inner.contains(":-");
                    if has_default && !forms.defaults {
                        dynamic = true;
                        false
                    } else if forms.bare {
                        let name = inner.split(":-").next().unwrap_or_default();
                        let valid = !name.is_empty() && name.chars().all(is_name_char);
                        // `${}` is a literal, as in the scripts scanned.
                        dynamic |= !valid && !inner.is_empty();
                        if valid {
                            with_default.push(has_default);
                        }
                        valid
                    } else {
                        with_default.push(has_default);
                        true
                    }
                }
            }
        } else {
            let bare = forms.bare && after.starts_with(is_name_char);
            if bare {
                with_default.push(false);
            }
            bare
        };
        out.push_str(if keep { "$" } else { "$$" });
        rest = after;
    }
    out.push_str(rest);
    (out, dynamic, with_default)
}

/// Expands a leading `~` or `~/` to `home` (when it gives one); nothing
/// else in `path` is expanded.
pub fn tilde<'a>(path: &'a str, home: impl FnOnce() -> Option<Cow<'a, str>>) -> Cow<'a, str> {
    shellexpand::tilde_with_context(path, home)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/u".to_owned()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("t0k".to_owned()),
            "TOKEN_2" => Some("second".to_owned()),
            "DOLLAR" => Some("$HOME".to_owned()),
            _ => None,
        }
    }

    const SHELL: Forms = Forms {
        bare: true,
        defaults: false,
        tilde: false,
    };
    const MCP: Forms = Forms {
        bare: false,
        defaults: true,
        tilde: false,
    };

    fn run(text: &str, forms: Forms) -> Expanded {
        expand(text, forms, env)
    }

    fn text(text: &str, forms: Forms) -> String {
        run(text, forms).text
    }

    #[test]
    fn bare_and_braced_names_take_the_longest_ascii_name() {
        assert_eq!(text("$TOKEN_2", SHELL), "second");
        assert_eq!(text("${TOKEN}_2", SHELL), "t0k_2");
        assert_eq!(text("a/$TOKEN/b", SHELL), "a/t0k/b");
        assert_eq!(text("é$TOKENé", SHELL), "ét0ké");
        assert_eq!(text("$EMPTY|", SHELL), "|");
        // A value is not expanded again.
        assert_eq!(text("$DOLLAR", SHELL), "$HOME");
        assert_eq!(
            run("$TOKEN ${HOME}", SHELL).complete().as_deref(),
            Some("t0k /home/u")
        );
    }

    #[test]
    fn a_dollar_that_starts_no_reference_stays() {
        for literal in ["a$", "$", "$ x", "$$", "a$-b", "${}", "$.", "100$"] {
            let expanded = run(literal, SHELL);
            assert_eq!(expanded.text, literal);
            assert!(expanded.unset.is_empty() && !expanded.dynamic, "{literal}");
        }
        // `$$` is not an escape: the second `$` still starts a reference.
        assert_eq!(text("$$TOKEN", SHELL), "$t0k");
        assert_eq!(text("$$$", SHELL), "$$$");
    }

    #[test]
    fn unknown_names_stay_as_written_and_are_listed_once() {
        let expanded = run("${A}/$B/${A}/$TOKEN/$5x", SHELL);
        assert_eq!(expanded.text, "${A}/$B/${A}/t0k/$5x");
        assert_eq!(expanded.unset, ["A", "B", "5x"]);
        assert!(!expanded.dynamic);
        assert_eq!(expanded.complete(), None);
        let expanded = run("$Bé", SHELL);
        assert_eq!(expanded.text, "$Bé");
        assert_eq!(expanded.unset, ["B"]);
    }

    #[test]
    fn forms_a_shell_decides_at_run_time_stay_and_are_dynamic() {
        for dynamic in ["${unclosed", "${A:-x}/y", "${a b}", "${TOKEN:-x}", "${A-x}"] {
            let expanded = run(dynamic, SHELL);
            assert_eq!(expanded.text, dynamic);
            assert!(expanded.dynamic, "{dynamic}");
            assert_eq!(expanded.complete(), None);
        }
        // What follows an unclosed brace is still expanded.
        assert_eq!(text("${x $TOKEN", SHELL), "${x t0k");
    }

    #[test]
    fn braces_only_with_defaults_as_in_mcp_config() {
        assert_eq!(text("${HOME}/x", MCP), "/home/u/x");
        assert_eq!(text("${NOPE:-dflt}/${HOME:-z}", MCP), "dflt//home/u");
        // A set but empty variable is used as it is.
        assert_eq!(text("a${EMPTY:-d}b", MCP), "ab");
        assert_eq!(text("${:-x}", MCP), "x");
        // Bare references, `$$` and an unclosed brace stay.
        assert_eq!(text("$HOME $$ ${unclosed", MCP), "$HOME $$ ${unclosed");
        assert_eq!(text("$${HOME}", MCP), "$/home/u");
        let expanded = run("${A}/${B}/${A}", MCP);
        assert_eq!(expanded.text, "${A}/${B}/${A}");
        assert_eq!(expanded.unset, ["A", "B"]);
        // A name with a default is not missing, even where it has none.
        let expanded = run("${NOPE:-d} ${C:-e} ${NOPE}", MCP);
        assert_eq!(expanded.text, "d e ${NOPE}");
        assert_eq!(expanded.unset, ["NOPE"]);
        assert_eq!(run("${NOPE:-d}", MCP).complete().as_deref(), Some("d"));
        // Braces hold any name when bare names are off.
        let expanded = run("${a b}", MCP);
        assert_eq!(expanded.unset, ["a b"]);
    }

    #[test]
    fn a_lookup_can_refuse_names_it_does_not_allow() {
        let allowed = |name: &str| {
            ["TOKEN", "UNSET"]
                .contains(&name)
                .then(|| env(name).unwrap_or_default())
        };
        let header = |value: &str| expand(value, SHELL, allowed).text;
        assert_eq!(header("Bearer $TOKEN"), "Bearer t0k");
        assert_eq!(header("[$UNSET]"), "[]");
        assert_eq!(header("$TOKEN_2 ${HOME}"), "$TOKEN_2 ${HOME}");
        assert_eq!(header("${TOKEN:-x}"), "${TOKEN:-x}");
    }

    #[test]
    fn tilde_is_home_at_the_start_only() {
        let forms = Forms {
            tilde: true,
            ..SHELL
        };
        assert_eq!(text("~", forms), "/home/u");
        assert_eq!(text("~/$TOKEN", forms), "/home/u/t0k");
        assert_eq!(text("~user/x", forms), "~user/x");
        assert_eq!(text("a/~/x", forms), "a/~/x");
        assert_eq!(text("~", SHELL), "~");
        let expanded = expand("~/x", forms, |_| None);
        assert_eq!(expanded.text, "~/x");
        assert_eq!(expanded.unset, ["HOME"]);
        // `~` from a value is not expanded.
        let expanded = expand("$T", forms, |_| Some("~/x".to_owned()));
        assert_eq!(expanded.text, "~/x");
    }

    #[test]
    fn tilde_alone_expands_nothing_else() {
        let home = || Some(Cow::Borrowed("/h"));
        assert_eq!(tilde("~/a/$HOME", home), "/h/a/$HOME");
        assert_eq!(tilde("~", home), "/h");
        assert_eq!(tilde("~x", home), "~x");
        assert_eq!(tilde("/abs", home), "/abs");
        assert_eq!(tilde("~/a", || None), "~/a");
    }
}
