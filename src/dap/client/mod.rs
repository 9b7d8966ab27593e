//! A DAP client over any byte stream pair: sequence numbers from a counter, a pending map of
//! `seq → oneshot` answered by the reader task, per-request timeouts, events forwarded to the owner's
//! channel, and refusals of reverse requests.
//!
//! Two tasks serve one connection: the reader (frames → messages → pending map, events, refusals)
//! and the writer (an unbounded queue, so sending never waits). Dropping the last [`Client`] aborts
//! both.
//!
//! Architecture invariant: when the stream closes or fails (the adapter exited), every pending request
//! fails at once with [`Error::Closed`] naming the reason, and so does every later request.
//! Architecture invariant: every request has a deadline; a request that times out leaves the map.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::protocol::{Event, Incoming, Outgoing, Request, ReverseResponse};
use crate::framing::{self, FrameReader};

/// Errors of one request.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("the connection to {adapter} is closed: {reason}")]
    Closed { adapter: String, reason: String },
    #[error("{adapter} did not answer `{command}` within {} s", .after.as_secs_f64())]
    Timeout { adapter: String, command: &'static str, after: Duration },
    #[error("{adapter} refused `{command}`: {message}")]
    Failed { adapter: String, command: &'static str, message: String },
    #[error("{adapter} sent an answer to `{command}` that does not fit the protocol: {message}")]
    Decode { adapter: String, command: &'static str, message: String },
}

/// A response: `Ok(body)` or the adapter's error message.
type Answer = Result<Value, String>;

struct Inner {
    adapter: String,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    pending: Mutex<HashMap<i64, oneshot::Sender<Answer>>>,
    next_seq: AtomicI64,
    /// `Some(reason)` once the connection is closed.
    closed: watch::Sender<Option<String>>,
}

impl Inner {
    fn closed_error(&self) -> Option<Error> {
        let reason = self.closed.borrow().clone()?;
        Some(Error::Closed { adapter: self.adapter.clone(), reason })
    }

    /// Marks the connection closed (the first reason wins) and fails every pending request.
    fn close(&self, reason: String) {
        self.closed.send_if_modified(|closed| {
            let first = closed.is_none();
            if first {
                *closed = Some(reason);
            }
            first
        });
        // Dropping the senders fails the waiters; they then read the reason.
        self.pending.lock().clear();
    }

    fn send_frame(&self, body: &[u8]) -> Result<(), Error> {
        if let Some(err) = self.closed_error() {
            return Err(err);
        }
        self.outgoing
            .send(framing::encode(body))
            .map_err(|_| Error::Closed { adapter: self.adapter.clone(), reason: "the writer stopped".to_owned() })
    }
}

struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A connection to one debug adapter. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    _tasks: Arc<Tasks>,
}

impl Client {
    /// Starts serving a connection: `reader` is the adapter's output, `writer` its input; events go to
    /// `events` in arrival order. Needs a tokio runtime.
    pub fn start<R, W>(adapter: impl Into<String>, reader: R, writer: W, events: mpsc::UnboundedSender<Event>) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, queue) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            adapter: adapter.into(),
            outgoing,
            pending: Mutex::new(HashMap::new()),
            next_seq: AtomicI64::new(1),
            closed: watch::channel(None).0,
        });
        let reader_task = tokio::spawn(read_loop(inner.clone(), FrameReader::new(reader), events));
        let writer_task = tokio::spawn(write_loop(inner.clone(), writer, queue));
        Client { inner, _tasks: Arc::new(Tasks(vec![reader_task, writer_task])) }
    }

    /// `Some(reason)` once the connection is closed.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Sends one request and waits at most `timeout` for its response.
    pub async fn request<R: Request>(&self, arguments: &R::Arguments, timeout: Duration) -> Result<R::Body, Error> {
        let inner = &self.inner;
        let seq = inner.next_seq.fetch_add(1, Ordering::Relaxed);
        let body = serde_json::to_vec(&Outgoing { seq, kind: "request", command: R::COMMAND, arguments })
            .expect("requests serialize");
        let (tx, rx) = oneshot::channel();
        inner.pending.lock().insert(seq, tx);
        if let Err(err) = inner.send_frame(&body) {
            inner.pending.lock().remove(&seq);
            return Err(err);
        }
        let answer = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => {
                return Err(inner.closed_error().unwrap_or_else(|| Error::Closed {
                    adapter: inner.adapter.clone(),
                    reason: "the connection ended".to_owned(),
                }));
            }
            Err(_) => {
                inner.pending.lock().remove(&seq);
                return Err(Error::Timeout { adapter: inner.adapter.clone(), command: R::COMMAND, after: timeout });
            }
        };
        let adapter = || inner.adapter.clone();
        let value = answer.map_err(|message| Error::Failed { adapter: adapter(), command: R::COMMAND, message })?;
        // Adapters omit the body of responses that carry nothing.
        let value = if value.is_null() { Value::Object(serde_json::Map::new()) } else { value };
        serde_json::from_value(value).map_err(|err| Error::Decode {
            adapter: adapter(),
            command: R::COMMAND,
            message: err.to_string(),
        })
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    inner: Arc<Inner>,
    mut frames: FrameReader<R>,
    events: mpsc::UnboundedSender<Event>,
) {
    let reason = loop {
        let body = match frames.next().await {
            Ok(Some(body)) => body,
            Ok(None) => break "the adapter closed its output".to_owned(),
            Err(err) => break err.to_string(),
        };
        let message: Incoming = match serde_json::from_slice(&body) {
            Ok(message) => message,
            Err(err) => {
                // Framing is intact, so one bad message does not desynchronise the stream.
                tracing::debug!(%err, "the debug adapter sent a message that does not parse");
                continue;
            }
        };
        match message {
            Incoming::Response { request_seq, success, command, message, body } => {
                let answer = if success {
                    Ok(body)
                } else {
                    Err(message.filter(|m| !m.is_empty()).unwrap_or_else(|| format!("`{command}` failed")))
                };
                if let Some(waiter) = inner.pending.lock().remove(&request_seq) {
                    let _ = waiter.send(answer);
                }
            }
            Incoming::Event { event, body } => {
                let _ = events.send(Event::parse(&event, body));
            }
            Incoming::Request { seq, command } => {
                let refusal = ReverseResponse {
                    seq: 0,
                    kind: "response",
                    request_seq: seq,
                    success: false,
                    command: &command,
                    message: "this client starts no programs for the adapter",
                };
                let body = serde_json::to_vec(&refusal).expect("responses serialize");
                let _ = inner.send_frame(&body);
            }
        }
    };
    inner.close(reason);
}

async fn write_loop<W: AsyncWrite + Unpin>(
    inner: Arc<Inner>,
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    while let Some(frame) = queue.recv().await {
        if let Err(err) = async {
            writer.write_all(&frame).await?;
            writer.flush().await
        }
        .await
        {
            inner.close(format!("writing to the adapter failed: {err}"));
            return;
        }
    }
}

#[cfg(test)]
mod tests;
