//! The stdio line guard between the MCP client and rmcp.
//!
//! rmcp drops unparsable lines silently and answers malformed requests without their id. This
//! guard reads every line first: valid messages go on to rmcp unchanged, everything else gets a
//! JSON-RPC error that carries the request's id when it has one. Outgoing lines larger than the
//! message limit are replaced by an error naming the limit.
//!
//! Architecture invariant: every request line that carries an id gets exactly one reply line.
//! Architecture invariant: stdout is written by one task, one whole line at a time.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Clients drop larger messages; no line we write exceeds this.
pub const MAX_OUTGOING_LINE: usize = 8 * 1024 * 1024;
/// Incoming lines beyond this are discarded with an error (rmcp's own limit is 16 MiB).
pub const MAX_INCOMING_LINE: usize = 16 * 1024 * 1024;

/// What the guard decides for one incoming line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    Forward,
    Ignore,
    Reply(Value),
}

/// Classifies one incoming line (without its terminator).
pub fn check_incoming(line: &[u8]) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Ignore;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(err) => return Verdict::Reply(error_reply(Value::Null, -32700, &format!("Parse error: {err}"))),
    };
    if value.is_array() {
        return Verdict::Reply(error_reply(Value::Null, -32600, "Invalid request: JSON-RPC batches are not supported"));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(_) => Verdict::Forward,
        Err(err) => {
            let id = match value.get("id") {
                Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
                _ => Value::Null,
            };
            let is_request = value.get("method").is_some();
            if !is_request && id != Value::Null {
                // A malformed response to one of our requests: nothing to answer.
                return Verdict::Ignore;
            }
            let method_known = value.get("method").and_then(Value::as_str).is_some();
            let code = if method_known && value.get("jsonrpc") == Some(&json!("2.0")) { -32602 } else { -32600 };
            let label = if code == -32602 { "Invalid params" } else { "Invalid request" };
            Verdict::Reply(error_reply(id, code, &format!("{label}: {err}")))
        }
    }
}

fn error_reply(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

/// Replaces an outgoing line that exceeds the limit by an error for the same request.
pub fn check_outgoing(line: &[u8]) -> Option<Vec<u8>> {
    if line.len() <= MAX_OUTGOING_LINE {
        return None;
    }
    let value: Value = serde_json::from_slice(line).ok()?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let message = format!(
        "The reply is {} bytes, more than the {} MiB message limit. Ask for less: a narrower path, a line range, \
         fewer matches or a smaller max_bytes.",
        line.len(),
        MAX_OUTGOING_LINE / (1024 * 1024)
    );
    let is_tool_result = value.get("result").and_then(|r| r.get("content")).is_some();
    let replacement = if is_tool_result {
        json!({ "jsonrpc": "2.0", "id": id, "result": { "content": [{ "type": "text", "text": message }], "isError": true } })
    } else {
        error_reply(id, -32603, &message)
    };
    Some(replacement.to_string().into_bytes())
}

/// Runs the guard between `input`/`output` (the real stdio) and rmcp's side of a duplex pipe.
/// Returns rmcp's end and the task that pumps until input ends.
pub fn guard<R, W>(input: R, output: W) -> (DuplexStream, JoinHandle<()>)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (ours, rmcp_end) = tokio::io::duplex(1 << 20);
    let (to_rmcp_read, mut to_rmcp) = tokio::io::split(ours);
    let (tx, rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(write_lines(rx, output));
    let from_rmcp_tx = tx.clone();
    let from_rmcp = tokio::spawn(async move {
        let mut lines = BufReader::new(to_rmcp_read);
        let mut line = Vec::new();
        loop {
            line.clear();
            match lines.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    let body = line.strip_suffix(b"\n").unwrap_or(&line);
                    let out = check_outgoing(body).unwrap_or_else(|| body.to_vec());
                    if from_rmcp_tx.send(out).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let pump = tokio::spawn(async move {
        let mut input = BufReader::with_capacity(1 << 16, input);
        let mut line = Vec::new();
        loop {
            line.clear();
            match read_limited_line(&mut input, &mut line).await {
                Ok(LineRead::Eof) | Err(_) => break,
                Ok(LineRead::TooLong) => {
                    let reply = error_reply(Value::Null, -32600, "Invalid request: the message exceeds 16 MiB");
                    let _ = tx.send(reply.to_string().into_bytes());
                }
                Ok(LineRead::Line) => match check_incoming(&line) {
                    Verdict::Forward => {
                        line.push(b'\n');
                        if to_rmcp.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                    Verdict::Ignore => {}
                    Verdict::Reply(reply) => {
                        let _ = tx.send(reply.to_string().into_bytes());
                    }
                },
            }
        }
        // Closing rmcp's input ends the session; rmcp then finishes its replies and closes its output.
        let _ = to_rmcp.shutdown().await;
        drop(to_rmcp);
        drop(tx);
        let _ = from_rmcp.await;
        let _ = writer.await;
    });
    (rmcp_end, pump)
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one line without its terminator; a line beyond the limit is consumed and reported.
async fn read_limited_line<R: AsyncBufReadExt + Unpin>(input: &mut R, line: &mut Vec<u8>) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if line.is_empty() && !too_long { LineRead::Eof } else { LineRead::Line });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(pos) => (&buf[..pos], Some(pos + 1)),
            None => (buf, None),
        };
        if !too_long && line.len() + chunk.len() > MAX_INCOMING_LINE {
            too_long = true;
            line.clear();
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        let consumed = done.unwrap_or(buf.len());
        input.consume(consumed);
        if done.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(if too_long { LineRead::TooLong } else { LineRead::Line });
        }
    }
}

async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::UnboundedReceiver<Vec<u8>>, mut output: W) {
    while let Some(mut line) = rx.recv().await {
        line.push(b'\n');
        if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(line: &str) -> Value {
        match check_incoming(line.as_bytes()) {
            Verdict::Reply(value) => value,
            other => panic!("{line}: expected a reply, got {other:?}"),
        }
    }

    #[test]
    fn valid_messages_are_forwarded() {
        assert_eq!(check_incoming(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), Verdict::Forward);
        assert_eq!(check_incoming(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#), Verdict::Forward);
        assert_eq!(check_incoming(b"   "), Verdict::Ignore);
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
    fn oversized_tool_results_become_tool_errors() {
        let big = "x".repeat(MAX_OUTGOING_LINE);
        let line = json!({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":big}]}}).to_string();
        let out: Value = serde_json::from_slice(&check_outgoing(line.as_bytes()).unwrap()).unwrap();
        assert_eq!(out["id"], 3);
        assert_eq!(out["result"]["isError"], true);
        assert!(check_outgoing(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).is_none());
    }
}
