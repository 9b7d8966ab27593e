//! Structured results carried as JSON text through rmcp's `Value`-typed fields.
//!
//! rmcp's `CallToolResult::structured_content` is a `serde_json::Value`, in which every object of
//! a large result (a whole-tree listing: tens of thousands of three-key objects) costs a map node
//! and its strings, about 900 bytes per entry. Such results are therefore serialized once, straight
//! into their JSON text, and [`embed`]ded as an object of one entry: a marker holding a secret
//! drawn once per process, mapped to the text. (Results made mostly of one long string gain
//! nothing: their text would be scanned for escapes twice, so they stay plain `Value`s.) Every writer of our messages (the stdio and
//! in-process transports, the admin link) serializes through [`to_writer`], whose formatter writes
//! such an object as the JSON text it holds; `Value` trees that contain one (task results,
//! rewritten messages) keep it intact.
//!
//! A request that arrived on one of our transports carries [`Wire`] in its extensions; a result
//! that leaves for any other transport (rmcp's own, as a library user might choose) gets its
//! embedded value parsed back first ([`settle`]), so it is right on every transport.
//!
//! Architecture invariant: only [`embed`] and [`embed_nested`] create marker keys, always mapped
//! to JSON that serde_json (or [`to_writer`]) wrote, and the marker's secret never leaves the
//! process, so content from files, processes or clients is never written unescaped. An embedded
//! object is never changed.

use std::io;
use std::sync::{Arc, OnceLock};

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CharEscape, CompactFormatter, Formatter, Serializer};

use super::kept_replies::KeptReplies;

/// The prefix of every embedded result: a per-process secret between two noncharacters.
fn marker() -> &'static str {
    static MARKER: OnceLock<String> = OnceLock::new();
    MARKER.get_or_init(|| {
        let mut secret = [0u8; 16];
        if getrandom::fill(&mut secret).is_err() {
            // Keyed from the operating system's randomness too.
            use std::hash::{BuildHasher as _, Hasher as _};
            for half in secret.chunks_mut(8) {
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_u64(u64::from(std::process::id()));
                half.copy_from_slice(&hasher.finish().to_le_bytes());
            }
        }
        let hex: String = secret.iter().map(|byte| format!("{byte:02x}")).collect();
        format!("\u{fdd0}forgemcp-json-{hex}\u{fdd0}")
    })
}

/// `value` serialized and carried as an object of one marked entry, `{marker: json}` (an object,
/// so that rmcp keeps it as `structuredContent` for peers of every protocol version).
pub fn embed<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    marked(serde_json::to_vec(value)?)
}

/// [`embed`] for a value that may itself hold embedded results (a tool's whole result, whose
/// `structuredContent` may be one): its text is written by [`to_writer`], so those are plain JSON
/// in it.
pub fn embed_nested<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    marked(to_vec(value)?)
}

/// JSON text that serde_json (or [`to_writer`]) wrote, as the object of one marked entry.
fn marked(json: Vec<u8>) -> serde_json::Result<Value> {
    // Both write UTF-8 only.
    let text = String::from_utf8(json).map_err(|_| serde_json::Error::io(io::Error::other("invalid UTF-8")))?;
    let mut res = serde_json::Map::new();
    res.insert(marker().to_owned(), Value::String(text));
    Ok(Value::Object(res))
}

/// The length of `value` as [`to_writer`] writes it, counted without building the text.
pub fn size_of<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<usize> {
    struct Count(usize);
    impl io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    to_writer(&mut count, value)?;
    Ok(count.0)
}

/// Marks a request that arrived on a transport whose messages are written by [`to_writer`], and
/// holds that transport's results whose reply is written from a text kept already.
#[derive(Debug, Clone, Default)]
pub struct Wire {
    pub kept: Arc<KeptReplies>,
}

/// Parses an embedded value back into a plain `Value` (for a reply that another serializer
/// writes); any other value is left as it is.
pub fn settle(value: &mut Value) {
    let Some(text) = embedded_text(value) else { return };
    match serde_json::from_str(text) {
        Ok(parsed) => *value = parsed,
        // Never: the text is what serde_json wrote.
        Err(err) => tracing::error!("an embedded result is not valid JSON: {err}"),
    }
}

/// The JSON text an [`embed`]ded value holds; `None` for any other value.
pub fn embedded_text(value: &Value) -> Option<&str> {
    let Value::Object(map) = value else { return None };
    let (Some((key, Value::String(text))), 1) = (map.iter().next(), map.len()) else { return None };
    (key.as_str() == marker()).then_some(text.as_str())
}

/// Serializes a message, writing embedded results as the JSON they hold.
pub fn to_writer<W: io::Write, T: Serialize + ?Sized>(writer: W, value: &T) -> serde_json::Result<()> {
    value.serialize(&mut Serializer::with_formatter(writer, Embedding::default()))
}

/// [`to_writer`] into a new buffer.
pub fn to_vec<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Vec<u8>> {
    let mut res = Vec::with_capacity(256);
    to_writer(&mut res, value)?;
    Ok(res)
}

/// A value with its embedded results parsed back (for tests and in-process readers).
pub fn decode(value: &Value) -> serde_json::Result<Value> {
    serde_json::from_slice(&to_vec(value)?)
}

/// Where the formatter is. An object's `{` waits until its first key shows whether it is an
/// embedded result; everything of an embedded object but the JSON it holds is left out.
#[derive(Default, Clone, Copy, PartialEq, Eq)]
enum State {
    #[default]
    Plain,
    /// An object has begun; its `{` is not written yet.
    Brace,
    /// In the first key of such an object; neither `{` nor the key's quote is written.
    Key,
    /// In the marker key of an embedded object.
    Marker,
    /// After the marker key, before the string that holds the JSON.
    Holder,
    /// In that string: its characters are written as they are.
    Embedded,
    /// After it, until the embedded object ends.
    Closing,
}

/// serde_json's compact output, except for embedded results.
#[derive(Default)]
struct Embedding {
    state: State,
}

impl Embedding {
    /// Writes what waits, once something shows the object is an ordinary one.
    fn settle<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        let pending: &[u8] = match self.state {
            State::Brace => b"{",
            State::Key => b"{\"",
            _ => return Ok(()),
        };
        self.state = State::Plain;
        writer.write_all(pending)
    }
}

/// Formatter methods that only settle what waits, then write as serde_json does.
macro_rules! settled {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $method<W: ?Sized + io::Write>(&mut self, writer: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.settle(writer)?;
            CompactFormatter.$method(writer $(, $arg)*)
        }
    )*};
}

impl Formatter for Embedding {
    settled! {
        write_null();
        write_bool(value: bool);
        write_i8(value: i8);
        write_i16(value: i16);
        write_i32(value: i32);
        write_i64(value: i64);
        write_i128(value: i128);
        write_u8(value: u8);
        write_u16(value: u16);
        write_u32(value: u32);
        write_u64(value: u64);
        write_u128(value: u128);
        write_f32(value: f32);
        write_f64(value: f64);
        write_number_str(value: &str);
        write_byte_array(value: &[u8]);
        write_raw_fragment(fragment: &str);
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
    }

    fn begin_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.settle(writer)?;
        self.state = State::Brace;
        Ok(())
    }

    fn end_object<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match std::mem::take(&mut self.state) {
            State::Brace => writer.write_all(b"{}"),
            State::Closing => Ok(()),
            _ => writer.write_all(b"}"),
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        if self.state == State::Brace {
            return Ok(());
        }
        CompactFormatter.begin_object_key(writer, first)
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        if self.state == State::Holder {
            return Ok(());
        }
        CompactFormatter.begin_object_value(writer)
    }

    fn begin_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match self.state {
            State::Brace => self.state = State::Key,
            State::Holder => self.state = State::Embedded,
            _ => writer.write_all(b"\"")?,
        }
        Ok(())
    }

    fn end_string<W: ?Sized + io::Write>(&mut self, writer: &mut W) -> io::Result<()> {
        match self.state {
            State::Marker => self.state = State::Holder,
            State::Embedded => self.state = State::Closing,
            _ => {
                self.settle(writer)?;
                writer.write_all(b"\"")?;
            }
        }
        Ok(())
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, writer: &mut W, fragment: &str) -> io::Result<()> {
        match self.state {
            // The marker has no character that needs escaping, so a marker key's first fragment
            // holds the whole marker.
            State::Key if fragment.starts_with(marker()) => {
                self.state = State::Marker;
                Ok(())
            }
            State::Marker => Ok(()),
            _ => {
                self.settle(writer)?;
                writer.write_all(fragment.as_bytes())
            }
        }
    }

    fn write_char_escape<W: ?Sized + io::Write>(&mut self, writer: &mut W, escape: CharEscape) -> io::Result<()> {
        match self.state {
            State::Embedded => writer.write_all(&[unescaped(escape)]),
            State::Marker => Ok(()),
            _ => {
                self.settle(writer)?;
                CompactFormatter.write_char_escape(writer, escape)
            }
        }
    }
}

/// The character an escape stands for.
fn unescaped(escape: CharEscape) -> u8 {
    match escape {
        CharEscape::Quote => b'"',
        CharEscape::ReverseSolidus => b'\\',
        CharEscape::Solidus => b'/',
        CharEscape::Backspace => 0x08,
        CharEscape::FormFeed => 0x0c,
        CharEscape::LineFeed => b'\n',
        CharEscape::CarriageReturn => b'\r',
        CharEscape::Tab => b'\t',
        CharEscape::AsciiControl(byte) => byte,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_embedded_result_is_written_as_the_json_it_holds() {
        let result = json!({ "path": "project/a \"b\"\n", "entries": [1, null, { "k": "\\" }, {}], "empty": "" });
        let message = json!({ "id": 7, "result": { "structuredContent": embed(&result).unwrap(), "note": "é\"" } });
        assert!(message["result"]["structuredContent"].is_object());
        let line = String::from_utf8(to_vec(&message).unwrap()).unwrap();
        let expected = serde_json::to_string(&result).unwrap();
        assert_eq!(line, format!(r#"{{"id":7,"result":{{"note":"é\"","structuredContent":{expected}}}}}"#));
        let in_array = json!([embed(&result).unwrap(), embed(&json!([])).unwrap(), {}]);
        assert_eq!(String::from_utf8(to_vec(&in_array).unwrap()).unwrap(), format!("[{expected},[],{{}}]"));
        assert_eq!(
            decode(&message).unwrap(),
            json!({ "id": 7, "result": { "structuredContent": result, "note": "é\"" } })
        );
    }

    #[test]
    fn everything_else_is_written_as_serde_json_writes_it() {
        let value = json!({
            "": "", "a\u{1}": ["\t\r\n\u{8}\u{c}/\\\"", "x", {}, { "": {} }, { "\"": 1.5 }],
            "n": [null, true, false, -3, 18446744073709551615u64, 0.1], "o": { "k": { "k": [] } },
        });
        assert_eq!(to_vec(&value).unwrap(), serde_json::to_vec(&value).unwrap());
        let numbered: std::collections::BTreeMap<i32, bool> = [(-1, true), (2, false)].into();
        let keyed: std::collections::BTreeMap<bool, Vec<()>> = [(true, vec![()])].into();
        assert_eq!(
            to_vec(&(numbered.clone(), keyed.clone())).unwrap(),
            serde_json::to_vec(&(numbered, keyed)).unwrap()
        );
    }

    #[test]
    fn a_settled_value_is_the_plain_one() {
        let result = json!({ "path": "project/", "entries": [{ "kind": "file" }] });
        let mut value = embed(&result).unwrap();
        settle(&mut value);
        assert_eq!(value, result);
        settle(&mut value);
        assert_eq!(value, result);
    }

    #[test]
    fn a_marker_without_the_secret_is_an_ordinary_key() {
        let forged = marker().replace(|c: char| c.is_ascii_hexdigit(), "0");
        let value = json!([{ forged.clone(): "\"},\"isError\":true" }, { "x": forged }]);
        assert_eq!(to_vec(&value).unwrap(), serde_json::to_vec(&value).unwrap());
    }
}
