//! Input baselines and invalidation decisions: which workspace mutation makes a configuration's
//! recorded inputs outdated, and why.
//!
//! A baseline holds the SHA-256 of every configuration input inside project/ or storage/ (external
//! inputs are not tracked) and the globs its CMake files run (`globs.rs`). A mutation invalidates
//! it when a tracked input's content now differs from the recorded hash (a real change: an
//! identical rewrite keeps it), or when the mutation is structural (a file or directory appeared,
//! moved or disappeared) where a glob can list it; when a CMake input could not be read, its globs
//! are unknown and any structural change below the directory of a tracked input counts.
//! Structural changes inside build directories are ignored by the glob rule: they are CMake's own
//! output, not sources.
//!
//! Architecture invariant: pure decisions; the caller supplies the current hash of a path.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest as _, Sha256};

use super::globs::Glob;
use crate::workspace::observer::{Mutation, MutationKind};
use crate::workspace::path::QualifiedPath;

/// A SHA-256 digest.
pub type Digest = [u8; 32];

pub fn sha256(bytes: &[u8]) -> Digest {
    Sha256::digest(bytes).into()
}

/// What a structural change is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Globs {
    /// Every glob the configuration's CMake files run.
    Known(Vec<Glob>),
    /// A CMake input could not be read: any structural change below a directory that holds a
    /// tracked input counts.
    Unknown,
}

/// Why a mutation withdrew a configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cause {
    /// The content of a tracked input changed (or it appeared or disappeared).
    Input,
    /// An entry appeared or disappeared where a glob lists the directory `dir`.
    Glob { dir: QualifiedPath },
}

/// The recorded inputs of one configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Baseline {
    /// Tracked inputs and their content hash; `None` records an input that did not exist (preset
    /// files are tracked whether or not they exist).
    pub inputs: BTreeMap<QualifiedPath, Option<Digest>>,
    pub globs: Globs,
}

/// Whether a change adds, moves or removes entries (as opposed to rewriting a file in place).
pub fn is_structural(kind: &MutationKind) -> bool {
    match kind {
        MutationKind::Created | MutationKind::Moved { .. } | MutationKind::Deleted | MutationKind::DirCreated => true,
        MutationKind::Written | MutationKind::Edited => false,
    }
}

/// Every path a mutation touched, before and after, without repetition.
pub fn touched(change: &Mutation) -> BTreeSet<&QualifiedPath> {
    change.before.iter().chain(&change.after).map(|affected| &affected.path).collect()
}

/// Why `change` makes `baseline` outdated, if it does. `current` returns the hash of a tracked
/// input as it is now (`None` when it does not exist or cannot be read); it is only asked about
/// tracked inputs the change touched. `build_dirs` are exempt from the glob rule.
pub fn invalidates(
    baseline: &Baseline,
    change: &Mutation,
    build_dirs: &[QualifiedPath],
    current: &mut dyn FnMut(&QualifiedPath) -> Option<Digest>,
) -> Option<Cause> {
    let touched = touched(change);
    for path in &touched {
        if let Some(recorded) = baseline.inputs.get(*path)
            && current(path) != *recorded
        {
            return Some(Cause::Input);
        }
    }
    if !is_structural(&change.kind) {
        return None;
    }
    let mut candidates = touched.into_iter().filter(|path| !build_dirs.iter().any(|dir| path.starts_with(dir)));
    match &baseline.globs {
        Globs::Known(globs) => candidates.find_map(|path| {
            globs.iter().find(|glob| glob.sees(path)).map(|glob| Cause::Glob { dir: glob.base.clone() })
        }),
        Globs::Unknown => {
            let dirs: BTreeSet<QualifiedPath> = baseline
                .inputs
                .keys()
                .filter_map(QualifiedPath::parent)
                .filter(|dir| !build_dirs.iter().any(|build| dir.starts_with(build)))
                .collect();
            candidates.find_map(|path| {
                dirs.iter().find(|dir| path.starts_with(dir)).map(|dir| Cause::Glob { dir: dir.clone() })
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::observer::{Affected, EntryKind};

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn file(path: &str) -> Affected {
        Affected { path: q(path), kind: EntryKind::File }
    }

    fn change(kind: MutationKind, before: &[&str], after: &[&str]) -> Mutation {
        Mutation {
            kind,
            before: before.iter().map(|p| file(p)).collect(),
            after: after.iter().map(|p| file(p)).collect(),
        }
    }

    fn baseline(globs: Globs) -> Baseline {
        let mut inputs = BTreeMap::new();
        inputs.insert(q("project/CMakeLists.txt"), Some(sha256(b"old")));
        inputs.insert(q("project/cmake/Sources.cmake"), Some(sha256(b"sources")));
        inputs.insert(q("storage/build/cmake-Debug/CMakeFiles/3.25.1/CMakeSystem.cmake"), Some(sha256(b"gen")));
        inputs.insert(q("project/CMakeUserPresets.json"), None);
        Baseline { inputs, globs }
    }

    /// Decides with the "disk" given as (path, content) pairs.
    fn decide(baseline: &Baseline, change: &Mutation, disk: &[(&str, &[u8])]) -> bool {
        let build_dirs = [q("storage/build/cmake-Debug"), q("project/build/ninja-debug")];
        let mut current =
            |path: &QualifiedPath| disk.iter().find(|(p, _)| q(p) == *path).map(|(_, content)| sha256(content));
        invalidates(baseline, change, &build_dirs, &mut current).is_some()
    }

    #[test]
    fn a_real_change_of_an_input_invalidates() {
        let b = baseline(Globs::Known(Vec::new()));
        let edit = change(MutationKind::Edited, &["project/CMakeLists.txt"], &["project/CMakeLists.txt"]);
        assert!(decide(&b, &edit, &[("project/CMakeLists.txt", b"new")]));
    }

    #[test]
    fn an_identical_rewrite_keeps_the_baseline() {
        let b = baseline(Globs::Known(Vec::new()));
        let write = change(MutationKind::Written, &["project/CMakeLists.txt"], &["project/CMakeLists.txt"]);
        assert!(!decide(&b, &write, &[("project/CMakeLists.txt", b"old")]));
    }

    #[test]
    fn ordinary_source_edits_keep_the_baseline() {
        for globs in [Globs::Known(Vec::new()), Globs::Unknown] {
            let b = baseline(globs);
            let edit = change(MutationKind::Edited, &["project/src/math.cpp"], &["project/src/math.cpp"]);
            assert!(!decide(&b, &edit, &[("project/CMakeLists.txt", b"old")]));
        }
    }

    #[test]
    fn moving_or_deleting_an_input_invalidates() {
        let b = baseline(Globs::Known(Vec::new()));
        let moved = change(
            MutationKind::Moved { from: q("project/cmake"), to: q("project/cmake2") },
            &["project/cmake", "project/cmake/Sources.cmake"],
            &["project/cmake2", "project/cmake2/Sources.cmake"],
        );
        assert!(decide(&b, &moved, &[("project/cmake2/Sources.cmake", b"sources")]));
        let deleted =
            change(MutationKind::Deleted, &["storage/build/cmake-Debug/CMakeFiles/3.25.1/CMakeSystem.cmake"], &[]);
        assert!(decide(&b, &deleted, &[]));
    }

    #[test]
    fn creating_a_missing_preset_file_invalidates() {
        let b = baseline(Globs::Known(Vec::new()));
        let created = change(MutationKind::Created, &[], &["project/CMakeUserPresets.json"]);
        assert!(decide(&b, &created, &[("project/CMakeUserPresets.json", b"{}")]));
    }

    #[test]
    fn known_globs_see_structural_changes_they_can_list() {
        let roots = crate::workspace::path::Roots::new("/w/proj".into(), "/w/storage".into());
        let glob = |text: &str, recurse| {
            super::super::globs::Glob::new(&roots, &super::super::globs::Expression { text: text.to_owned(), recurse })
                .unwrap()
        };
        let b = baseline(Globs::Known(vec![glob("/w/proj/src/*.cpp", true), glob("/w/proj/include/fixture/*", false)]));
        let created = |path: &str| change(MutationKind::Created, &[], &[path]);
        assert!(decide(&b, &created("project/src/deep/new.cpp"), &[]));
        assert!(!decide(&b, &created("project/src/deep/notes.md"), &[]));
        assert!(decide(&b, &created("project/include/fixture/new.hpp"), &[]));
        assert!(!decide(&b, &created("project/include/fixture/deep/new.hpp"), &[]));
        assert!(!decide(&b, &created("project/docs/new.md"), &[]));
        // A rewrite of a file a glob lists is no structural change.
        let written = change(MutationKind::Written, &["project/src/a.cpp"], &["project/src/a.cpp"]);
        assert!(!decide(&b, &written, &[]));
        // Removing the base directory itself changes the glob's result; the cause names it.
        let deleted = change(MutationKind::Deleted, &["project/include/fixture"], &[]);
        let mut none = |_: &QualifiedPath| None;
        assert_eq!(invalidates(&b, &deleted, &[], &mut none), Some(Cause::Glob { dir: q("project/include/fixture") }));
    }

    #[test]
    fn unknown_globs_see_structural_changes_near_any_input() {
        let b = baseline(Globs::Unknown);
        let created = |path: &str| change(MutationKind::Created, &[], &[path]);
        // CMakeLists.txt sits in project/, so every structural change in the project counts.
        assert!(decide(&b, &created("project/src/new.cpp"), &[("project/CMakeLists.txt", b"old")]));
        let mkdir = change(MutationKind::DirCreated, &[], &["project/docs"]);
        assert!(decide(&b, &mkdir, &[]));
        // Storage outside the build directories has no inputs.
        assert!(!decide(&b, &created("storage/notes/todo.txt"), &[]));
    }

    #[test]
    fn build_directories_are_exempt_from_the_glob_rule() {
        let b = baseline(Globs::Unknown);
        let created = change(MutationKind::Created, &[], &["project/build/ninja-debug/new.txt"]);
        assert!(!decide(&b, &created, &[]));
        let inside = change(MutationKind::Created, &[], &["storage/build/cmake-Debug/CMakeFiles/3.25.1/extra.txt"]);
        assert!(!decide(&b, &inside, &[]));
    }
}
