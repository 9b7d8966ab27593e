//! Which entries a search leaves out besides dot-directories: `exclude` globs (a pattern without `/`
//! matches any file or directory name, one with `/` the path relative to the search start, `**`
//! spanning directories) and directories excluded by default (absolute paths, from the server
//! option), unless the search starts inside one.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use ignore::DirEntry;

use super::SearchError;

/// The compiled exclusions of one search.
#[derive(Debug, Clone, Default)]
pub(super) struct Exclusions {
    names: Option<GlobSet>,
    paths: Option<GlobSet>,
    dirs: Vec<PathBuf>,
}

impl Exclusions {
    pub(super) fn new(globs: &[String], dirs: &[PathBuf]) -> Result<Exclusions, SearchError> {
        let (mut names, mut paths) = (GlobSetBuilder::new(), GlobSetBuilder::new());
        let (mut n_names, mut n_paths) = (0, 0);
        for pattern in globs {
            let glob = GlobBuilder::new(pattern.trim_end_matches('/'))
                .literal_separator(true)
                .backslash_escape(true)
                .empty_alternates(true)
                .build()
                .map_err(|err| SearchError::InvalidExclude {
                    pattern: pattern.clone(),
                    reason: err.kind().to_string(),
                })?;
            if pattern.trim_end_matches('/').contains('/') {
                paths.add(glob);
                n_paths += 1;
            } else {
                names.add(glob);
                n_names += 1;
            }
        }
        let build = |builder: GlobSetBuilder, n: usize| (n > 0).then(|| builder.build().ok()).flatten();
        Ok(Exclusions { names: build(names, n_names), paths: build(paths, n_paths), dirs: dirs.to_vec() })
    }

    /// The default-excluded directories that apply to a search of `start`: those not containing it.
    pub(super) fn for_start(mut self, start: &Path) -> Exclusions {
        self.dirs.retain(|dir| !start.starts_with(dir));
        self
    }

    /// Whether the walk of `start` leaves out an entry (never the start itself).
    pub(super) fn leaves_out(&self, start: &Path, entry: &DirEntry) -> bool {
        if entry.depth() == 0 {
            return false;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        relative_path(start, entry.path()).is_some_and(|rel| self.excludes(&rel, entry.path(), is_dir))
    }

    /// Whether nothing is left out.
    pub(super) fn is_empty(&self) -> bool {
        self.names.is_none() && self.paths.is_none() && self.dirs.is_empty()
    }

    /// Whether an entry below the start (`rel_path` `/`-separated, `abs` its path) is left out.
    pub(super) fn excludes(&self, rel_path: &str, abs: &Path, is_dir: bool) -> bool {
        if is_dir && self.dirs.iter().any(|dir| dir == abs) {
            return true;
        }
        let name = rel_path.rsplit_once('/').map_or(rel_path, |(_, name)| name);
        self.names.as_ref().is_some_and(|set| set.is_match(name))
            || self.paths.as_ref().is_some_and(|set| set.is_match(rel_path))
    }
}

/// `path` relative to `start`, `/`-separated; `None` if it is not below `start`.
pub(super) fn relative_path(start: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(start).ok()?;
    let mut res = String::with_capacity(rel.as_os_str().len());
    for component in rel.components() {
        let Component::Normal(name) = component else { return None };
        if !res.is_empty() {
            res.push('/');
        }
        res.push_str(&name.to_string_lossy());
    }
    Some(res)
}
