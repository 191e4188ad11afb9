//! How far a watch the gate passes on has got: the newest resourceVersion among the events
//! it has handed to the controller, read from the bytes as they go by.
//!
//! A settle point that reads the controllers' work queues ([`crate::settle`]) must also know
//! that every event the runner saw has reached them: an event still on its way leaves the
//! queues idle. Events of one resource type come in resourceVersion order (one etcd revision
//! counter; the watch cache sends them in order), so a watch that has delivered version `v`
//! has delivered every earlier event of its type.
//!
//! Two encodings, told by the response's `Content-Type`:
//! - JSON (`application/json`, kube-rs, kubectl): one event per line, `{"type": …,
//!   "object": {…}}` (apimachinery's `json.Serializer` writes each event followed by a
//!   newline; `runtime/serializer/json`'s framer splits on it);
//! - protobuf (`application/vnd.kubernetes.protobuf`, what kube-controller-manager's clients
//!   ask for by default): each event is a 4-byte big-endian length and that many bytes
//!   (apimachinery `runtime/serializer/protobuf` `LengthDelimitedFramer`) of a
//!   `meta.v1.WatchEvent` message without envelope (the stream's raw serializer): field 1
//!   its type, field 2 a `runtime.RawExtension` whose field 1 is the object, encoded with the
//!   usual envelope (the magic `k8s\0`, then a `runtime.Unknown` whose field 2 is the
//!   object's own bytes). Any object the gate sees (Pod, ReplicaSet,
//!   PartialObjectMetadata, and the bookmark's object of the type) has its `ObjectMeta` at
//!   field 1, and `ObjectMeta.resourceVersion` is field 6.
//!
//! A watch-list (`sendInitialEvents=true`, what client-go's reflector opens from v1.35 on)
//! begins with the objects as they stand, in key order, not version order, and the
//! reflector hands the informer none of them until the bookmark that ends them: nothing
//! counts until that first bookmark (apiserver `cacheWatcher.processInterval`; client-go
//! `Reflector.watchList`). An ERROR event (a Status) moves nothing. Anything else the reader
//! does not understand makes the watch unreadable: the gate keeps passing its bytes on
//! untouched, and only stops telling how far it got. (Facts from the sources: the notes of
//! issue 67's gate work, apimachinery `pkg/util/framer`, `runtime/serializer/protobuf`,
//! apiserver `endpoints/handlers/watch.go`, `storage/cacher`.)

/// The encoding of a watch response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Json,
    Protobuf,
}

impl Format {
    /// The encoding a `Content-Type` names, if the reader knows it.
    pub fn of(content_type: &str) -> Option<Format> {
        let media = content_type.split(';').next().unwrap_or("").trim();
        match media {
            "application/json" => Some(Format::Json),
            "application/vnd.kubernetes.protobuf" => Some(Format::Protobuf),
            _ => None,
        }
    }
}

/// The reader of one watch response.
pub struct Progress {
    format: Format,
    /// Bytes of an event not complete yet.
    pending: Vec<u8>,
    /// In a watch-list's initial events, before the bookmark that ends them.
    initial: bool,
}

/// What one event says: its type and its object's resourceVersion, if it has one.
struct Event {
    bookmark: bool,
    version: Option<u64>,
}

/// The most a single event may take before the reader gives up on the watch (a length
/// prefix past this is a misreading, not an object).
const MAX_EVENT: usize = 64 << 20;

impl Progress {
    /// The reader of a watch in `format`; `initial_events`: a watch-list, which begins with
    /// the objects as they stand.
    pub fn new(format: Format, initial_events: bool) -> Progress {
        Progress {
            format,
            pending: Vec::new(),
            initial: initial_events,
        }
    }

    /// Read `bytes`, the next bytes of the response: the newest resourceVersion among the
    /// events they complete (`None`: none completed, or none with a version), or why the
    /// watch cannot be read.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Option<u64>, String> {
        self.pending.extend_from_slice(bytes);
        let mut newest = None;
        loop {
            let (event, used) = match self.format {
                Format::Json => match self.pending.iter().position(|&b| b == b'\n') {
                    Some(end) => (json_event(&self.pending[..end])?, end + 1),
                    None => break,
                },
                Format::Protobuf => {
                    let Some(head) = self.pending.get(..4) else {
                        break;
                    };
                    let length = u32::from_be_bytes(head.try_into().expect("4 bytes")) as usize;
                    if length > MAX_EVENT {
                        return Err(format!("a protobuf watch frame of {length} bytes"));
                    }
                    let Some(frame) = self.pending.get(4..4 + length) else {
                        break;
                    };
                    (protobuf_event(frame)?, 4 + length)
                }
            };
            self.pending.drain(..used);
            if self.initial {
                self.initial = !event.bookmark;
                if self.initial {
                    continue;
                }
            }
            newest = newest.max(event.version);
        }
        if self.pending.len() > MAX_EVENT {
            return Err(format!(
                "{} bytes without the end of a watch event",
                self.pending.len()
            ));
        }
        Ok(newest)
    }
}

/// What a JSON watch event says.
fn json_event(line: &[u8]) -> Result<Event, String> {
    #[derive(serde::Deserialize)]
    struct Json {
        #[serde(rename = "type")]
        kind: String,
        object: Object,
    }
    #[derive(serde::Deserialize)]
    struct Object {
        #[serde(default)]
        metadata: Meta,
    }
    #[derive(Default, serde::Deserialize)]
    struct Meta {
        #[serde(rename = "resourceVersion")]
        resource_version: Option<String>,
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(Event {
            bookmark: false,
            version: None,
        });
    }
    let event: Json =
        serde_json::from_slice(line).map_err(|e| format!("a JSON watch event: {e}"))?;
    let version = match event.kind.as_str() {
        "ERROR" => None,
        _ => event
            .object
            .metadata
            .resource_version
            .filter(|v| !v.is_empty())
            .map(|v| parse_version(v.as_bytes()))
            .transpose()?,
    };
    typed(&event.kind, version)
}

/// The event of type `kind` (the API's `ADDED`, … `ERROR`) whose object has `version`.
fn typed(kind: &str, version: Option<u64>) -> Result<Event, String> {
    match kind {
        "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" => Ok(Event {
            bookmark: kind == "BOOKMARK",
            version,
        }),
        "ERROR" => Ok(Event {
            bookmark: false,
            version: None,
        }),
        other => Err(format!("a watch event of type {other:?}")),
    }
}

/// The envelope a protobuf-encoded object starts with (apimachinery
/// `runtime/serializer/protobuf`: `protoEncodingPrefix`).
const MAGIC: &[u8] = b"k8s\0";

/// What a protobuf watch event says.
fn protobuf_event(event: &[u8]) -> Result<Event, String> {
    let unreadable = |what: String| format!("a protobuf watch event: {what}");
    let kind = field(event, 1).map_err(unreadable)?.unwrap_or_default();
    let kind = String::from_utf8_lossy(kind);
    if kind == "ERROR" {
        return typed(&kind, None);
    }
    // WatchEvent.object (2) → RawExtension.raw (1) → the envelope, whose Unknown.raw (2)
    // is the object's own bytes → metadata (1) → resourceVersion (6).
    let raw = field(event, 2)
        .and_then(|o| o.map(|o| field(o, 1)).transpose())
        .map_err(unreadable)?
        .flatten()
        .ok_or_else(|| unreadable("no object".into()))?;
    let unknown = raw
        .strip_prefix(MAGIC)
        .ok_or_else(|| unreadable("an object without the k8s envelope".into()))?;
    let object = field(unknown, 2)
        .map_err(unreadable)?
        .ok_or_else(|| unreadable("an envelope without its object".into()))?;
    let meta = field(object, 1).map_err(unreadable)?;
    let version = match meta.map(|m| field(m, 6)).transpose().map_err(unreadable)? {
        Some(Some(v)) if !v.is_empty() => Some(parse_version(v)?),
        _ => None,
    };
    typed(&kind, version)
}

fn parse_version(text: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| {
            format!(
                "a resourceVersion that is no number: {:?}",
                String::from_utf8_lossy(text)
            )
        })
}

/// The bytes of the last length-delimited field `number` of a protobuf message (`None` when
/// it has none), or why the message cannot be read.
fn field(message: &[u8], number: u64) -> Result<Option<&[u8]>, String> {
    let mut at = 0;
    let mut found = None;
    while at < message.len() {
        let key = varint(message, &mut at)?;
        let (number_here, wire) = (key >> 3, key & 7);
        match wire {
            0 => {
                varint(message, &mut at)?;
            }
            1 => at += 8,
            2 => {
                let length = varint(message, &mut at)? as usize;
                let end = at
                    .checked_add(length)
                    .filter(|&end| end <= message.len())
                    .ok_or("a field past the end of its message")?;
                if number_here == number {
                    found = Some(&message[at..end]);
                }
                at = end;
            }
            5 => at += 4,
            _ => return Err(format!("wire type {wire} (field {number_here})")),
        }
    }
    if at > message.len() {
        return Err("a field past the end of its message".into());
    }
    Ok(found)
}

fn varint(message: &[u8], at: &mut usize) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *message
            .get(*at)
            .ok_or("a varint past the end of its message")?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint of more than 10 bytes".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited protobuf field.
    fn bytes_field(number: u64, contents: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, number << 3 | 2);
        put_varint(&mut out, contents.len() as u64);
        out.extend_from_slice(contents);
        out
    }

    fn put_varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    /// A protobuf watch frame of an event `kind` whose object has `version` (none: no
    /// resourceVersion), with a varint field and other metadata around it.
    fn frame(kind: &str, version: Option<&str>) -> Vec<u8> {
        let mut meta = bytes_field(1, b"frontend-x7k2q");
        meta.extend(bytes_field(3, b"ns"));
        if let Some(v) = version {
            meta.extend(bytes_field(6, v.as_bytes()));
        }
        meta.extend([7 << 3, 2]); // generation: 2 (a varint)
        let mut pod = bytes_field(1, &meta);
        pod.extend(bytes_field(2, b"spec"));
        let mut unknown = bytes_field(1, &bytes_field(1, b"v1"));
        unknown.extend(bytes_field(2, &pod));
        let mut object = MAGIC.to_vec();
        object.extend(unknown);
        let mut event = bytes_field(1, kind.as_bytes());
        event.extend(bytes_field(2, &bytes_field(1, &object)));
        let mut out = (event.len() as u32).to_be_bytes().to_vec();
        out.extend(event);
        out
    }

    #[test]
    fn protobuf_events_split_anywhere_give_the_newest_version() {
        let mut stream = frame("ADDED", Some("41"));
        stream.extend(frame("MODIFIED", Some("1043")));
        stream.extend(frame("ERROR", None));
        for cut in 0..stream.len() {
            let mut p = Progress::new(Format::Protobuf, false);
            let first = p.feed(&stream[..cut]).unwrap();
            let second = p.feed(&stream[cut..]).unwrap();
            assert_eq!(first.max(second), Some(1043), "cut at {cut}");
            if cut < frame("ADDED", Some("41")).len() {
                assert_eq!(first, None, "cut at {cut}: no event complete yet");
            }
        }
        let mut p = Progress::new(Format::Protobuf, false);
        assert_eq!(p.feed(&frame("ADDED", Some("41"))[..10]).unwrap(), None);
    }

    #[test]
    fn a_watch_lists_initial_events_count_only_from_the_bookmark_that_ends_them() {
        let mut p = Progress::new(Format::Protobuf, true);
        // The objects as they stand, in key order.
        assert_eq!(p.feed(&frame("ADDED", Some("900"))).unwrap(), None);
        assert_eq!(p.feed(&frame("ADDED", Some("41"))).unwrap(), None);
        assert_eq!(p.feed(&frame("BOOKMARK", Some("950"))).unwrap(), Some(950));
        assert_eq!(p.feed(&frame("MODIFIED", Some("951"))).unwrap(), Some(951));
        let mut p = Progress::new(Format::Json, true);
        let added = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n";
        assert_eq!(p.feed(added).unwrap(), None);
        assert_eq!(p.feed(added).unwrap(), None);
    }

    #[test]
    fn json_events_split_anywhere_give_the_newest_version() {
        let stream = concat!(
            r#"{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"41"}}}"#,
            "\n",
            r#"{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"1043"}}}"#,
            "\n",
            r#"{"type":"ERROR","object":{"kind":"Status","code":410}}"#,
            "\n"
        )
        .as_bytes();
        for cut in 0..stream.len() {
            let mut p = Progress::new(Format::Json, false);
            let first = p.feed(&stream[..cut]).unwrap();
            let second = p.feed(&stream[cut..]).unwrap();
            assert_eq!(first.max(second), Some(1043), "cut at {cut}");
        }
    }

    #[test]
    fn what_cannot_be_read_is_said_and_the_encoding_comes_from_the_content_type() {
        let mut p = Progress::new(Format::Json, false);
        assert!(p.feed(b"{\"type\": \n").is_err());
        let mut p = Progress::new(Format::Protobuf, false);
        assert!(p.feed(&[0x7f, 0xff, 0xff, 0xff]).is_err());
        let mut p = Progress::new(Format::Protobuf, false);
        assert!(p.feed(&[0, 0, 0, 2, 0x0b, 0x01]).is_err(), "wire type 3");
        // An object without the envelope is not guessed at.
        let mut event = bytes_field(1, b"ADDED");
        event.extend(bytes_field(2, &bytes_field(1, &bytes_field(1, b"meta"))));
        let mut framed = (event.len() as u32).to_be_bytes().to_vec();
        framed.extend(event);
        assert!(Progress::new(Format::Protobuf, false)
            .feed(&framed)
            .is_err());
        assert_eq!(
            Format::of("application/vnd.kubernetes.protobuf;stream=watch"),
            Some(Format::Protobuf)
        );
        assert_eq!(Format::of("application/json"), Some(Format::Json));
        assert_eq!(Format::of("application/cbor-seq"), None);
    }
}
