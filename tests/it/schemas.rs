//! Schemas every client accepts silently: only JSON Schema 2020-12 formats and a single `type` per
//! schema, in every input and output schema of tools/list.

use forgemcp::server::schema::STANDARD_FORMATS;
use serde_json::Value;

use crate::support::{TempWorkspace, TestClient};

/// Every `format` keyword of a schema, with its JSON pointer, and every `type` that is a list.
/// Properties named `format` or `type` are objects (schemas), so only string or list values count.
fn formats(value: &Value, at: String, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let here = format!("{at}/{key}");
                match (key.as_str(), child) {
                    ("format", Value::String(format)) => found.push((here, format.clone())),
                    ("type", Value::Array(types)) => found.push((here, format!("type list {types:?}"))),
                    _ => formats(child, here, found),
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                formats(item, format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn every_schema_uses_only_standard_formats() {
    let ws = TempWorkspace::new("");
    let client = ws.connect(TestClient::new()).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let mut found = Vec::new();
    let mut outputs = 0;
    for tool in &tools {
        formats(&Value::Object((*tool.input_schema).clone()), format!("{}/inputSchema", tool.name), &mut found);
        if let Some(output) = &tool.output_schema {
            outputs += 1;
            formats(&Value::Object((**output).clone()), format!("{}/outputSchema", tool.name), &mut found);
        }
    }
    assert_eq!(outputs, tools.len(), "every tool has an output schema");
    let bad: Vec<_> = found.iter().filter(|(_, format)| !STANDARD_FORMATS.contains(&format.as_str())).collect();
    assert!(bad.is_empty(), "non-standard formats or type lists: {bad:#?}");
    // The walk sees the integer ranges that replaced the numeric formats.
    let text = serde_json::to_string(&tools).expect("serialize");
    assert!(text.contains("\"maximum\":4294967295"), "u32 ranges are spelled out");
}
