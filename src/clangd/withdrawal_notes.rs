//! clangd's path notes: a move, deletion or revert that withdrew configurations says so in its
//! result text, in the words of a write's note (writes and edits say it in clangd's own note), and
//! later answers name the path that withdrew them.
//!
//! Architecture invariant: the withdrawal of a change is taken for every path the change touched,
//! so none is left to be misattributed to a later change of the same path.

use std::sync::Weak;

use super::{Inner, NoteRenderer, known};
use crate::clangd::model::MutationAnalysis;
use crate::workspace::journal::revert::RevertedPath;
use crate::workspace::path::QualifiedPath;
use crate::workspace::path_notes::{PathChange, PathNotes};

pub(super) struct WithdrawalNotes {
    pub(super) inner: Weak<Inner>,
    pub(super) note: NoteRenderer,
}

impl PathNotes for WithdrawalNotes {
    fn notes(&self, change: PathChange<'_>) -> Vec<String> {
        let paths: Vec<&QualifiedPath> = match change {
            // A write's own clangd note says it.
            PathChange::Created(_) => return Vec::new(),
            PathChange::Moved { from, to } => vec![from, to],
            PathChange::Deleted(path) => vec![path],
            PathChange::Reverted(paths) => paths.iter().map(|p: &RevertedPath| &p.path).collect(),
        };
        let Some(inner) = self.inner.upgrade() else { return Vec::new() };
        let taken: Vec<_> = {
            let source = inner.withdrawals.read();
            let Some(source) = source.as_ref() else { return Vec::new() };
            paths.iter().map(|path| (*path, source(path))).collect()
        };
        let Some((_, (ids, glob))) = taken.iter().find(|(_, (ids, _))| !ids.is_empty()) else { return Vec::new() };
        let by = culprit(&paths, glob.as_ref());
        known::record_withdrawals(&inner, ids, by);
        let analysis = MutationAnalysis {
            withdrawn: ids.clone(),
            withdrawn_glob: glob.as_ref().map(ToString::to_string),
            ..MutationAnalysis::default()
        };
        (self.note)(&by.to_string(), &analysis).into_iter().collect()
    }
}

/// The path to name among those one change touched: one under the globbed directory, else a CMake
/// file, else the first.
fn culprit<'a>(paths: &[&'a QualifiedPath], glob_dir: Option<&QualifiedPath>) -> &'a QualifiedPath {
    let globbed = |path: &QualifiedPath| glob_dir.is_some_and(|dir| path.starts_with(dir));
    let cmake_file = |path: &QualifiedPath| {
        let name = path.file_name().unwrap_or_default();
        name == "CMakeLists.txt" || name.ends_with(".cmake") || name.ends_with("Presets.json")
    };
    paths
        .iter()
        .find(|path| globbed(path))
        .or_else(|| paths.iter().find(|path| cmake_file(path)))
        .or(paths.first())
        .copied()
        .expect("a change touches at least one path")
}
