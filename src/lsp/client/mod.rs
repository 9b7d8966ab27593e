//! A generic LSP client over any byte stream pair: request ids from a counter, a pending map of
//! `id → oneshot` answered by the reader task, per-request timeouts, `$/cancelRequest` when a request
//! future is dropped before its answer, replies to server-to-client requests, notifications handed
//! to a [`Handler`], and a polite shutdown (`shutdown`, `exit`, close the stream).
//!
//! Two tasks serve one connection: the reader (frames → messages → pending map, handler, replies)
//! and the writer (an unbounded queue of frames, so sending never waits and `Drop` can send). Both
//! are owned by the clients: dropping the last [`Client`] aborts them.
//!
//! Architecture invariant: when the stream closes or fails, every pending request fails at once with
//! [`Error::Closed`] naming the reason, and so does every later request; nothing waits for a timeout.
//! Architecture invariant: every request has a deadline; a request that ends without its answer
//! (timeout or drop) leaves the pending map and the server is sent `$/cancelRequest`.
//! Architecture invariant: no clangd knowledge here; positions are converted by `position.rs`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use lsp_types::notification::Notification as LspNotification;
use lsp_types::request::Request as LspRequest;
use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::framing::{self, FrameReader};
use super::message::{Message, RequestId, ResponseError, codes};
use super::position::PositionEncoding;

/// Errors of one request or notification.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("the connection to {server} is closed: {reason}")]
    Closed { server: String, reason: String },
    #[error("{server} did not answer `{method}` within {} s", format_secs(.after))]
    Timeout { server: String, method: String, after: Duration },
    #[error("{server} answered `{method}` with an error: {error}")]
    Response { server: String, method: String, error: ResponseError },
    #[error("{server} sent an answer to `{method}` that does not fit the protocol: {message}")]
    Decode { server: String, method: String, message: String },
}

fn format_secs(duration: &Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 { format!("{secs:.0}") } else { format!("{secs:.3}").trim_end_matches('0').to_owned() }
}

/// What the application does with messages the server starts.
pub trait Handler: Send + Sync + 'static {
    /// A notification from the server. Called on the reader task: must be quick.
    fn notification(&self, method: &str, params: Value) {
        let _ = (method, params);
    }

    /// A request from the server; the returned value or error is sent back at once. Called on the
    /// reader task: must be quick. The default answers what a minimal client must.
    fn request(&self, method: &str, params: Value) -> Result<Value, ResponseError> {
        default_reply(method, &params)
    }
}

/// Answers to the server-to-client requests every client meets: progress tokens and capability
/// registrations are accepted, configuration items are all unset, edits are refused, and anything
/// else is "method not found".
pub fn default_reply(method: &str, params: &Value) -> Result<Value, ResponseError> {
    match method {
        "window/workDoneProgress/create" | "client/registerCapability" | "client/unregisterCapability" => {
            Ok(Value::Null)
        }
        "workspace/configuration" => {
            let n_items = params.get("items").and_then(Value::as_array).map_or(0, Vec::len);
            Ok(Value::Array(vec![Value::Null; n_items]))
        }
        "workspace/workspaceFolders" | "window/showMessageRequest" => Ok(Value::Null),
        "workspace/applyEdit" => Ok(json!({ "applied": false, "failureReason": "this client does not apply edits" })),
        _ => Err(ResponseError::new(codes::METHOD_NOT_FOUND, format!("`{method}` is not supported by this client"))),
    }
}

/// A handler that ignores notifications and gives the default replies.
pub struct DefaultHandler;

impl Handler for DefaultHandler {}

type Answer = Result<Value, Error>;

enum Outgoing {
    Frame(Vec<u8>),
    /// Flush, close the write half, and stop.
    Close,
}

struct Inner {
    server: String,
    outgoing: mpsc::UnboundedSender<Outgoing>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<Answer>>>,
    next_id: AtomicI64,
    /// `Some(reason)` once the connection is closed.
    closed: watch::Sender<Option<String>>,
    encoding: Mutex<PositionEncoding>,
}

impl Inner {
    fn closed_error(&self) -> Option<Error> {
        self.closed
            .borrow()
            .as_ref()
            .map(|reason| Error::Closed { server: self.server.clone(), reason: reason.clone() })
    }

    /// Marks the connection closed (the first reason wins) and fails every pending request.
    fn close(&self, reason: String) {
        self.closed.send_if_modified(|closed| {
            if closed.is_some() {
                return false;
            }
            *closed = Some(reason);
            true
        });
        let error = self.closed_error().expect("just closed");
        let pending: Vec<_> = self.pending.lock().drain().collect();
        for (_, answer) in pending {
            let _ = answer.send(Err(error.clone()));
        }
    }

    fn send(&self, message: &Message) -> Result<(), Error> {
        if let Some(err) = self.closed_error() {
            return Err(err);
        }
        let frame = framing::encode(&message.encode());
        self.outgoing
            .send(Outgoing::Frame(frame))
            .map_err(|_| Error::Closed { server: self.server.clone(), reason: "the writer stopped".to_owned() })
    }
}

/// Aborts the connection's tasks when the last client handle goes away.
struct Tasks(Vec<JoinHandle<()>>);

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// A connection to one language server. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    _tasks: Arc<Tasks>,
}

/// What `initialize` negotiated.
#[derive(Debug, Clone)]
pub struct Initialized {
    pub capabilities: lsp_types::ServerCapabilities,
    pub server_info: Option<lsp_types::ServerInfo>,
    pub encoding: PositionEncoding,
}

impl Client {
    /// Starts serving a connection: `reader` is the server's output, `writer` its input. `server`
    /// names the server in error messages. Needs a tokio runtime.
    pub fn start<R, W>(server: impl Into<String>, reader: R, writer: W, handler: Arc<dyn Handler>) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (outgoing, queue) = mpsc::unbounded_channel();
        let inner = Arc::new(Inner {
            server: server.into(),
            outgoing,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            closed: watch::channel(None).0,
            encoding: Mutex::new(PositionEncoding::Utf16),
        });
        let reader_task = tokio::spawn(read_loop(inner.clone(), FrameReader::new(reader), handler));
        let writer_task = tokio::spawn(write_loop(inner.clone(), writer, queue));
        Client { inner, _tasks: Arc::new(Tasks(vec![reader_task, writer_task])) }
    }

    /// The server's name as used in messages.
    pub fn server(&self) -> &str {
        &self.inner.server
    }

    /// The position encoding `initialize` negotiated (UTF-16 before that).
    pub fn encoding(&self) -> PositionEncoding {
        *self.inner.encoding.lock()
    }

    /// Why the connection is closed, once it is.
    pub fn closed_reason(&self) -> Option<String> {
        self.inner.closed.borrow().clone()
    }

    /// Resolves when the connection closes, with the reason.
    pub async fn closed(&self) -> String {
        let mut closed = self.inner.closed.subscribe();
        match closed.wait_for(Option::is_some).await {
            Ok(reason) => reason.clone().unwrap_or_default(),
            // The sender lives in `inner`, which we hold.
            Err(_) => "the connection was dropped".to_owned(),
        }
    }

    /// Sends a typed request and decodes its answer.
    pub async fn request<R>(&self, params: R::Params, timeout: Duration) -> Result<R::Result, Error>
    where
        R: LspRequest,
        R::Params: Serialize,
        R::Result: DeserializeOwned,
    {
        let params = serde_json::to_value(params).map_err(|err| self.decode_error(R::METHOD, &err))?;
        let value = self.request_value(R::METHOD, params, timeout).await?;
        serde_json::from_value(value).map_err(|err| self.decode_error(R::METHOD, &err))
    }

    fn decode_error(&self, method: &str, err: &serde_json::Error) -> Error {
        Error::Decode { server: self.inner.server.clone(), method: method.to_owned(), message: err.to_string() }
    }

    /// Sends a request and waits at most `timeout` for its answer. Dropping the returned future
    /// before the answer arrives cancels the request (`$/cancelRequest`).
    pub async fn request_value(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, Error> {
        let id = RequestId::Number(self.inner.next_id.fetch_add(1, Ordering::Relaxed));
        let (answer, answered) = oneshot::channel();
        self.inner.pending.lock().insert(id.clone(), answer);
        let mut guard = CancelOnDrop { inner: &self.inner, id: Some(id.clone()) };
        self.inner.send(&Message::Request { id, method: method.to_owned(), params })?;
        match tokio::time::timeout(timeout, answered).await {
            Ok(Ok(answer)) => {
                guard.id = None;
                answer.map_err(|err| match err {
                    Error::Response { error, .. } => {
                        Error::Response { server: self.inner.server.clone(), method: method.to_owned(), error }
                    }
                    other => other,
                })
            }
            Ok(Err(_)) => {
                guard.id = None;
                Err(self.inner.closed_error().unwrap_or_else(|| Error::Closed {
                    server: self.inner.server.clone(),
                    reason: "the answer was lost".to_owned(),
                }))
            }
            // The guard cancels the request on the way out.
            Err(_) => {
                Err(Error::Timeout { server: self.inner.server.clone(), method: method.to_owned(), after: timeout })
            }
        }
    }

    /// Sends a typed notification. Never waits: the message is queued for the writer.
    pub fn notify<N>(&self, params: N::Params) -> Result<(), Error>
    where
        N: LspNotification,
        N::Params: Serialize,
    {
        let params = serde_json::to_value(params).map_err(|err| self.decode_error(N::METHOD, &err))?;
        self.notify_value(N::METHOD, params)
    }

    pub fn notify_value(&self, method: &str, params: Value) -> Result<(), Error> {
        self.inner.send(&Message::Notification { method: method.to_owned(), params })
    }

    /// `initialize` then `initialized`. The client offers UTF-32 and UTF-16 positions, both through
    /// `general.positionEncodings` (LSP 3.17) and clangd's older `offsetEncoding` extension; the
    /// encoding the server picks (UTF-16 when it says nothing) is kept for [`Client::encoding`].
    pub async fn initialize(
        &self,
        params: lsp_types::InitializeParams,
        timeout: Duration,
    ) -> Result<Initialized, Error> {
        const METHOD: &str = "initialize";
        let mut params = serde_json::to_value(params).map_err(|err| self.decode_error(METHOD, &err))?;
        let offered = [PositionEncoding::Utf32.name(), PositionEncoding::Utf16.name()];
        params["capabilities"]["general"]["positionEncodings"] = json!(offered);
        params["capabilities"]["offsetEncoding"] = json!(offered);
        let result = self.request_value(METHOD, params, timeout).await?;
        let decoded: lsp_types::InitializeResult =
            serde_json::from_value(result.clone()).map_err(|err| self.decode_error(METHOD, &err))?;
        let named = decoded
            .capabilities
            .position_encoding
            .as_ref()
            .map(|kind| kind.as_str().to_owned())
            .or_else(|| result.get("offsetEncoding").and_then(Value::as_str).map(str::to_owned));
        let encoding = match named {
            None => PositionEncoding::Utf16,
            Some(name) => PositionEncoding::from_name(&name).ok_or_else(|| Error::Decode {
                server: self.inner.server.clone(),
                method: METHOD.to_owned(),
                message: format!("the position encoding `{name}` was not offered"),
            })?,
        };
        *self.inner.encoding.lock() = encoding;
        self.notify::<lsp_types::notification::Initialized>(lsp_types::InitializedParams {})?;
        Ok(Initialized { capabilities: decoded.capabilities, server_info: decoded.server_info, encoding })
    }

    /// The polite end of a session: `shutdown` (waiting at most `timeout`), `exit`, then the
    /// server's input is closed. Whatever fails, the input is closed; killing the process is the
    /// owner's business.
    pub async fn shutdown(&self, timeout: Duration) -> Result<(), Error> {
        let res = self.request_value("shutdown", Value::Null, timeout).await;
        let exit = self.notify_value("exit", Value::Null);
        let _ = self.inner.outgoing.send(Outgoing::Close);
        res?;
        exit
    }
}

/// Cancels a request that ends without its answer.
struct CancelOnDrop<'a> {
    inner: &'a Inner,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if self.inner.pending.lock().remove(&id).is_some() {
            let params = json!({ "id": id });
            let _ = self.inner.send(&Message::Notification { method: "$/cancelRequest".to_owned(), params });
        }
    }
}

/// Closes the connection if the reader stops without saying why (a panicking handler, an abort).
struct CloseOnDrop(Arc<Inner>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close("the client stopped reading".to_owned());
    }
}

async fn read_loop<R: AsyncRead + Unpin>(inner: Arc<Inner>, mut frames: FrameReader<R>, handler: Arc<dyn Handler>) {
    let _close = CloseOnDrop(inner.clone());
    let reason = loop {
        let body = match frames.next().await {
            Ok(Some(body)) => body,
            Ok(None) => break "the server closed its output".to_owned(),
            Err(err) => break err.to_string(),
        };
        let message = match Message::decode(&body) {
            Ok(message) => message,
            Err(err) => {
                // One bad message does not desynchronise the stream: framing is intact.
                tracing::warn!(server = %inner.server, "ignoring a message: {err}");
                continue;
            }
        };
        match message {
            Message::Response { id, result } => {
                let answer = inner.pending.lock().remove(&id);
                match answer {
                    Some(answer) => {
                        let result = result.map_err(|error| Error::Response {
                            server: inner.server.clone(),
                            method: String::new(),
                            error,
                        });
                        let _ = answer.send(result);
                    }
                    None => tracing::debug!(server = %inner.server, %id, "answer to a request nobody waits for"),
                }
            }
            Message::Notification { method, params } => handler.notification(&method, params),
            Message::Request { id, method, params } => {
                let result = handler.request(&method, params);
                if inner.send(&Message::Response { id, result }).is_err() {
                    break "the writer stopped".to_owned();
                }
            }
        }
    };
    tracing::debug!(server = %inner.server, %reason, "connection closed");
    inner.close(reason);
}

async fn write_loop<W: AsyncWrite + Unpin>(
    inner: Arc<Inner>,
    mut writer: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) {
    while let Some(item) = queue.recv().await {
        match item {
            Outgoing::Frame(frame) => {
                let written = async {
                    writer.write_all(&frame).await?;
                    writer.flush().await
                };
                if let Err(err) = written.await {
                    inner.close(format!("writing to the server failed: {err}"));
                    return;
                }
            }
            Outgoing::Close => {
                let _ = writer.shutdown().await;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests;
