//! Heavy calls cannot starve light ones (issue 16.6): CPU-heavy calls (searches, listings, finds,
//! large reads) run in a bounded number of slots; the others wait in order, stay cancellable, and
//! still complete; light calls never wait for a slot. Structure only: nothing here times anything
//! (`benches/latency.rs` prints the latency under load).

use std::time::Duration;

use forgemcp::call::Call;
use forgemcp::server::ForgeServer;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::support::{TempWorkspace, TestClient, call, connect, structured};

const FILES: usize = 200;
const SEARCHES: usize = 12;

fn workspace() -> TempWorkspace {
    let ws = TempWorkspace::new("//- info.txt\n    light");
    for i in 0..FILES {
        ws.write(&format!("src/d{}/f{i}.cpp", i % 10), format!("int needle_{i} = {i};\n").repeat(20));
    }
    ws
}

/// Waits (bounded) until `done` holds for the limiter's statistics.
async fn until(server: &ForgeServer, what: &str, done: impl Fn(forgemcp::server::heavy::HeavyStats) -> bool) {
    for _ in 0..2_000 {
        if done(server.heavy_work().stats()) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{what}: {:?}", server.heavy_work().stats());
}

fn search_params() -> CallToolRequestParams {
    CallToolRequestParams::new("workspace_text_search")
        .with_arguments(json!({ "query": "needle" }).as_object().cloned().expect("object"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heavy_calls_wait_for_a_slot_stay_cancellable_and_complete() {
    let ws = workspace();
    let server = ws.server(Duration::ZERO);
    let client = connect(server.clone(), TestClient::new()).await;
    let slots = server.heavy_work().slots();
    // Take every slot, so that each heavy call below has to wait: the starvation case, made certain.
    let holder = Call::detached();
    let mut held = Vec::new();
    for _ in 0..slots {
        held.push(server.heavy_work().acquire(&holder).await.expect("a free slot"));
    }
    let mut searches = Vec::new();
    for _ in 0..SEARCHES {
        let peer = client.peer().clone();
        searches.push(tokio::spawn(async move { peer.call_tool(search_params()).await.expect("the search answers") }));
    }
    until(&server, "every search waits", |s| s.waiting == SEARCHES).await;

    // Light calls do not queue behind them.
    let info = call(&client, "workspace_file_info", json!({ "path": "info.txt" })).await;
    assert_eq!(structured(&info)["size_bytes"], 6);
    client.peer().send_request(ClientRequest::PingRequest(Default::default())).await.expect("ping answers");

    // A waiting call can be cancelled; it leaves the queue and never runs.
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(search_params()));
    let handle = client.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.expect("sent");
    until(&server, "the extra search waits", |s| s.waiting == SEARCHES + 1).await;
    handle.cancel(Some("test".into())).await.expect("cancel sent");
    until(&server, "the cancelled search left the queue", |s| s.waiting == SEARCHES).await;

    // Freed slots let every waiting call run, never more than `slots` at once.
    drop(held);
    for search in searches {
        let result = search.await.expect("joins");
        assert_eq!(structured(&result)["matches_count"], FILES * 20);
    }
    let stats = server.heavy_work().stats();
    assert_eq!((stats.running, stats.waiting), (0, 0), "{stats:?}");
    assert!(stats.peak_running <= slots, "{stats:?}");
    // The cancelled call never ran: only the held slots and the searches were granted.
    assert_eq!(stats.granted, slots + SEARCHES, "{stats:?}");
    client.cancel().await.expect("clean shutdown");
}
