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
    /// Errors first: 0 error … 3 hint (4 for a diagnostic without severity).
    pub fn rank(severity: Option<Severity>) -> u8 {
        match severity {
            Some(Severity::Error) => 0,
            Some(Severity::Warning) => 1,
            Some(Severity::Information) => 2,
            Some(Severity::Hint) => 3,
            None => 4,
        }
    }

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

impl std::fmt::Display for DiagnosticCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiagnosticCode::Number(n) => write!(f, "{n}"),
            DiagnosticCode::Text(text) => f.write_str(text),
        }
    }
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
    /// Locations left out by `limit` (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u32,
    /// clangd's index was still busy when it answered, so locations in files it had not indexed
    /// yet are missing (absent when the index was idle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub index_busy: bool,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An answer read from clangd's index, and whether the index was still busy when it was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Indexed<T> {
    pub answer: T,
    pub index_busy: bool,
}

impl WorkspaceSymbolsResult {
    /// Keeps the first `limit` symbols, counting the rest in `omitted`.
    pub fn limit(&mut self, limit: usize) {
        if self.symbols.len() > limit {
            self.omitted += (self.symbols.len() - limit) as u32;
            self.symbols.truncate(limit);
        }
    }
}

impl LocationsResult {
    /// Keeps the first `limit` locations, counting the rest in `omitted`.
    pub fn limit(&mut self, limit: usize) {
        if self.locations.len() > limit {
            self.omitted += (self.locations.len() - limit) as u32;
            self.locations.truncate(limit);
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DocumentSymbolsResult {
    pub configurations: Vec<String>,
    pub path: String,
    pub symbols: Vec<DocumentSymbol>,
    /// Symbols left out by `limit` or `depth` (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u32,
}

impl DocumentSymbolsResult {
    /// Keeps symbols down to nesting `depth` (1 = top level only) and the first `limit` of them in
    /// outline order, counting every symbol left out in `omitted`.
    pub fn limit(&mut self, limit: usize, depth: Option<u32>) {
        fn count(symbols: &[DocumentSymbol]) -> u32 {
            symbols.iter().map(|s| 1 + count(&s.children)).sum()
        }
        fn keep(symbols: &mut Vec<DocumentSymbol>, room: &mut usize, depth: u32, omitted: &mut u32) {
            let mut kept = 0;
            for symbol in symbols.iter_mut() {
                if *room == 0 {
                    break;
                }
                *room -= 1;
                kept += 1;
                if depth <= 1 {
                    *omitted += count(&symbol.children);
                    symbol.children.clear();
                } else {
                    keep(&mut symbol.children, room, depth - 1, omitted);
                }
            }
            *omitted += count(&symbols[kept..]);
            symbols.truncate(kept);
        }
        let mut room = limit;
        keep(&mut self.symbols, &mut room, depth.unwrap_or(u32::MAX), &mut self.omitted);
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WorkspaceSymbolsResult {
    pub configurations: Vec<String>,
    pub symbols: Vec<WorkspaceSymbol>,
    /// Symbols beyond `limit`, not shown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: u32,
    /// clangd answered as many symbols as it ever does, so more may match.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// clangd's index was still busy when it answered, so symbols of files it had not indexed yet
    /// are missing (absent when the index was idle).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub index_busy: bool,
}

/// Semantic highlighting of one file in `clangd.json`, in LSP's compact relative encoding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HighlightingResult {
    pub configurations: Vec<String>,
    pub path: String,
    /// The token types and modifiers `tokens` refers to, once per entry.
    pub legend: TokenLegend,
    /// Five integers per token, as LSP's `SemanticTokens.data` but in code points and one-based
    /// lines: line delta (from line 1 for the first token, then from the previous token), start
    /// character (relative to the previous token's start on the same line, else absolute), length
    /// (tokens never span lines), index into `legend.types`, bit set over `legend.modifiers`.
    pub tokens: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TokenLegend {
    pub types: Vec<String>,
    pub modifiers: Vec<String>,
}

impl HighlightingResult {
    /// Encodes spans (sorted by position, one line each) with a legend of the names they use, in
    /// order of first use.
    pub fn encode(configurations: Vec<String>, path: String, spans: &[SemanticSpan]) -> HighlightingResult {
        let mut legend = TokenLegend { types: Vec::new(), modifiers: Vec::new() };
        let index = |names: &mut Vec<String>, name: &str| match names.iter().position(|known| known == name) {
            Some(at) => at as u32,
            None => {
                names.push(name.to_owned());
                names.len() as u32 - 1
            }
        };
        let mut tokens = Vec::with_capacity(spans.len() * 5);
        let (mut line, mut start) = (1u32, 0u32);
        for span in spans {
            let SourceRange { start: from, end } = span.range;
            let length = if end.line == from.line { end.character.saturating_sub(from.character) } else { 0 };
            let delta_line = from.line.saturating_sub(line);
            let delta_start = if delta_line == 0 { from.character.saturating_sub(start) } else { from.character };
            let kind = index(&mut legend.types, &span.kind);
            let mut bits = 0u32;
            for modifier in &span.modifiers {
                let bit = index(&mut legend.modifiers, modifier);
                if bit < 32 {
                    bits |= 1 << bit;
                }
            }
            tokens.extend([delta_line, delta_start, length, kind, bits]);
            (line, start) = (from.line, from.character);
        }
        HighlightingResult { configurations, path, legend, tokens }
    }
}

/// One file of `clangd.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnnotatedFile {
    pub path: String,
    pub diagnostics: Vec<DiagnosticsResult>,
    pub highlighting: Vec<HighlightingResult>,
}

/// The version of `clangd.json`: 2 since highlighting uses the compact token encoding.
pub const ANNOTATIONS_VERSION: u32 = 2;

/// `clangd.json` (INTERFACE.md §8.3, with highlighting as compact tokens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AnnotationsDocument {
    pub version: u32,
    pub files: Vec<AnnotatedFile>,
}

/// One diagnostic in a mutation summary: where, how severe, what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DiagnosticBrief {
    pub line: u32,
    /// Zero-based code points.
    pub character: u32,
    pub severity: Option<Severity>,
    pub message: String,
    pub source: Option<String>,
    pub code: Option<DiagnosticCode>,
}

/// What a write or edit changed in the diagnostics of one group of agreeing configurations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DiagnosticDelta {
    pub configurations: Vec<String>,
    /// Diagnostics the mutation introduced / resolved (all of them, also past the lists).
    pub introduced_count: u32,
    pub resolved_count: u32,
    /// Errors first, then by position; at most 10 each (all are in `resources.clangd`).
    pub introduced: Vec<DiagnosticBrief>,
    pub resolved: Vec<DiagnosticBrief>,
    /// Warnings clang stopped reporting on lines the mutation left as they were while a new error
    /// stands (clang drops them past an error in the same function): not resolved, only hidden.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden: Vec<DiagnosticBrief>,
}

/// The configurations a mutation of a path withdrew, and the directory whose CMake glob it may
/// change when no CMake input changed.
pub type Withdrawn = (Vec<String>, Option<crate::workspace::path::QualifiedPath>);

/// The `clangd` summary of a write or edit.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, JsonSchema)]
pub struct MutationAnalysis {
    /// Diagnostics compared with the content before the mutation, per group of configurations.
    pub deltas: Vec<DiagnosticDelta>,
    /// Configurations whose compilation database lacks the file: clangd inferred its flags.
    pub inferred_flags: Vec<String>,
    /// Configurations the mutation withdrew (it changed a CMake input; `cmake_configure` restores them).
    pub withdrawn: Vec<String>,
    /// When the withdrawal changed no CMake input: the directory a CMake glob lists, where the new
    /// file appeared (it reaches the compilation database through `cmake_configure`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub withdrawn_glob: Option<String>,
    /// For a header: the translation units that include it, checked within a time budget.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub includers: Vec<super::includers::IncludersCheck>,
    /// Why clangd did not check this C/C++ file at all (no configuration can analyse it now).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_checked: Option<super::standing::Unavailable>,
}

/// Groups per-configuration answers: identical answers (compared as JSON) become one entry whose
/// configurations are listed in the order they answered; entries keep the order of their first
/// configuration.
/// A single answer is never serialized.
pub fn merge<T: Serialize>(answers: Vec<(String, T)>) -> Vec<(Vec<String>, T)> {
    if answers.len() < 2 {
        return answers.into_iter().map(|(configuration, answer)| (vec![configuration], answer)).collect();
    }
    let keyed = answers.into_iter().map(|(configuration, answer)| {
        let key = serde_json::to_value(&answer).unwrap_or(serde_json::Value::Null);
        (configuration, (answer, key))
    });
    merge_equal_by(keyed.collect(), |a, b| a.1 == b.1).into_iter().map(|(names, (answer, _))| (names, answer)).collect()
}

/// [`merge`] for types whose equality is their JSON's (no serialization at all: large answers
/// such as a file's semantic spans).
pub fn merge_equal<T: PartialEq>(answers: Vec<(String, T)>) -> Vec<(Vec<String>, T)> {
    merge_equal_by(answers, |a, b| a == b)
}

fn merge_equal_by<T>(answers: Vec<(String, T)>, same: impl Fn(&T, &T) -> bool) -> Vec<(Vec<String>, T)> {
    let mut res: Vec<(Vec<String>, T)> = Vec::new();
    for (configuration, answer) in answers {
        match res.iter_mut().find(|(_, known)| same(known, &answer)) {
            Some((configurations, _)) => configurations.push(configuration),
            None => res.push((vec![configuration], answer)),
        }
    }
    res
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
        assert_eq!(merge(vec![("Debug".to_owned(), 3)]), vec![(vec!["Debug".to_owned()], 3)]);
        let equal =
            merge_equal(vec![("Debug".to_owned(), "a"), ("Release".to_owned(), "b"), ("Profile".to_owned(), "a")]);
        assert_eq!(
            equal,
            vec![(vec!["Debug".to_owned(), "Profile".to_owned()], "a"), (vec!["Release".to_owned()], "b")]
        );
    }

    fn symbol(name: &str, children: Vec<DocumentSymbol>) -> DocumentSymbol {
        let r = range((1, 0), (1, 1));
        DocumentSymbol {
            name: name.into(),
            kind: 12,
            range: r,
            selection_range: r,
            detail: None,
            tags: vec![],
            children,
        }
    }

    #[test]
    fn outlines_are_cut_by_limit_and_depth_counting_what_is_left_out() {
        let outline = || DocumentSymbolsResult {
            configurations: vec![],
            path: "project/a.cpp".into(),
            symbols: vec![
                symbol("ns", vec![symbol("a", vec![symbol("a1", vec![])]), symbol("b", vec![])]),
                symbol("c", vec![]),
            ],
            omitted: 0,
        };
        let names = |r: &DocumentSymbolsResult| {
            fn walk(s: &[DocumentSymbol], out: &mut Vec<String>) {
                for s in s {
                    out.push(s.name.clone());
                    walk(&s.children, out);
                }
            }
            let mut out = vec![];
            walk(&r.symbols, &mut out);
            out
        };
        let mut all = outline();
        all.limit(10, None);
        assert_eq!(
            (names(&all), all.omitted),
            (vec!["ns", "a", "a1", "b", "c"].into_iter().map(String::from).collect(), 0)
        );
        let mut cut = outline();
        cut.limit(3, None);
        assert_eq!((names(&cut), cut.omitted), (vec!["ns".to_owned(), "a".into(), "a1".into()], 2));
        let mut shallow = outline();
        shallow.limit(10, Some(1));
        assert_eq!((names(&shallow), shallow.omitted), (vec!["ns".to_owned(), "c".into()], 3));
        let mut locations =
            LocationsResult { configurations: vec![], locations: vec![], omitted: 0, index_busy: false };
        locations.limit(1);
        assert_eq!(locations.omitted, 0);
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
