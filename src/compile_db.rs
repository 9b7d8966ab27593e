//! One reading of a `compile_commands.json`: the files it lists (absolute, lexically normal, in
//! database order without duplicates), the include directories its commands name (`-I`, `-isystem`,
//! `-iquote`, `-idirafter`) and the CMake target each unit is built for (the `CMakeFiles/<target>.dir/`
//! part of its object path, from `output` or `-o`). clangd (sessions, the includers of a header)
//! and the quality tools (units to check, what counts as C/C++) read databases only through here.
//!
//! Architecture invariant: pure (bytes in, values out); knows nothing of clangd, CMake's services
//! or MCP.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::cpp_file::Evidence;
use crate::workspace::path::lexically_normal;

/// Flags that name an include directory.
const INCLUDE_FLAGS: [&str; 4] = ["-isystem", "-iquote", "-idirafter", "-I"];

/// What a compilation database says.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Database {
    /// Listed files in database order, without duplicates.
    pub files: Vec<PathBuf>,
    /// The same, for lookups.
    pub listed: HashSet<PathBuf>,
    /// Include directories the commands name, in first-seen order.
    pub include_dirs: Vec<PathBuf>,
    /// The CMake target of each unit whose object path names one.
    pub targets: HashMap<PathBuf, String>,
    /// The first command of each unit: its directory and arguments (a `command` string split at
    /// whitespace, its quotes dropped).
    pub commands: HashMap<PathBuf, (PathBuf, Vec<String>)>,
}

#[derive(serde::Deserialize)]
struct Entry {
    directory: PathBuf,
    file: PathBuf,
    #[serde(default)]
    arguments: Vec<String>,
    #[serde(default)]
    command: String,
    #[serde(default)]
    output: Option<String>,
}

/// The target in an object path: `CMakeFiles/pugixml-static.dir/src/pugixml.cpp.o` → `pugixml-static`.
pub fn target_of(object: &str) -> Option<String> {
    let object = object.replace('\\', "/");
    let (_, rest) = object.rsplit_once("CMakeFiles/")?;
    let (dir, _) = rest.split_once('/')?;
    dir.strip_suffix(".dir").filter(|target| !target.is_empty()).map(str::to_owned)
}

impl Database {
    /// Reads a database; an error says why it is not one.
    pub fn parse(bytes: &[u8]) -> Result<Database, String> {
        let entries: Vec<Entry> = serde_json::from_slice(bytes).map_err(|err| err.to_string())?;
        let mut res = Database::default();
        for entry in entries {
            let words: Vec<String> = if entry.arguments.is_empty() {
                entry.command.split_whitespace().map(|word| word.trim_matches(['"', '\'']).to_owned()).collect()
            } else {
                entry.arguments
            };
            let mut output = entry.output;
            let file = lexically_normal(&entry.directory.join(&entry.file));
            res.commands.entry(file.clone()).or_insert_with(|| (entry.directory.clone(), words.clone()));
            let mut words = words.iter();
            while let Some(word) = words.next() {
                if word == "-o" {
                    output = output.or_else(|| words.next().cloned());
                    continue;
                }
                let Some(flag) = INCLUDE_FLAGS.iter().find(|flag| word.starts_with(**flag)) else { continue };
                let dir = match &word[flag.len()..] {
                    "" => words.next().map(String::as_str),
                    attached => Some(attached),
                };
                if let Some(dir) = dir {
                    let dir = lexically_normal(&entry.directory.join(dir));
                    if !res.include_dirs.contains(&dir) {
                        res.include_dirs.push(dir);
                    }
                }
            }
            if let Some(target) = output.as_deref().and_then(target_of) {
                res.targets.entry(file.clone()).or_insert(target);
            }
            if res.listed.insert(file.clone()) {
                res.files.push(file);
            }
        }
        Ok(res)
    }

    /// What this database says of the absolute path `abs` for [`crate::cpp_file::classify`]: listed,
    /// or in one of its include directories.
    pub fn evidence(&self, abs: &Path) -> Option<Evidence> {
        if self.listed.contains(abs) {
            Some(Evidence::CompilationDatabase)
        } else {
            self.include_dirs.iter().any(|dir| abs.starts_with(dir)).then_some(Evidence::IncludeDirectory)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_dirs_and_targets() {
        let json = r#"[
            {"directory": "/w/build", "command": "c++ -I/w/include -isystem /w/ext -o CMakeFiles/lib.dir/src/a.cpp.o -c ../src/a.cpp", "file": "../src/a.cpp"},
            {"directory": "/w/build", "arguments": ["c++", "-I", "../include", "-c", "/w/src/b.cpp"], "file": "/w/src/b.cpp", "output": "tests/CMakeFiles/unit_tests.dir/b.cpp.o"},
            {"directory": "/w/build/x", "command": "c++ -c a.cpp", "file": "/w/src/a.cpp"}
        ]"#;
        let db = Database::parse(json.as_bytes()).unwrap();
        assert_eq!(db.files, [PathBuf::from("/w/src/a.cpp"), PathBuf::from("/w/src/b.cpp")]);
        assert_eq!(db.include_dirs, [PathBuf::from("/w/include"), PathBuf::from("/w/ext")]);
        assert_eq!(db.targets[Path::new("/w/src/a.cpp")], "lib");
        assert_eq!(db.targets[Path::new("/w/src/b.cpp")], "unit_tests");
        let (dir, args) = &db.commands[Path::new("/w/src/b.cpp")];
        assert_eq!((dir.as_path(), args.len()), (Path::new("/w/build"), 5));
        assert_eq!(db.evidence(Path::new("/w/src/b.cpp")), Some(Evidence::CompilationDatabase));
        assert_eq!(db.evidence(Path::new("/w/include/gsl/span")), Some(Evidence::IncludeDirectory));
        assert_eq!(db.evidence(Path::new("/w/README")), None);
        assert!(Database::parse(b"{}").is_err());
        assert_eq!(target_of("a.o"), None);
        assert_eq!(target_of("CMakeFiles\\t.dir\\a.c.obj").as_deref(), Some("t"));
    }
}
