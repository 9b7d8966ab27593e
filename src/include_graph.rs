//! Which translation units of a compilation database include a header, most relevant first: the
//! units whose text has an `#include` naming the header's file, or naming a header beside it, in
//! a database include directory or beside a unit that includes it (zlib's `adler32.c` includes
//! `zlib.h` through `zutil.h`, pugixml's tests `pugixml.hpp` through `tests/test.hpp`), ranked by the same stem (`pugixml.hpp` → `pugixml.cpp`), then the same CMake target
//! as those (the `CMakeFiles/<t>.dir/` of their object paths, else of the units beside the header),
//! then the same directory, then direct includers before indirect ones, then by path. clangd checks
//! a header's edit in these units; `quality_tidy` checks a header within the first.
//!
//! Architecture invariant: reads files (the units and candidate headers) but runs nothing and
//! knows nothing of clangd, CMake's services or MCP; includes are found by name, never by
//! preprocessing (a name matched in a disabled `#if` branch counts).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::compile_db::Database;

/// Headers read to find indirect includers (beside the header and in include directories).
const HEADERS_READ: usize = 2000;
/// Levels of headers that include headers followed.
const INDIRECT_LEVELS: usize = 4;

/// Whether `text` has an `#include` line naming one of `names` as its last path components.
fn includes_any(text: &str, names: &HashSet<String>) -> bool {
    text.lines().any(|line| {
        let Some(rest) = line.trim_start().strip_prefix('#') else { return false };
        let Some(target) = rest.trim_start().strip_prefix("include") else { return false };
        let target = target.trim().trim_start_matches(['<', '"']);
        let Some(target) = target.split(['>', '"']).next() else { return false };
        let last = target.rsplit('/').next().unwrap_or(target);
        names.contains(last)
    })
}

fn file_name(path: &Path) -> Option<String> {
    path.file_name().and_then(|name| name.to_str()).map(str::to_owned)
}

/// The stem of a file name (`pugixml.hpp` → `pugixml`; `span` → `span`).
fn stem(path: &Path) -> Option<&str> {
    path.file_stem().and_then(|stem| stem.to_str())
}

/// Headers that may include the edited one: the files beside it, in the database's include
/// directories and beside its units (not in their subdirectories) that are not translation units.
fn candidate_headers(database: &Database, header: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<&Path> = header.parent().into_iter().collect();
    dirs.extend(database.include_dirs.iter().map(PathBuf::as_path));
    dirs.extend(database.files.iter().filter_map(|unit| unit.parent()));
    let mut known = HashSet::new();
    dirs.retain(|dir| known.insert(*dir));
    let mut res = Vec::new();
    let mut seen = HashSet::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            if res.len() >= HEADERS_READ {
                return res;
            }
            let unit = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                ["c", "cc", "cpp", "cxx", "c++", "cu", "m", "mm"].contains(&e.to_ascii_lowercase().as_str())
            });
            if path != header && !unit && entry.file_type().is_ok_and(|t| t.is_file()) && seen.insert(path.clone()) {
                res.push(path);
            }
        }
    }
    res
}

/// The database's units that include `header` by name, directly or through `headers` (texts of
/// candidate headers), most relevant first.
fn rank_units(
    database: &Database,
    header: &Path,
    texts: &[(PathBuf, String)],
    headers: &[(PathBuf, String)],
) -> Vec<PathBuf> {
    let Some(name) = file_name(header) else { return Vec::new() };
    // Names of headers that include the header, level by level.
    let mut names: HashSet<String> = [name.clone()].into();
    for _ in 0..INDIRECT_LEVELS {
        let more: Vec<String> = headers
            .iter()
            .filter(|(path, text)| file_name(path).is_some_and(|n| !names.contains(&n)) && includes_any(text, &names))
            .filter_map(|(path, _)| file_name(path))
            .collect();
        if more.is_empty() {
            break;
        }
        names.extend(more);
    }
    let direct: HashSet<String> = [name].into();
    let mut found: Vec<(PathBuf, bool)> = texts
        .iter()
        .filter(|(_, text)| includes_any(text, &names))
        .map(|(unit, text)| (unit.clone(), includes_any(text, &direct)))
        .collect();
    let same_stem = |unit: &Path| stem(unit) == stem(header);
    let mut targets: HashSet<&str> = found
        .iter()
        .filter(|(unit, _)| same_stem(unit))
        .filter_map(|(unit, _)| database.targets.get(unit).map(String::as_str))
        .collect();
    if targets.is_empty() {
        targets = found
            .iter()
            .filter(|(unit, _)| unit.parent() == header.parent())
            .filter_map(|(unit, _)| database.targets.get(unit).map(String::as_str))
            .collect();
    }
    let rank = |(unit, direct): &(PathBuf, bool)| {
        let same_target = database.targets.get(unit).is_some_and(|target| targets.contains(target.as_str()));
        (!same_stem(unit), !same_target, unit.parent() != header.parent(), !direct, unit.clone())
    };
    found.sort_by_cached_key(rank);
    found.into_iter().map(|(unit, _)| unit).collect()
}

/// The database's units that include `header`, most relevant first (reads the units and the
/// candidate headers).
pub fn including_units(database: &Database, header: &Path) -> Vec<PathBuf> {
    let read = |paths: Vec<PathBuf>| -> Vec<(PathBuf, String)> {
        paths
            .into_iter()
            .filter_map(|path| {
                std::fs::read(&path).ok().map(|bytes| (path, String::from_utf8_lossy(&bytes).into_owned()))
            })
            .collect()
    };
    let units = read(database.files.clone());
    let headers = read(candidate_headers(database, header));
    rank_units(database, header, &units, &headers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> HashSet<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn include_lines_name_the_file() {
        assert!(includes_any("#include \"pugixml.hpp\"\n", &names(&["pugixml.hpp"])));
        assert!(includes_any("  #  include <gsl/span>\n", &names(&["span"])));
        assert!(!includes_any("#include <gsl/span_ext>\n", &names(&["span"])));
        assert!(!includes_any("// #include <span>\n", &names(&["span"])));
        assert!(!includes_any("#include <myspan>\n", &names(&["span"])));
        assert!(includes_any("#include \"zutil.h\"\n", &names(&["zlib.h", "zutil.h"])));
    }

    #[test]
    fn units_come_most_relevant_first() {
        let dir = tempfile::tempdir().unwrap();
        let (src, tests) = (dir.path().join("src"), dir.path().join("tests"));
        std::fs::create_dir(&src).unwrap();
        std::fs::create_dir(&tests).unwrap();
        let header = src.join("pugixml.hpp");
        std::fs::write(&header, "#pragma once\n").unwrap();
        std::fs::write(src.join("inner.h"), "#include \"pugixml.hpp\"\n").unwrap();
        let write = |path: PathBuf, text: &str| {
            std::fs::write(&path, text).unwrap();
            path
        };
        let units = [
            write(src.join("zz.cpp"), "#include \"pugixml.hpp\"\n"),
            write(src.join("pugixml.cpp"), "#include \"pugixml.hpp\"\n"),
            write(src.join("unrelated.cpp"), "int x;\n"),
            write(src.join("indirect.cpp"), "#include \"inner.h\"\n"),
            write(tests.join("a_test.cpp"), "#include \"../src/pugixml.hpp\"\n"),
            write(tests.join("z_lib.cpp"), "#include <pugixml.hpp>\n"),
        ];
        let target = |unit: &Path, target: &str| (unit.to_path_buf(), target.to_owned());
        let database = Database {
            files: units.to_vec(),
            listed: units.iter().cloned().collect(),
            include_dirs: Vec::new(),
            targets: [target(&units[1], "pugixml"), target(&units[5], "pugixml"), target(&units[4], "tests")].into(),
            ..Database::default()
        };
        let found = including_units(&database, &header);
        assert_eq!(
            found,
            [
                src.join("pugixml.cpp"),
                tests.join("z_lib.cpp"),
                src.join("zz.cpp"),
                src.join("indirect.cpp"),
                tests.join("a_test.cpp")
            ]
        );
    }
}
