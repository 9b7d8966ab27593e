//! The stdio transport between the MCP client and rmcp, with its line guard.
//!
//! rmcp's own line transport drops unparsable lines silently, answers malformed requests without
//! their id and moves every read and write through tokio's blocking pool. This transport is
//! rmcp's [`Transport`] itself: one dedicated thread reads stdin, checks each line and hands the
//! parsed message straight to rmcp (valid messages) or writes a JSON-RPC error that carries the
//! request's id when it has one (everything else). Replies are serialized once, in the task rmcp
//! sends them from, and written to stdout directly (a result whose text the admin history keeps is
//! written from that text: [`Outgoing::Kept`]); a reply larger than the message limit is replaced
//! by an error naming the limit, built from the message's id without parsing it again.
//!
//! Both directions pass the MCP Tasks rewriting of [`wire`] (task methods rmcp's types do not carry);
//! the in-process transport ([`super::duplex`]) shares [`check_incoming`] and [`outgoing`].
//!
//! Architecture invariant: every request line that carries an id gets exactly one reply line.
//! Architecture invariant: stdout gets whole lines only, one at a time, under one lock.
//! Architecture invariant: no buffer outlives a large message: each reply owns its serialization
//! buffer and the reader gives back an oversized line buffer after the line; after a reply over
//! 1 MiB the allocator returns freed pages to the system.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions as _, JsonRpcMessage, ServerJsonRpcMessage, ServerResult};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::raw_json;
use super::tasks::wire;

/// Clients drop larger messages; no line we write exceeds this.
pub const MAX_OUTGOING_LINE: usize = 8 * 1024 * 1024;
/// Incoming lines beyond this are discarded with an error (rmcp's own limit is 16 MiB).
pub const MAX_INCOMING_LINE: usize = 16 * 1024 * 1024;
/// Messages parsed ahead of rmcp; the reader waits (and stops reading stdin) beyond this.
const INCOMING_QUEUE: usize = 64;
/// Line buffers above this capacity are given back after their line.
const KEPT_BUFFER: usize = 1 << 16;
/// Replies above this size are written with the worker thread handed off (a slow client may
/// make the write wait).
const LARGE_WRITE: usize = 1 << 16;

/// After a reply above this size, freed heap pages go back to the system.
const RELEASE_AFTER: usize = 1 << 20;

/// What the guard decides for one incoming line.
#[derive(Debug)]
pub enum Verdict {
    Forward(Box<ClientJsonRpcMessage>),
    Ignore,
    Reply(Value),
}

/// Classifies one incoming line (without its terminator) that arrived on the transport of `wire`.
pub fn check_incoming(line: &[u8], wire: &raw_json::Wire) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let mut value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => return Verdict::Reply(error_reply(Value::Null, -32700, &format!("Parse error: {err}"))),
    };
    if value.is_array() {
        return Verdict::Reply(error_reply(Value::Null, -32600, "Invalid request: JSON-RPC batches are not supported"));
    }
    let is_request = value.get("method").is_some();
    let id = match value.get("id") {
        None => Value::Null,
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        Some(_) if is_request => {
            // JSON-RPC 2.0 §4: an id is a string or a number; a request with any other id is invalid.
            let message = "Invalid request: `id` must be a string or a number";
            return Verdict::Reply(error_reply(Value::Null, -32600, message));
        }
        Some(_) => Value::Null,
    };
    let method_known = value.get("method").and_then(Value::as_str).is_some();
    let version_ok = value.get("jsonrpc").and_then(Value::as_str) == Some("2.0");
    wire::incoming(&mut value);
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(mut message) => {
            if let JsonRpcMessage::Request(request) = &mut message {
                request.request.extensions_mut().insert(wire.clone());
            }
            Verdict::Forward(Box::new(message))
        }
        Err(err) => {
            if !is_request && id != Value::Null {
                // A malformed response to one of our requests: nothing to answer.
                return Verdict::Ignore;
            }
            let code = if method_known && version_ok { -32602 } else { -32600 };
            let label = if code == -32602 { "Invalid params" } else { "Invalid request" };
            Verdict::Reply(error_reply(id, code, &format!("{label}: {err}")))
        }
    }
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// One outgoing message, serialized: a whole line, or the head of a reply whose result is a text
/// the history keeps ([`KeptReplies`](super::kept_replies::KeptReplies)), written after the head as
/// it is, so no copy of it is made for the reply.
pub enum Outgoing {
    /// The line, and its terminator unless the line holds it already ([`Outgoing::line`]).
    Line { line: Vec<u8>, terminator: &'static [u8] },
    /// `{"jsonrpc":"2.0","id":…,"result":` (the fields of rmcp's `JsonRpcResponse`, in its order),
    /// then the text, then `}`.
    Kept { head: Vec<u8>, text: Arc<Value> },
}

impl Outgoing {
    /// One line (without its terminator): the terminator goes into the buffer when that needs no
    /// new allocation (one write), else it is written after it (no copy of a large line).
    pub fn line(mut line: Vec<u8>) -> Outgoing {
        if line.len() < line.capacity() {
            line.push(b'\n');
            return Outgoing::Line { line, terminator: b"" };
        }
        Outgoing::Line { line, terminator: b"\n" }
    }

    /// The message's bytes in the order they are written, its terminator last.
    pub fn parts(&self) -> [&[u8]; 3] {
        match self {
            Outgoing::Line { line, terminator } => [line, b"", terminator],
            Outgoing::Kept { head, text } => {
                [head, raw_json::embedded_text(text).expect("kept texts are embedded").as_bytes(), b"}\n"]
            }
        }
    }

    /// The line's length with its terminator.
    pub fn size(&self) -> usize {
        self.parts().iter().map(|part| part.len()).sum()
    }
}

/// Serializes one outgoing message of the transport of `wire`; a message beyond the limit becomes
/// an error for the same request.
pub fn outgoing(message: &mut ServerJsonRpcMessage, wire: &raw_json::Wire) -> Outgoing {
    let kept = match message {
        JsonRpcMessage::Response(response) => match &mut response.result {
            ServerResult::CallToolResult(result) => wire.kept.take(result).map(|text| (&response.id, text)),
            _ => None,
        },
        _ => None,
    };
    let out = match kept {
        Some((id, text)) if raw_json::embedded_text(&text).is_some() => {
            let mut head = br#"{"jsonrpc":"2.0","id":"#.to_vec();
            serde_json::to_writer(&mut head, id).expect("an id serializes");
            head.extend_from_slice(br#","result":"#);
            Outgoing::Kept { head, text }
        }
        _ => Outgoing::line(serialized(message)),
    };
    let size = out.size() - 1;
    if size <= MAX_OUTGOING_LINE && size > 0 {
        return out;
    }
    drop(out);
    let (id, is_tool_result) = match message {
        JsonRpcMessage::Response(response) => {
            (json!(response.id), matches!(response.result, ServerResult::CallToolResult(_)))
        }
        JsonRpcMessage::Error(error) => (json!(error.id), false),
        JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => (Value::Null, false),
    };
    let text = format!(
        "The reply is {size} bytes, more than the {} MiB message limit. Ask for less: a narrower path, a line range, \
         fewer matches or a smaller max_bytes.",
        MAX_OUTGOING_LINE / (1024 * 1024)
    );
    let replacement = if is_tool_result {
        json!({ "jsonrpc": "2.0", "id": id, "result": { "content": [{ "type": "text", "text": text }], "isError": true } })
    } else {
        error_reply(id, -32603, &text)
    };
    Outgoing::line(replacement.to_string().into_bytes())
}

/// `message` as one line (without its terminator), or nothing when it cannot be serialized.
fn serialized(message: &ServerJsonRpcMessage) -> Vec<u8> {
    let mut line = Vec::with_capacity(256);
    let written = match wire::outgoing(message) {
        Some(rewritten) => raw_json::to_writer(&mut line, &rewritten),
        None => raw_json::to_writer(&mut line, message),
    };
    if let Err(err) = written {
        tracing::error!("cannot serialize an outgoing message: {err}");
        line.clear();
    }
    line
}

/// The one writer of stdout.
struct Output {
    writer: Mutex<Box<dyn Write + Send>>,
}

impl Output {
    /// Writes one whole message and flushes it.
    fn write(&self, out: Outgoing) -> std::io::Result<()> {
        let write = || {
            let mut writer = self.writer.lock();
            for part in out.parts() {
                writer.write_all(part)?;
            }
            writer.flush()
        };
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|handle| handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if out.size() > LARGE_WRITE && multi_thread { tokio::task::block_in_place(write) } else { write() }
    }
}

/// rmcp's transport on the process's stdin and stdout.
pub struct StdioTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    output: Arc<Output>,
    wire: raw_json::Wire,
}

/// A started transport and the token cancelled when its input ends (EOF or a read error).
pub struct Stdio {
    pub transport: StdioTransport,
    pub input_ended: CancellationToken,
}

/// Starts reading the process's stdin on a task of the current runtime; replies go to `output`.
pub fn start<W: Write + Send + 'static>(output: W) -> Stdio {
    let output = Arc::new(Output { writer: Mutex::new(Box::new(output)) });
    let (tx, incoming) = mpsc::channel(INCOMING_QUEUE);
    let input_ended = CancellationToken::new();
    let wire = raw_json::Wire::default();
    let (reader_output, reader_wire, ended) = (output.clone(), wire.clone(), input_ended.clone());
    tokio::spawn(async move {
        read_lines(super::stdin::open(), &tx, &reader_output, &reader_wire).await;
        // Dropping the sender ends rmcp's input; rmcp then finishes its replies.
        ended.cancel();
    });
    Stdio { transport: StdioTransport { incoming, output, wire }, input_ended }
}

/// The reader: every line is checked, forwarded or answered, until input ends or rmcp stops
/// listening.
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    tx: &mpsc::Sender<ClientJsonRpcMessage>,
    output: &Output,
    wire: &raw_json::Wire,
) {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let mut line = Vec::new();
    loop {
        line.clear();
        if line.capacity() > KEPT_BUFFER {
            line = Vec::new();
        }
        let verdict = match read_limited_line(&mut input, &mut line).await {
            Ok(LineRead::Eof) | Err(_) => return,
            Ok(LineRead::TooLong) => {
                Verdict::Reply(error_reply(Value::Null, -32600, "Invalid request: the message exceeds 16 MiB"))
            }
            Ok(LineRead::Line) => check_incoming(&line, wire),
        };
        match verdict {
            Verdict::Forward(message) => {
                if tx.send(*message).await.is_err() {
                    return;
                }
            }
            Verdict::Ignore => {}
            Verdict::Reply(reply) => {
                if output.write(Outgoing::line(reply.to_string().into_bytes())).is_err() {
                    return;
                }
            }
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        let wire = self.wire.clone();
        async move {
            let out = outgoing(&mut item, &wire);
            let large = out.size() > RELEASE_AFTER;
            output.write(out)?;
            // Freed only after the reply is out: the client does not wait for it.
            drop(item);
            if large {
                crate::allocator::release_freed_memory();
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        self.output.writer.lock().flush()
    }
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one line without its terminator; a line beyond the limit is consumed and reported.
async fn read_limited_line<R: AsyncBufRead + Unpin>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf().await {
            Ok(buf) => buf,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long { LineRead::Eof } else { LineRead::Line });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(pos) => (&buf[..pos], Some(pos + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() > MAX_INCOMING_LINE {
            too_long = true;
            *line = Vec::new();
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        let consumed = done.unwrap_or(buf.len());
        Pin::new(&mut *input).consume(consumed);
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(if too_long { LineRead::TooLong } else { LineRead::Line });
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock, JsonRpcResponse, JsonRpcVersion2_0, NumberOrString};

    use super::*;

    fn reply(line: &str) -> Value {
        match check_incoming(line.as_bytes(), &raw_json::Wire::default()) {
            Verdict::Reply(value) => value,
            other => panic!("{line}: expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn valid_messages_are_forwarded() {
        assert!(matches!(
            check_incoming(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &raw_json::Wire::default()),
            Verdict::Forward(_)
        ));
        let initialized = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(check_incoming(initialized, &raw_json::Wire::default()), Verdict::Forward(_)));
        assert!(matches!(check_incoming(b"   ", &raw_json::Wire::default()), Verdict::Ignore));
    }

    #[test]
    fn unparsable_lines_get_a_parse_error_with_null_id() {
        let r = reply("not json");
        assert_eq!(r["id"], Value::Null);
        assert_eq!(r["error"]["code"], -32700);
    }

    #[test]
    fn batches_are_refused_once() {
        let r = reply(r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (Value::Null, json!(-32600)));
    }

    #[test]
    fn malformed_requests_keep_their_id() {
        let r = reply(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":5}"#);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(7), json!(-32602)));
        let r = reply(r#"{"id":"x","method":"ping"}"#);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!("x"), json!(-32600)));
        let r = reply(r#"{"jsonrpc":"2.0","id":8,"method":5}"#);
        assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (json!(8), json!(-32600)));
    }

    #[test]
    fn requests_whose_id_is_neither_string_nor_number_are_invalid() {
        for id in ["null", "{}", r#"{"a":1}"#, "[1]", "true"] {
            let r = reply(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#));
            assert_eq!((r["id"].clone(), r["error"]["code"].clone()), (Value::Null, json!(-32600)), "id {id}");
        }
    }

    /// The line `outgoing` writes for `message`, without its terminator.
    fn line_of(message: &mut ServerJsonRpcMessage, wire: &raw_json::Wire) -> Vec<u8> {
        let mut line = outgoing(message, wire).parts().concat();
        assert_eq!(line.pop(), Some(b'\n'));
        line
    }

    fn tool_response(text: String) -> ServerJsonRpcMessage {
        let result = CallToolResult::success(vec![ContentBlock::text(text)]);
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(3),
            result: ServerResult::CallToolResult(result),
        })
    }

    #[test]
    fn oversized_tool_results_become_tool_errors() {
        let out: Value = serde_json::from_slice(&line_of(
            &mut tool_response("x".repeat(MAX_OUTGOING_LINE)),
            &raw_json::Wire::default(),
        ))
        .unwrap();
        assert_eq!(out["id"], 3);
        assert_eq!(out["result"]["isError"], true);
        let small: Value =
            serde_json::from_slice(&line_of(&mut tool_response("ok".into()), &raw_json::Wire::default())).unwrap();
        assert_eq!(small["result"]["content"][0]["text"], "ok");
    }

    #[test]
    fn a_reply_with_a_kept_text_is_written_from_it_byte_for_byte() {
        let mut result = CallToolResult::success(vec![ContentBlock::text("a \"listing\"\n")]);
        result.structured_content =
            Some(raw_json::embed(&json!({ "entries": [{ "path": "project/a.cpp" }] })).unwrap());
        let plain = |result: CallToolResult| {
            JsonRpcMessage::Response(JsonRpcResponse {
                jsonrpc: JsonRpcVersion2_0,
                id: NumberOrString::String("call-9".into()),
                result: ServerResult::CallToolResult(result),
            })
        };
        let expected = line_of(&mut plain(result.clone()), &raw_json::Wire::default());
        let wire = raw_json::Wire::default();
        let text = Arc::new(raw_json::embed_nested(&result).unwrap());
        // A kept text that differs from the result shows which of the two was written.
        let marked =
            Arc::new(raw_json::embed_nested(&CallToolResult::success(vec![ContentBlock::text("kept")])).unwrap());
        let mut tagged = result.clone();
        wire.kept.lend(&mut tagged, &text);
        assert_eq!(
            String::from_utf8(line_of(&mut plain(tagged), &wire)).unwrap(),
            String::from_utf8(expected).unwrap()
        );
        let mut tagged = result;
        wire.kept.lend(&mut tagged, &marked);
        let line: Value = serde_json::from_slice(&line_of(&mut plain(tagged), &wire)).unwrap();
        assert_eq!(line["result"]["content"][0]["text"], "kept");
        assert_eq!(line["result"].get("_meta"), None);
        // The text itself is written, not a copy of it.
        let mut tagged = CallToolResult::success(vec![]);
        wire.kept.lend(&mut tagged, &marked);
        assert!(
            matches!(outgoing(&mut plain(tagged), &wire), Outgoing::Kept { text, .. } if Arc::ptr_eq(&text, &marked))
        );
    }

    #[test]
    fn an_oversized_kept_reply_becomes_a_tool_error_too() {
        let wire = raw_json::Wire::default();
        let mut result = CallToolResult::success(vec![ContentBlock::text("x".repeat(MAX_OUTGOING_LINE))]);
        let text = Arc::new(raw_json::embed_nested(&result).unwrap());
        wire.kept.lend(&mut result, &text);
        let mut message = JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(4),
            result: ServerResult::CallToolResult(result),
        });
        let out: Value = serde_json::from_slice(&line_of(&mut message, &wire)).unwrap();
        assert_eq!(out["id"], 4);
        assert_eq!(out["result"]["isError"], true);
    }

    #[tokio::test]
    async fn lines_are_read_whole_and_oversized_ones_are_skipped() {
        let mut input = std::io::Cursor::new(format!("a\r\n{}\nb", "x".repeat(MAX_INCOMING_LINE + 1)).into_bytes());
        let mut line = Vec::new();
        let mut seen = Vec::new();
        loop {
            line.clear();
            match read_limited_line(&mut input, &mut line).await.unwrap() {
                LineRead::Eof => break,
                LineRead::TooLong => seen.push("<too long>".to_owned()),
                LineRead::Line => seen.push(String::from_utf8(line.clone()).unwrap()),
            }
        }
        assert_eq!(seen, ["a", "<too long>", "b"]);
    }
}
