//! YAML input with positions: every error names the file, the line and column, and the field.
//!
//! Scenario files and Kubernetes manifests are YAML that people write by hand, so a mistake must
//! be reported where it is: `scenarios/x.yaml:12:5: steps[3].scale.replicas: invalid type:
//! string "three", expected i32`. saphyr keeps the position of every node; this module turns each
//! document into a plain [`serde_json::Value`] (what serde, k8s-openapi and a cluster's API take)
//! plus an index from each field's path to where it is written, and deserialises from it with
//! serde_path_to_error so that the failing field's path finds its line.
//!
//! Scalars resolve as YAML 1.2's core schema does (what `kubectl` reads): plain `3` is an
//! integer, `true`/`false` booleans, `null`/`~`/nothing null, `1.5` a float; `yes`, `on` and
//! anything quoted stay strings. Mapping keys become strings (`1: x` has the key `"1"`), as
//! `kubectl` turns YAML into JSON. Custom tags (`!foo`) are rejected; anchors and aliases are
//! expanded.
//!
//! [`emit`] is the other direction: a value written back as block-style YAML.

pub mod emit;

use saphyr::{LoadableYamlNode, MarkedYaml, Marker, Scalar, YamlData};
use serde::de::DeserializeOwned;
use serde_json::{Map, Number, Value};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use crate::error::{InputError as Error, Pos};

/// The position a saphyr marker points at (saphyr counts columns from 0).
fn pos_of(marker: &Marker) -> Pos {
    Pos {
        line: marker.line(),
        column: marker.col() + 1,
    }
}

/// One step of a [`FieldPath`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A path to a field from the document's root, written as serde_path_to_error writes it:
/// `spec.template.spec.containers[0].image`. The root is the empty path.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldPath(pub Vec<Seg>);

impl FieldPath {
    pub fn root() -> FieldPath {
        FieldPath::default()
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    /// This path extended by a mapping key.
    pub fn key(&self, key: &str) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Seg::Key(key.to_string()));
        p
    }

    /// This path extended by a sequence index.
    pub fn index(&self, index: usize) -> FieldPath {
        let mut p = self.clone();
        p.0.push(Seg::Index(index));
        p
    }

    /// Parses the dotted form (`spec.selector.matchExpressions[0].values`), as validation
    /// messages start with it. Keys containing dots cannot be told apart; such a path still
    /// finds its enclosing field through [`Document::position`].
    pub fn parse(text: &str) -> FieldPath {
        let mut segs = Vec::new();
        for part in text.split('.').filter(|p| !p.is_empty()) {
            let (key, mut rest) = part.split_once('[').map_or((part, ""), |(k, r)| (k, r));
            if !key.is_empty() {
                segs.push(Seg::Key(key.to_string()));
            }
            while let Some((index, after)) = rest.split_once(']') {
                if let Ok(i) = index.parse() {
                    segs.push(Seg::Index(i));
                }
                rest = after.strip_prefix('[').unwrap_or(after);
            }
        }
        FieldPath(segs)
    }

    /// This path followed by a path serde_path_to_error reported inside it.
    fn join(&self, inner: &serde_path_to_error::Path) -> FieldPath {
        let mut p = self.clone();
        for seg in inner {
            match seg {
                serde_path_to_error::Segment::Seq { index } => p.0.push(Seg::Index(*index)),
                serde_path_to_error::Segment::Map { key } => p.0.push(Seg::Key(key.clone())),
                serde_path_to_error::Segment::Enum { variant } => {
                    p.0.push(Seg::Key(variant.clone()))
                }
                serde_path_to_error::Segment::Unknown => {}
            }
        }
        p
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, seg) in self.0.iter().enumerate() {
            match seg {
                Seg::Key(k) if i == 0 => f.write_str(k)?,
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

/// One YAML document of a file: its value, and where each of its fields is written.
#[derive(Clone, Debug)]
pub struct Document {
    file: PathBuf,
    value: Value,
    /// The position of every node: for a mapping's value, where its key is written; for a
    /// sequence item, where the item starts.
    positions: BTreeMap<FieldPath, Pos>,
}

/// Reads `path` and loads every document in it. A file that cannot be read is an error naming
/// it (`manifests/x.yaml: cannot read: No such file or directory`).
pub fn load_file(path: &Path) -> Result<Vec<Document>, Error> {
    load_str(path, &read(path)?)
}

/// A file's text; one that cannot be read is an error naming it.
pub fn read(path: &Path) -> Result<String, Error> {
    rsmc_spec::input::read_text(path).map_err(|e| Error::in_file(path, cannot_read(&e)))
}

/// `cannot read: <reason>`, without the `(os error N)` suffix.
pub fn cannot_read(e: &std::io::Error) -> String {
    let text = e.to_string();
    let reason = text
        .find(" (os error")
        .map_or(text.as_str(), |i| &text[..i]);
    format!("cannot read: {reason}")
}

/// Loads every `---`-separated document of `text`; `file` names it in errors. Empty documents
/// are null values.
pub fn load_str(file: &Path, text: &str) -> Result<Vec<Document>, Error> {
    let nodes = MarkedYaml::load_from_str(text).map_err(|e| {
        Error::at(
            file,
            Some(pos_of(e.marker())),
            format!("YAML syntax error: {}", e.info()),
        )
    })?;
    nodes
        .iter()
        .map(|node| {
            let mut doc = Document {
                file: file.to_path_buf(),
                value: Value::Null,
                positions: BTreeMap::new(),
            };
            // A document with nothing in it loads as a bad value at the top.
            if !matches!(node.data, YamlData::BadValue) {
                let mut path = FieldPath::root();
                doc.value = doc.convert(node, &mut path, pos_of(&node.span.start))?;
            } else {
                doc.positions
                    .insert(FieldPath::root(), pos_of(&node.span.start));
            }
            Ok(doc)
        })
        .collect()
}

impl Document {
    /// A document built in memory (no positions): errors name only the file and field.
    pub fn from_value(file: &Path, value: Value) -> Document {
        Document {
            file: file.to_path_buf(),
            value,
            positions: BTreeMap::new(),
        }
    }

    pub fn file(&self) -> &Path {
        &self.file
    }

    pub fn value(&self) -> &Value {
        &self.value
    }

    /// Where the document starts.
    pub fn start(&self) -> Option<Pos> {
        self.positions.get(&FieldPath::root()).copied()
    }

    /// Where `path` is written, or failing that the nearest field that encloses it.
    pub fn position(&self, path: &FieldPath) -> Option<Pos> {
        (0..=path.0.len())
            .rev()
            .find_map(|n| self.positions.get(&FieldPath(path.0[..n].to_vec())))
            .copied()
    }

    /// The value at `path`, if the document has one there.
    pub fn get(&self, path: &FieldPath) -> Option<&Value> {
        path.0.iter().try_fold(&self.value, |v, seg| match seg {
            Seg::Key(k) => v.as_object()?.get(k),
            Seg::Index(i) => v.as_array()?.get(*i),
        })
    }

    /// An error about the field at `path`: `file:line:col: path: message`.
    pub fn error(&self, path: &FieldPath, message: impl fmt::Display) -> Error {
        let message = if path.is_root() {
            message.to_string()
        } else {
            format!("{path}: {message}")
        };
        Error::at(&self.file, self.position(path), message)
    }

    /// The part of this document at `path` as a document of its own (an inline manifest):
    /// its paths start there, its positions stay those of this file.
    pub fn subdocument(&self, path: &FieldPath) -> Document {
        Document {
            file: self.file.clone(),
            value: self.get(path).cloned().unwrap_or(Value::Null),
            positions: self
                .positions
                .iter()
                .filter_map(|(p, pos)| {
                    Some((FieldPath(p.0.strip_prefix(&path.0[..])?.to_vec()), *pos))
                })
                .collect(),
        }
    }

    /// The whole document as a `T`.
    pub fn deserialize<T: DeserializeOwned>(&self) -> Result<T, Error> {
        self.deserialize_at(&FieldPath::root())
    }

    /// The value at `path` (null when absent) as a `T`; a type error or an unknown field names
    /// the failing field's full path and line.
    pub fn deserialize_at<T: DeserializeOwned>(&self, path: &FieldPath) -> Result<T, Error> {
        let value = self.get(path).unwrap_or(&Value::Null);
        serde_path_to_error::deserialize(value)
            .map_err(|e| self.error(&path.join(e.path()), e.inner()))
    }

    /// The mapping at `path`, to read field by field.
    pub fn fields(&self, path: &FieldPath) -> Result<Fields<'_>, Error> {
        match self.get(path) {
            Some(Value::Object(map)) => Ok(Fields {
                doc: self,
                path: path.clone(),
                map,
                asked: Vec::new(),
            }),
            other => Err(self.error(
                path,
                format!(
                    "invalid type: {}, expected a mapping",
                    describe(other.unwrap_or(&Value::Null))
                ),
            )),
        }
    }

    fn convert(
        &mut self,
        node: &MarkedYaml,
        path: &mut FieldPath,
        at: Pos,
    ) -> Result<Value, Error> {
        self.positions.insert(path.clone(), at);
        let fail = |doc: &Document, path: &FieldPath, message: &str| {
            Err(Error::at(
                &doc.file,
                Some(at),
                if path.is_root() {
                    message.to_string()
                } else {
                    format!("{path}: {message}")
                },
            ))
        };
        match &node.data {
            YamlData::Value(scalar) => match scalar_value(scalar) {
                Some(v) => Ok(v),
                None => fail(
                    self,
                    path,
                    "a float that JSON cannot represent (.inf or .nan)",
                ),
            },
            YamlData::Representation(text, style, tag) => {
                match Scalar::parse_from_cow_and_metadata(text.clone(), *style, tag.as_ref())
                    .as_ref()
                    .and_then(scalar_value)
                {
                    Some(v) => Ok(v),
                    None => fail(self, path, "a value that does not fit its tag"),
                }
            }
            YamlData::Sequence(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    path.0.push(Seg::Index(i));
                    out.push(self.convert(item, path, pos_of(&item.span.start))?);
                    path.0.pop();
                }
                Ok(Value::Array(out))
            }
            YamlData::Mapping(entries) => {
                let mut out = Map::new();
                for (key, value) in entries {
                    let key_at = pos_of(&key.span.start);
                    let Some(name) = key_string(key) else {
                        return Err(Error::at(
                            &self.file,
                            Some(key_at),
                            "a mapping key must be a scalar (a string, number or boolean)",
                        ));
                    };
                    if out.contains_key(&name) {
                        return Err(Error::at(
                            &self.file,
                            Some(key_at),
                            format!("duplicate key {name:?}"),
                        ));
                    }
                    path.0.push(Seg::Key(name.clone()));
                    let v = self.convert(value, path, key_at)?;
                    path.0.pop();
                    out.insert(name, v);
                }
                Ok(Value::Object(out))
            }
            YamlData::Tagged(tag, _) => fail(
                self,
                path,
                &format!("the tag {}{} is not supported", tag.handle, tag.suffix),
            ),
            YamlData::Alias(_) => fail(self, path, "an alias to an unknown anchor"),
            YamlData::BadValue => fail(self, path, "a value that does not fit its tag"),
        }
    }
}

/// A scalar as JSON; `None` for a float JSON cannot hold.
fn scalar_value(scalar: &Scalar) -> Option<Value> {
    Some(match scalar {
        Scalar::Null => Value::Null,
        Scalar::Boolean(b) => Value::Bool(*b),
        Scalar::Integer(i) => Value::Number((*i).into()),
        Scalar::FloatingPoint(f) => Value::Number(Number::from_f64(f.into_inner())?),
        Scalar::String(s) => Value::String(s.to_string()),
    })
}

/// A mapping key as the string `kubectl` would make of it.
fn key_string(key: &MarkedYaml) -> Option<String> {
    let scalar = match &key.data {
        YamlData::Value(s) => s.clone(),
        YamlData::Representation(text, style, tag) => {
            Scalar::parse_from_cow_and_metadata(text.clone(), *style, tag.as_ref())?
        }
        _ => return None,
    };
    Some(match scalar {
        Scalar::String(s) => s.to_string(),
        Scalar::Null => "null".to_string(),
        other => scalar_value(&other)?.to_string(),
    })
}

/// A value's type and, for scalars, the value, as serde's messages put it.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => format!("floating point `{n}`"),
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".into(),
        Value::Object(_) => "map".into(),
    }
}

/// Reads a mapping field by field, then rejects the fields nobody asked for. Unlike a serde
/// struct, the caller decides per field, which lets one mapping mean different things by the
/// fields it has (`delete: {replicaset: …}` or `delete: {pod: …}`).
pub struct Fields<'a> {
    doc: &'a Document,
    path: FieldPath,
    map: &'a Map<String, Value>,
    asked: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// The mapping's path.
    pub fn path(&self) -> &FieldPath {
        &self.path
    }

    /// The document the mapping is in.
    pub fn doc(&self) -> &'a Document {
        self.doc
    }

    /// The path of one of the mapping's fields.
    pub fn path_of(&self, key: &str) -> FieldPath {
        self.path.key(key)
    }

    /// Whether the mapping has `key` (which counts as asked for).
    pub fn has(&mut self, key: &'static str) -> bool {
        self.asked.push(key);
        self.map.contains_key(key)
    }

    /// The raw value of `key`, if present.
    pub fn raw(&mut self, key: &'static str) -> Option<&'a Value> {
        self.asked.push(key);
        self.map.get(key)
    }

    /// `key` as a `T`, or `None` when the mapping lacks it.
    pub fn optional<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<Option<T>, Error> {
        if !self.has(key) {
            return Ok(None);
        }
        self.doc.deserialize_at(&self.path_of(key)).map(Some)
    }

    /// `key` as a `T`; its absence is an error at the mapping.
    pub fn required<T: DeserializeOwned>(&mut self, key: &'static str) -> Result<T, Error> {
        self.optional(key)?
            .ok_or_else(|| self.doc.error(&self.path, format!("missing field `{key}`")))
    }

    /// An error at the mapping.
    pub fn error(&self, message: impl fmt::Display) -> Error {
        self.doc.error(&self.path, message)
    }

    /// An error at one of its fields.
    pub fn error_at(&self, key: &str, message: impl fmt::Display) -> Error {
        self.doc.error(&self.path_of(key), message)
    }

    /// Fails on the first field (in the file's order) that was never asked for.
    pub fn finish(self) -> Result<(), Error> {
        let unknown = self
            .map
            .keys()
            .filter(|k| !self.asked.contains(&k.as_str()))
            .min_by_key(|k| self.doc.position(&self.path_of(k)));
        match unknown {
            None => Ok(()),
            Some(k) => {
                let mut expected: Vec<String> = Vec::new();
                for name in self.asked.iter().map(|a| format!("`{a}`")) {
                    if !expected.contains(&name) {
                        expected.push(name);
                    }
                }
                let expected = expected.join(", ");
                Err(self.error_at(
                    k,
                    format!("unknown field `{k}`, expected one of {expected}"),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn load(text: &str) -> Result<Vec<Document>, Error> {
        load_str(Path::new("x.yaml"), text)
    }

    #[test]
    fn positions_point_at_keys_and_items() {
        let docs = load("a: 1\nspec:\n  containers:\n  - name: c\n    image: nginx\n").unwrap();
        let doc = &docs[0];
        let at = |p: &str| doc.position(&FieldPath::parse(p)).unwrap();
        assert_eq!(at("a"), Pos { line: 1, column: 1 });
        assert_eq!(at("spec.containers"), Pos { line: 3, column: 3 });
        assert_eq!(at("spec.containers[0].image"), Pos { line: 5, column: 5 });
        // A field that is not there is placed at the nearest enclosing one.
        assert_eq!(at("spec.containers[0].ports"), Pos { line: 4, column: 5 });
    }

    #[test]
    fn documents_keep_file_lines() {
        let docs = load("a: 1\n---\nb: 2\n---\n").unwrap();
        assert_eq!(docs.len(), 3);
        assert_eq!(
            docs[1].position(&FieldPath::parse("b")),
            Some(Pos { line: 3, column: 1 })
        );
        assert_eq!(docs[2].value(), &Value::Null);
    }

    #[test]
    fn core_schema_scalars() {
        let docs =
            load("i: 3\nq: \"3\"\nb: true\ny: yes\nn: ~\ne:\nf: 1.5\nk: {1: one}\n").unwrap();
        let expected = serde_json::json!({
            "i": 3, "q": "3", "b": true, "y": "yes", "n": null, "e": null, "f": 1.5,
            "k": {"1": "one"}
        });
        assert_eq!(docs[0].value(), &expected);
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        let err = load("a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        assert_eq!(err.file, Path::new("x.yaml"));
        let pos = err.position.expect("a position");
        assert!(pos.line >= 2, "{err}");
        assert!(
            err.to_string()
                .starts_with(&format!("x.yaml:{}:", pos.line)),
            "{err}"
        );
        assert!(err.to_string().contains("YAML syntax error"), "{err}");
    }

    #[test]
    fn duplicate_keys_and_tags_are_rejected() {
        let err = load("a: 1\na: 2\n").unwrap_err();
        assert_eq!(err.position.map(|p| p.line), Some(2), "{err}");
        let err = load("a: !custom 1\n").unwrap_err();
        assert!(err.to_string().contains("tag !custom"), "{err}");
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Scale {
        replicas: i32,
    }

    #[test]
    fn type_errors_name_path_and_line() {
        let docs = load("steps:\n- scale:\n    replicas: three\n").unwrap();
        let err = docs[0]
            .deserialize_at::<Scale>(&FieldPath::parse("steps[0].scale"))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.yaml:3:5: steps[0].scale.replicas: invalid type: string \"three\", expected i32"
        );
    }

    #[test]
    fn unknown_fields_name_the_field() {
        let docs = load("scale:\n  replicas: 1\n  replica: 3\n").unwrap();
        let err = docs[0]
            .deserialize_at::<Scale>(&FieldPath::parse("scale"))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("x.yaml:3:3: scale.replica: unknown field `replica`"),
            "{err}"
        );

        let mut fields = docs[0].fields(&FieldPath::parse("scale")).unwrap();
        assert_eq!(fields.required::<i32>("replicas").unwrap(), 1);
        let err = fields.finish().unwrap_err();
        assert_eq!(
            err.to_string(),
            "x.yaml:3:3: scale.replica: unknown field `replica`, expected one of `replicas`"
        );
    }

    #[test]
    fn missing_file_is_named() {
        let err = load_file(Path::new("no/such/file.yaml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no/such/file.yaml: cannot read: No such file or directory"
        );
    }

    #[test]
    fn field_paths_parse_and_print() {
        for text in ["spec.template.spec.containers[0].image", "a[1][2].b", "x"] {
            assert_eq!(FieldPath::parse(text).to_string(), text);
        }
    }
}
