//! A configuration's slot: its session's life (start, restart after a crash, retirement), the
//! selection of slots by id, the candidates made from published contexts, and the reconciliation
//! of slots with the latest contexts (`sync`).

use super::*;
use crate::compile_db::Database;

impl Slot {
    /// Whether clangd analyses `file` with flags it infers: a translation unit the database lacks.
    pub(super) fn infers_flags(&self, file: &SourceFile, lexical: Option<&Path>) -> bool {
        crate::cpp_file::is_translation_unit(&file.path)
            && !self.database.listed.contains(&file.abs)
            && !lexical.is_some_and(|abs| self.database.listed.contains(abs))
    }

    pub(super) fn same(&self, other: &Slot) -> bool {
        self.spec == other.spec
            && self.session_spec.clangd == other.session_spec.clangd
            && self.session_spec.database_dir == other.session_spec.database_dir
            && self.database_hash == other.database_hash
    }

    pub(super) fn context(&self) -> CompilationContext {
        CompilationContext {
            id: self.spec.id.clone(),
            toolset_id: self.spec.toolset_id.clone(),
            build_directory: self.spec.build_directory.to_string(),
            compilation_database: self.spec.compilation_database.to_string(),
        }
    }

    /// Starts a session unless one started after `generation` was seen or the slot is retired.
    pub(super) fn restart(self: &Arc<Self>, generation: u64, processes: &ProcessService) {
        let mut task = self.task.lock();
        let current = self.state.borrow().clone();
        if current.generation != generation || matches!(current.phase, Phase::Retired) {
            return;
        }
        self.state.send_replace(SlotState { generation: generation + 1, phase: Phase::Starting });
        if let Some(old) = task.take() {
            old.abort();
        }
        let slot = self.clone();
        let processes = processes.clone();
        *task = Some(tokio::spawn(async move {
            let phase = match Session::start(&processes, &slot.session_spec).await {
                Ok(session) => Phase::Ready(session),
                Err(err) => {
                    tracing::warn!(context = %slot.spec.id, "clangd did not start: {err}");
                    Phase::Failed(Arc::new(err))
                }
            };
            slot.state.send_modify(|state| {
                if state.generation == generation + 1 {
                    state.phase = phase;
                }
            });
        }));
    }

    /// The running session, starting one again when the last one failed or died. Waits at most
    /// until `deadline`.
    pub(super) async fn session(
        self: &Arc<Self>,
        processes: &ProcessService,
        deadline: Instant,
    ) -> Result<Arc<Session>, Error> {
        let mut state = self.state.subscribe();
        let mut restarted = false;
        loop {
            let SlotState { generation, phase } = state.borrow_and_update().clone();
            match phase {
                Phase::Starting => {
                    if tokio::time::timeout_at(deadline, state.changed()).await.is_err() {
                        return Err(Error::StartTimeout { id: self.spec.id.clone() });
                    }
                }
                Phase::Ready(session) if session.is_alive() => return Ok(session),
                Phase::Idle | Phase::Ready(_) | Phase::Failed(_) if !restarted => {
                    restarted = true;
                    self.restart(generation, processes);
                }
                Phase::Idle | Phase::Retired => {
                    let reason = "the configuration was withdrawn".to_owned();
                    return Err(Error::SessionFailed { id: self.spec.id.clone(), reason });
                }
                Phase::Failed(source) => return Err(Error::StartFailed { id: self.spec.id.clone(), source }),
                Phase::Ready(session) => {
                    let reason = session.client().closed_reason().unwrap_or_else(|| "the process ended".to_owned());
                    return Err(Error::SessionFailed { id: self.spec.id.clone(), reason });
                }
            }
        }
    }

    pub(super) fn ready(&self) -> Option<Arc<Session>> {
        match &self.state.borrow().phase {
            Phase::Ready(session) => Some(session.clone()),
            _ => None,
        }
    }

    /// Stops the start task and hands back the session to shut down, if any.
    pub(super) fn retire(&self) -> Option<Arc<Session>> {
        if let Some(task) = self.task.lock().take() {
            task.abort();
        }
        let generation = self.state.borrow().generation;
        let previous = self.state.send_replace(SlotState { generation, phase: Phase::Retired });
        match previous.phase {
            Phase::Ready(session) => Some(session),
            _ => None,
        }
    }

    pub(super) fn info(&self) -> SessionInfo {
        let (state, session) = match &self.state.borrow().phase {
            Phase::Idle | Phase::Starting => ("starting", None),
            Phase::Ready(session) if session.is_alive() => ("running", Some(session.clone())),
            Phase::Ready(session) => ("stopped", Some(session.clone())),
            Phase::Failed(_) => ("failed", None),
            Phase::Retired => ("stopped", None),
        };
        SessionInfo {
            context_id: self.spec.id.clone(),
            state,
            process_id: session.as_ref().map(|s| s.process_id()),
            pid: session.as_ref().map(|s| s.pid()),
            clangd: self.session_spec.clangd.clone(),
        }
    }
}

/// The selected slots: all for an empty selection; unknown ids are errors, and no slot at all is
/// one that says why (`unavailable`).
pub(super) fn select(
    slots: &[Arc<Slot>],
    selection: &[String],
    unavailable: impl FnOnce() -> Unavailable,
) -> Result<Vec<Arc<Slot>>, Error> {
    if slots.is_empty() {
        return Err(Error::NoConfiguration(unavailable()));
    }
    if selection.is_empty() {
        return Ok(slots.to_vec());
    }
    let mut res: Vec<Arc<Slot>> = Vec::new();
    for id in selection {
        let Some(slot) = slots.iter().find(|slot| slot.spec.id == *id) else {
            let available = slots.iter().map(|slot| slot.spec.id.as_str()).collect::<Vec<_>>().join(", ");
            return Err(Error::UnknownConfiguration { id: id.clone(), available });
        };
        if !res.iter().any(|known| Arc::ptr_eq(known, slot)) {
            res.push(slot.clone());
        }
    }
    Ok(res)
}

/// A slot for `spec`, or why there is none (its toolset has no clangd, its database is missing).
pub(super) async fn candidate(
    inner: &Inner,
    spec: ContextSpec,
    toolsets: Option<&[Arc<Toolset>]>,
) -> Result<Slot, String> {
    let toolset = toolsets
        .and_then(|toolsets| toolsets.iter().find(|toolset| toolset.id().as_str() == spec.toolset_id))
        .ok_or_else(|| format!("its toolset {} was not found", spec.toolset_id))?;
    let Some(clangd) = toolset.tool("clangd") else {
        tracing::info!(context = %spec.id, toolset = %spec.toolset_id, "no clangd session: the toolset has no clangd");
        return Err(format!("its toolset {} has no clangd", spec.toolset_id));
    };
    let missing = || format!("its compilation database {} is missing", spec.compilation_database);
    let database = inner.roots.lexical(&spec.compilation_database).ok_or_else(missing)?;
    let hashed = database.clone();
    let read = tokio::task::spawn_blocking(move || {
        std::fs::read(hashed).ok().map(|bytes| (Sha256::digest(&bytes), Database::parse(&bytes).unwrap_or_default()))
    })
    .await
    .ok()
    .flatten();
    let Some((hash, listed)) = read else {
        tracing::info!(context = %spec.id, "no clangd session: the compilation database is missing");
        return Err(missing());
    };
    let session_spec = SessionSpec {
        context_id: spec.id.clone(),
        clangd: clangd.path.clone(),
        environment: toolset.environment().cloned(),
        database_dir: database.parent().ok_or_else(missing)?.to_path_buf(),
        project: inner.roots.project().to_path_buf(),
    };
    let state = watch::channel(SlotState { generation: 0, phase: Phase::Idle }).0;
    Ok(Slot {
        spec,
        session_spec,
        database_hash: hash.into(),
        database: Arc::new(listed),
        state,
        task: Mutex::new(None),
    })
}

/// Brings the sessions in line with the latest contexts (and re-hashes databases when one was
/// touched or changed on disk). Cheap when nothing changed.
pub(super) async fn sync(inner: &Arc<Inner>) {
    let mut reconciled = inner.reconciled.lock().await;
    let fresh = inner.source.lock().as_mut().and_then(|read| read());
    let changed_on_disk = databases_changed(inner, fresh.as_deref().unwrap_or(&reconciled));
    let dirty = inner.dirty.swap(false, Ordering::SeqCst) || changed_on_disk;
    let Some(specs) = fresh.or_else(|| dirty.then(|| reconciled.clone())) else { return };
    {
        let mut standing = inner.standing.lock();
        let Standing { withdrawn, withdrawn_by, .. } = &mut *standing;
        for gone in reconciled.iter().filter(|old| !specs.iter().any(|spec| spec.id == old.id)) {
            withdrawn.retain(|w| w.id != gone.id);
            withdrawn.push(Withdrawn { id: gone.id.clone(), by: withdrawn_by.get(&gone.id).cloned() });
        }
        withdrawn.retain(|w| !specs.iter().any(|spec| spec.id == w.id));
        withdrawn_by.retain(|id, _| !specs.iter().any(|spec| spec.id == *id));
    }
    *reconciled = specs.clone();
    let toolsets = if specs.is_empty() { None } else { inner.toolchain.toolsets().await.ok() };
    let current = inner.slots.read().clone();
    let mut next: Vec<Arc<Slot>> = Vec::new();
    let mut unusable = Vec::new();
    for spec in specs {
        let id = spec.id.clone();
        let candidate = match candidate(inner, spec, toolsets.as_deref()).await {
            Ok(candidate) => candidate,
            Err(reason) => {
                unusable.push(Unusable { id, reason });
                continue;
            }
        };
        match current.iter().find(|slot| slot.same(&candidate)) {
            Some(kept) => next.push(kept.clone()),
            None => {
                let slot = Arc::new(candidate);
                slot.restart(0, &inner.processes);
                next.push(slot);
            }
        }
    }
    for slot in current.iter() {
        if !next.iter().any(|kept| Arc::ptr_eq(kept, slot))
            && let Some(session) = slot.retire()
        {
            tracing::info!(context = %slot.spec.id, "stopping clangd: its configuration changed or was withdrawn");
            inner.retiring.lock().spawn(async move { session.shutdown().await });
        }
    }
    *inner.slots.write() = next.into();
    inner.standing.lock().unusable = unusable;
}
