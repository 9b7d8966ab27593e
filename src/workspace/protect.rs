//! The protected-path registry: paths other services (and the workspace itself, for
//! `project/.git`) declare read-only for the workspace tools.
//!
//! A protected path stays readable. Writes, edits and directory creation are refused at the path and
//! below it; moves and deletions are also refused at its ancestors, because moving or removing an
//! ancestor would move or remove the protected path with it.
//!
//! Architecture invariant: the registry only answers questions about qualified paths; the mutation
//! code also compares file identities while walking, so an alias of a protected path (another
//! spelling on a case-insensitive file system) is refused as well.

use parking_lot::RwLock;

use crate::workspace::path::QualifiedPath;

/// One registration: the path and the service that owns it (named in error messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protection {
    pub path: QualifiedPath,
    /// Who protects the path, as a short noun phrase (`version control`, `CMake`).
    pub owner: &'static str,
}

/// Registered protected paths. Registrations are counted: the same path may be protected by
/// several owners (or twice by one) and stays protected until every registration is removed.
#[derive(Debug, Default)]
pub struct ProtectedPaths {
    entries: RwLock<Vec<Protection>>,
}

impl ProtectedPaths {
    /// Protects `path` on behalf of `owner`.
    pub fn add(&self, path: QualifiedPath, owner: &'static str) {
        self.entries.write().push(Protection { path, owner });
    }

    /// Removes one registration of `path` by `owner`; returns whether one existed.
    pub fn remove(&self, path: &QualifiedPath, owner: &'static str) -> bool {
        let mut entries = self.entries.write();
        match entries.iter().position(|p| &p.path == path && p.owner == owner) {
            Some(idx) => {
                entries.remove(idx);
                true
            }
            None => false,
        }
    }

    /// Every registration, in registration order.
    pub fn list(&self) -> Vec<Protection> {
        self.entries.read().clone()
    }

    /// The protection that forbids changing the contents at `path`: `path` is protected or lies
    /// below a protected path.
    pub fn guarding_contents(&self, path: &QualifiedPath) -> Option<Protection> {
        self.entries.read().iter().find(|p| same_or_below(path, &p.path)).cloned()
    }

    /// The protection that forbids moving or deleting `path`: like `guarding_contents`, and also
    /// when `path` is an ancestor of a protected path.
    pub fn guarding_tree(&self, path: &QualifiedPath) -> Option<Protection> {
        self.entries.read().iter().find(|p| same_or_below(path, &p.path) || same_or_below(&p.path, path)).cloned()
    }
}

/// `path.starts_with(base)`, compared case-insensitively on platforms whose usual file systems
/// ignore case (Windows, macOS), so `project/.GIT` is treated as `project/.git` there.
fn same_or_below(path: &QualifiedPath, base: &QualifiedPath) -> bool {
    if path.starts_with(base) {
        return true;
    }
    if cfg!(any(windows, target_vendor = "apple")) {
        let lower = |p: &QualifiedPath| QualifiedPath::parse(&p.to_string().to_lowercase()).ok();
        if let (Some(path), Some(base)) = (lower(path), lower(base)) {
            return path.starts_with(&base);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> QualifiedPath {
        QualifiedPath::parse(s).unwrap()
    }

    #[test]
    fn contents_are_guarded_at_and_below_the_path() {
        let reg = ProtectedPaths::default();
        reg.add(q("project/.git"), "version control");
        assert_eq!(reg.guarding_contents(&q("project/.git")).unwrap().owner, "version control");
        assert!(reg.guarding_contents(&q("project/.git/config")).is_some());
        assert!(reg.guarding_contents(&q("project/.gitignore")).is_none());
        assert!(reg.guarding_contents(&q("project/")).is_none());
        assert!(reg.guarding_contents(&q("storage/.git")).is_none());
    }

    #[test]
    fn trees_are_guarded_at_ancestors_too() {
        let reg = ProtectedPaths::default();
        reg.add(q("storage/build/debug"), "CMake");
        assert!(reg.guarding_tree(&q("storage/build")).is_some());
        assert!(reg.guarding_tree(&q("storage/")).is_some());
        assert!(reg.guarding_tree(&q("storage/build/debug/x.o")).is_some());
        assert!(reg.guarding_tree(&q("storage/build/release")).is_none());
        assert!(reg.guarding_tree(&q("project/build")).is_none());
    }

    #[test]
    fn registrations_are_counted() {
        let reg = ProtectedPaths::default();
        reg.add(q("project/a"), "one");
        reg.add(q("project/a"), "two");
        assert!(reg.remove(&q("project/a"), "one"));
        assert!(!reg.remove(&q("project/a"), "one"));
        assert_eq!(reg.guarding_contents(&q("project/a")).unwrap().owner, "two");
        assert!(reg.remove(&q("project/a"), "two"));
        assert!(reg.guarding_contents(&q("project/a")).is_none());
        assert!(reg.list().is_empty());
    }
}
