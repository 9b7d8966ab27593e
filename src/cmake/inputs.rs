//! Input baselines and invalidation decisions: which workspace mutation makes a configuration's
//! recorded inputs outdated.
//!
//! A baseline holds the SHA-256 of every configuration input inside project/ or storage/ (external
//! inputs are not tracked) and what is known about `CONFIGURE_DEPENDS` globs. A mutation
//! invalidates it when a tracked input's content now differs from the recorded hash (a real change:
//! an identical rewrite keeps it), or when the mutation is structural (a file or directory appeared,
//! moved or disappeared) where a glob could see it: below a glob's literal base directory, or — for
//! replies that do not describe their globs (`cmakeFiles` 1.0) — below the directory of any tracked
//! input. Structural changes inside build directories are ignored by the glob rule: they are CMake's
//! own output, not sources.
//!
//! Architecture invariant: pure decisions; the caller supplies the current hash of a path.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest as _, Sha256};

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
    /// The reply lists the globs: the literal base directory of each, and whether it recurses.
    Known(Vec<GlobBase>),
    /// The reply does not say (`cmakeFiles` 1.0): any structural change below a directory that holds
    /// a tracked input counts.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobBase {
    pub dir: QualifiedPath,
    pub recurse: bool,
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

/// Whether `change` makes `baseline` outdated. `current` returns the hash of a tracked input as it
/// is now (`None` when it does not exist or cannot be read); it is only asked about tracked inputs
/// the change touched. `build_dirs` are exempt from the glob rule.
pub fn invalidates(
    baseline: &Baseline,
    change: &Mutation,
    build_dirs: &[QualifiedPath],
    current: &mut dyn FnMut(&QualifiedPath) -> Option<Digest>,
) -> bool {
    let touched = touched(change);
    for path in &touched {
        if let Some(recorded) = baseline.inputs.get(*path)
            && current(path) != *recorded
        {
            return true;
        }
    }
    if !is_structural(&change.kind) {
        return false;
    }
    let candidates = touched.into_iter().filter(|path| !build_dirs.iter().any(|dir| path.starts_with(dir)));
    match &baseline.globs {
        Globs::Known(globs) => candidates.into_iter().any(|path| globs.iter().any(|glob| glob_sees(glob, path))),
        Globs::Unknown => {
            let dirs: BTreeSet<QualifiedPath> = baseline
                .inputs
                .keys()
                .filter_map(QualifiedPath::parent)
                .filter(|dir| !build_dirs.iter().any(|build| dir.starts_with(build)))
                .collect();
            candidates.into_iter().any(|path| dirs.iter().any(|dir| path.starts_with(dir)))
        }
    }
}

/// Whether an entry appearing or disappearing at `path` can change what `glob` lists.
fn glob_sees(glob: &GlobBase, path: &QualifiedPath) -> bool {
    if glob.recurse {
        return path.starts_with(&glob.dir);
    }
    *path == glob.dir || path.parent().as_ref() == Some(&glob.dir)
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
        invalidates(baseline, change, &build_dirs, &mut current)
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
    fn known_globs_see_structural_changes_below_their_base() {
        let globs = Globs::Known(vec![
            GlobBase { dir: q("project/src"), recurse: true },
            GlobBase { dir: q("project/include/fixture"), recurse: false },
        ]);
        let b = baseline(globs);
        let created = |path: &str| change(MutationKind::Created, &[], &[path]);
        assert!(decide(&b, &created("project/src/deep/new.cpp"), &[]));
        assert!(decide(&b, &created("project/include/fixture/new.hpp"), &[]));
        assert!(!decide(&b, &created("project/include/fixture/deep/new.hpp"), &[]));
        assert!(!decide(&b, &created("project/docs/new.md"), &[]));
        // A rewrite of a file a glob lists is no structural change.
        let written = change(MutationKind::Written, &["project/src/a.cpp"], &["project/src/a.cpp"]);
        assert!(!decide(&b, &written, &[]));
        // Removing the base directory itself changes the glob's result.
        let deleted = change(MutationKind::Deleted, &["project/include/fixture"], &[]);
        assert!(decide(&b, &deleted, &[]));
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
