//! The immutable result documents `forgemcp://workspace/results/{result_id}/{name}.json|.md`.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::ResourceContents;

use crate::call::Call;
use crate::server::resources::{Completer, ReadError, ReadResult, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::widgets::Icon;
use crate::workspace::results::{DocumentKind, ResultStore};

pub fn register(resources: &mut Resources, store: &Arc<ResultStore>) {
    for kind in [DocumentKind::Json, DocumentKind::Markdown] {
        let (uri, name, title) = match kind {
            DocumentKind::Json => (
                "forgemcp://workspace/results/{result_id}/{name}.json",
                "workspace-result-json",
                "Result document (JSON)",
            ),
            DocumentKind::Markdown => (
                "forgemcp://workspace/results/{result_id}/{name}.md",
                "workspace-result-markdown",
                "Result document (Markdown)",
            ),
        };
        let reader_store = store.clone();
        let completer_store = store.clone();
        let completer: Completer =
            Arc::new(move |argument: &str, _value: &str, context: &HashMap<String, String>| match argument {
                "result_id" => completer_store.ids().into_iter().rev().collect(),
                "name" => context.get("result_id").map(|id| completer_store.names(id, kind)).unwrap_or_default(),
                _ => Vec::new(),
            });
        resources.add_template(
            ResourceSpec {
                uri,
                name,
                title,
                description: "An immutable document a provider attached to one tool result; kept in memory until the server stops.",
                mime_type: kind.mime_type(),
                icon: Icon::Workspace,
            },
            move |uri: String, vars: Variables, _call: Call| {
                let store = reader_store.clone();
                async move { read_result(&store, kind, &uri, &vars).await }
            },
            Some(completer),
        );
    }
}

/// A stored document's text; one still being produced (a read's clangd analysis) is awaited.
async fn read_result(store: &ResultStore, kind: DocumentKind, uri: &str, vars: &Variables) -> ReadResult {
    let id = vars.get("result_id").unwrap_or_default();
    let name = vars.get("name").unwrap_or_default();
    let doc = store
        .get(id, name, kind)
        .ok_or_else(|| ReadError::NotFound(format!("result `{id}/{name}` is not retained")))?;
    let text =
        doc.body.text().await.map_err(|reason| ReadError::NotFound(format!("result `{id}/{name}`: {reason}")))?;
    Ok(vec![ResourceContents::text(text.to_string(), uri).with_mime_type(kind.mime_type())])
}
