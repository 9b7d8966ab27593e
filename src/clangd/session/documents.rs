//! The documents of one session: versions, per-file turns, the diagnostics waiters, and the warm
//! set: documents kept open between analyses.
//!
//! A document an analysis is done with goes back to the session's warm set instead of being closed,
//! so the next analysis of the same text reuses clangd's AST and preamble (a second hover answers
//! in milliseconds) and a different text is sent as a change (the preamble is rebuilt only when
//! the includes changed). The set holds at most [`WARM_DOCUMENTS`]; the least recently used is
//! closed to make room. A workspace mutation closes every warm document but the mutated files'
//! (an included header may have changed) and a document in use during one is closed when done.
//!
//! Architecture invariant: a document's current version always has its diagnostics either still
//! awaited (a waiter) or kept (`last`), so an analysis of a reused document never waits for a
//! publication that already happened.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::{Error, State, content_hash};
use crate::lsp::{self, Client};

/// The most documents one session keeps open between analyses.
pub const WARM_DOCUMENTS: usize = 6;

type Published = Vec<lsp_types::Diagnostic>;

/// One open document's state, in use or warm.
struct Held {
    /// The file as messages name it (a qualified path for managed files).
    name: String,
    uri: lsp_types::Uri,
    /// The current version (the last text sent).
    version: i32,
    /// The versions whose diagnostics nobody has collected yet, with their receivers.
    pending: Vec<(i32, oneshot::Receiver<Published>)>,
    /// The current version's diagnostics, once collected.
    last: Option<(i32, Published)>,
    /// SHA-256 of the current text.
    hash: [u8; 32],
    /// The warm epoch it was opened or last kept in.
    epoch: u64,
}

/// The documents of one session: versions, per-file turns, the diagnostics waiters, and the warm
/// set (least recently used first).
pub(super) struct Documents {
    pub(super) client: Client,
    pub(super) state: Arc<State>,
    next_version: AtomicI32,
    locks: Mutex<HashMap<String, Weak<tokio::sync::Mutex<()>>>>,
    warm: Mutex<Vec<Held>>,
    /// Bumped by every workspace mutation: documents in use during one are closed when done.
    epoch: AtomicU64,
}

impl Documents {
    pub(super) fn new(client: Client, state: Arc<State>) -> Documents {
        Documents {
            client,
            state,
            next_version: AtomicI32::new(1),
            locks: Mutex::new(HashMap::new()),
            warm: Mutex::new(Vec::new()),
            epoch: AtomicU64::new(0),
        }
    }

    /// Opens `text` as `uri`: the warm document of that file when there is one (changed to `text`
    /// when it holds another text), else a fresh one. Waits at most until `deadline` for the file's
    /// turn.
    pub(super) async fn open(
        self: &Arc<Self>,
        uri: &lsp_types::Uri,
        name: String,
        language: &str,
        text: &str,
        deadline: Instant,
    ) -> Result<OpenDocument, Error> {
        let lock = {
            let mut locks = self.locks.lock();
            locks.retain(|_, lock| lock.strong_count() > 0);
            match locks.get(uri.as_str()).and_then(Weak::upgrade) {
                Some(lock) => lock,
                None => {
                    let lock = Arc::new(tokio::sync::Mutex::new(()));
                    locks.insert(uri.as_str().to_owned(), Arc::downgrade(&lock));
                    lock
                }
            }
        };
        let turn = tokio::time::timeout_at(deadline, lock.lock_owned())
            .await
            .map_err(|_| Error::Busy { path: name.clone() })?;
        let hash = content_hash(text);
        let warm = {
            let mut warm = self.warm.lock();
            warm.iter().position(|held| held.uri == *uri).map(|at| warm.remove(at))
        };
        if let Some(mut held) = warm {
            held.name = name;
            let same = held.hash == hash;
            let mut doc = OpenDocument { documents: self.clone(), held: Some(held), _turn: turn };
            if !same {
                doc.change(text)?;
            }
            return Ok(doc);
        }
        let held = Held {
            name,
            uri: uri.clone(),
            version: 0,
            pending: Vec::new(),
            last: None,
            hash,
            epoch: self.epoch.load(Ordering::SeqCst),
        };
        let mut doc = OpenDocument { documents: self.clone(), held: Some(held), _turn: turn };
        let version = doc.next_version();
        let item = lsp_types::TextDocumentItem::new(uri.clone(), language.to_owned(), version, text.to_owned());
        self.client
            .notify::<lsp_types::notification::DidOpenTextDocument>(lsp_types::DidOpenTextDocumentParams {
                text_document: item,
            })
            .map_err(Error::Lsp)?;
        Ok(doc)
    }

    /// Closes every warm document but those of `kept` (URIs); documents in use now are closed when
    /// their analysis is done.
    pub(super) fn cool_except(&self, kept: &[String]) {
        let epoch = self.epoch.fetch_add(1, Ordering::SeqCst) + 1;
        let mut warm = self.warm.lock();
        let (keep, close): (Vec<Held>, Vec<Held>) =
            std::mem::take(&mut *warm).into_iter().partition(|held| kept.iter().any(|uri| uri == held.uri.as_str()));
        for held in close {
            self.close(held);
        }
        *warm = keep.into_iter().map(|held| Held { epoch, ..held }).collect();
    }

    /// Keeps a document an analysis is done with, closing the least recently used beyond the
    /// budget; closes it instead when a mutation happened meanwhile or its diagnostics were lost.
    fn keep(&self, mut held: Held) {
        // Only the current version's diagnostics can be asked for again.
        let current = held.version;
        let stale: Vec<i32> = held.pending.iter().map(|(v, _)| *v).filter(|v| *v != current).collect();
        self.drop_waiters(&held.uri, &stale);
        held.pending.retain(|(v, _)| *v == current);
        let answerable = !held.pending.is_empty() || held.last.as_ref().is_some_and(|(v, _)| *v == current);
        let mut warm = self.warm.lock();
        if !answerable || held.epoch != self.epoch.load(Ordering::SeqCst) || self.client.closed_reason().is_some() {
            self.close(held);
            return;
        }
        warm.push(held);
        while warm.len() > WARM_DOCUMENTS {
            let oldest = warm.remove(0);
            self.close(oldest);
        }
    }

    /// `didClose`, and forgets the document's waiters. Callers hold the warm lock or the file's
    /// turn, so a later open of the file is queued after the close.
    fn close(&self, held: Held) {
        let versions: Vec<i32> = held.pending.iter().map(|(v, _)| *v).collect();
        self.drop_waiters(&held.uri, &versions);
        let params =
            lsp_types::DidCloseTextDocumentParams { text_document: lsp_types::TextDocumentIdentifier::new(held.uri) };
        let _ = self.client.notify::<lsp_types::notification::DidCloseTextDocument>(params);
    }

    fn drop_waiters(&self, uri: &lsp_types::Uri, versions: &[i32]) {
        let mut waiters = self.state.diagnostics.lock();
        for version in versions {
            waiters.remove(&(uri.as_str().to_owned(), *version));
        }
    }
}

/// A document open in clangd for one analysis; dropping it hands it back to the warm set.
pub struct OpenDocument {
    documents: Arc<Documents>,
    /// Always `Some` until dropped.
    held: Option<Held>,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl OpenDocument {
    fn held(&self) -> &Held {
        self.held.as_ref().expect("an open document holds its state until dropped")
    }

    fn held_mut(&mut self) -> &mut Held {
        self.held.as_mut().expect("an open document holds its state until dropped")
    }

    pub fn identifier(&self) -> lsp_types::TextDocumentIdentifier {
        lsp_types::TextDocumentIdentifier::new(self.held().uri.clone())
    }

    /// The current version (the last text sent).
    pub fn version(&self) -> i32 {
        self.held().version
    }

    /// A fresh version, made current, with a waiter for its diagnostics.
    fn next_version(&mut self) -> i32 {
        let version = self.documents.next_version.fetch_add(1, Ordering::Relaxed);
        let (waiter, receiver) = oneshot::channel();
        let uri = self.held().uri.as_str().to_owned();
        self.documents.state.diagnostics.lock().insert((uri, version), waiter);
        let held = self.held_mut();
        held.pending.push((version, receiver));
        held.version = version;
        held.last = None;
        version
    }

    /// Replaces the whole text under a fresh version without waiting for the earlier version's
    /// analysis: clangd analyses every version whose diagnostics are wanted, in order, reusing the
    /// preamble when the includes did not change. `text` must differ from the current text (clangd
    /// publishes nothing for an unchanged one). Lone CRs go as LF, as in `Session::open_text`.
    pub fn change(&mut self, text: &str) -> Result<i32, Error> {
        let version = self.next_version();
        self.held_mut().hash = content_hash(text);
        let params = json!({
            "textDocument": { "uri": self.held().uri.as_str(), "version": version },
            "contentChanges": [{ "text": crate::text::lone_cr_as_lf(text) }],
            // clangd's extension: publish this version's diagnostics even if another follows.
            "wantDiagnostics": true,
        });
        self.documents.client.notify_value("textDocument/didChange", params).map_err(Error::Lsp)?;
        Ok(version)
    }

    /// The diagnostics clangd publishes for the current version.
    pub async fn diagnostics(&mut self, deadline: Instant) -> Result<Published, Error> {
        self.diagnostics_of(self.version(), deadline).await
    }

    /// The diagnostics clangd publishes for `version` of this document: awaited once, then kept
    /// while it is the current version (a warm document answers again without a publication).
    pub async fn diagnostics_of(&mut self, version: i32, deadline: Instant) -> Result<Published, Error> {
        let documents = self.documents.clone();
        let held = self.held_mut();
        if let Some((kept, published)) = &held.last
            && *kept == version
        {
            return Ok(published.clone());
        }
        let Some(at) = held.pending.iter().position(|(pending, _)| *pending == version) else { return Ok(Vec::new()) };
        let client = &documents.client;
        let closed = |reason| Error::Lsp(lsp::Error::Closed { server: client.server().to_owned(), reason });
        // The receiver stays in place until it answers, so a timeout loses nothing.
        let answer = tokio::select! {
            published = tokio::time::timeout_at(deadline, &mut held.pending[at].1) => match published {
                Ok(Ok(diagnostics)) => Ok(diagnostics),
                Ok(Err(_)) | Err(_) => Err(match client.closed_reason() {
                    Some(reason) => closed(reason),
                    None => Error::NoDiagnostics { path: held.name.clone() },
                }),
            },
            reason = client.closed() => Err(closed(reason)),
        };
        let diagnostics = answer?;
        held.pending.swap_remove(at);
        if version == held.version {
            held.last = Some((version, diagnostics.clone()));
        }
        Ok(diagnostics)
    }
}

impl OpenDocument {
    /// Closes the document instead of keeping it warm: its AST was built against other contents of
    /// the files it includes than those on disk (a header's earlier text open as a draft).
    pub fn close(mut self) {
        if let Some(held) = self.held.take() {
            self.documents.close(held);
        }
    }
}

impl Drop for OpenDocument {
    fn drop(&mut self) {
        // Kept (or closed) before the turn is released, so the next open of this file comes after.
        if let Some(held) = self.held.take() {
            self.documents.keep(held);
        }
    }
}
