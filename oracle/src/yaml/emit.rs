//! Writing a value as YAML that [`super::load_str`] (and `kubectl`) reads back as the same value.
//!
//! Block style, two-space indentation, sequences under a key at the key's indentation (the
//! style of the Kubernetes docs). A small collection of scalars is written on one line in flow
//! style (`labels: {tier: frontend}`). Strings are written plain when they read back as the
//! same string, and double-quoted (JSON escapes are YAML escapes) otherwise: `"3"`, `"true"`,
//! `""`, anything with `: ` or ` #`, and the YAML 1.1 booleans (`yes`, `on`, …) that older YAML
//! readers such as kubectl's would take for booleans.

use saphyr::Scalar;
use serde_json::{Map, Value};

/// The longest one-line flow collection.
const FLOW_WIDTH: usize = 64;
/// How deep a flow collection may nest.
const FLOW_DEPTH: usize = 2;

/// `value` as a YAML document (ending in a newline). Mapping keys listed in `first` come first,
/// in that order; the others follow alphabetically.
pub fn to_string(value: &Value, first: &[&str]) -> String {
    let emitter = Emitter { first };
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => emitter.mapping(map, 0, &mut out),
        Value::Array(items) if !items.is_empty() => emitter.sequence(items, 0, &mut out),
        other => {
            out.push_str(&emitter.flow(other).unwrap_or_else(|| scalar(other, false)));
            out.push('\n');
        }
    }
    out
}

struct Emitter<'a> {
    first: &'a [&'a str],
}

impl Emitter<'_> {
    /// The entries of a mapping in writing order.
    fn entries<'m>(&self, map: &'m Map<String, Value>) -> Vec<(&'m String, &'m Value)> {
        let mut entries: Vec<_> = map.iter().collect();
        entries.sort_by_key(|(k, _)| {
            (
                self.first
                    .iter()
                    .position(|f| f == k)
                    .unwrap_or(self.first.len()),
                k.as_str(),
            )
        });
        entries
    }

    /// The one-line form of a scalar, or of a small collection nested at most two deep
    /// (`{pods: {of: frontend}, node: node-1}`, `[pod1, pod2]`); `None` for a value that needs
    /// block style.
    fn flow(&self, value: &Value) -> Option<String> {
        self.flow_within(value, FLOW_DEPTH)
    }

    fn flow_within(&self, value: &Value, depth: usize) -> Option<String> {
        let text = match value {
            Value::Array(items) if !items.is_empty() => {
                // Only scalars: a list of mappings reads better as a block (`- name: app`).
                let parts: Option<Vec<String>> =
                    items.iter().map(|v| self.flow_within(v, 0)).collect();
                format!("[{}]", parts?.join(", "))
            }
            Value::Object(map) if !map.is_empty() => {
                let parts: Option<Vec<String>> = self
                    .entries(map)
                    .into_iter()
                    .map(|(k, v)| {
                        let v = self.flow_within(v, depth.checked_sub(1)?)?;
                        Some(format!("{}: {v}", plain_or_quoted(k, true)))
                    })
                    .collect();
                format!("{{{}}}", parts?.join(", "))
            }
            scalar_value => return Some(scalar(scalar_value, depth < FLOW_DEPTH)),
        };
        (depth > 0 && text.len() <= FLOW_WIDTH).then_some(text)
    }

    fn mapping(&self, map: &Map<String, Value>, indent: usize, out: &mut String) {
        for (i, (key, value)) in self.entries(map).into_iter().enumerate() {
            // The first entry of a mapping inside a sequence item follows its `- `.
            if i > 0 || !out.ends_with("- ") {
                push_indent(out, indent);
            }
            out.push_str(&plain_or_quoted(key, false));
            out.push(':');
            self.value_after_key(value, indent, out);
        }
    }

    fn value_after_key(&self, value: &Value, indent: usize, out: &mut String) {
        if let Some(text) = value.as_str().and_then(|s| folded(s, indent + 2)) {
            out.push_str(" >-\n");
            out.push_str(&text);
            return;
        }
        if let Some(text) = self.flow(value) {
            out.push(' ');
            out.push_str(&text);
            out.push('\n');
            return;
        }
        out.push('\n');
        match value {
            Value::Object(map) => self.mapping(map, indent + 2, out),
            Value::Array(items) => self.sequence(items, indent, out),
            _ => unreachable!("scalars are always written in flow"),
        }
    }

    fn sequence(&self, items: &[Value], indent: usize, out: &mut String) {
        for item in items {
            push_indent(out, indent);
            out.push_str("- ");
            // A mapping item is written in block style (`- name: app`), its values may flow.
            match (item, self.flow(item)) {
                (Value::Object(map), _) if !map.is_empty() => self.mapping(map, indent + 2, out),
                (_, Some(text)) => {
                    out.push_str(&text);
                    out.push('\n');
                }
                (Value::Array(inner), None) => {
                    out.truncate(out.len() - 1);
                    out.push('\n');
                    self.sequence(inner, indent + 2, out);
                }
                (_, None) => unreachable!("scalars are always written in flow"),
            }
        }
    }
}

/// Where a folded string's lines wrap.
const TEXT_WIDTH: usize = 92;

/// A long one-line string as the lines of a folded block scalar (`>-`), each indented by
/// `indent`; `None` when it is short or has what folding would not keep (line breaks, tabs,
/// runs of spaces, spaces at either end, other control characters).
fn folded(s: &str, indent: usize) -> Option<String> {
    let foldable = s.len() > TEXT_WIDTH - indent
        && !s.starts_with(' ')
        && !s.ends_with(' ')
        && !s.contains("  ")
        && !s.chars().any(char::is_control);
    if !foldable {
        return None;
    }
    let mut out = String::new();
    let mut line = String::new();
    for word in s.split(' ') {
        if !line.is_empty() && indent + line.len() + 1 + word.len() > TEXT_WIDTH {
            push_indent(&mut out, indent);
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    push_indent(&mut out, indent);
    out.push_str(&line);
    out.push('\n');
    Some(out)
}

fn push_indent(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

fn scalar(value: &Value, in_flow: bool) -> String {
    match value {
        Value::String(s) => plain_or_quoted(s, in_flow),
        // Only empty collections reach here.
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
        other => other.to_string(),
    }
}

/// The YAML 1.1 booleans: plain strings in YAML 1.2, booleans to a YAML 1.1 reader.
const YAML11_BOOLEANS: [&str; 16] = [
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF",
];

/// `s` plain when it reads back as the same string, else double-quoted.
fn plain_or_quoted(s: &str, in_flow: bool) -> String {
    let allowed = |c: char| {
        c.is_ascii_alphanumeric() || "-_./=+@~()' ".contains(c) || (!in_flow && ",:".contains(c))
    };
    let plain = s.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '/')
        && s.chars().all(allowed)
        && !s.ends_with([' ', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !YAML11_BOOLEANS.contains(&s)
        && matches!(Scalar::parse_from_cow(s.into()), Scalar::String(_));
    if plain {
        s.to_string()
    } else {
        Value::String(s.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::Path;

    fn round_trip(value: &Value) -> String {
        let text = to_string(value, &["name", "apiVersion", "kind", "metadata"]);
        let back = crate::yaml::load_str(Path::new("t.yaml"), &text).unwrap();
        assert_eq!(back.len(), 1, "{text}");
        assert_eq!(back[0].value(), value, "{text}");
        text
    }

    #[test]
    fn tricky_strings_survive() {
        let strings = [
            "3",
            "true",
            "null",
            "",
            "~",
            "yes",
            "on",
            "1.5",
            "0x1f",
            "a: b",
            "a #b",
            "-x",
            "x:",
            " lead",
            "trail ",
            "multi\nline",
            "quote\"d",
            "gcr.io/x:v3",
            "it's fine, really",
            "{x}",
            "[y]",
            "&a",
            "*b",
            "!c",
            "%d",
            "@e",
            "`f",
            "|g",
            ">h",
            ".inf",
            "-",
        ];
        let value = json!({ "s": strings, "m": strings.iter().map(|s| (s.to_string(), json!(s))).collect::<Map<_, _>>() });
        round_trip(&value);
    }

    #[test]
    fn manifests_read_like_the_docs() {
        let rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "frontend", "labels": {"tier": "frontend"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"tier": "frontend"}},
                     "template": {"metadata": {"labels": {"tier": "frontend"}},
                                  "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.9"}]}}}
        });
        let text = round_trip(&rs);
        assert!(text.starts_with("apiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: frontend, labels: {tier: frontend}}\n"), "{text}");
        assert!(
            text.contains("  selector: {matchLabels: {tier: frontend}}\n"),
            "{text}"
        );
        assert!(
            text.contains("    metadata: {labels: {tier: frontend}}\n"),
            "{text}"
        );
        // A list of mappings is a block, and ':' needs no quotes there.
        assert!(
            text.ends_with(
                "      containers:\n      - name: app\n        image: registry.k8s.io/pause:3.9\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn long_text_is_folded() {
        let long = "The ReplicaSet concept page, \"Exemplo\": `kubectl get rs` shows frontend 3 3 3 — and # is no comment here: see? ".repeat(3);
        let long = long.trim_end().to_string();
        let text = round_trip(&json!({"name": "x", "description": long}));
        assert!(
            text.starts_with("name: x\ndescription: >-\n  The ReplicaSet"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.len() <= TEXT_WIDTH), "{text}");
        round_trip(
            &json!({"d": format!("{long}\nsecond line"), "e": long.replace("page,", "page,  ")}),
        );
    }

    #[test]
    fn nested_collections_and_scalars() {
        round_trip(&json!([[1, [2, {"a": [3, {"b": null}]}]], {}, [], 1.5, false]));
        round_trip(&json!({"long": (0..40).collect::<Vec<_>>(), "empty": {}, "e2": []}));
        round_trip(&json!("top"));
    }
}
