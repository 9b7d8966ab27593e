//! Recursive glob search for files (`workspace_find_files`).
//!
//! A pattern without `/` matches the file name; a pattern with `/` matches the whole path relative
//! to the search directory, and `**` spans directories. Matching is case-sensitive on every
//! platform.
//!
//! Architecture invariant: the walk never follows links and never enters a directory whose name
//! starts with `.`; a start path inside such a directory finds nothing.
//! Architecture invariant: only regular files are reported; the server's excluded directories
//! (`--exclude-dir`) below the start are not entered.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use globset::{GlobBuilder, GlobMatcher};
use parking_lot::Mutex;

use crate::call::Call;
use crate::workspace::path::{LinkPolicy, QualifiedPath};
use crate::workspace::tree::is_hidden_name;
use crate::workspace::write::is_temp_name;
use crate::workspace::{Error, WorkspaceService};

/// One file found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    pub path: QualifiedPath,
    pub modified_at: DateTime<Utc>,
    pub size_bytes: u64,
}

/// The files a search found, sorted by path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFiles {
    pub pattern: String,
    pub path: QualifiedPath,
    pub files: Vec<FoundFile>,
}

/// A compiled file-name pattern.
#[derive(Debug, Clone)]
pub struct FilePattern {
    source: String,
    matcher: GlobMatcher,
    whole_path: bool,
}

impl FilePattern {
    /// Compiles a case-sensitive glob; `*` and `?` never match `/`, `**` spans directories.
    pub fn new(pattern: &str) -> Result<FilePattern, Error> {
        if pattern.is_empty() {
            return Err(Error::EmptyPattern);
        }
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .case_insensitive(false)
            .empty_alternates(true)
            .build()
            .map_err(|err| Error::InvalidPattern { pattern: pattern.to_owned(), reason: err.kind().to_string() })?;
        Ok(FilePattern {
            source: pattern.to_owned(),
            matcher: glob.compile_matcher(),
            whole_path: pattern.contains('/'),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Matches a file by its `/`-separated path relative to the search directory.
    pub fn is_match(&self, relative: &str) -> bool {
        if self.whole_path {
            return self.matcher.is_match(relative);
        }
        let name = relative.rsplit_once('/').map_or(relative, |(_, name)| name);
        self.matcher.is_match(name)
    }
}

impl WorkspaceService {
    /// Finds regular files under `path` (or `path` itself when it is a file) that `matcher` accepts.
    /// Unreadable directories and entries are skipped with a warning on stderr, as `find` does.
    ///
    /// Progress: the number of non-directory entries visited, message `Files visited`; no total.
    pub fn find_files(&self, path: &QualifiedPath, matcher: &FilePattern, call: &Call) -> Result<FoundFiles, Error> {
        if !path.is_managed() {
            return Err(Error::ExternalNotAllowed { path: path.clone() });
        }
        let _guard = self.read_lock();
        let resolved = self.resolve_existing(path, LinkPolicy::Refuse)?;
        let meta = std::fs::symlink_metadata(&resolved.abs).map_err(|e| Error::io(path, e))?;
        let mut res = FoundFiles { pattern: matcher.as_str().to_owned(), path: path.clone(), files: Vec::new() };
        call.progress.report(0.0, None, "Files visited");
        if meta.is_file() {
            let parents_hidden = path.parent().is_some_and(|parent| parent.components().any(is_hidden_name));
            let name = path.file_name().unwrap_or_default();
            if !parents_hidden && matcher.is_match(name) {
                res.files.push(found_file(path.clone(), &meta)?);
            }
            call.progress.report(1.0, None, "Files visited");
            return Ok(res);
        }
        if !meta.is_dir() {
            return Err(Error::NotFileOrDirectory { path: path.clone() });
        }
        if path.components().any(is_hidden_name) {
            return Ok(res);
        }
        // The server's excluded directories below the start are left out.
        let excluded: Vec<std::path::PathBuf> =
            self.excluded_dirs().iter().filter(|dir| !resolved.abs.starts_with(dir)).cloned().collect();
        res.files = walk(path, &resolved.abs, matcher, excluded, call)?;
        res.files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        Ok(res)
    }
}

fn found_file(path: QualifiedPath, meta: &std::fs::Metadata) -> Result<FoundFile, Error> {
    let modified = meta.modified().map_err(|e| Error::io(&path, e))?;
    Ok(FoundFile { modified_at: DateTime::<Utc>::from(modified), size_bytes: meta.len(), path })
}

/// Walks `abs` (the directory `start`) in parallel and returns the matching files, unsorted.
fn walk(
    start: &QualifiedPath,
    abs: &Path,
    matcher: &FilePattern,
    excluded: Vec<std::path::PathBuf>,
    call: &Call,
) -> Result<Vec<FoundFile>, Error> {
    let shared = Shared { start, abs, matcher, call, found: Mutex::new(Vec::new()), n_visited: AtomicU64::new(0) };
    let walker = ignore::WalkBuilder::new(abs)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            // The start (depth 0) is never filtered; hidden start paths were handled before.
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            let hidden = entry.file_name().to_str().is_some_and(is_hidden_name);
            !(is_dir && (hidden || excluded.iter().any(|dir| dir == entry.path())))
        })
        .build_parallel();
    walker.visit(&mut CollectorBuilder(&shared));
    if call.is_cancelled() {
        return Err(Error::Cancelled);
    }
    Ok(shared.found.into_inner())
}

/// State shared by the walker threads.
struct Shared<'a> {
    start: &'a QualifiedPath,
    abs: &'a Path,
    matcher: &'a FilePattern,
    call: &'a Call,
    found: Mutex<Vec<FoundFile>>,
    n_visited: AtomicU64,
}

struct CollectorBuilder<'a>(&'a Shared<'a>);

impl<'a> ignore::ParallelVisitorBuilder<'a> for CollectorBuilder<'a> {
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 'a> {
        Box::new(Collector { shared: self.0, local: Vec::new() })
    }
}

/// One walker thread's visitor; it collects matches locally and hands them over in batches (and
/// when its thread finishes), so threads rarely contend for the shared list.
struct Collector<'a> {
    shared: &'a Shared<'a>,
    local: Vec<FoundFile>,
}

const BATCH: usize = 256;

impl ignore::ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        let shared = self.shared;
        if shared.call.is_cancelled() {
            return ignore::WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                tracing::warn!(start = %shared.start, "find-files skips an unreadable entry: {err}");
                return ignore::WalkState::Continue;
            }
        };
        let Some(file_type) = entry.file_type() else { return ignore::WalkState::Continue };
        if file_type.is_dir() {
            return ignore::WalkState::Continue;
        }
        let n_visited = shared.n_visited.fetch_add(1, Ordering::Relaxed) + 1;
        shared.call.progress.report(n_visited as f64, None, "Files visited");
        if !file_type.is_file() {
            return ignore::WalkState::Continue;
        }
        // Name-only patterns are decided before building the relative path.
        let Some(name) = entry.file_name().to_str() else {
            tracing::warn!(path = ?entry.path(), "find-files skips a file whose name is not UTF-8");
            return ignore::WalkState::Continue;
        };
        // The temporary file of an interrupted write is not user content.
        if is_temp_name(name) {
            return ignore::WalkState::Continue;
        }
        if !shared.matcher.whole_path && !shared.matcher.matcher.is_match(name) {
            return ignore::WalkState::Continue;
        }
        let relative = relative_path(shared.abs, entry.path());
        let Some(relative) = relative else {
            tracing::warn!(path = ?entry.path(), "find-files skips a file whose path is not UTF-8");
            return ignore::WalkState::Continue;
        };
        if shared.matcher.whole_path && !shared.matcher.matcher.is_match(&relative) {
            return ignore::WalkState::Continue;
        }
        let Some(path) = shared.start.join_relative(&relative) else {
            tracing::warn!(relative, "find-files skips a file whose name cannot be a workspace path");
            return ignore::WalkState::Continue;
        };
        match entry.metadata() {
            Ok(meta) => match found_file(path, &meta) {
                Ok(file) => self.local.push(file),
                Err(err) => tracing::warn!("find-files skips a file: {err}"),
            },
            Err(err) => tracing::warn!(path = %path, "find-files skips a file whose metadata is unreadable: {err}"),
        }
        if self.local.len() >= BATCH {
            self.shared.found.lock().append(&mut self.local);
        }
        ignore::WalkState::Continue
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        if !self.local.is_empty() {
            self.shared.found.lock().append(&mut self.local);
        }
    }
}

/// The `/`-separated path of `path` below `base`, when every component is UTF-8.
fn relative_path(base: &Path, path: &Path) -> Option<String> {
    let rest = path.strip_prefix(base).ok()?;
    let mut res = String::new();
    for component in rest.components() {
        let std::path::Component::Normal(name) = component else { return None };
        if !res.is_empty() {
            res.push('/');
        }
        res.push_str(name.to_str()?);
    }
    (!res.is_empty()).then_some(res)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::path::Roots;

    #[track_caller]
    fn check(pattern: &str, relative: &str, expected: bool) {
        let matcher = FilePattern::new(pattern).unwrap();
        assert_eq!(matcher.is_match(relative), expected, "{pattern:?} against {relative:?}");
    }

    #[test]
    fn patterns_without_a_slash_match_the_file_name() {
        check("*.cpp", "main.cpp", true);
        check("*.cpp", "src/deep/main.cpp", true);
        check("main.*", "src/main.h", true);
        check("*.cpp", "main.h", false);
        check("*", "a/b/c", true);
    }

    #[test]
    fn patterns_with_a_slash_match_the_whole_relative_path() {
        check("src/*.cpp", "src/main.cpp", true);
        check("src/*.cpp", "src/deep/main.cpp", false);
        check("src/*.cpp", "lib/src/main.cpp", false);
        check("src/**/*.cpp", "src/main.cpp", true);
        check("src/**/*.cpp", "src/a/b/main.cpp", true);
        check("**/main.cpp", "main.cpp", true);
        check("**/main.cpp", "x/y/main.cpp", true);
    }

    #[test]
    fn matching_is_case_sensitive() {
        check("*.CPP", "main.cpp", false);
        check("Main.cpp", "main.cpp", false);
        check("{a,b}.txt", "b.txt", true);
        check("[ab].txt", "a.txt", true);
    }

    #[test]
    fn empty_and_malformed_patterns_are_errors() {
        assert!(matches!(FilePattern::new(""), Err(Error::EmptyPattern)));
        assert!(matches!(FilePattern::new("[a"), Err(Error::InvalidPattern { .. })));
    }

    #[test]
    fn relative_paths_use_forward_slashes() {
        let base = Path::new("/w/proj");
        assert_eq!(relative_path(base, &base.join("a").join("b.txt")).as_deref(), Some("a/b.txt"));
        assert_eq!(relative_path(base, base), None);
    }

    fn service(dir: &Path) -> WorkspaceService {
        let base = std::fs::canonicalize(dir).unwrap();
        std::fs::create_dir_all(base.join("proj")).unwrap();
        WorkspaceService::new(Roots::new(base.join("proj"), base.join(".proj.forgemcp")))
    }

    fn find(ws: &WorkspaceService, path: &str, pattern: &str) -> Vec<String> {
        let pattern = FilePattern::new(pattern).unwrap();
        let found = ws.find_files(&QualifiedPath::parse(path).unwrap(), &pattern, &Call::detached()).unwrap();
        found.files.iter().map(|f| f.path.to_string()).collect()
    }

    #[test]
    fn walk_skips_dot_directories_and_keeps_dot_files() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        for rel in [".git/config", ".clang-format", "build/a.o", "src/main.cpp", "src/.hidden/x.cpp"] {
            let path = ws.roots().project().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        assert_eq!(
            find(&ws, "project/", "*"),
            vec!["project/.clang-format", "project/build/a.o", "project/src/main.cpp"]
        );
        assert_eq!(find(&ws, "project/src", "*.cpp"), vec!["project/src/main.cpp"]);
        assert!(find(&ws, "project/.git", "*").is_empty());
        assert!(find(&ws, "project/src/.hidden/x.cpp", "*").is_empty());
        assert_eq!(find(&ws, "project/src/main.cpp", "*.cpp"), vec!["project/src/main.cpp"]);
        assert!(find(&ws, "project/src/main.cpp", "*.h").is_empty());
    }

    #[test]
    fn cancellation_stops_the_walk() {
        let dir = tempfile::tempdir().unwrap();
        let ws = service(dir.path());
        std::fs::write(ws.roots().project().join("a.txt"), "x").unwrap();
        let call = Call::detached();
        call.cancel.cancel();
        let pattern = FilePattern::new("*").unwrap();
        let res = ws.find_files(&QualifiedPath::area_root(crate::workspace::path::Area::Project), &pattern, &call);
        assert!(matches!(res, Err(Error::Cancelled)));
    }
}
