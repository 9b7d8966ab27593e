//! The workspace's hooks into the service: mutations become `workspace/didChangeWatchedFiles`,
//! reads, writes and edits get their annotations.

use super::annotate::{Prepared, prepare_documents};
use super::*;

impl MutationObserver for Observer {
    fn mutated(&self, change: &Mutation) {
        let Some(inner) = self.0.upgrade() else { return };
        let slots = inner.slots.read().clone();
        let touches_database = slots.iter().any(|slot| {
            change
                .before
                .iter()
                .chain(&change.after)
                .any(|affected| slot.spec.compilation_database.starts_with(&affected.path))
        });
        if touches_database {
            inner.dirty.store(true, Ordering::SeqCst);
            inner.kick.notify_one();
        }
        let mutated: Vec<String> = change.before.iter().chain(&change.after).map(|a| a.path.to_string()).collect();
        for slot in slots.iter() {
            if let Some(session) = slot.ready() {
                session.forget_except(&mutated);
            }
        }
        let changes = file_events(&inner.roots, change);
        let uris: Vec<String> = changes.iter().map(|event| event.uri.as_str().to_owned()).collect();
        for slot in slots.iter() {
            if let Some(session) = slot.ready() {
                session.cool_except(&uris);
            }
        }
        if changes.is_empty() {
            return;
        }
        let params = lsp_types::DidChangeWatchedFilesParams { changes };
        for slot in slots.iter() {
            if let Some(session) = slot.ready() {
                session.notify::<lsp_types::notification::DidChangeWatchedFiles>(params.clone());
            }
        }
    }
}

/// The file events of one mutation: a move is a deletion of every old path and a creation of
/// every new one.
pub(super) fn file_events(roots: &Roots, change: &Mutation) -> Vec<lsp_types::FileEvent> {
    let (before, after) = match &change.kind {
        MutationKind::Created | MutationKind::DirCreated => (None, Some(lsp_types::FileChangeType::CREATED)),
        MutationKind::Written | MutationKind::Edited => (None, Some(lsp_types::FileChangeType::CHANGED)),
        MutationKind::Moved { .. } => {
            (Some(lsp_types::FileChangeType::DELETED), Some(lsp_types::FileChangeType::CREATED))
        }
        MutationKind::Deleted => (Some(lsp_types::FileChangeType::DELETED), None),
    };
    let mut res = Vec::new();
    for (affected, typ) in [(&change.before, before), (&change.after, after)] {
        let Some(typ) = typ else { continue };
        for entry in affected {
            if let Some(abs) = roots.lexical(&entry.path) {
                res.push(lsp_types::FileEvent { uri: convert::file_uri(&abs), typ });
            }
        }
    }
    res
}

/// How long a read waits for its `resources.clangd`; a longer analysis goes on in the background,
/// and the first read of the resource waits for it.
pub const READ_BUDGET: Duration = Duration::from_millis(100);

impl ResultProvider for Provider {
    fn name(&self) -> &'static str {
        PROVIDER_NAME
    }

    fn provide(&self, request: ProviderRequest, call: Call) -> BoxFuture<'static, Result<Provided, ProviderError>> {
        let (inner, note) = (self.inner.clone(), self.note);
        Box::pin(async move {
            let Some(inner) = inner.upgrade() else { return Ok(Provided::default()) };
            let path = request.path.to_string();
            let read = request.operation == FileOperation::Read;
            // The file operation owns the call's progress; annotations report none. A read's analysis
            // is its own: it goes on after the read answered, so the next read finds it warm.
            let cancel = if read { tokio_util::sync::CancellationToken::new() } else { call.cancel.clone() };
            let quiet = Call::new(Progress::disabled(), cancel, None);
            // Whether a read will have a document at all (a C/C++ file and a configuration).
            let annotated = cpp_evidence(&inner, &request.path).is_some() && !inner.slots.read().is_empty();
            let mut work = tokio::spawn(async move { annotate(&inner, &request, &quiet).await });
            let joined = if read {
                match tokio::time::timeout(READ_BUDGET, &mut work).await {
                    Ok(joined) => joined,
                    Err(_) if annotated => {
                        // The read answers now; the resource is there when the analysis is.
                        let later = async move {
                            let (document, _) = work
                                .await
                                .map_err(|err| err.to_string())?
                                .map_err(|err| crate::text::error_chain(&err))?;
                            let document = document.ok_or("no configuration could analyse it")?;
                            serde_json::to_value(&document).map_err(|err| err.to_string())
                        };
                        return Ok(Provided {
                            document: Some(Document::json_later(PROVIDER_NAME, later)),
                            ..Provided::default()
                        });
                    }
                    Err(_) => work.await,
                }
            } else {
                work.await
            };
            let (document, analysis) =
                joined.map_err(|err| Box::new(err) as ProviderError)?.map_err(|err| Box::new(err) as ProviderError)?;
            let mut provided = Provided::default();
            if let Some(document) = document {
                let value = serde_json::to_value(&document).map_err(|err| Box::new(err) as ProviderError)?;
                provided.document = Some(Document::json(PROVIDER_NAME, &value));
            }
            provided.note = note(&path, &analysis);
            if !read && analysis != MutationAnalysis::default() {
                provided.summary = Some(serde_json::to_value(&analysis).map_err(|err| Box::new(err) as ProviderError)?);
            }
            Ok(provided)
        })
    }

    /// Opens the file's current content in every running session whose before-state for it is not
    /// remembered, in the background, so clangd analyses the old content while the file is written.
    fn prepare(&self, path: &QualifiedPath) -> Option<PrepareGuard> {
        let inner = self.inner.upgrade()?;
        if inner.slots.read().is_empty() || cpp_evidence(&inner, path).is_none() {
            return None;
        }
        let runtime = tokio::runtime::Handle::try_current().ok()?;
        let id = inner.next_preparation.fetch_add(1, Ordering::Relaxed);
        let key = path.to_string();
        let task = runtime.spawn(prepare_documents(inner.clone(), path.clone()));
        // A later preparation of the same file replaces this one (the texts decide which is used).
        if let Some(old) = inner.prepared.lock().insert(key.clone(), Preparation { id, task }) {
            old.task.abort();
        }
        Some(Box::new(Prepared { inner: Arc::downgrade(&inner), key, id }))
    }
}
