use super::warm_up::first_database_file;
use super::*;

fn state() -> Arc<State> {
    Arc::new(State {
        diagnostics: Mutex::new(HashMap::new()),
        progress: Mutex::new(HashMap::new()),
        busy: watch::channel(0).0,
        worked: watch::channel(false).0,
        messages: broadcast::channel(16).0,
    })
}

#[test]
fn progress_tracks_begin_and_end_and_forwards_messages() {
    let state = state();
    let mut messages = state.messages.subscribe();
    let handler = SessionHandler(state.clone());
    let send = |value: Value| {
        lsp::Handler::notification(
            &handler,
            "$/progress",
            json!({ "token": "backgroundIndexProgress", "value": value }),
        )
    };
    assert!(!*state.worked.borrow());
    send(json!({"kind": "begin", "title": "indexing", "percentage": 0}));
    assert_eq!(*state.busy.borrow(), 1);
    assert!(*state.worked.borrow());
    send(json!({"kind": "report", "message": "4/10", "percentage": 40}));
    send(json!({"kind": "end"}));
    assert_eq!(*state.busy.borrow(), 0);
    let received: Vec<String> = std::iter::from_fn(|| messages.try_recv().ok()).collect();
    assert_eq!(received, ["clangd indexing", "clangd indexing: 4/10", "clangd indexing: done"]);
}

#[test]
fn a_created_token_is_work_until_its_end() {
    let state = state();
    let handler = SessionHandler(state.clone());
    let token = json!({ "token": "backgroundIndexProgress" });
    let reply = lsp::Handler::request(&handler, "window/workDoneProgress/create", token.clone());
    assert_eq!(reply.unwrap(), Value::Null);
    assert_eq!(*state.busy.borrow(), 1, "busy before clangd's begin");
    assert!(*state.worked.borrow());
    let send = |value: Value| {
        let params = json!({ "token": "backgroundIndexProgress", "value": value });
        lsp::Handler::notification(&handler, "$/progress", params)
    };
    send(json!({"kind": "begin", "title": "indexing"}));
    assert_eq!(*state.busy.borrow(), 1, "the begin is the same work");
    send(json!({"kind": "end"}));
    assert_eq!(*state.busy.borrow(), 0);
}

#[test]
fn versioned_diagnostics_reach_their_waiter_and_others_are_ignored() {
    let state = state();
    let handler = SessionHandler(state.clone());
    let (tx, mut rx) = oneshot::channel();
    state.diagnostics.lock().insert(("file:///a.cpp".to_owned(), 3), tx);
    let publish = |version: Option<i32>| {
        let mut params = json!({ "uri": "file:///a.cpp", "diagnostics": [
            { "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}, "message": "m" }
        ]});
        if let Some(version) = version {
            params["version"] = json!(version);
        }
        lsp::Handler::notification(&handler, "textDocument/publishDiagnostics", params);
    };
    publish(None);
    publish(Some(2));
    assert!(rx.try_recv().is_err());
    publish(Some(3));
    assert_eq!(rx.try_recv().unwrap().len(), 1);
}

#[test]
fn the_warm_up_file_is_the_first_readable_entry() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("b.cpp"), "int b;\n").unwrap();
    let database = dir.path().join("compile_commands.json");
    let entries = json!([
        { "directory": dir.path(), "file": "missing.cpp", "command": "c++ -c missing.cpp" },
        { "directory": dir.path(), "file": "b.cpp", "command": "c++ -c b.cpp" }
    ]);
    std::fs::write(&database, entries.to_string()).unwrap();
    let (file, text) = first_database_file(&database).unwrap();
    assert_eq!(file, dir.path().join("b.cpp"));
    assert_eq!(text, "int b;\n");
    std::fs::write(&database, "not json").unwrap();
    assert!(first_database_file(&database).is_none());
}

#[test]
fn language_ids() {
    assert_eq!(language_id(Path::new("/p/a.c")), "c");
    assert_eq!(language_id(Path::new("/p/a.hpp")), "cpp");
    assert_eq!(language_id(Path::new("/p/a.h")), "cpp");
}
