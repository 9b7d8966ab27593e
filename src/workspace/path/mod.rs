//! Qualified workspace paths: parsing user input and resolving it against the roots.
//!
//! A `QualifiedPath` is the only path form users see: `project/…`, `storage/…` or `root/<absolute>`.
//! Parsing is pure (here); resolution walks the file system one component at a time (`roots.rs`:
//! `Roots`, `LinkPolicy`, `Resolved`).
//!
//! Architecture invariant: user input is never joined onto a root as a string; every component is
//! checked (no `..`, no empty segment, no separator inside) before it reaches the file system.
//! Architecture invariant: containment is decided component by component (`Path::starts_with`),
//! never by comparing strings.

mod roots;

use std::fmt;
use std::path::{Component, Path, PathBuf};

pub use roots::{LinkPolicy, ResolveError, Resolved, Roots};

/// Which root a qualified path belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Area {
    /// The C/C++ project directory (`project/`).
    Project,
    /// The service storage directory (`storage/`).
    Storage,
    /// Any absolute location outside the managed roots (`root/`), read-only.
    Root,
}

impl Area {
    /// The reserved first segment of paths in this area.
    pub fn prefix(self) -> &'static str {
        match self {
            Area::Project => "project",
            Area::Storage => "storage",
            Area::Root => "root",
        }
    }
}

/// Why a string is not a workspace path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathSyntaxError {
    #[error("the path is empty")]
    Empty,
    #[error("the path contains a NUL character")]
    Nul,
    #[error("backslashes are not path separators here; use `/`")]
    Backslash,
    #[error("absolute paths need the explicit `root/` prefix")]
    Absolute,
    #[error("`..` segments are not allowed")]
    ParentSegment,
    #[error("`.` segments are only allowed as one leading `./`")]
    DotSegment,
    #[error("repeated separators (`//`) are not allowed")]
    RepeatedSeparator,
    #[error("`root/` must be followed by an absolute path")]
    RootNotAbsolute,
    #[error("`{0}` is a reserved device name")]
    ReservedName(String),
}

/// A parsed, canonical workspace path.
///
/// For `Project` and `Storage`, `rel` holds `/`-joined components below the root (empty for the
/// root itself). For `Root`, `rel` holds the absolute native path written with `/` separators and
/// without the leading slash on POSIX (`usr/include/x.h`) or with its drive on Windows (`C:/x.h`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct QualifiedPath {
    area: Area,
    rel: String,
}

impl QualifiedPath {
    /// The root directory of a managed area (`project/` or `storage/`).
    pub fn area_root(area: Area) -> QualifiedPath {
        QualifiedPath { area, rel: String::new() }
    }

    /// Parses tool or resource input. `src/x`, `./src/x` and `./` are project shorthands; one
    /// trailing `/` is accepted.
    pub fn parse(input: &str) -> Result<QualifiedPath, PathSyntaxError> {
        if input.is_empty() {
            return Err(PathSyntaxError::Empty);
        }
        if input.contains('\0') {
            return Err(PathSyntaxError::Nul);
        }
        if input.contains('\\') {
            return Err(PathSyntaxError::Backslash);
        }
        if input.starts_with('/') || looks_like_drive(input) {
            return Err(PathSyntaxError::Absolute);
        }
        if let Some(rest) = input.strip_prefix("./") {
            return Self::managed(Area::Project, rest);
        }
        let (first, rest) = match input.split_once('/') {
            Some((first, rest)) => (first, Some(rest)),
            None => (input, None),
        };
        match (first, rest) {
            ("project", rest) => Self::managed(Area::Project, rest.unwrap_or("")),
            ("storage", rest) => Self::managed(Area::Storage, rest.unwrap_or("")),
            ("root", rest) => Self::external(rest.unwrap_or("")),
            _ => Self::managed(Area::Project, input),
        }
    }

    fn managed(area: Area, rest: &str) -> Result<QualifiedPath, PathSyntaxError> {
        if rest.starts_with('/') {
            return Err(PathSyntaxError::RepeatedSeparator);
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() {
            return Ok(QualifiedPath::area_root(area));
        }
        for segment in rest.split('/') {
            check_segment(segment)?;
        }
        Ok(QualifiedPath { area, rel: rest.to_owned() })
    }

    fn external(rest: &str) -> Result<QualifiedPath, PathSyntaxError> {
        if cfg!(windows) {
            if !looks_like_drive(rest) {
                return Err(PathSyntaxError::RootNotAbsolute);
            }
            let (drive, tail) = rest.split_at(2);
            let tail = tail.strip_prefix('/').unwrap_or(tail);
            for segment in tail.split('/').filter(|_| !tail.is_empty()) {
                check_segment(segment)?;
            }
            return Ok(QualifiedPath { area: Area::Root, rel: format!("{drive}/{tail}") });
        }
        if rest.is_empty() {
            return Err(PathSyntaxError::RootNotAbsolute);
        }
        if rest.starts_with('/') {
            return Err(PathSyntaxError::RepeatedSeparator);
        }
        for segment in rest.split('/') {
            check_segment(segment)?;
        }
        Ok(QualifiedPath { area: Area::Root, rel: rest.to_owned() })
    }

    pub fn area(&self) -> Area {
        self.area
    }

    /// Components below the area root (`[]` for the root itself).
    pub fn components(&self) -> impl Iterator<Item = &str> {
        self.rel.split('/').filter(|s| !s.is_empty())
    }

    /// The path below the area root, `/`-separated; empty for the root.
    pub fn relative(&self) -> &str {
        &self.rel
    }

    pub fn is_area_root(&self) -> bool {
        self.rel.is_empty()
    }

    pub fn is_managed(&self) -> bool {
        self.area != Area::Root
    }

    /// The final component, if any.
    pub fn file_name(&self) -> Option<&str> {
        self.components().last()
    }

    /// The parent path; `None` for an area root.
    pub fn parent(&self) -> Option<QualifiedPath> {
        if self.rel.is_empty() {
            return None;
        }
        let rel = match self.rel.rsplit_once('/') {
            Some((parent, _)) => parent.to_owned(),
            None => String::new(),
        };
        Some(QualifiedPath { area: self.area, rel })
    }

    /// The canonical text (as `Display` writes it), without formatting machinery.
    pub fn into_string(self) -> String {
        let prefix = self.area.prefix();
        let mut res = String::with_capacity(prefix.len() + 1 + self.rel.len());
        res.push_str(prefix);
        res.push('/');
        res.push_str(&self.rel);
        res
    }

    /// Appends one validated file-name component (a name read from the file system).
    /// Returns `None` when the name could not be written as a workspace path.
    pub fn join_name(&self, name: &str) -> Option<QualifiedPath> {
        check_segment(name).ok()?;
        let rel = if self.rel.is_empty() { name.to_owned() } else { format!("{}/{name}", self.rel) };
        Some(QualifiedPath { area: self.area, rel })
    }

    /// Appends a `/`-separated relative path made of names read from the file system.
    pub fn join_relative(&self, relative: &str) -> Option<QualifiedPath> {
        let mut rel = String::with_capacity(self.rel.len() + 1 + relative.len());
        rel.push_str(&self.rel);
        for name in relative.split('/').filter(|s| !s.is_empty()) {
            check_segment(name).ok()?;
            if !rel.is_empty() {
                rel.push('/');
            }
            rel.push_str(name);
        }
        Some(QualifiedPath { area: self.area, rel })
    }

    /// True when `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &QualifiedPath) -> bool {
        self.area == other.area
            && (other.rel.is_empty()
                || self.rel == other.rel
                || self.rel.strip_prefix(other.rel.as_str()).is_some_and(|tail| tail.starts_with('/')))
    }

    /// The absolute native path of a `root/` path.
    pub fn external_path(&self) -> Option<PathBuf> {
        match self.area {
            Area::Root if cfg!(windows) => Some(PathBuf::from(&self.rel)),
            Area::Root => Some(PathBuf::from(format!("/{}", self.rel))),
            _ => None,
        }
    }
}

impl fmt::Display for QualifiedPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.area.prefix(), self.rel)
    }
}

fn looks_like_drive(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && (b.len() == 2 || b[2] == b'/')
}

fn check_segment(segment: &str) -> Result<(), PathSyntaxError> {
    match segment {
        "" => Err(PathSyntaxError::RepeatedSeparator),
        "." => Err(PathSyntaxError::DotSegment),
        ".." => Err(PathSyntaxError::ParentSegment),
        s if s.contains('\0') => Err(PathSyntaxError::Nul),
        s if s.contains('\\') => Err(PathSyntaxError::Backslash),
        s if s.contains('/') => Err(PathSyntaxError::RepeatedSeparator),
        s if cfg!(windows) && is_windows_device_name(s) => Err(PathSyntaxError::ReservedName(s.to_owned())),
        _ => Ok(()),
    }
}

fn is_windows_device_name(segment: &str) -> bool {
    let stem = segment.split('.').next().unwrap_or(segment).trim_end().to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit()
            && stem.as_bytes()[3] != b'0')
}

/// True for symbolic links and, on Windows, junctions and other name-surrogate reparse points.
pub fn is_link(meta: &std::fs::Metadata) -> bool {
    #[cfg(windows)]
    let attributes = std::os::windows::fs::MetadataExt::file_attributes(meta);
    #[cfg(not(windows))]
    let attributes = 0;
    is_link_attributes(meta.file_type().is_symlink(), attributes)
}

/// Windows' `FILE_ATTRIBUTE_REPARSE_POINT`: set on junctions, symbolic links and every other
/// reparse point.
pub const FILE_ATTRIBUTE_REPARSE_POINT: u32 = 0x400;

/// The link rule on Windows metadata (pure, so it is tested where no reparse point can be made,
/// such as under Wine): a symbolic link or any reparse point, junctions included, is a link.
pub fn is_link_attributes(is_symlink: bool, attributes: u32) -> bool {
    is_symlink || attributes & FILE_ATTRIBUTE_REPARSE_POINT != 0
}

/// `path` with `.` dropped and `..` applied lexically, without asking the file system
/// (`/p/tests/../a.c` → `/p/a.c`); a `..` with nothing left to remove stays.
pub fn lexically_normal(path: &Path) -> PathBuf {
    let mut res = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !res.pop() {
                    res.push(component);
                }
            }
            other => res.push(other),
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexically_normal_drops_dots_and_applies_parents() {
        let normal = |p: &str| lexically_normal(Path::new(p));
        assert_eq!(normal("/p/tests/../a.c"), PathBuf::from("/p/a.c"));
        assert_eq!(normal("/p/./src/./b.c"), PathBuf::from("/p/src/b.c"));
        assert_eq!(normal("../x/../y"), PathBuf::from("../y"), "a leading `..` stays");
    }

    #[test]
    fn reparse_points_and_symbolic_links_are_links() {
        const FILE_ATTRIBUTE_DIRECTORY: u32 = 0x10;
        const FILE_ATTRIBUTE_ARCHIVE: u32 = 0x20;
        assert!(is_link_attributes(true, FILE_ATTRIBUTE_ARCHIVE), "a symbolic link to a file");
        assert!(is_link_attributes(false, FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT), "a junction");
        assert!(
            is_link_attributes(false, FILE_ATTRIBUTE_ARCHIVE | FILE_ATTRIBUTE_REPARSE_POINT),
            "a file reparse point"
        );
        assert!(!is_link_attributes(false, FILE_ATTRIBUTE_DIRECTORY), "a plain directory");
        assert!(!is_link_attributes(false, FILE_ATTRIBUTE_ARCHIVE), "a plain file");
    }

    #[track_caller]
    fn ok(input: &str, expected: &str) {
        let parsed = QualifiedPath::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(parsed.to_string(), expected, "input {input:?}");
    }

    #[track_caller]
    fn err(input: &str, expected: PathSyntaxError) {
        assert_eq!(QualifiedPath::parse(input), Err(expected), "input {input:?}");
    }

    #[test]
    fn shorthands_mean_project() {
        ok("src/main.cpp", "project/src/main.cpp");
        ok("./src/main.cpp", "project/src/main.cpp");
        ok("./", "project/");
        ok("main.cpp", "project/main.cpp");
    }

    #[test]
    fn reserved_prefixes_select_areas() {
        ok("project/", "project/");
        ok("project", "project/");
        ok("project/src/x.h", "project/src/x.h");
        ok("storage/", "storage/");
        ok("storage/build/debug", "storage/build/debug");
        ok("./storage/x", "project/storage/x");
        ok("./project/x", "project/project/x");
    }

    #[test]
    fn one_trailing_slash_is_accepted() {
        ok("project/src/", "project/src");
        ok("src/", "project/src");
        err("project/src//", PathSyntaxError::RepeatedSeparator);
    }

    #[test]
    fn invalid_forms_are_rejected() {
        err("", PathSyntaxError::Empty);
        err("/etc/passwd", PathSyntaxError::Absolute);
        err("../x", PathSyntaxError::ParentSegment);
        err("project/a/../b", PathSyntaxError::ParentSegment);
        err("project/a//b", PathSyntaxError::RepeatedSeparator);
        err("a\\b", PathSyntaxError::Backslash);
        err("a\0b", PathSyntaxError::Nul);
        err("project/./a", PathSyntaxError::DotSegment);
        err("././a", PathSyntaxError::DotSegment);
        err(".", PathSyntaxError::DotSegment);
        err("C:/x", PathSyntaxError::Absolute);
        err("project//", PathSyntaxError::RepeatedSeparator);
    }

    #[cfg(unix)]
    #[test]
    fn root_paths_carry_absolute_locations() {
        ok("root/usr/include/x.h", "root/usr/include/x.h");
        let parsed = QualifiedPath::parse("root/usr/include/x.h").unwrap();
        assert_eq!(parsed.external_path(), Some(PathBuf::from("/usr/include/x.h")));
        assert!(!parsed.is_managed());
        err("root/", PathSyntaxError::RootNotAbsolute);
        err("root//usr/x", PathSyntaxError::RepeatedSeparator);
        err("root/usr/../etc", PathSyntaxError::ParentSegment);
    }

    #[test]
    fn parent_and_join_round_trip() {
        let p = QualifiedPath::parse("project/a/b").unwrap();
        assert_eq!(p.parent().unwrap().to_string(), "project/a");
        assert_eq!(p.parent().unwrap().parent().unwrap().to_string(), "project/");
        assert!(p.parent().unwrap().parent().unwrap().parent().is_none());
        assert_eq!(QualifiedPath::area_root(Area::Storage).join_relative("x/y").unwrap().to_string(), "storage/x/y");
        assert!(QualifiedPath::area_root(Area::Project).join_name("..").is_none());
    }

    #[test]
    fn starts_with_is_component_based() {
        let ab = QualifiedPath::parse("project/ab").unwrap();
        let a = QualifiedPath::parse("project/a").unwrap();
        assert!(!ab.starts_with(&a));
        assert!(QualifiedPath::parse("project/a/b").unwrap().starts_with(&a));
        assert!(a.starts_with(&QualifiedPath::area_root(Area::Project)));
        assert!(!a.starts_with(&QualifiedPath::area_root(Area::Storage)));
    }

    #[cfg(unix)]
    #[test]
    fn resolution_checks_links_component_by_component() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("proj");
        let outside = base.join("outside");
        std::fs::create_dir_all(project.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("src/a.cpp"), "int a;").unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(project.join("src"), project.join("inside_link")).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("escape")).unwrap();
        let roots = Roots::new(project.clone(), base.join(".proj.forgemcp"));
        let q = |s: &str| QualifiedPath::parse(s).unwrap();

        let r = roots.resolve_existing(&q("inside_link/a.cpp"), LinkPolicy::FollowInsideRoots).unwrap();
        assert_eq!(r.abs, project.join("src/a.cpp"));
        assert!(r.follows_link);
        assert!(matches!(
            roots.resolve(&q("escape/secret.txt"), LinkPolicy::FollowInsideRoots),
            Err(ResolveError::LinkLeavesRoots { .. })
        ));
        assert!(matches!(
            roots.resolve(&q("inside_link/a.cpp"), LinkPolicy::Refuse),
            Err(ResolveError::ThroughLink { .. })
        ));
        assert!(roots.resolve(&q("inside_link"), LinkPolicy::RefuseIntermediate).is_ok());
        assert!(matches!(
            roots.resolve_existing(&q("src/missing.cpp"), LinkPolicy::Refuse),
            Err(ResolveError::NotFound { .. })
        ));
        assert!(matches!(roots.resolve(&q("root/etc/hosts"), LinkPolicy::Refuse), Err(ResolveError::External { .. })));
        assert_eq!(roots.qualify(&project.join("src/a.cpp")), Some(q("project/src/a.cpp")));
        assert_eq!(roots.qualify(&outside), None);
    }

    #[cfg(unix)]
    #[test]
    fn storage_is_created_on_first_use() {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir(base.join("proj")).unwrap();
        let roots = Roots::new(base.join("proj"), base.join(".proj.forgemcp"));
        assert!(!roots.storage().exists());
        roots.resolve(&QualifiedPath::area_root(Area::Storage), LinkPolicy::Refuse).unwrap();
        assert!(roots.storage().is_dir());
    }
}
