//! The wire protocol between server instances, `--open-admin` clients and the admin Hub: one UTF-8
//! JSON object per line (NDJSON), each with a `type` (INTERFACE.md §16.3), and its framing.
//!
//! Only this file knows the shapes on the socket. The history records, catalog and status payloads
//! inside them are JSON values built by `instance.rs` and passed through the Hub unchanged to the
//! browser.
//!
//! Architecture invariant: a frame is one line of at most [`MAX_FRAME`] bytes; an over-long or
//! malformed line is reported as one error and the decoder resynchronises at the next newline, so a
//! bad peer cannot make a reader buffer without bound.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::history;

/// Version of this message set, sent in `hello`.
pub const PROTOCOL: u32 = 1;
/// Longest accepted line, newline excluded. A tool result stays below 8 MiB (the stdio limit);
/// history lists and resource reads are bounded by the instance before they are sent.
pub const MAX_FRAME: usize = 64 << 20;

/// Every message on the socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    /// Instance → Hub, first message of an instance connection.
    Hello(Hello),
    /// Hub → instance, the answer to `hello`.
    Welcome(Welcome),
    /// Instance → Hub: something happened (a call started, progressed, ended; an elicitation).
    Event(InstanceEvent),
    /// Hub → instance: a question from the browser.
    Request(Request),
    /// Instance → Hub: the answer to one request.
    Response(Response),
    /// `--open-admin` → Hub: a private login URL, please.
    OpenUrlRequest {
        id: String,
    },
    /// Hub → `--open-admin`: the single-use login URL.
    OpenUrl {
        id: String,
        url: String,
    },
    /// Liveness, both directions (every 5 s; 15 s of silence means the link is lost).
    Ping,
    Pong,
    /// Instance → Hub: the instance is shutting down; remove its tab now.
    Bye,
}

/// What an instance says about itself when it joins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// Random, 32 lowercase hex digits; stable for the instance's lifetime (a rejoin keeps it).
    pub instance_id: String,
    pub pid: u32,
    pub version: String,
    /// The project root, absolute.
    pub workspace: String,
    /// The storage root, absolute.
    pub storage: String,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// The instance's startup settings (read-only in the panel).
    pub settings: Value,
    /// How often this instance has lost its Hub link so far.
    pub reconnects: u32,
    /// The MCP client's name and version, once it initialized (the tab shows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Welcome {
    /// The panel's public address (no token), for the instance's stderr line.
    pub public_url: String,
    pub hub_pid: u32,
}

/// Events an instance reports; the Hub relays them to the browser with the instance id added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InstanceEvent {
    /// A call began; `call` is its history record (state `running`).
    CallStarted { call: CallRecord },
    /// A progress update of a running call.
    CallProgress { call_id: u64, progress: Value },
    /// A call ended; `call` is its complete history record.
    CallFinished { call: CallRecord },
    /// A panel call asks the user (elicitation); answer with `elicitation.respond`.
    ElicitationRequested { elicitation: Value },
    /// An elicitation was answered, cancelled or withdrawn.
    ElicitationResolved { elicitation_id: String, action: String },
    /// The MCP client initialized (the instance joined before that): its name and version.
    ClientInitialized { client: String },
}

/// A call's history record in an event: the history's own record as an instance sends it (sharing
/// the call's arguments and result with the history), a plain value as the Hub receives it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallRecord {
    Shared(Box<history::Record>),
    Received(Value),
}

impl Serialize for CallRecord {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CallRecord::Shared(record) => record.serialize(serializer),
            CallRecord::Received(value) => value.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CallRecord {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(CallRecord::Received)
    }
}

/// A request from the Hub (on behalf of the browser) to an instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub id: String,
    #[serde(flatten)]
    pub call: HubRequest,
}

/// The request methods, with their parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
pub enum HubRequest {
    /// The call history, oldest first.
    #[serde(rename = "history.list")]
    HistoryList,
    /// Tools (with schemas, annotations, `_meta`), resources and resource templates.
    #[serde(rename = "catalog.get")]
    CatalogGet,
    /// Settings, processes, toolsets, CMake configurations, clangd sessions.
    #[serde(rename = "status.get")]
    StatusGet,
    #[serde(rename = "resource.read")]
    ResourceRead { uri: String },
    /// Starts a panel call; answers `{call_id}` once the call is in the history.
    #[serde(rename = "tool.call")]
    ToolCall {
        tool: String,
        #[serde(default)]
        arguments: serde_json::Map<String, Value>,
    },
    /// Cancels a running panel call (calls of the MCP client are refused).
    #[serde(rename = "call.cancel")]
    CallCancel { call_id: u64 },
    #[serde(rename = "elicitation.respond")]
    ElicitationRespond {
        elicitation_id: String,
        /// `accept`, `decline` or `cancel`.
        action: String,
        #[serde(default)]
        content: Option<Value>,
    },
}

/// The answer to one [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub id: String,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Response {
    pub fn ok(id: String, result: Value) -> Response {
        Response { id, ok: true, result: Some(result), error: None }
    }

    pub fn err(id: String, error: impl Into<String>) -> Response {
        Response { id, ok: false, result: None, error: Some(error.into()) }
    }
}

/// Framing and decoding failures.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("a message is longer than {MAX_FRAME} bytes")]
    TooLong,
    #[error("a message is not valid: {0}")]
    Invalid(#[source] serde_json::Error),
    #[error("the connection failed")]
    Io(#[from] std::io::Error),
}

/// One message as a line, newline included.
pub fn encode(message: &Message) -> Result<Vec<u8>, FrameError> {
    let mut line = crate::server::raw_json::to_vec(message).map_err(FrameError::Invalid)?;
    if line.len() > MAX_FRAME {
        return Err(FrameError::TooLong);
    }
    // serde_json never writes a raw newline inside a value, so one line is one message.
    line.push(b'\n');
    Ok(line)
}

/// Splits a byte stream into messages. Pure: feed bytes with [`push`](Self::push), take messages
/// with [`next_message`](Self::next_message).
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    /// Bytes of `buf` already known to contain no newline.
    scanned: usize,
    /// Inside an over-long line: drop bytes up to the next newline.
    discarding: bool,
    max: usize,
}

impl Default for Decoder {
    fn default() -> Decoder {
        Decoder::with_max(MAX_FRAME)
    }
}

impl Decoder {
    pub fn with_max(max: usize) -> Decoder {
        Decoder { buf: Vec::new(), scanned: 0, discarding: false, max }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, an error for a bad line, or `None` until more bytes arrive.
    /// Blank lines are skipped.
    pub fn next_message(&mut self) -> Option<Result<Message, FrameError>> {
        loop {
            let Some(offset) = memchr::memchr(b'\n', &self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                if self.discarding {
                    self.buf.clear();
                    self.scanned = 0;
                } else if self.buf.len() > self.max {
                    self.buf.clear();
                    self.scanned = 0;
                    self.discarding = true;
                    return Some(Err(FrameError::TooLong));
                }
                return None;
            };
            let end = self.scanned + offset;
            let line: Vec<u8> = self.buf.drain(..=end).collect();
            self.scanned = 0;
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            let mut line = &line[..line.len() - 1];
            if let Some(stripped) = line.strip_suffix(b"\r") {
                line = stripped;
            }
            if line.len() > self.max {
                return Some(Err(FrameError::TooLong));
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            return Some(serde_json::from_slice(line).map_err(FrameError::Invalid));
        }
    }
}

/// Reads messages from an async byte stream.
pub struct FrameReader<R> {
    reader: R,
    decoder: Decoder,
    chunk: Box<[u8]>,
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(reader: R) -> FrameReader<R> {
        FrameReader { reader, decoder: Decoder::default(), chunk: vec![0; 64 * 1024].into_boxed_slice() }
    }

    /// The next message; `Ok(None)` at a clean end of stream.
    pub async fn next(&mut self) -> Result<Option<Message>, FrameError> {
        loop {
            if let Some(message) = self.decoder.next_message() {
                return message.map(Some);
            }
            let n = self.reader.read(&mut self.chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.decoder.push(&self.chunk[..n]);
        }
    }
}

/// Writes one message and flushes it.
pub async fn write_message<W: AsyncWrite + Unpin>(writer: &mut W, message: &Message) -> Result<(), FrameError> {
    let line = encode(message)?;
    writer.write_all(&line).await?;
    writer.flush().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn check(message: Message, expect: Expect) {
        let line = encode(&message).expect("encodes");
        let text = String::from_utf8(line.clone()).expect("UTF-8");
        expect.assert_eq(&text);
        let mut decoder = Decoder::default();
        decoder.push(&line);
        assert_eq!(decoder.next_message().expect("one message").expect("decodes"), message);
        assert!(decoder.next_message().is_none());
    }

    #[test]
    fn message_shapes() {
        check(
            Message::Ping,
            expect![[r#"
            {"type":"ping"}
        "#]],
        );
        check(
            Message::Welcome(Welcome { public_url: "http://127.0.0.1:8765/".into(), hub_pid: 7 }),
            expect![[r#"
                {"type":"welcome","public_url":"http://127.0.0.1:8765/","hub_pid":7}
            "#]],
        );
        check(
            Message::Event(InstanceEvent::CallProgress { call_id: 3, progress: json!({"progress": 1.0}) }),
            expect![[r#"
                {"type":"event","kind":"call_progress","call_id":3,"progress":{"progress":1.0}}
            "#]],
        );
        check(
            Message::Request(Request { id: "9".into(), call: HubRequest::HistoryList }),
            expect![[r#"
                {"type":"request","id":"9","method":"history.list"}
            "#]],
        );
        check(
            Message::Request(Request {
                id: "10".into(),
                call: HubRequest::ToolCall {
                    tool: "workspace_list".into(),
                    arguments: json!({"path": "project/"}).as_object().cloned().expect("object"),
                },
            }),
            expect![[r#"
                {"type":"request","id":"10","method":"tool.call","params":{"tool":"workspace_list","arguments":{"path":"project/"}}}
            "#]],
        );
        check(
            Message::Response(Response::err("10".into(), "no such tool")),
            expect![[r#"
                {"type":"response","id":"10","ok":false,"error":"no such tool"}
            "#]],
        );
        check(
            Message::OpenUrlRequest { id: "1".into() },
            expect![[r#"
                {"type":"open_url_request","id":"1"}
            "#]],
        );
    }

    #[test]
    fn decoder_handles_split_and_joined_lines() {
        let mut decoder = Decoder::default();
        decoder.push(b"{\"type\":\"pi");
        assert!(decoder.next_message().is_none());
        decoder.push(b"ng\"}\r\n\n  \n{\"type\":\"pong\"}\n{\"type\":\"bye\"");
        assert_eq!(decoder.next_message().expect("ping").expect("valid"), Message::Ping);
        assert_eq!(decoder.next_message().expect("pong").expect("valid"), Message::Pong);
        assert!(decoder.next_message().is_none(), "the last line is incomplete");
        decoder.push(b"}\n");
        assert_eq!(decoder.next_message().expect("bye").expect("valid"), Message::Bye);
    }

    #[test]
    fn decoder_reports_bad_json_and_continues() {
        let mut decoder = Decoder::default();
        decoder.push(b"not json\n{\"type\":\"nope\"}\n{\"type\":\"ping\"}\n");
        assert!(matches!(decoder.next_message(), Some(Err(FrameError::Invalid(_)))));
        assert!(matches!(decoder.next_message(), Some(Err(FrameError::Invalid(_)))), "unknown type");
        assert_eq!(decoder.next_message().expect("ping").expect("valid"), Message::Ping);
    }

    #[test]
    fn decoder_refuses_over_long_lines_and_resynchronises() {
        let mut decoder = Decoder::with_max(32);
        decoder.push(&[b'x'; 40]);
        assert!(matches!(decoder.next_message(), Some(Err(FrameError::TooLong))));
        decoder.push(&[b'x'; 100]);
        assert!(decoder.next_message().is_none(), "still inside the long line: dropped, not buffered");
        assert!(decoder.buf.is_empty());
        decoder.push(b"xx\n{\"type\":\"ping\"}\n");
        assert_eq!(decoder.next_message().expect("ping").expect("valid"), Message::Ping);
        // A long line that arrives whole is refused too.
        decoder.push(format!("{}\n{{\"type\":\"pong\"}}\n", "y".repeat(50)).as_bytes());
        assert!(matches!(decoder.next_message(), Some(Err(FrameError::TooLong))));
        assert_eq!(decoder.next_message().expect("pong").expect("valid"), Message::Pong);
    }

    #[tokio::test]
    async fn frame_reader_reads_until_end_of_stream() {
        let (mut a, b) = tokio::io::duplex(16);
        let writer = tokio::spawn(async move {
            write_message(&mut a, &Message::Ping).await.expect("write");
            write_message(&mut a, &Message::Bye).await.expect("write");
        });
        let mut reader = FrameReader::new(b);
        assert_eq!(reader.next().await.expect("read"), Some(Message::Ping));
        assert_eq!(reader.next().await.expect("read"), Some(Message::Bye));
        writer.await.expect("writer");
        assert_eq!(reader.next().await.expect("read"), None);
    }
}
