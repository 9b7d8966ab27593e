//! The clangd value types of INTERFACE.md §7 and §8.3: positions, ranges, locations with previews,
//! diagnostics, hover, symbols and semantic spans, and the per-configuration answers.
//!
//! These are wire contracts: the tools serialize them as `structuredContent` and the `clangd`
//! provider as `clangd.json`, so one definition serves both and a change here is a schema change.
//!
//! Architecture invariant: lines are one-based and characters zero-based Unicode code points, in
//! every position here; ranges are half-open and `end >= start`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A position: one-based line, zero-based character in Unicode code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    /// One-based line.
    #[schemars(range(min = 1))]
    pub line: u32,
    /// Zero-based character (Unicode code points).
    pub character: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, JsonSchema)]
pub struct SourceRange {
    pub start: Position,
    pub end: Position,
}

impl SourceRange {
    /// One-based first and last line the range covers: an end at character 0 of a later line
    /// does not cover that line.
    pub fn lines(&self) -> (u64, u64) {
        let first = u64::from(self.start.line);
        let mut last = u64::from(self.end.line);
        if self.end.character == 0 && self.end.line > self.start.line {
            last -= 1;
        }
        (first, last.max(first))
    }
}

/// A place in a file; `path` may be `root/…` for locations outside the project and storage.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct Location {
    pub path: String,
    pub range: SourceRange,
}

/// Saved source lines around a location.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct Preview {
    /// One-based number of the first line of `text`.
    pub start_line: u64,
    /// Up to 7 lines (3 before, the line, 3 after) with their line endings.
    pub text: String,
}

/// A location with a preview of the saved file (null for `root/…` and unreadable files).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
pub struct NavigationLocation {
    pub path: String,
    pub range: SourceRange,
    pub preview: Option<Preview>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Error,
    Warning,
    Information,
    Hint,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Information => "information",
            Severity::Hint => "hint",
        }
    }
}

/// A diagnostic code: clangd uses names (`expected_semi_declaration`); LSP also allows numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum DiagnosticCode {
    Number(i64),
    Text(String),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RelatedInformation {
    pub location: Location,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Diagnostic {
    pub range: SourceRange,
    pub severity: Option<Severity>,
    pub message: String,
    pub code: Option<DiagnosticCode>,
    pub source: Option<String>,
    /// LSP diagnostic tags: 1 unnecessary, 2 deprecated.
    pub tags: Vec<i32>,
    pub related: Vec<RelatedInformation>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoverKind {
    Plaintext,
    Markdown,
    Code,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HoverContent {
    pub kind: HoverKind,
    pub text: String,
    /// The language of a `code` fragment.
    pub language: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Hover {
    pub contents: Vec<HoverContent>,
    pub range: Option<SourceRange>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DocumentSymbol {
    pub name: String,
    /// LSP SymbolKind (1 file … 26 type parameter).
    pub kind: u32,
    pub range: SourceRange,
    pub selection_range: SourceRange,
    pub detail: Option<String>,
    /// LSP symbol tags: 1 deprecated.
    pub tags: Vec<u32>,
    pub children: Vec<DocumentSymbol>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkspaceSymbol {
    pub name: String,
    /// LSP SymbolKind.
    pub kind: u32,
    pub location: NavigationLocation,
    pub container_name: Option<String>,
    pub tags: Vec<u32>,
}

/// One semantic token of `clangd.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SemanticSpan {
    pub range: SourceRange,
    /// The token type from clangd's legend (`function`, `variable`, `class`, …).
    pub kind: String,
    pub modifiers: Vec<String>,
}

/// A usable compilation context, as `clangd_configurations` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CompilationContext {
    /// The configuration id to pass in `configurations`.
    pub id: String,
    pub toolset_id: String,
    pub build_directory: String,
    pub compilation_database: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DiagnosticsResult {
    /// The configurations that gave this answer.
    pub configurations: Vec<String>,
    pub path: String,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HoverResult {
    pub configurations: Vec<String>,
    pub path: String,
    pub position: Position,
    pub hover: Option<Hover>,
}

/// The answer of `clangd_definition` and `clangd_references`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LocationsResult {
    pub configurations: Vec<String>,
    /// Sorted by path, then range.
    pub locations: Vec<NavigationLocation>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DocumentSymbolsResult {
    pub configurations: Vec<String>,
    pub path: String,
    pub symbols: Vec<DocumentSymbol>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkspaceSymbolsResult {
    pub configurations: Vec<String>,
    pub symbols: Vec<WorkspaceSymbol>,
}

/// Semantic highlighting of one file in `clangd.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HighlightingResult {
    pub configurations: Vec<String>,
    pub path: String,
    pub spans: Vec<SemanticSpan>,
}

/// One file of `clangd.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnnotatedFile {
    pub path: String,
    pub diagnostics: Vec<DiagnosticsResult>,
    pub highlighting: Vec<HighlightingResult>,
}

/// `clangd.json` (INTERFACE.md §8.3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnnotationsDocument {
    pub version: u32,
    pub files: Vec<AnnotatedFile>,
}

/// Groups per-configuration answers: identical answers (compared as JSON) become one entry whose
/// configurations are listed in the order they answered; entries keep the order of their first
/// configuration.
pub fn merge<T: Serialize>(answers: Vec<(String, T)>) -> Vec<(Vec<String>, T)> {
    let mut res: Vec<(Vec<String>, T, serde_json::Value)> = Vec::new();
    for (configuration, answer) in answers {
        let key = serde_json::to_value(&answer).unwrap_or(serde_json::Value::Null);
        match res.iter_mut().find(|(_, _, known)| *known == key) {
            Some((configurations, _, _)) => configurations.push(configuration),
            None => res.push((vec![configuration], answer, key)),
        }
    }
    res.into_iter().map(|(configurations, answer, _)| (configurations, answer)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(a: (u32, u32), b: (u32, u32)) -> SourceRange {
        SourceRange { start: Position { line: a.0, character: a.1 }, end: Position { line: b.0, character: b.1 } }
    }

    #[test]
    fn identical_answers_are_merged_in_order() {
        let merged = merge(vec![
            ("Debug".to_owned(), vec![1]),
            ("Release".to_owned(), vec![2]),
            ("RelWithDebInfo".to_owned(), vec![1]),
        ]);
        assert_eq!(
            merged,
            vec![
                (vec!["Debug".to_owned(), "RelWithDebInfo".to_owned()], vec![1]),
                (vec!["Release".to_owned()], vec![2])
            ]
        );
        assert!(merge(Vec::<(String, u8)>::new()).is_empty());
    }

    #[test]
    fn range_lines_skip_an_end_at_the_start_of_a_line() {
        assert_eq!(range((3, 4), (3, 9)).lines(), (3, 3));
        assert_eq!(range((3, 4), (5, 0)).lines(), (3, 4));
        assert_eq!(range((3, 0), (3, 0)).lines(), (3, 3));
        assert_eq!(range((3, 4), (5, 1)).lines(), (3, 5));
    }

    #[test]
    fn wire_shapes() {
        let diagnostic = Diagnostic {
            range: range((5, 4), (5, 10)),
            severity: Some(Severity::Error),
            message: "expected ';'".into(),
            code: Some(DiagnosticCode::Text("expected_semi".into())),
            source: Some("clang".into()),
            tags: vec![],
            related: vec![],
        };
        assert_eq!(
            serde_json::to_value(&diagnostic).unwrap(),
            serde_json::json!({
                "range": {"start": {"line": 5, "character": 4}, "end": {"line": 5, "character": 10}},
                "severity": "error", "message": "expected ';'", "code": "expected_semi", "source": "clang",
                "tags": [], "related": []
            })
        );
        let code = serde_json::to_value(DiagnosticCode::Number(7)).unwrap();
        assert_eq!(code, serde_json::json!(7));
    }
}
