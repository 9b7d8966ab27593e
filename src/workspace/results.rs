//! The immutable, in-memory result store behind
//! `forgemcp://workspace/results/{result_id}/{name}.json|.md`.
//!
//! A document is stored ready, or as the one future that produces it (a read's clangd analysis,
//! which the read does not wait for): the first resource read awaits it, later reads get the same
//! text.
//!
//! Architecture invariant: a stored document never changes; reads never re-run providers.
//! Architecture invariant: memory stays bounded: past `MAX_TOTAL_BYTES` the oldest results are
//! forgotten (their URIs then answer "not found", as after a restart).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::future::{BoxFuture, Shared};
use parking_lot::RwLock;

/// Upper bound on the bytes all retained documents may hold together.
pub const MAX_TOTAL_BYTES: usize = 512 * 1024 * 1024;

/// The two document formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocumentKind {
    Json,
    Markdown,
}

impl DocumentKind {
    pub fn extension(self) -> &'static str {
        match self {
            DocumentKind::Json => "json",
            DocumentKind::Markdown => "md",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            DocumentKind::Json => "application/json",
            DocumentKind::Markdown => "text/markdown",
        }
    }
}

/// A document's text, or the one future producing it (`Err`: why it could not be produced).
#[derive(Clone)]
pub enum Body {
    Ready(Arc<str>),
    Later(Shared<BoxFuture<'static, Result<Arc<str>, String>>>),
}

impl Body {
    /// The text, once produced.
    pub async fn text(&self) -> Result<Arc<str>, String> {
        match self {
            Body::Ready(text) => Ok(text.clone()),
            Body::Later(later) => later.clone().await,
        }
    }

    /// Bytes counted against the store's limit (a document still being produced counts none).
    fn len(&self) -> usize {
        match self {
            Body::Ready(text) => text.len(),
            Body::Later(_) => 0,
        }
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Body::Ready(text) => write!(f, "Ready({} bytes)", text.len()),
            Body::Later(_) => f.write_str("Later"),
        }
    }
}

/// One provider's output for one call.
#[derive(Debug, Clone)]
pub struct Document {
    pub name: String,
    pub kind: DocumentKind,
    pub body: Body,
}

impl Document {
    /// `name` must be ASCII letters, digits, `_` or `-`.
    pub fn json(name: &str, value: &serde_json::Value) -> Document {
        debug_assert!(is_valid_name(name), "invalid provider name {name}");
        Document { name: name.to_owned(), kind: DocumentKind::Json, body: Body::Ready(Arc::from(value.to_string())) }
    }

    /// A JSON document `produce` makes when it finishes (the first read of the resource waits).
    pub fn json_later(
        name: &str,
        produce: impl std::future::Future<Output = Result<serde_json::Value, String>> + Send + 'static,
    ) -> Document {
        debug_assert!(is_valid_name(name), "invalid provider name {name}");
        let text = produce.map(|value| value.map(|value| Arc::from(value.to_string())));
        Document { name: name.to_owned(), kind: DocumentKind::Json, body: Body::Later(text.boxed().shared()) }
    }
}

/// A link to a stored document, as tool results carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentLink {
    pub uri: String,
    pub mime_type: &'static str,
}

/// True for provider names allowed in result URIs.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[derive(Default)]
struct Inner {
    results: HashMap<String, BTreeMap<(String, DocumentKind), Document>>,
    order: VecDeque<(String, usize)>,
    total_bytes: usize,
}

#[derive(Default)]
pub struct ResultStore {
    inner: RwLock<Inner>,
}

impl ResultStore {
    /// Stores the documents of one call under a fresh random id and returns their links by name.
    pub fn store(&self, documents: Vec<Document>) -> BTreeMap<String, DocumentLink> {
        if documents.is_empty() {
            return BTreeMap::new();
        }
        let id = random_id();
        let mut links = BTreeMap::new();
        let mut docs = BTreeMap::new();
        let mut bytes = 0;
        for doc in documents {
            links.insert(
                doc.name.clone(),
                DocumentLink {
                    uri: format!("forgemcp://workspace/results/{id}/{}.{}", doc.name, doc.kind.extension()),
                    mime_type: doc.kind.mime_type(),
                },
            );
            bytes += doc.body.len();
            docs.insert((doc.name.clone(), doc.kind), doc);
        }
        let mut inner = self.inner.write();
        inner.results.insert(id.clone(), docs);
        inner.order.push_back((id, bytes));
        inner.total_bytes += bytes;
        while inner.total_bytes > MAX_TOTAL_BYTES && inner.order.len() > 1 {
            let Some((old, old_bytes)) = inner.order.pop_front() else { break };
            inner.results.remove(&old);
            inner.total_bytes -= old_bytes;
        }
        links
    }

    pub fn get(&self, id: &str, name: &str, kind: DocumentKind) -> Option<Document> {
        self.inner.read().results.get(id)?.get(&(name.to_owned(), kind)).cloned()
    }

    /// Retained result ids, oldest first.
    pub fn ids(&self) -> Vec<String> {
        self.inner.read().order.iter().map(|(id, _)| id.clone()).collect()
    }

    /// Names of the documents of `id` with the given kind.
    pub fn names(&self, id: &str, kind: DocumentKind) -> Vec<String> {
        let inner = self.inner.read();
        let Some(docs) = inner.results.get(id) else { return Vec::new() };
        docs.keys().filter(|(_, k)| *k == kind).map(|(name, _)| name.clone()).collect()
    }
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    bytes.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_documents_are_linked_and_readable() {
        let store = ResultStore::default();
        let links = store.store(vec![Document::json("diff", &serde_json::json!({"a": 1}))]);
        let link = &links["diff"];
        assert_eq!(link.mime_type, "application/json");
        let id = link.uri.strip_prefix("forgemcp://workspace/results/").unwrap().split('/').next().unwrap();
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        let body = store.get(id, "diff", DocumentKind::Json).unwrap().body;
        assert_eq!(&*futures_util::FutureExt::now_or_never(body.text()).unwrap().unwrap(), r#"{"a":1}"#);
        assert!(store.get(id, "diff", DocumentKind::Markdown).is_none());
        assert_eq!(store.names(id, DocumentKind::Json), vec!["diff"]);
        assert_eq!(store.ids(), vec![id.to_owned()]);
    }

    #[test]
    fn nothing_stored_means_no_links() {
        let store = ResultStore::default();
        assert!(store.store(Vec::new()).is_empty());
        assert!(store.ids().is_empty());
    }

    #[test]
    fn provider_names_are_restricted() {
        assert!(is_valid_name("skipped_files"));
        assert!(is_valid_name("clangd-2"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("a.b"));
        assert!(!is_valid_name("a/b"));
    }
}
