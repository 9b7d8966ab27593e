//! What the quality tools read from clang-tidy and clang-format, and the text arithmetic on it:
//! clang-tidy's `--export-fixes` YAML, clang-format's `--output-replacements-xml` (compilation
//! databases are `crate::compile_db`'s), byte offsets turned into positions, and replacements applied to a text.
//!
//! Architecture invariant: everything here is a pure function of its input; nothing touches the
//! file system or starts a process.
//! Architecture invariant: offsets are UTF-8 byte offsets into the exact text the tool read;
//! positions are one-based lines and zero-based code points, like every position of
//! `clangd::model`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::clangd::model::{Position, SourceRange};
use crate::workspace::path::lexically_normal;

// ---------------------------------------------------------------------------------------------
// clang-tidy --export-fixes.

/// The document `clang-tidy --export-fixes=FILE` writes (the fields ForgeMCP reads).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportedFixes {
    #[serde(default)]
    pub diagnostics: Vec<ExportedDiagnostic>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportedDiagnostic {
    /// The check name (`modernize-use-nullptr`, `clang-diagnostic-error`).
    pub diagnostic_name: String,
    pub diagnostic_message: ExportedMessage,
    #[serde(default)]
    pub notes: Vec<ExportedMessage>,
    /// `Warning`, `Error` or `Remark`.
    #[serde(default)]
    pub level: String,
    /// Relative file paths are relative to it.
    #[serde(default)]
    pub build_directory: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportedMessage {
    pub message: String,
    #[serde(default)]
    pub file_path: String,
    #[serde(default)]
    pub file_offset: usize,
    #[serde(default)]
    pub replacements: Vec<ExportedReplacement>,
    /// Newer clang-tidy versions export the highlighted ranges.
    #[serde(default)]
    pub ranges: Vec<ExportedRange>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportedReplacement {
    pub file_path: String,
    pub offset: usize,
    pub length: usize,
    #[serde(default)]
    pub replacement_text: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportedRange {
    pub file_path: String,
    pub file_offset: usize,
    pub length: usize,
}

pub fn exported_fixes(yaml: &str) -> Result<ExportedFixes, String> {
    serde_yaml::from_str(yaml).map_err(|err| err.to_string())
}

/// An exported file path made absolute: relative ones are relative to the build directory.
pub fn exported_path(build_directory: &str, file_path: &str) -> Option<PathBuf> {
    if file_path.is_empty() {
        return None;
    }
    let path = Path::new(file_path);
    let joined = if path.is_absolute() { path.to_path_buf() } else { Path::new(build_directory).join(path) };
    Some(lexically_normal(&joined))
}

// ---------------------------------------------------------------------------------------------
// clang-format --output-replacements-xml.

/// Replacements clang-format would make, and whether it could format the whole file.
#[derive(Debug, PartialEq, Eq)]
pub struct FormatReplacements {
    pub replacements: Vec<Replacement>,
    /// `incomplete_format='true'`: clang-format met a syntax it could not format completely.
    pub incomplete: bool,
}

/// The XML documents of one clang-format run over several files, in file order (each starts with
/// its `<?xml` declaration).
pub fn split_documents(output: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = output.match_indices("<?xml").map(|(at, _)| at).collect();
    starts.push(output.len());
    starts.windows(2).map(|pair| &output[pair[0]..pair[1]]).collect()
}

pub fn format_replacements(xml: &str) -> Result<FormatReplacements, String> {
    let document = roxmltree::Document::parse(xml).map_err(|err| err.to_string())?;
    let root = document.root_element();
    if root.tag_name().name() != "replacements" {
        return Err(format!("unexpected element `{}`", root.tag_name().name()));
    }
    let number = |node: roxmltree::Node, name: &str| -> Result<usize, String> {
        node.attribute(name)
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| format!("a replacement without a numeric `{name}`"))
    };
    let mut replacements = Vec::new();
    for node in root.children().filter(|node| node.has_tag_name("replacement")) {
        let text = node.text().unwrap_or_default().to_owned();
        replacements.push(Replacement { offset: number(node, "offset")?, length: number(node, "length")?, text });
    }
    Ok(FormatReplacements { replacements, incomplete: root.attribute("incomplete_format") == Some("true") })
}

// ---------------------------------------------------------------------------------------------
// Texts.

/// A replacement of `length` bytes at byte `offset`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Replacement {
    pub offset: usize,
    pub length: usize,
    pub text: String,
}

/// The result of applying replacements.
#[derive(Debug, PartialEq, Eq)]
pub struct Applied {
    pub text: String,
    /// Replacements applied (duplicates count once).
    pub applied: usize,
    /// Replacements left out: overlapping an earlier one, out of bounds, or splitting a character.
    pub skipped: usize,
}

/// Applies `replacements` to `text`: identical ones once, then in offset order, leaving out any
/// that overlaps one already taken (as clang-apply-replacements refuses conflicting fixes).
pub fn apply(text: &str, mut replacements: Vec<Replacement>) -> Applied {
    replacements.sort();
    replacements.dedup();
    let mut taken: Vec<Replacement> = Vec::new();
    let mut skipped = 0;
    for replacement in replacements {
        let end = replacement.offset.checked_add(replacement.length);
        let valid = end.is_some_and(|end| {
            end <= text.len() && text.is_char_boundary(replacement.offset) && text.is_char_boundary(end)
        });
        let overlaps = taken.last().is_some_and(|last| {
            let last_end = last.offset + last.length;
            replacement.offset < last_end || (replacement.offset == last.offset && last.length == 0)
        });
        if valid && !overlaps {
            taken.push(replacement);
        } else {
            skipped += 1;
        }
    }
    let mut res = String::with_capacity(text.len());
    let mut at = 0;
    for replacement in &taken {
        res.push_str(&text[at..replacement.offset]);
        res.push_str(&replacement.text);
        at = replacement.offset + replacement.length;
    }
    res.push_str(&text[at..]);
    Applied { text: res, applied: taken.len(), skipped }
}

/// A text with its line starts, for turning byte offsets into positions.
#[derive(Debug)]
pub struct Offsets {
    text: String,
    starts: Vec<usize>,
}

impl Offsets {
    pub fn new(text: String) -> Offsets {
        let starts = std::iter::once(0).chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|at| at + 1)).collect();
        Offsets { text, starts }
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// The position of byte `offset`, clamped to the text and moved back to a character start.
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_idx = self.starts.partition_point(|&start| start <= offset) - 1;
        let character = self.text[self.starts[line_idx]..offset].chars().count();
        Position { line: to_u32(line_idx + 1), character: to_u32(character) }
    }

    pub fn range(&self, offset: usize, length: usize) -> SourceRange {
        SourceRange { start: self.position(offset), end: self.position(offset.saturating_add(length)) }
    }

    /// The bytes `[offset, offset + length)`, or "" when they are not a slice of the text.
    pub fn slice(&self, offset: usize, length: usize) -> &str {
        offset.checked_add(length).and_then(|end| self.text.get(offset..end)).unwrap_or_default()
    }

    /// The length of the identifier or number starting at `offset` (0 when there is none), so a
    /// diagnostic without an exported range still underlines the token it points at.
    pub fn token_length(&self, offset: usize) -> usize {
        let rest = self.text.get(offset..).unwrap_or_default();
        rest.char_indices().find(|(_, ch)| !(ch.is_alphanumeric() || *ch == '_')).map_or(rest.len(), |(at, _)| at)
    }
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    const EXPORTED: &str = r"---
MainSourceFile:  '/w/src/tidy.cpp'
Diagnostics:
  - DiagnosticName:  readability-identifier-length
    DiagnosticMessage:
      Message:         'variable name ''p'' is too short, expected at least 3 characters'
      FilePath:        tidy.cpp
      FileOffset:      37
      Replacements:    []
    Level:           Warning
    BuildDirectory:  '/w/src'
  - DiagnosticName:  modernize-use-nullptr
    DiagnosticMessage:
      Message:         use nullptr
      FilePath:        '/w/src/tidy.cpp'
      FileOffset:      41
      Replacements:
        - FilePath:        '/w/src/tidy.cpp'
          Offset:          41
          Length:          4
          ReplacementText: nullptr
    Notes:
      - Message:         'expanded from macro ''NULL'''
        FilePath:        '/usr/include/stddef.h'
        FileOffset:      12
        Replacements:    []
    Level:           Warning
    BuildDirectory:  '/w/build'
...
";

    #[test]
    fn exported_fixes_are_read() {
        let fixes = exported_fixes(EXPORTED).unwrap();
        expect![[r#"
            [
                ExportedDiagnostic {
                    diagnostic_name: "readability-identifier-length",
                    diagnostic_message: ExportedMessage {
                        message: "variable name 'p' is too short, expected at least 3 characters",
                        file_path: "tidy.cpp",
                        file_offset: 37,
                        replacements: [],
                        ranges: [],
                    },
                    notes: [],
                    level: "Warning",
                    build_directory: "/w/src",
                },
                ExportedDiagnostic {
                    diagnostic_name: "modernize-use-nullptr",
                    diagnostic_message: ExportedMessage {
                        message: "use nullptr",
                        file_path: "/w/src/tidy.cpp",
                        file_offset: 41,
                        replacements: [
                            ExportedReplacement {
                                file_path: "/w/src/tidy.cpp",
                                offset: 41,
                                length: 4,
                                replacement_text: "nullptr",
                            },
                        ],
                        ranges: [],
                    },
                    notes: [
                        ExportedMessage {
                            message: "expanded from macro 'NULL'",
                            file_path: "/usr/include/stddef.h",
                            file_offset: 12,
                            replacements: [],
                            ranges: [],
                        },
                    ],
                    level: "Warning",
                    build_directory: "/w/build",
                },
            ]
        "#]]
        .assert_debug_eq(&fixes.diagnostics);
        assert!(exported_fixes("Diagnostics: [").is_err());
        assert!(exported_fixes("---\nMainSourceFile: x\n...\n").unwrap().diagnostics.is_empty());
    }

    #[test]
    fn exported_paths_are_absolute_and_normal() {
        assert_eq!(exported_path("/w/build", "../src/a.cpp"), Some(PathBuf::from("/w/src/a.cpp")));
        assert_eq!(exported_path("/w/build", "/w/./src/a.cpp"), Some(PathBuf::from("/w/src/a.cpp")));
        assert_eq!(exported_path("/w/build", ""), None);
    }

    #[test]
    fn format_replacements_are_unescaped() {
        let xml = "<?xml version='1.0'?>\n<replacements xml:space='preserve' incomplete_format='false'>\n\
                   <replacement offset='3' length='2'> </replacement>\n\
                   <replacement offset='10' length='1'></replacement>\n\
                   <replacement offset='23' length='0'>&#10;    &lt;&amp;</replacement>\n</replacements>\n";
        let parsed = format_replacements(xml).unwrap();
        assert!(!parsed.incomplete);
        assert_eq!(
            parsed.replacements,
            [
                Replacement { offset: 3, length: 2, text: " ".into() },
                Replacement { offset: 10, length: 1, text: String::new() },
                Replacement { offset: 23, length: 0, text: "\n    <&".into() },
            ]
        );
        let incomplete = "<replacements incomplete_format='true'></replacements>";
        assert!(format_replacements(incomplete).unwrap().incomplete);
        assert!(format_replacements("<replacements><replacement offset='x' length='1'/></replacements>").is_err());
        assert!(format_replacements("not xml").is_err());
    }

    #[test]
    fn one_document_per_file() {
        let one =
            "<?xml version='1.0'?>\n<replacements xml:space='preserve' incomplete_format='false'>\n</replacements>\n";
        let output = format!("{one}{one}");
        assert_eq!(split_documents(&output), [one, one]);
        assert!(split_documents("").is_empty());
    }

    fn r(offset: usize, length: usize, text: &str) -> Replacement {
        Replacement { offset, length, text: text.into() }
    }

    #[test]
    fn replacements_apply_in_order_without_overlaps() {
        let text = "int *p = NULL; int *q = NULL;";
        let applied = apply(text, vec![r(24, 4, "nullptr"), r(9, 4, "nullptr"), r(9, 4, "nullptr"), r(10, 2, "x")]);
        assert_eq!(applied.text, "int *p = nullptr; int *q = nullptr;");
        assert_eq!((applied.applied, applied.skipped), (2, 1));
        // Insertions at one place: the first in order wins; out of bounds is skipped.
        let applied = apply("ab", vec![r(1, 0, "y"), r(1, 0, "x"), r(5, 1, "z")]);
        assert_eq!((applied.text.as_str(), applied.applied, applied.skipped), ("axb", 1, 2));
        // A replacement may not split a character.
        let applied = apply("é", vec![r(1, 1, "e")]);
        assert_eq!((applied.text.as_str(), applied.skipped), ("é", 1));
    }

    #[test]
    fn offsets_become_code_point_positions() {
        let offsets = Offsets::new("ab\n\u{e9}tat x;\n".into());
        let at = |offset| {
            let p = offsets.position(offset);
            (p.line, p.character)
        };
        assert_eq!(at(0), (1, 0));
        assert_eq!(at(2), (1, 2));
        assert_eq!(at(3), (2, 0));
        // After the two-byte é.
        assert_eq!(at(5), (2, 1));
        // Inside the é: moved back to its start.
        assert_eq!(at(4), (2, 0));
        assert_eq!(at(1000), (3, 0));
        assert_eq!(offsets.token_length(3), 5);
        assert_eq!(offsets.token_length(8), 0);
        assert_eq!(offsets.slice(3, 5), "\u{e9}tat");
        assert_eq!(offsets.slice(4, 1), "");
        let range = offsets.range(3, 5);
        assert_eq!((range.start.line, range.end.character), (2, 4));
    }
}
