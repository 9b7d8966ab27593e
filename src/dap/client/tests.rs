//! The DAP client against a scripted fake adapter on an in-memory duplex.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncWriteExt, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;

use super::*;
use crate::dap::protocol::{Evaluate, EvaluateArguments, Event, Threads};
use crate::framing::{self, FrameReader};

struct FakeAdapter {
    reader: FrameReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

impl FakeAdapter {
    async fn next(&mut self) -> Value {
        serde_json::from_slice(&self.reader.next().await.unwrap().unwrap()).unwrap()
    }

    async fn send(&mut self, message: Value) {
        self.writer.write_all(&framing::encode(message.to_string().as_bytes())).await.unwrap();
    }
}

fn connect() -> (Client, FakeAdapter, mpsc::UnboundedReceiver<Event>) {
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let (our_read, our_write) = tokio::io::split(ours);
    let (their_read, their_write) = tokio::io::split(theirs);
    let (events, received) = mpsc::unbounded_channel();
    let client = Client::start("fake adapter", our_read, our_write, events);
    (client, FakeAdapter { reader: FrameReader::new(their_read), writer: their_write }, received)
}

const LONG: Duration = Duration::from_secs(10);

#[tokio::test]
async fn requests_are_answered_by_sequence_number_and_events_are_forwarded() {
    let (client, mut adapter, mut events) = connect();
    let pending = tokio::spawn({
        let client = client.clone();
        async move {
            let args = EvaluateArguments { expression: "a + 1".into(), frame_id: 7, context: "watch" };
            client.request::<Evaluate>(&args, LONG).await
        }
    });
    let request = adapter.next().await;
    assert_eq!(request["command"], "evaluate");
    assert_eq!(request["arguments"], json!({"expression": "a + 1", "frameId": 7, "context": "watch"}));
    adapter.send(json!({"seq": 1, "type": "event", "event": "exited", "body": {"exitCode": 2}})).await;
    let seq = request["seq"].clone();
    adapter
        .send(json!({"seq": 2, "type": "response", "request_seq": seq, "success": true, "command": "evaluate",
                     "body": {"result": "4", "type": "int", "variablesReference": 0}}))
        .await;
    let body = pending.await.unwrap().unwrap();
    assert_eq!((body.result.as_str(), body.type_name.as_deref()), ("4", Some("int")));
    assert!(matches!(events.recv().await, Some(Event::Exited { exit_code: 2 })));
}

#[tokio::test]
async fn a_failed_response_carries_the_adapter_message() {
    let (client, mut adapter, _events) = connect();
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request::<Threads>(&serde_json::Map::new(), LONG).await }
    });
    let seq = adapter.next().await["seq"].clone();
    adapter
        .send(json!({"seq": 2, "type": "response", "request_seq": seq, "success": false, "command": "threads",
                     "message": "no process"}))
        .await;
    let err = pending.await.unwrap().unwrap_err();
    assert_eq!(err.to_string(), "fake adapter refused `threads`: no process");
}

#[tokio::test]
async fn the_adapter_exiting_fails_pending_and_later_requests() {
    let (client, adapter, _events) = connect();
    let pending = tokio::spawn({
        let client = client.clone();
        async move { client.request::<Threads>(&serde_json::Map::new(), LONG).await }
    });
    tokio::task::yield_now().await;
    drop(adapter);
    let started = std::time::Instant::now();
    let err = pending.await.unwrap().unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5), "the pending request waited for its timeout");
    assert!(matches!(err, Error::Closed { .. }), "{err}");
    assert_eq!(err.to_string(), "the connection to fake adapter is closed: the adapter closed its output");
    let later = client.request::<Threads>(&serde_json::Map::new(), LONG).await.unwrap_err();
    assert!(matches!(later, Error::Closed { .. }), "{later}");
}

#[tokio::test]
async fn a_request_without_answer_times_out_and_leaves_the_map() {
    let (client, mut adapter, _events) = connect();
    let err = client.request::<Threads>(&serde_json::Map::new(), Duration::from_millis(50)).await.unwrap_err();
    assert_eq!(err.to_string(), "fake adapter did not answer `threads` within 0.05 s");
    assert!(client.inner.pending.lock().is_empty());
    assert_eq!(adapter.next().await["command"], "threads");
}

#[tokio::test]
async fn reverse_requests_are_refused() {
    let (_client, mut adapter, _events) = connect();
    adapter
        .send(json!({"seq": 9, "type": "request", "command": "runInTerminal",
                     "arguments": {"kind": "integrated", "args": ["/bin/sh", "-c", "touch pwned"]}}))
        .await;
    let answer = adapter.next().await;
    assert_eq!(answer["type"], "response");
    assert_eq!((answer["request_seq"].clone(), answer["success"].clone()), (json!(9), json!(false)));
    assert_eq!(answer["command"], "runInTerminal");
}
