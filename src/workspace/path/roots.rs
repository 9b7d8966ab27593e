//! The two managed roots and resolution of qualified paths against them, one component at a time,
//! under a link policy.
//!
//! Architecture invariant: containment is decided component by component (`Path::starts_with`),
//! never by comparing strings; no link is followed where the policy refuses it.

use std::path::{Component, Path, PathBuf};

use super::{Area, QualifiedPath, is_link};

/// How resolution treats symbolic links (and junctions) on the way to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPolicy {
    /// Reads: links are followed, but the final location must stay inside a managed root.
    FollowInsideRoots,
    /// Traversals and mutations: no component, including the last one, may be a link.
    Refuse,
    /// Mutations that never touch the final component's target (delete/move of the entry):
    /// intermediate components may not be links; the final one is reported as it is.
    RefuseIntermediate,
}

/// Why a qualified path cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("`{path}` does not exist")]
    NotFound { path: QualifiedPath },
    #[error("`{path}` passes through the link `{link}`; links are not traversed here")]
    ThroughLink { path: QualifiedPath, link: QualifiedPath },
    #[error("`{path}` is a link whose target leaves the workspace roots; use `root/…` to read an external file")]
    LinkLeavesRoots { path: QualifiedPath },
    #[error(
        "`{path}` is outside the managed roots; `root/` paths are read-only and only allowed here for reading files"
    )]
    External { path: QualifiedPath },
    #[error("failed to inspect `{path}`: {source}")]
    Io {
        path: QualifiedPath,
        #[source]
        source: std::io::Error,
    },
}

/// The two managed roots, as absolute canonical paths.
#[derive(Debug, Clone)]
pub struct Roots {
    project: PathBuf,
    storage: PathBuf,
}

impl Roots {
    /// `project` must be canonical and exist; `storage` must be absolute (it may not exist yet)
    /// and must neither equal nor contain the project root.
    pub fn new(project: PathBuf, storage: PathBuf) -> Roots {
        Roots { project, storage }
    }

    pub fn project(&self) -> &Path {
        &self.project
    }

    pub fn storage(&self) -> &Path {
        &self.storage
    }

    fn area_dir(&self, area: Area) -> Option<&Path> {
        match area {
            Area::Project => Some(&self.project),
            Area::Storage => Some(&self.storage),
            Area::Root => None,
        }
    }

    /// Creates the storage root when it does not exist yet ("created on first use").
    pub fn ensure_storage(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.storage)
    }

    /// The absolute path a managed qualified path names, without touching the file system.
    pub fn lexical(&self, path: &QualifiedPath) -> Option<PathBuf> {
        let mut res = self.area_dir(path.area)?.to_path_buf();
        res.extend(path.components());
        Some(res)
    }

    /// Resolves a managed path component by component under `policy`.
    /// The target itself need not exist (callers decide), but every ancestor that exists is checked.
    pub fn resolve(&self, path: &QualifiedPath, policy: LinkPolicy) -> Result<Resolved, ResolveError> {
        let Some(root) = self.area_dir(path.area) else {
            return Err(ResolveError::External { path: path.clone() });
        };
        if path.area == Area::Storage {
            self.ensure_storage().map_err(|source| ResolveError::Io { path: path.clone(), source })?;
        }
        let names: Vec<&str> = path.components().collect();
        let mut current = root.to_path_buf();
        let mut walked = QualifiedPath::area_root(path.area);
        let mut exists = true;
        let mut follows_link = false;
        for (idx, name) in names.iter().enumerate() {
            current.push(name);
            walked = walked.join_name(name).expect("components were validated at parse time");
            let is_last = idx + 1 == names.len();
            let meta = match std::fs::symlink_metadata(&current) {
                Ok(meta) => meta,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                    exists = false;
                    break;
                }
                Err(source) => return Err(ResolveError::Io { path: walked, source }),
            };
            if !is_link(&meta) {
                continue;
            }
            match policy {
                LinkPolicy::Refuse => {
                    return Err(ResolveError::ThroughLink { path: path.clone(), link: walked });
                }
                LinkPolicy::RefuseIntermediate if !is_last => {
                    return Err(ResolveError::ThroughLink { path: path.clone(), link: walked });
                }
                LinkPolicy::RefuseIntermediate => {}
                LinkPolicy::FollowInsideRoots => {
                    let target = match std::fs::canonicalize(&current) {
                        Ok(target) => target,
                        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                            return Err(ResolveError::NotFound { path: path.clone() });
                        }
                        Err(source) => return Err(ResolveError::Io { path: walked, source }),
                    };
                    if !self.contains(&target) {
                        return Err(ResolveError::LinkLeavesRoots { path: path.clone() });
                    }
                    follows_link = true;
                    current = target;
                }
            }
        }
        if !exists {
            // Keep the lexical path so callers can create the target or report it missing.
            current = self.lexical(path).expect("managed area has a directory");
        }
        Ok(Resolved { path: path.clone(), abs: current, exists, follows_link })
    }

    /// Like `resolve`, but the target must exist.
    pub fn resolve_existing(&self, path: &QualifiedPath, policy: LinkPolicy) -> Result<Resolved, ResolveError> {
        let resolved = self.resolve(path, policy)?;
        if !resolved.exists {
            return Err(ResolveError::NotFound { path: path.clone() });
        }
        Ok(resolved)
    }

    /// True when an absolute canonical path lies inside (or is) one of the managed roots.
    pub fn contains(&self, abs: &Path) -> bool {
        abs.starts_with(&self.project) || abs.starts_with(&self.storage)
    }

    /// Maps an absolute path inside a managed root back to its qualified form.
    /// Storage is checked first because it may lie inside the project's parent, never inside the project.
    pub fn qualify(&self, abs: &Path) -> Option<QualifiedPath> {
        for area in [Area::Storage, Area::Project] {
            let root = self.area_dir(area).expect("managed area");
            if let Ok(rest) = abs.strip_prefix(root) {
                let mut res = QualifiedPath::area_root(area);
                for component in rest.components() {
                    let Component::Normal(name) = component else { return None };
                    res = res.join_name(name.to_str()?)?;
                }
                return Some(res);
            }
        }
        None
    }
}

/// A path checked against its root.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub path: QualifiedPath,
    /// The absolute location: the link target when a link was followed, else the lexical path.
    pub abs: PathBuf,
    pub exists: bool,
    /// True when a link was followed on the way.
    pub follows_link: bool,
}
