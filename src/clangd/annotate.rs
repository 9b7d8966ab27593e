//! `clangd.json` for a file operation, and the before-state of writes and edits: the old content
//! opened before the write, so clangd parses it while the write is made.

use super::*;

/// What one configuration found for a file operation.
pub(super) struct Answer {
    pub(super) id: String,
    pub(super) diagnostics: Vec<Diagnostic>,
    pub(super) spans: Vec<model::SemanticSpan>,
    /// The diagnostics of the content before a write or edit (empty for a created file).
    pub(super) before: Option<Vec<Diagnostic>>,
    pub(super) inferred_flags: bool,
}

pub(super) async fn annotate(
    inner: &Arc<Inner>,
    request: &ProviderRequest,
    call: &Call,
) -> Result<(Option<AnnotationsDocument>, MutationAnalysis), Error> {
    let mutation = matches!(request.operation, FileOperation::Write | FileOperation::Edit);
    let mut analysis = MutationAnalysis::default();
    if mutation && let Some(source) = inner.withdrawals.read().as_ref() {
        let (withdrawn, glob) = source(&request.path);
        analysis.withdrawn = withdrawn;
        analysis.withdrawn_glob = glob.map(|dir| dir.to_string());
        known::record_withdrawals(inner, &analysis.withdrawn, &request.path);
    }
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let work = async {
        // The latest databases decide what is C/C++ too.
        sync(inner).await;
        if cpp_evidence(inner, &request.path).is_none() {
            return Ok((None, analysis));
        }
        let slots: Vec<Arc<Slot>> = inner.slots.read().to_vec();
        if slots.is_empty() {
            // Silence is never "fine": a write or edit says why nothing checked it.
            let mut analysis = analysis;
            analysis.not_checked = mutation.then(|| unavailable(inner));
            return Ok((None, analysis));
        }
        let path = request.path.to_string();
        if request.lines == LineWindow::Empty {
            let file = AnnotatedFile { path, diagnostics: Vec::new(), highlighting: Vec::new() };
            return Ok((Some(AnnotationsDocument { version: ANNOTATIONS_VERSION, files: vec![file] }), analysis));
        }
        let file = Arc::new(convert::read_source(&inner.roots, &request.path)?);
        let lexical = inner.roots.lexical(&request.path);
        let old = if mutation { request.before.as_deref() } else { None };
        let mut prepared = if mutation { prepared_documents(inner, &path, old).await } else { Vec::new() };
        let runs = slots.iter().map(|slot| {
            let file = file.clone();
            let lexical = lexical.clone();
            let prepared = prepared.iter().position(|p| p.0 == slot.spec.id).map(|at| prepared.swap_remove(at));
            async move {
                let id = slot.spec.id.clone();
                let in_configuration = |err: Error| err.in_configuration(&id);
                let session = slot.session(&inner.processes, deadline).await.map_err(in_configuration)?;
                // Only a document of this very session (not of one that restarted since).
                let prepared = prepared.and_then(|(_, owner, doc)| Arc::ptr_eq(&owner, &session).then_some(doc));
                let found = analysis::annotations(&session, &inner.roots, &file, old, prepared, deadline)
                    .await
                    .map_err(in_configuration)?;
                // A created file had no diagnostics before.
                let before = if mutation { Some(found.before.unwrap_or_default()) } else { None };
                let inferred_flags = slot.infers_flags(&file, lexical.as_deref());
                Ok::<_, Error>(Answer {
                    id: id.clone(),
                    diagnostics: found.diagnostics,
                    spans: found.spans,
                    before,
                    inferred_flags,
                })
            }
        });
        let answers = futures_util::future::join_all(runs).await.into_iter().collect::<Result<Vec<_>, Error>>()?;
        let mut analysis = analysis;
        let mut deltas = Vec::new();
        let before_lines = request.before.as_deref().map(crate::lsp::LineIndex::new);
        let empty = crate::lsp::LineIndex::new("");
        for answer in &answers {
            if answer.inferred_flags {
                analysis.inferred_flags.push(answer.id.clone());
            }
            if let Some(before) = &answer.before {
                let lines = before_lines.as_ref().unwrap_or(&empty);
                let (introduced, resolved) = delta::compare(before, lines, &answer.diagnostics, &file.lines);
                let (resolved, hidden) = delta::hidden_by_errors(&introduced, resolved, lines, &file.lines);
                deltas.push((answer.id.clone(), (introduced, resolved, hidden)));
            }
        }
        analysis.deltas = merge(deltas)
            .into_iter()
            .map(|(configurations, (introduced, resolved, hidden))| {
                delta::summary(configurations, &introduced, &resolved, &hidden)
            })
            .collect();
        if mutation && !crate::cpp_file::is_translation_unit(&file.path) {
            analysis.includers = check_includers(inner, &slots, &file, old, deadline).await;
        }
        let window = request.lines;
        let keep = |range: &model::SourceRange| {
            let (first, last) = range.lines();
            window.intersects(first, last)
        };
        let mut diagnostics = Vec::new();
        let mut highlighting = Vec::new();
        for Answer { id, diagnostics: mut found, mut spans, .. } in answers {
            found.retain(|d| keep(&d.range));
            spans.retain(|s| keep(&s.range));
            diagnostics.push((id.clone(), found));
            highlighting.push((id, spans));
        }
        let file = AnnotatedFile {
            diagnostics: merge_equal(diagnostics)
                .into_iter()
                .map(|(configurations, diagnostics)| DiagnosticsResult {
                    configurations,
                    path: path.clone(),
                    diagnostics,
                })
                .collect(),
            highlighting: merge_equal(highlighting)
                .into_iter()
                .map(|(configurations, spans)| HighlightingResult::encode(configurations, path.clone(), &spans))
                .collect(),
            path,
        };
        Ok((Some(AnnotationsDocument { version: ANNOTATIONS_VERSION, files: vec![file] }), analysis))
    };
    tokio::select! {
        res = tokio::time::timeout_at(deadline, work) => res.unwrap_or(Err(Error::Timeout(DEFAULT_TIMEOUT))),
        () = call.cancel.cancelled() => Err(Error::Cancelled),
    }
}

/// The translation units including an edited header, checked per configuration within the
/// budget, identical answers merged.
async fn check_includers(
    inner: &Inner,
    slots: &[Arc<Slot>],
    header: &SourceFile,
    before: Option<&str>,
    last: Instant,
) -> Vec<super::includers::IncludersCheck> {
    let checks =
        slots.iter().filter_map(|slot| slot.ready().map(|session| (slot, session))).map(|(slot, session)| async move {
            let mut check = super::includers::check(inner, slot, session, header, before, last).await;
            check.configurations.clear();
            (slot.spec.id.clone(), check)
        });
    let found = futures_util::future::join_all(checks).await;
    merge(found)
        .into_iter()
        .map(|(configurations, check)| super::includers::IncludersCheck { configurations, ..check })
        .collect()
}

/// Documents opened with one content of a file, each with the session it is open in and its
/// configuration.
pub(super) struct Opened {
    pub(super) text: String,
    pub(super) documents: Vec<(String, Arc<Session>, session::OpenDocument)>,
}

/// A preparation under way or done.
pub(super) struct Preparation {
    pub(super) id: u64,
    pub(super) task: JoinHandle<Option<Opened>>,
}

/// The guard of one preparation: dropping it closes the documents nobody used.
pub(super) struct Prepared {
    pub(super) inner: Weak<Inner>,
    pub(super) key: String,
    pub(super) id: u64,
}

impl Drop for Prepared {
    fn drop(&mut self) {
        let Some(inner) = self.inner.upgrade() else { return };
        let mut prepared = inner.prepared.lock();
        if prepared.get(&self.key).is_some_and(|p| p.id == self.id)
            && let Some(preparation) = prepared.remove(&self.key)
        {
            preparation.task.abort();
        }
    }
}

/// Opens the current content of `path` in every running session that does not remember its
/// diagnostics for it.
pub(super) async fn prepare_documents(inner: Arc<Inner>, path: QualifiedPath) -> Option<Opened> {
    let roots = inner.roots.clone();
    let source = path.clone();
    let file = tokio::task::spawn_blocking(move || convert::read_source(&roots, &source).ok()).await.ok()??;
    let key = path.to_string();
    let deadline = Instant::now() + DEFAULT_TIMEOUT;
    let slots: Vec<Arc<Slot>> = inner.slots.read().to_vec();
    let mut documents = Vec::new();
    for slot in slots {
        let Some(session) = slot.ready().filter(|session| session.is_alive()) else { continue };
        if session.remembered(&key, file.lines.text()).is_some() {
            continue;
        }
        if let Ok(doc) = session.open(&file, deadline).await {
            documents.push((slot.spec.id.clone(), session, doc));
        }
    }
    Some(Opened { text: file.lines.text().to_owned(), documents })
}

/// The documents prepared for `path` when they hold exactly `before` (else they are closed).
/// A created file (`before` is `None`) has no before-state, but its preparation may still have
/// opened it: when the write landed before the preparation read the file, it holds the new
/// content, and with it each document's turn, which the analysis must not wait for.
async fn prepared_documents(
    inner: &Inner,
    path: &str,
    before: Option<&str>,
) -> Vec<(String, Arc<Session>, session::OpenDocument)> {
    let Some(preparation) = inner.prepared.lock().remove(path) else { return Vec::new() };
    let Some(before) = before else {
        preparation.task.abort();
        // Waits until the task is gone, so any document it opened is closed before the analysis.
        let _ = preparation.task.await;
        return Vec::new();
    };
    match preparation.task.await {
        Ok(Some(opened)) if opened.text == before => opened.documents,
        _ => Vec::new(),
    }
}
