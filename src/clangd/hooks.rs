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

impl ResultProvider for Provider {
    fn name(&self) -> &'static str {
        PROVIDER_NAME
    }

    fn provide(&self, request: ProviderRequest, call: Call) -> BoxFuture<'static, Result<Provided, ProviderError>> {
        let inner = self.0.clone();
        Box::pin(async move {
            let Some(inner) = inner.upgrade() else { return Ok(Provided::default()) };
            // The file operation owns the call's progress; annotations report none.
            let quiet = Call::new(Progress::disabled(), call.cancel.clone(), None);
            let (document, analysis) =
                annotate(&inner, &request, &quiet).await.map_err(|err| Box::new(err) as ProviderError)?;
            let mut provided = Provided::default();
            if let Some(document) = document {
                let value = serde_json::to_value(&document).map_err(|err| Box::new(err) as ProviderError)?;
                provided.document = Some(Document::json(PROVIDER_NAME, &value));
            }
            provided.note = crate::render::clangd_note::mutation_note(&request.path.to_string(), &analysis);
            let mutation = matches!(request.operation, FileOperation::Write | FileOperation::Edit);
            if mutation && analysis != MutationAnalysis::default() {
                provided.summary = Some(serde_json::to_value(&analysis).map_err(|err| Box::new(err) as ProviderError)?);
            }
            Ok(provided)
        })
    }

    /// Opens the file's current content in every running session whose before-state for it is not
    /// remembered, in the background, so clangd analyses the old content while the file is written.
    fn prepare(&self, path: &QualifiedPath) -> Option<PrepareGuard> {
        let inner = self.0.upgrade()?;
        if !convert::is_annotated(path) || inner.slots.read().is_empty() {
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
