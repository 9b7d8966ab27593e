//! What counts as a C/C++ file: the one place clangd, the quality tools and the workspace notes
//! ask. A file is C/C++ when its extension says so (`.cpp`, `.h`, …), or its first lines carry an
//! Emacs mode line naming C or C++ (`// -*- C++ -*-`, as GSL's `include/gsl/span` does), or a
//! compilation database lists it, or clangd named it while analysing a translation unit that
//! includes it, or it has no extension, lies in an include directory a database names and starts
//! like C/C++ (GSL's `include/gsl/narrow`). Databases and clangd's includes are knowledge only
//! their owners have; they pass it in as a closure.
//!
//! Architecture invariant: pure apart from reading the first bytes of a file without an extension;
//! knows nothing of clangd, CMake or MCP. Every service that decides C/C++-ness calls [`classify`]
//! (or [`by_name`] where the file's content cannot matter).

use std::io::Read as _;
use std::path::Path;

use crate::workspace::path::QualifiedPath;

/// C/C++ extensions: the annotated ones of INTERFACE.md §8.3, then those the explicit tools
/// always accepted.
const EXTENSIONS: &[&str] = &[
    "c", "h", "cc", "hh", "cpp", "hpp", "cxx", "hxx", "c++", "h++", "ipp", "tpp", "inl", "inc", "cppm", "ixx", "cu",
    "cuh", "m", "mm",
];
/// Extensions of translation units: such a file belongs in a compilation database, unlike a header.
const UNIT_EXTENSIONS: &[&str] = &["c", "cc", "cpp", "cxx", "c++", "cu", "m", "mm"];
/// How much of a file without an extension is read to find its mode line.
const HEAD_BYTES: usize = 512;
/// The mode line must be among the first lines.
const HEAD_LINES: usize = 3;

/// Why a file counts as C/C++.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Its extension is a C/C++ one.
    Extension,
    /// It has no extension and its first lines say `-*- C++ -*-` (or C, or `mode: c++`).
    ModeLine,
    /// A compilation database lists it.
    CompilationDatabase,
    /// clangd named it while analysing a translation unit that includes it.
    IncludedByUnit,
    /// It has no extension, lies in an include directory a compilation database names, and its
    /// first lines read as C/C++ (a comment, a preprocessor line, a namespace): GSL's
    /// `include/gsl/narrow`. Callers offer it; [`classify`] checks the rest.
    IncludeDirectory,
}

/// The file name's extension, lowercased (`None` for `.hidden` and names without a dot).
pub fn extension(path: &QualifiedPath) -> Option<String> {
    let name = path.file_name()?;
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Whether the extension says C/C++ (a header or a source).
pub fn by_name(path: &QualifiedPath) -> bool {
    extension(path).is_some_and(|ext| EXTENSIONS.contains(&ext.as_str()))
}

/// Whether the extension is one of a translation unit (`.c .cc .cpp .cxx .c++ .cu .m .mm`).
pub fn is_translation_unit(path: &QualifiedPath) -> bool {
    extension(path).is_some_and(|ext| UNIT_EXTENSIONS.contains(&ext.as_str()))
}

/// Whether `head` (a file's first bytes) starts with an Emacs mode line naming C or C++ within its
/// first lines: `// -*- C++ -*-`, `/* -*- mode: c++; … -*- */`, `// -*- C -*-`.
pub fn mode_line_says_cpp(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.lines().take(HEAD_LINES).any(|line| {
        let Some((_, rest)) = line.split_once("-*-") else { return false };
        let Some((inside, _)) = rest.split_once("-*-") else { return false };
        inside.split(';').any(|part| {
            let value = part.trim();
            let value = value.strip_prefix("mode:").or_else(|| value.strip_prefix("Mode:")).unwrap_or(value).trim();
            ["c++", "c"].contains(&value.to_ascii_lowercase().as_str())
        })
    })
}

/// Whether `head` (a file's first bytes) starts like C/C++ source: its first line that is not blank
/// is a comment, a preprocessor line or a namespace.
pub fn reads_as_cpp(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let Some(first) = text.lines().map(str::trim).find(|line| !line.is_empty()) else { return false };
    ["//", "/*", "#", "namespace ", "template"].iter().any(|start| first.starts_with(start))
}

/// The first bytes of the file at `abs` (none when unreadable).
fn head(abs: &Path) -> Vec<u8> {
    let mut head = Vec::with_capacity(HEAD_BYTES);
    if let Ok(file) = std::fs::File::open(abs) {
        let _ = file.take(HEAD_BYTES as u64).read_to_end(&mut head);
    }
    head
}

/// Why `path` counts as C/C++, or `None`. `abs` is where the file is (its first bytes are read only
/// when the name has no extension); `known` adds what a caller knows of the absolute path
/// (compilation databases, clangd's includes).
pub fn classify(
    path: &QualifiedPath,
    abs: Option<&Path>,
    known: impl Fn(&Path) -> Option<Evidence>,
) -> Option<Evidence> {
    if by_name(path) {
        return Some(Evidence::Extension);
    }
    let abs = abs?;
    let bare = extension(path).is_none();
    match known(abs) {
        Some(Evidence::IncludeDirectory) => {
            let head = head(abs);
            if !bare {
                None
            } else if mode_line_says_cpp(&head) {
                Some(Evidence::ModeLine)
            } else {
                reads_as_cpp(&head).then_some(Evidence::IncludeDirectory)
            }
        }
        Some(evidence) => Some(evidence),
        None => (bare && mode_line_says_cpp(&head(abs))).then_some(Evidence::ModeLine),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    #[test]
    fn extensions_decide_first() {
        assert!(by_name(&p("project/src/a.cpp")));
        assert!(by_name(&p("project/include/A.HPP")));
        assert!(by_name(&p("project/x.inl")));
        assert!(!by_name(&p("project/.cpp")));
        assert!(!by_name(&p("project/README.md")));
        assert!(!by_name(&p("project/include/gsl/span")));
        assert!(is_translation_unit(&p("project/a.cc")));
        assert!(!is_translation_unit(&p("project/a.h")));
        assert_eq!(classify(&p("project/a.h"), None, |_| None), Some(Evidence::Extension));
    }

    #[test]
    fn mode_lines_name_c_or_cpp() {
        assert!(mode_line_says_cpp(b"// -*- C++ -*-\n///////\n"));
        assert!(mode_line_says_cpp(b"/* -*- mode: c++; indent-tabs-mode: nil -*- */\n"));
        assert!(mode_line_says_cpp(b"#pragma once\n// -*- C -*-\n"));
        assert!(!mode_line_says_cpp(b"# -*- python -*-\n"));
        assert!(!mode_line_says_cpp(b"a\nb\nc\n// -*- C++ -*-\n"), "only the first lines");
        assert!(!mode_line_says_cpp(b"// C++ header\n"));
    }

    #[test]
    fn files_without_extension_are_read_or_known() {
        let dir = tempfile::tempdir().unwrap();
        let span = dir.path().join("span");
        std::fs::write(&span, "// -*- C++ -*-\n#pragma once\n").unwrap();
        let license = dir.path().join("LICENSE");
        std::fs::write(&license, "MIT\n").unwrap();
        assert_eq!(classify(&p("project/include/gsl/span"), Some(&span), |_| None), Some(Evidence::ModeLine));
        assert_eq!(classify(&p("project/LICENSE"), Some(&license), |_| None), None);
        let listed = |abs: &Path| (abs == license).then_some(Evidence::CompilationDatabase);
        assert_eq!(classify(&p("project/LICENSE"), Some(&license), listed), Some(Evidence::CompilationDatabase));
        // In an include directory, a file without extension counts when it reads as C/C++.
        let narrow = dir.path().join("narrow");
        std::fs::write(&narrow, "////////\n// Copyright\n#pragma once\n").unwrap();
        let included = |_: &Path| Some(Evidence::IncludeDirectory);
        assert_eq!(
            classify(&p("project/include/gsl/narrow"), Some(&narrow), included),
            Some(Evidence::IncludeDirectory)
        );
        assert_eq!(classify(&p("project/include/gsl/LICENSE"), Some(&license), included), None);
        assert_eq!(classify(&p("project/include/notes.md"), Some(&narrow), included), None);
        assert!(reads_as_cpp(b"\n#ifndef GSL_NARROW_H\n"));
        assert!(!reads_as_cpp(b"Headers of the library.\n"));
        assert_eq!(classify(&p("project/notes.md"), Some(&span), |_| None), None, "other extensions are not read");
    }
}
