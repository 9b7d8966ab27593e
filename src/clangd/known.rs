//! What the service knows beyond its sessions: why configurations are missing (withdrawn ones
//! with the path that withdrew them, published ones clangd cannot run in, an earlier session's
//! build directories, a project without CMake), which files count as C/C++ for it, and whether a
//! database changed on disk.

use super::*;

/// Why `path` counts as C/C++ (`cpp_file::classify` with what this service knows: the databases
/// of its sessions and the files clangd named), or `None`.
pub(super) fn cpp_evidence(inner: &Inner, path: &QualifiedPath) -> Option<crate::cpp_file::Evidence> {
    use crate::cpp_file::Evidence;
    let abs = inner.roots.lexical(path);
    crate::cpp_file::classify(path, abs.as_deref(), |abs| {
        let slots = inner.slots.read();
        let said = |wanted: Evidence| slots.iter().any(|slot| slot.database.evidence(abs) == Some(wanted));
        if said(Evidence::CompilationDatabase) {
            Some(Evidence::CompilationDatabase)
        } else if inner.seen.lock().contains(abs) {
            Some(Evidence::IncludedByUnit)
        } else {
            said(Evidence::IncludeDirectory).then_some(Evidence::IncludeDirectory)
        }
    })
}

/// What is known of configurations that are not usable now.
#[derive(Default)]
pub(super) struct Standing {
    pub(super) withdrawn: Vec<Withdrawn>,
    /// The path whose write or edit withdrew a context, by context id.
    pub(super) withdrawn_by: std::collections::HashMap<String, String>,
    pub(super) unusable: Vec<Unusable>,
}

/// Why no configuration (or not every one) answers now.
pub(super) fn unavailable(inner: &Inner) -> Unavailable {
    let standing = inner.standing.lock();
    let earlier = inner.earlier.read().as_ref().map(|source| source()).unwrap_or_default();
    let project = inner.roots.project();
    let no_cmake = (!project.join("CMakeLists.txt").is_file()).then(|| {
        ["Makefile", "GNUmakefile", "makefile", "meson.build", "configure.ac", "configure", "build.ninja"]
            .iter()
            .filter(|name| project.join(name).is_file())
            .map(|name| (*name).to_owned())
            .collect()
    });
    Unavailable { withdrawn: standing.withdrawn.clone(), unusable: standing.unusable.clone(), earlier, no_cmake }
}

/// Whether a database of the reconciled contexts changed on disk since the last reconciliation (a
/// build tool or `bear` may write it without going through the workspace).
pub(super) fn databases_changed(inner: &Inner, specs: &[ContextSpec]) -> bool {
    let now: Vec<Stamp> = specs
        .iter()
        .map(|spec| {
            let meta = std::fs::metadata(inner.roots.lexical(&spec.compilation_database)?).ok()?;
            Some((meta.modified().ok()?, meta.len()))
        })
        .collect();
    let mut stamps = inner.stamps.lock();
    let changed = *stamps != now;
    *stamps = now;
    changed
}

/// Records that a write or edit of `path` withdrew the contexts `ids`, so later answers name it.
pub(super) fn record_withdrawals(inner: &Inner, ids: &[String], path: &QualifiedPath) {
    let mut standing = inner.standing.lock();
    for id in ids {
        standing.withdrawn_by.insert(id.clone(), path.to_string());
        for withdrawn in standing.withdrawn.iter_mut().filter(|w| w.id == *id) {
            withdrawn.by = Some(path.to_string());
        }
    }
}
