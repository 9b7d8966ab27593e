//! The System toolset: every built-in tool found on `PATH` (with `PATHEXT` suffixes on Windows).
//!
//! The scan is a pure function of the `PATH` and `PATHEXT` values it is given plus the file system;
//! `config` reads the variables, so tests hand in a temporary `PATH`.
//!
//! Architecture invariant: Windows-only tools are never located on other platforms (POSIX `link`
//! is not a linker); relative `PATH` entries are skipped (they would depend on the server's current
//! directory); links are not resolved.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::spec::{self, BUILTIN_TOOLS};
use super::toolset::Tool;

/// `PATHEXT` when the variable is missing (Windows' own default).
const DEFAULT_PATHEXT: &str = ".COM;.EXE;.BAT;.CMD";

/// Locates every supported built-in tool on `path`. For each tool, its executable names are tried in
/// order of preference, each in `PATH` order; the first executable file wins.
pub fn scan(path: Option<&OsStr>, pathext: Option<&OsStr>) -> Vec<Tool> {
    let dirs: Vec<PathBuf> = match path {
        Some(path) => std::env::split_paths(path).filter(|dir| dir.is_absolute()).collect(),
        None => Vec::new(),
    };
    let suffixes = suffixes(pathext);
    let mut res = Vec::new();
    for spec in BUILTIN_TOOLS.iter().filter(|spec| spec.is_supported_here()) {
        let found =
            spec::executables(spec).iter().find_map(|exe| dirs.iter().find_map(|dir| find_in(dir, exe, &suffixes)));
        let found = found.or_else(|| if spec.versioned { find_versioned(&dirs, spec.name, &suffixes) } else { None });
        if let Some(path) = found {
            res.push(Tool { spec, path });
        }
    }
    res
}

/// File-name suffixes to try: `PATHEXT` entries on Windows, none elsewhere.
fn suffixes(pathext: Option<&OsStr>) -> Vec<OsString> {
    if !cfg!(windows) {
        return vec![OsString::new()];
    }
    let list = pathext.and_then(OsStr::to_str).filter(|list| !list.trim().is_empty()).unwrap_or(DEFAULT_PATHEXT);
    list.split(';').map(str::trim).filter(|ext| ext.starts_with('.') && ext.len() > 1).map(OsString::from).collect()
}

fn find_in(dir: &Path, exe: &str, suffixes: &[OsString]) -> Option<PathBuf> {
    suffixes.iter().find_map(|suffix| {
        let mut name = OsString::from(exe);
        name.push(suffix);
        let candidate = dir.join(name);
        is_executable_file(&candidate).then_some(candidate)
    })
}

/// The executable `<name>-<major>` with the highest major version in any of `dirs` (earlier
/// directories win a tie), for tools distributions install under versioned names only.
fn find_versioned(dirs: &[PathBuf], name: &str, suffixes: &[OsString]) -> Option<PathBuf> {
    let prefix = format!("{name}-");
    let mut best: Option<(u32, PathBuf)> = None;
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut majors: Vec<u32> = entries
            .filter_map(|entry| {
                let file_name = entry.ok()?.file_name();
                let stem = strip_suffix(file_name.to_str()?, suffixes)?;
                let major = stem.strip_prefix(&prefix)?;
                if major.is_empty() || !major.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                major.parse().ok()
            })
            .collect();
        majors.sort_unstable_by(|a, b| b.cmp(a));
        for major in majors {
            if best.as_ref().is_some_and(|(known, _)| *known >= major) {
                break;
            }
            if let Some(path) = find_in(dir, &format!("{prefix}{major}"), suffixes) {
                best = Some((major, path));
                break;
            }
        }
    }
    best.map(|(_, path)| path)
}

/// `file_name` without one of `suffixes` (matched case-insensitively, as Windows does).
fn strip_suffix<'a>(file_name: &'a str, suffixes: &[OsString]) -> Option<&'a str> {
    suffixes.iter().filter_map(|suffix| suffix.to_str()).find_map(|suffix| {
        let split = file_name.len().checked_sub(suffix.len())?;
        let (stem, tail) = (file_name.get(..split)?, file_name.get(split..)?);
        tail.eq_ignore_ascii_case(suffix).then_some(stem)
    })
}

#[cfg(unix)]
fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    struct Dirs {
        _tmp: tempfile::TempDir,
        root: PathBuf,
    }

    impl Dirs {
        fn new() -> Dirs {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path().to_path_buf();
            Dirs { _tmp: tmp, root }
        }

        /// An executable `dir/name` (`.exe` added on Windows).
        fn tool(&self, dir: &str, name: &str) -> PathBuf {
            let path = self.root.join(dir).join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "#!/bin/sh\n").unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt as _;
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            }
            path
        }

        fn path(&self, dirs: &[&str]) -> OsString {
            std::env::join_paths(dirs.iter().map(|dir| self.root.join(dir))).unwrap()
        }
    }

    fn names(tools: &[Tool]) -> Vec<&'static str> {
        tools.iter().map(Tool::name).collect()
    }

    #[test]
    fn finds_tools_in_path_order() {
        let dirs = Dirs::new();
        let first = dirs.tool("a", "cmake");
        dirs.tool("b", "cmake");
        let ninja = dirs.tool("b", "ninja");
        let tools = scan(Some(&dirs.path(&["a", "b"])), None);
        assert_eq!(names(&tools), ["cmake", "ninja"]);
        assert_eq!(tools[0].path, first);
        assert_eq!(tools[1].path, ninja);
    }

    #[test]
    fn empty_or_missing_path_finds_nothing() {
        assert!(scan(None, None).is_empty());
        assert!(scan(Some(OsStr::new("")), None).is_empty());
        let dirs = Dirs::new();
        assert!(scan(Some(&dirs.path(&["missing"])), None).is_empty());
    }

    #[test]
    fn relative_entries_are_skipped() {
        let dirs = Dirs::new();
        dirs.tool("rel", "cmake");
        let path = std::env::join_paths([PathBuf::from("rel"), PathBuf::from(".")]).unwrap();
        assert!(scan(Some(&path), None).is_empty());
    }

    #[test]
    fn preferred_executable_names_win_over_path_order() {
        let dirs = Dirs::new();
        dirs.tool("a", "lld");
        let preferred = dirs.tool("b", "ld.lld");
        let tools = scan(Some(&dirs.path(&["a", "b"])), None);
        assert_eq!(names(&tools), ["lld"]);
        assert_eq!(tools[0].path, preferred);
    }

    #[test]
    fn versioned_names_are_found_when_the_plain_name_is_missing() {
        let dirs = Dirs::new();
        dirs.tool("a", "clang-tidy-14");
        let newest = dirs.tool("b", "clang-tidy-17");
        dirs.tool("b", "clang-tidy-diff-17");
        dirs.tool("a", "clang-format-x");
        dirs.tool("a", "clangd-18");
        let tools = scan(Some(&dirs.path(&["a", "b"])), None);
        assert_eq!(names(&tools), ["clang-tidy"]);
        assert_eq!(tools[0].path, newest);
        // The plain name wins over any versioned one.
        let plain = dirs.tool("b", "clang-tidy");
        let tools = scan(Some(&dirs.path(&["a", "b"])), None);
        assert_eq!(tools[0].path, plain);
    }

    #[test]
    fn directories_are_not_tools() {
        let dirs = Dirs::new();
        fs::create_dir_all(dirs.root.join("a").join(format!("git{}", std::env::consts::EXE_SUFFIX))).unwrap();
        assert!(scan(Some(&dirs.path(&["a"])), None).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn files_without_execute_permission_are_not_tools() {
        let dirs = Dirs::new();
        fs::create_dir_all(dirs.root.join("a")).unwrap();
        fs::write(dirs.root.join("a/gcc"), "").unwrap();
        assert!(scan(Some(&dirs.path(&["a"])), None).is_empty());
    }

    #[cfg(not(windows))]
    #[test]
    fn windows_only_tools_are_never_located_elsewhere() {
        let dirs = Dirs::new();
        for name in ["link", "cl", "msbuild", "OpenDebugAD7", "vsdbg", "clang-cl"] {
            dirs.tool("bin", name);
        }
        let tools = scan(Some(&dirs.path(&["bin"])), None);
        assert_eq!(names(&tools), ["clang-cl"]);
    }

    #[cfg(windows)]
    #[test]
    fn pathext_suffixes_are_tried_in_order() {
        let dirs = Dirs::new();
        fs::create_dir_all(dirs.root.join("a")).unwrap();
        fs::write(dirs.root.join("a/cmake.bat"), "").unwrap();
        fs::write(dirs.root.join("a/cmake.cmd"), "").unwrap();
        fs::write(dirs.root.join("a/ninja"), "").unwrap();
        let tools = scan(Some(&dirs.path(&["a"])), Some(OsStr::new(".CMD;.BAT")));
        assert_eq!(names(&tools), ["cmake"]);
        assert_eq!(tools[0].path, dirs.root.join("a/cmake.CMD"));
    }

    #[test]
    fn suffixes_follow_the_platform() {
        let default = suffixes(None);
        if cfg!(windows) {
            assert_eq!(default, [".COM", ".EXE", ".BAT", ".CMD"].map(OsString::from));
            assert_eq!(suffixes(Some(OsStr::new(".exe; ;x;.cmd"))), [".exe", ".cmd"].map(OsString::from));
        } else {
            assert_eq!(default, [OsString::new()]);
            assert_eq!(suffixes(Some(OsStr::new(".EXE"))), [OsString::new()]);
        }
    }
}
