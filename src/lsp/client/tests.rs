//! The client against a scripted fake server on an in-memory duplex pipe.

use std::time::Instant;

use tokio::io::{DuplexStream, ReadHalf, WriteHalf};

use super::*;

/// The server end of the pipe: reads what the client sends, writes what the test scripts.
struct FakeServer {
    frames: FrameReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl FakeServer {
    async fn recv(&mut self) -> Message {
        let body = tokio::time::timeout(Duration::from_secs(5), self.frames.next())
            .await
            .expect("the client sent something within 5 s")
            .expect("a well-formed frame")
            .expect("the stream is open");
        Message::decode(&body).expect("a well-formed message")
    }

    /// The next request the client sends, as `(id, method, params)`.
    async fn request(&mut self) -> (RequestId, String, Value) {
        match self.recv().await {
            Message::Request { id, method, params } => (id, method, params),
            other => panic!("expected a request, got {other:?}"),
        }
    }

    async fn send(&mut self, message: Message) {
        self.writer.write_all(&framing::encode(&message.encode())).await.unwrap();
        self.writer.flush().await.unwrap();
    }

    async fn reply(&mut self, id: RequestId, result: Value) {
        self.send(Message::Response { id, result: Ok(result) }).await;
    }

    /// Whether the client closed its side (EOF) within 5 s.
    async fn sees_eof(&mut self) -> bool {
        matches!(tokio::time::timeout(Duration::from_secs(5), self.frames.next()).await, Ok(Ok(None)))
    }
}

fn connect(handler: Arc<dyn Handler>) -> (Client, FakeServer) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (client_read, client_write) = tokio::io::split(client_io);
    let (server_read, server_write) = tokio::io::split(server_io);
    let client = Client::start("fake server", client_read, client_write, handler);
    (client, FakeServer { frames: FrameReader::new(server_read), writer: server_write })
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn answers_reach_their_requests_in_any_order() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let first = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("first", json!(1), LONG).await }
    });
    let (id1, method1, params1) = server.request().await;
    let second = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("second", json!(2), LONG).await }
    });
    let (id2, method2, _) = server.request().await;
    assert_eq!((method1.as_str(), method2.as_str(), params1), ("first", "second", json!(1)));
    assert_ne!(id1, id2);
    server.reply(id2, json!("two")).await;
    server.reply(id1, json!("one")).await;
    assert_eq!(first.await.unwrap().unwrap(), json!("one"));
    assert_eq!(second.await.unwrap().unwrap(), json!("two"));
}

#[tokio::test]
async fn error_answers_name_the_method() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("textDocument/hover", Value::Null, LONG).await }
    });
    let (id, _, _) = server.request().await;
    server.send(Message::Response { id, result: Err(ResponseError::new(-32602, "bad position")) }).await;
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "fake server answered `textDocument/hover` with an error: bad position (code -32602)");
}

#[tokio::test]
async fn a_request_without_answer_times_out_and_is_cancelled() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let started = Instant::now();
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("slow", Value::Null, Duration::from_millis(100)).await }
    });
    let (id, _, _) = server.request().await;
    let err = pending.await.unwrap().unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert_eq!(err.to_string(), "fake server did not answer `slow` within 0.1 s");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        server.recv().await,
        Message::Notification { method: "$/cancelRequest".into(), params: json!({ "id": id }) }
    );
    // A late answer is ignored and the connection stays usable.
    server.reply(id, json!("late")).await;
    let next = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("next", Value::Null, LONG).await }
    });
    let (id, method, _) = server.request().await;
    assert_eq!(method, "next");
    server.reply(id, json!(3)).await;
    assert_eq!(next.await.unwrap().unwrap(), json!(3));
}

#[tokio::test]
async fn dropping_a_request_cancels_it() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("textDocument/references", Value::Null, LONG).await }
    });
    let (id, _, _) = server.request().await;
    pending.abort();
    assert!(pending.await.unwrap_err().is_cancelled());
    assert_eq!(
        server.recv().await,
        Message::Notification { method: "$/cancelRequest".into(), params: json!({ "id": id }) }
    );
    assert!(client.inner.pending.lock().is_empty());
}

#[tokio::test]
async fn server_requests_are_answered() {
    let (_client, mut server) = connect(Arc::new(DefaultHandler));
    let cases = [
        ("window/workDoneProgress/create", json!({"token": "backgroundIndexProgress"}), Ok(Value::Null)),
        ("workspace/configuration", json!({"items": [{"section": "a"}, {"section": "b"}]}), Ok(json!([null, null]))),
        ("client/registerCapability", json!({"registrations": []}), Ok(Value::Null)),
    ];
    for (idx, (method, params, expected)) in cases.into_iter().enumerate() {
        let id = RequestId::String(format!("s{idx}"));
        server.send(Message::Request { id: id.clone(), method: method.into(), params }).await;
        assert_eq!(server.recv().await, Message::Response { id, result: expected }, "{method}");
    }
    let id = RequestId::Number(99);
    server.send(Message::Request { id: id.clone(), method: "custom/unknown".into(), params: Value::Null }).await;
    match server.recv().await {
        Message::Response { id: got, result: Err(error) } => {
            assert_eq!(got, id);
            assert_eq!(error.code, codes::METHOD_NOT_FOUND);
        }
        other => panic!("expected an error response, got {other:?}"),
    }
}

#[tokio::test]
async fn notifications_reach_the_handler() {
    struct Recorder(Mutex<Vec<(String, Value)>>, tokio::sync::Notify);
    impl Handler for Recorder {
        fn notification(&self, method: &str, params: Value) {
            self.0.lock().push((method.to_owned(), params));
            self.1.notify_one();
        }
    }
    let recorder = Arc::new(Recorder(Mutex::new(Vec::new()), tokio::sync::Notify::new()));
    let (_client, mut server) = connect(recorder.clone());
    let params = json!({"uri": "file:///a.cpp", "diagnostics": []});
    server
        .send(Message::Notification { method: "textDocument/publishDiagnostics".into(), params: params.clone() })
        .await;
    tokio::time::timeout(Duration::from_secs(5), recorder.1.notified()).await.unwrap();
    assert_eq!(recorder.0.lock().as_slice(), &[("textDocument/publishDiagnostics".to_owned(), params)]);
}

#[tokio::test]
async fn a_crash_fails_pending_requests_at_once() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let started = Instant::now();
    let pending: Vec<_> = ["one", "two"]
        .into_iter()
        .map(|method| {
            let client = client.clone();
            tokio::spawn(async move { client.request_value(method, Value::Null, LONG).await })
        })
        .collect();
    server.request().await;
    server.request().await;
    drop(server);
    for request in pending {
        let err = request.await.unwrap().unwrap_err();
        assert_eq!(err.to_string(), "the connection to fake server is closed: the server closed its output");
    }
    assert!(started.elapsed() < Duration::from_secs(5), "failed at once, not by timeout");
    assert_eq!(client.closed().await, "the server closed its output");
    let err = client.request_value("after", Value::Null, LONG).await.unwrap_err();
    assert!(matches!(err, Error::Closed { .. }), "{err}");
    assert!(matches!(client.notify_value("exit", Value::Null), Err(Error::Closed { .. })));
}

#[tokio::test]
async fn a_broken_frame_closes_the_connection() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("x", Value::Null, LONG).await }
    });
    server.request().await;
    server.writer.write_all(b"Content-Length: nine\r\n\r\n").await.unwrap();
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "the connection to fake server is closed: `Content-Length` is not a number: `nine`");
}

#[tokio::test]
async fn shutdown_sends_shutdown_then_exit_then_closes() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let shutdown = tokio::spawn({
        let client = client.clone();
        async move { client.shutdown(LONG).await }
    });
    let (id, method, params) = server.request().await;
    assert_eq!((method.as_str(), params), ("shutdown", Value::Null));
    server.reply(id, Value::Null).await;
    assert_eq!(server.recv().await, Message::Notification { method: "exit".into(), params: Value::Null });
    assert!(server.sees_eof().await, "the client closes the server's input after `exit`");
    shutdown.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_without_answer_still_exits_and_closes() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let shutdown = tokio::spawn({
        let client = client.clone();
        async move { client.shutdown(Duration::from_millis(50)).await }
    });
    let (id, _, _) = server.request().await;
    assert!(matches!(shutdown.await.unwrap(), Err(Error::Timeout { .. })));
    assert_eq!(
        server.recv().await,
        Message::Notification { method: "$/cancelRequest".into(), params: json!({ "id": id }) }
    );
    assert_eq!(server.recv().await, Message::Notification { method: "exit".into(), params: Value::Null });
    assert!(server.sees_eof().await);
}

#[tokio::test]
async fn initialize_negotiates_the_position_encoding() {
    let cases = [
        (json!({"capabilities": {}, "offsetEncoding": "utf-32"}), PositionEncoding::Utf32),
        (json!({"capabilities": {"positionEncoding": "utf-32"}}), PositionEncoding::Utf32),
        (json!({"capabilities": {}}), PositionEncoding::Utf16),
    ];
    for (answer, expected) in cases {
        let (client, mut server) = connect(Arc::new(DefaultHandler));
        let init = tokio::spawn({
            let client = client.clone();
            async move { client.initialize(lsp_types::InitializeParams::default(), LONG).await }
        });
        let (id, method, params) = server.request().await;
        assert_eq!(method, "initialize");
        assert_eq!(params["capabilities"]["general"]["positionEncodings"], json!(["utf-32", "utf-16"]));
        assert_eq!(params["capabilities"]["offsetEncoding"], json!(["utf-32", "utf-16"]));
        server.reply(id, answer).await;
        assert_eq!(server.recv().await, Message::Notification { method: "initialized".into(), params: json!({}) });
        let initialized = init.await.unwrap().unwrap();
        assert_eq!(initialized.encoding, expected);
        assert_eq!(client.encoding(), expected);
    }
}

#[tokio::test]
async fn an_encoding_that_was_not_offered_is_an_error() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    let init = tokio::spawn({
        let client = client.clone();
        async move { client.initialize(lsp_types::InitializeParams::default(), LONG).await }
    });
    let (id, _, _) = server.request().await;
    server.reply(id, json!({"capabilities": {"positionEncoding": "utf-7"}})).await;
    let err = init.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("the position encoding `utf-7` was not offered"), "{err}");
}

#[tokio::test]
async fn dropping_the_last_client_stops_its_tasks() {
    let (client, mut server) = connect(Arc::new(DefaultHandler));
    drop(client);
    assert!(server.sees_eof().await, "the writer task is gone, so the pipe closes");
}

#[tokio::test]
async fn a_panicking_handler_closes_the_connection_instead_of_hanging() {
    struct Panics;
    impl Handler for Panics {
        fn notification(&self, _method: &str, _params: Value) {
            panic!("handler bug");
        }
    }
    let (client, mut server) = connect(Arc::new(Panics));
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request_value("x", Value::Null, LONG).await }
    });
    server.request().await;
    server.send(Message::Notification { method: "boom".into(), params: Value::Null }).await;
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "the connection to fake server is closed: the client stopped reading");
}
