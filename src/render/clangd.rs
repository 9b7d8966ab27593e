//! Plain text for the clangd tools (INTERFACE.md §12): a title naming the request, the coordinate
//! note, then one block per merged answer headed `Configurations: a, b`. Diagnostics are
//! compiler-style, hover Markdown becomes plain text, locations carry numbered previews, document
//! symbols form a tree.

use std::fmt::Write as _;

use crate::clangd::model::{
    CompilationContext, Diagnostic, DiagnosticsResult, DocumentSymbol, DocumentSymbolsResult, HoverKind, HoverResult,
    LocationsResult, NavigationLocation, Position, SourceRange, WorkspaceSymbolsResult,
};
use crate::render::excerpt;
use crate::render::tree::{BLANK, ELBOW, PIPE, TEE};

const COORDINATES: &str = "Coordinates: lines are one-based; characters are zero-based.";
/// What a Markdown rule (`---`) becomes.
const RULE: &str = "────────";

/// `line L, character C to line L2, character C2`.
pub fn range(range: &SourceRange) -> String {
    format!(
        "line {}, character {} to line {}, character {}",
        range.start.line, range.start.character, range.end.line, range.end.character
    )
}

fn at(path: &str, position: Position) -> String {
    format!("{path}, line {}, character {}", position.line, position.character)
}

fn header(title: String) -> String {
    format!("{title}\n{COORDINATES}")
}

fn block(res: &mut String, configurations: &[String]) {
    let _ = write!(res, "\n\nConfigurations: {}", configurations.join(", "));
}

/// `clangd_configurations`.
pub fn configurations(contexts: &[CompilationContext]) -> String {
    let mut res = format!("Available clangd configurations: {}.", contexts.len());
    if contexts.is_empty() {
        res.push_str(
            "\nNo CMake configuration has a compilation database and clangd in its toolset yet; run cmake_configure.",
        );
    }
    for context in contexts {
        let _ = write!(
            res,
            "\n\n{}\n  Toolset: {}\n  Build directory: {}\n  Compilation database: {}",
            context.id, context.toolset_id, context.build_directory, context.compilation_database
        );
    }
    res
}

/// `clangd_diagnostics`.
pub fn diagnostics(path: &str, results: &[DiagnosticsResult]) -> String {
    let mut res = header(format!("Diagnostics for {path}."));
    for result in results {
        block(&mut res, &result.configurations);
        if result.diagnostics.is_empty() {
            res.push_str("\nNo diagnostics reported.");
        }
        for diagnostic in &result.diagnostics {
            res.push('\n');
            res.push_str(&compiler_style(&result.path, diagnostic));
        }
    }
    res
}

/// One diagnostic: its place, `  <severity> (<source>, <code>): <message>`, tags and notes.
pub fn compiler_style(path: &str, diagnostic: &Diagnostic) -> String {
    let mut res = format!("{path}, {}\n  ", range(&diagnostic.range));
    res.push_str(diagnostic.severity.map_or("diagnostic", |s| s.as_str()));
    let code = diagnostic.code.as_ref().map(|code| match code {
        crate::clangd::model::DiagnosticCode::Number(n) => n.to_string(),
        crate::clangd::model::DiagnosticCode::Text(text) => text.clone(),
    });
    match (&diagnostic.source, code) {
        (Some(source), Some(code)) => {
            let _ = write!(res, " ({source}, {code})");
        }
        (Some(source), None) => {
            let _ = write!(res, " ({source})");
        }
        (None, Some(code)) => {
            let _ = write!(res, " ({code})");
        }
        (None, None) => {}
    }
    let _ = write!(res, ": {}", indent_continuation(&diagnostic.message, "  "));
    let tags: Vec<&str> = diagnostic
        .tags
        .iter()
        .map(|tag| match tag {
            1 => "unnecessary",
            2 => "deprecated",
            _ => "other",
        })
        .collect();
    if !tags.is_empty() {
        let _ = write!(res, "\n  Tags: {}", tags.join(", "));
    }
    for related in &diagnostic.related {
        let _ = write!(
            res,
            "\n  Note at {}, {}: {}",
            related.location.path,
            range(&related.location.range),
            indent_continuation(&related.message, "  ")
        );
    }
    res
}

fn indent_continuation(text: &str, indent: &str) -> String {
    text.lines().collect::<Vec<_>>().join(&format!("\n{indent}"))
}

/// `clangd_hover`.
pub fn hover(path: &str, position: Position, results: &[HoverResult]) -> String {
    let mut res = header(format!("Hover at {}.", at(path, position)));
    for result in results {
        block(&mut res, &result.configurations);
        let Some(hover) = result.hover.as_ref().filter(|h| h.contents.iter().any(|c| !c.text.trim().is_empty())) else {
            res.push_str("\nNo hover information available.");
            continue;
        };
        for content in &hover.contents {
            let text = match content.kind {
                HoverKind::Markdown => markdown_to_text(&content.text),
                HoverKind::Plaintext | HoverKind::Code => content.text.trim_end().to_owned(),
            };
            if !text.is_empty() {
                res.push('\n');
                res.push_str(&text);
            }
        }
    }
    res
}

/// `clangd_definition` (`what` = "Definitions") and `clangd_references` ("References").
pub fn locations(what: &str, path: &str, position: Position, results: &[LocationsResult]) -> String {
    let mut res = header(format!("{what} at {}.", at(path, position)));
    for result in results {
        block(&mut res, &result.configurations);
        if result.locations.is_empty() {
            res.push_str("\nNo locations found.");
        }
        for (idx, location) in result.locations.iter().enumerate() {
            if idx > 0 {
                res.push('\n');
            }
            res.push('\n');
            res.push_str(&navigation_location(location, ""));
        }
        if result.omitted > 0 {
            let _ = write!(res, "\n\n…and {} more locations not shown; pass a larger `limit`.", result.omitted);
        }
    }
    res
}

/// A location line and its numbered preview (or why there is none), indented by `indent`.
fn navigation_location(location: &NavigationLocation, indent: &str) -> String {
    let mut res = format!("{indent}{}, {}", location.path, range(&location.range));
    match &location.preview {
        Some(preview) => {
            let lines = crate::workspace::read::split_lines(&preview.text)
                .enumerate()
                .map(|(idx, line)| (preview.start_line + idx as u64, crate::workspace::read::trim_line_ending(line)));
            for line in excerpt::numbered(lines, "").lines() {
                let _ = write!(res, "\n{indent}  {line}");
            }
        }
        None => {
            let _ = write!(res, "\n{indent}  Source preview unavailable.");
        }
    }
    res
}

/// `clangd_document_symbols`.
pub fn document_symbols(path: &str, results: &[DocumentSymbolsResult]) -> String {
    let mut res = header(format!("Document symbols of {path}."));
    for result in results {
        block(&mut res, &result.configurations);
        if result.symbols.is_empty() {
            res.push_str("\nNo document symbols found.");
        }
        for symbol in &result.symbols {
            res.push('\n');
            res.push_str(&symbol_label(symbol));
            draw_symbols(&symbol.children, "", &mut res);
        }
        if result.omitted > 0 {
            let _ = write!(res, "\n…and {} more symbols not shown; pass a larger `limit` or `depth`.", result.omitted);
        }
    }
    res
}

fn draw_symbols(symbols: &[DocumentSymbol], prefix: &str, out: &mut String) {
    for (idx, symbol) in symbols.iter().enumerate() {
        let last = idx + 1 == symbols.len();
        let _ = write!(out, "\n{prefix}{}{}", if last { ELBOW } else { TEE }, symbol_label(symbol));
        let child_prefix = format!("{prefix}{}", if last { BLANK } else { PIPE });
        draw_symbols(&symbol.children, &child_prefix, out);
    }
}

fn symbol_label(symbol: &DocumentSymbol) -> String {
    let kind = symbol_kind(symbol.kind);
    let mut res = format!("{} ({kind}", symbol.name);
    // clangd's detail of a class is just "class"; only a signature or type adds something.
    if let Some(detail) = symbol.detail.as_ref().filter(|detail| **detail != kind) {
        let _ = write!(res, ", {detail}");
    }
    let (first, last) = (symbol.range.start.line, symbol.range.end.line);
    if first == last {
        let _ = write!(res, "), line {first}");
    } else {
        let _ = write!(res, "), lines {first}–{last}");
    }
    if symbol.tags.contains(&1) {
        res.push_str(", deprecated");
    }
    res
}

/// `clangd_workspace_symbols`.
pub fn workspace_symbols(query: &str, results: &[WorkspaceSymbolsResult]) -> String {
    let mut res = header(format!("Workspace symbols for \"{query}\"."));
    for result in results {
        block(&mut res, &result.configurations);
        if result.symbols.is_empty() {
            res.push_str("\nNo workspace symbols found.");
        }
        for (idx, symbol) in result.symbols.iter().enumerate() {
            if idx > 0 {
                res.push('\n');
            }
            let _ = write!(res, "\n{} ({})", symbol.name, symbol_kind(symbol.kind));
            if let Some(scope) = &symbol.container_name {
                let _ = write!(res, "\n  Scope: {scope}");
            }
            res.push('\n');
            res.push_str(&navigation_location(&symbol.location, "  "));
        }
    }
    res
}

/// The LSP SymbolKind spelled out.
pub fn symbol_kind(kind: u32) -> String {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    match kind.checked_sub(1).and_then(|idx| NAMES.get(idx as usize)) {
        Some(name) => (*name).to_owned(),
        None => format!("unknown kind ({kind})"),
    }
}

/// Hover Markdown as plain text: code blocks verbatim, headings without `#`, inline code and
/// emphasis without their marks, links as `text (url)`, rules as a line of box-drawing dashes,
/// backslash escapes resolved, runs of blank lines (and blank lines next to rules) dropped.
pub fn markdown_to_text(markdown: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut fence: Option<String> = None;
    for raw in markdown.lines() {
        let trimmed = raw.trim_start();
        if let Some(open) = &fence {
            if trimmed.starts_with(open.as_str())
                && trimmed.trim_start_matches(open.chars().next().unwrap_or('`')).trim().is_empty()
            {
                fence = None;
            } else {
                lines.push(raw.to_owned());
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            let mark = trimmed.chars().next().unwrap_or('`');
            let run = trimmed.chars().take_while(|c| *c == mark).count();
            fence = Some(mark.to_string().repeat(run));
            continue;
        }
        if is_rule(trimmed) {
            while lines.last().is_some_and(|l| l.is_empty()) {
                lines.pop();
            }
            lines.push(RULE.to_owned());
            continue;
        }
        let content = raw.trim_end();
        let content = match content.trim_start().strip_prefix('#') {
            Some(_) => content.trim_start().trim_start_matches('#').trim_start(),
            None => content,
        };
        let text = inline(content);
        if text.is_empty() && (lines.last().is_none_or(|l| l.is_empty() || l == RULE)) {
            continue;
        }
        lines.push(text);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

fn is_rule(line: &str) -> bool {
    let compact: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    compact.len() >= 3 && ["-", "*", "_"].iter().any(|mark| compact.chars().all(|c| c.to_string() == *mark))
}

/// Inline Markdown as text.
fn inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut res = String::with_capacity(text.len());
    let mut idx = 0;
    while idx < chars.len() {
        let ch = chars[idx];
        match ch {
            '\\' if chars.get(idx + 1).is_some_and(|next| next.is_ascii_punctuation()) => {
                res.push(chars[idx + 1]);
                idx += 2;
            }
            '`' => {
                let run = chars[idx..].iter().take_while(|c| **c == '`').count();
                let body_start = idx + run;
                let close = (body_start..chars.len()).find(|&pos| {
                    chars[pos..].iter().take_while(|c| **c == '`').count() == run && (pos == 0 || chars[pos - 1] != '`')
                });
                match close {
                    Some(close) => {
                        res.extend(&chars[body_start..close]);
                        idx = close + run;
                    }
                    None => {
                        res.extend(&chars[idx..body_start]);
                        idx = body_start;
                    }
                }
            }
            '[' => match link_at(&chars, idx) {
                Some((label, url, next)) => {
                    res.push_str(&inline(&label));
                    if !url.is_empty() && url != label {
                        let _ = write!(res, " ({url})");
                    }
                    idx = next;
                }
                None => {
                    res.push(ch);
                    idx += 1;
                }
            },
            '*' | '_' => {
                let run = chars[idx..].iter().take_while(|c| **c == ch).count();
                match emphasis_close(&chars, idx, run) {
                    Some(close) => {
                        let inner: String = chars[idx + run..close].iter().collect();
                        res.push_str(&inline(&inner));
                        idx = close + run;
                    }
                    None => {
                        res.extend(std::iter::repeat_n(ch, run));
                        idx += run;
                    }
                }
            }
            _ => {
                res.push(ch);
                idx += 1;
            }
        }
    }
    res
}

/// Where the emphasis opened by the `run` marks at `start` closes, if it is emphasis at all: the
/// opening run is followed by a non-space, the closing run (same mark, same length) follows a
/// non-space, and `_` never opens or closes inside a word (`snake_case`).
fn emphasis_close(chars: &[char], start: usize, run: usize) -> Option<usize> {
    let mark = chars[start];
    let word = |pos: Option<usize>| pos.and_then(|p| chars.get(p)).is_some_and(|c| c.is_alphanumeric());
    let opens =
        chars.get(start + run).is_some_and(|c| !c.is_whitespace()) && !(mark == '_' && word(start.checked_sub(1)));
    if !opens {
        return None;
    }
    let mut pos = start + run + 1;
    while pos + run <= chars.len() {
        let here = chars[pos..].iter().take_while(|c| **c == mark).count();
        if here == run
            && chars[pos - 1] != mark
            && !chars[pos - 1].is_whitespace()
            && chars[pos - 1] != '\\'
            && !(mark == '_' && word(Some(pos + run)))
        {
            return Some(pos);
        }
        pos += here.max(1);
    }
    None
}

/// `[label](url)` starting at `start`: the label, the url and the index after it.
fn link_at(chars: &[char], start: usize) -> Option<(String, String, usize)> {
    let mut depth = 0;
    let mut close = None;
    for (pos, ch) in chars.iter().enumerate().skip(start) {
        match ch {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(pos);
                    break;
                }
            }
            _ => {}
        }
    }
    let close = close?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = (close + 2..chars.len()).find(|&pos| chars[pos] == ')')?;
    let label: String = chars[start + 1..close].iter().collect();
    let url: String = chars[close + 2..end].iter().collect();
    Some((label, url.trim().to_owned(), end + 1))
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::clangd::model::{
        DiagnosticCode, Hover, HoverContent, Location, Preview, RelatedInformation, Severity, WorkspaceSymbol,
    };

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    fn span(a: (u32, u32), b: (u32, u32)) -> SourceRange {
        SourceRange { start: pos(a.0, a.1), end: pos(b.0, b.1) }
    }

    fn check(actual: String, expect: Expect) {
        expect.assert_eq(&actual);
    }

    #[test]
    fn configurations_list_each_context() {
        let contexts = vec![CompilationContext {
            id: "Debug".into(),
            toolset_id: "system".into(),
            build_directory: "storage/build/cmake-Debug".into(),
            compilation_database: "storage/build/cmake-Debug/compile_commands.json".into(),
        }];
        check(
            configurations(&contexts),
            expect![[r#"
                Available clangd configurations: 1.

                Debug
                  Toolset: system
                  Build directory: storage/build/cmake-Debug
                  Compilation database: storage/build/cmake-Debug/compile_commands.json"#]],
        );
        check(
            configurations(&[]),
            expect![[r#"
                Available clangd configurations: 0.
                No CMake configuration has a compilation database and clangd in its toolset yet; run cmake_configure."#]],
        );
    }

    #[test]
    fn diagnostics_are_compiler_style() {
        let results = vec![
            DiagnosticsResult {
                configurations: vec!["Debug".into(), "Release".into()],
                path: "project/src/main.cpp".into(),
                diagnostics: vec![
                    Diagnostic {
                        range: span((7, 40), (7, 46)),
                        severity: Some(Severity::Error),
                        message: "No member named 'lenght' in 'geometry::Vector'; did you mean 'length'?".into(),
                        code: Some(DiagnosticCode::Text("no_member_suggest".into())),
                        source: Some("clang".into()),
                        tags: vec![],
                        related: vec![RelatedInformation {
                            location: Location {
                                path: "project/include/geometry/vector.hpp".into(),
                                range: span((10, 11), (10, 17)),
                            },
                            message: "'length' declared here".into(),
                        }],
                    },
                    Diagnostic {
                        range: span((3, 0), (3, 30)),
                        severity: Some(Severity::Warning),
                        message: "Included header vector.hpp is not used directly\nsecond line".into(),
                        code: None,
                        source: Some("clangd".into()),
                        tags: vec![1, 2],
                        related: vec![],
                    },
                    Diagnostic {
                        range: span((1, 0), (1, 1)),
                        severity: None,
                        message: "bare".into(),
                        code: Some(DiagnosticCode::Number(42)),
                        source: None,
                        tags: vec![],
                        related: vec![],
                    },
                ],
            },
            DiagnosticsResult {
                configurations: vec!["Profile".into()],
                path: "project/src/main.cpp".into(),
                diagnostics: vec![],
            },
        ];
        check(
            diagnostics("project/src/main.cpp", &results),
            expect![[r#"
                Diagnostics for project/src/main.cpp.
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug, Release
                project/src/main.cpp, line 7, character 40 to line 7, character 46
                  error (clang, no_member_suggest): No member named 'lenght' in 'geometry::Vector'; did you mean 'length'?
                  Note at project/include/geometry/vector.hpp, line 10, character 11 to line 10, character 17: 'length' declared here
                project/src/main.cpp, line 3, character 0 to line 3, character 30
                  warning (clangd): Included header vector.hpp is not used directly
                  second line
                  Tags: unnecessary, deprecated
                project/src/main.cpp, line 1, character 0 to line 1, character 1
                  diagnostic (42): bare

                Configurations: Profile
                No diagnostics reported."#]],
        );
    }

    #[test]
    fn hover_markdown_becomes_plain_text() {
        let markdown = "### function `add`  \n\n---\n→ `int`  \nParameters:  \n- `int lhs`\n- `int rhs`\n\nReturns lhs \\+ rhs, see [docs](https://example.invalid/a_b) and **bold** *em* snake_case\\_name.  \n\n---\n```cpp\n// In namespace fixture\nint add(int lhs, int rhs)\n```";
        let results = vec![
            HoverResult {
                configurations: vec!["Debug".into()],
                path: "project/a.cpp".into(),
                position: pos(11, 12),
                hover: Some(Hover {
                    contents: vec![HoverContent { kind: HoverKind::Markdown, text: markdown.into(), language: None }],
                    range: Some(span((11, 11), (11, 14))),
                }),
            },
            HoverResult {
                configurations: vec!["Release".into()],
                path: "project/a.cpp".into(),
                position: pos(11, 12),
                hover: None,
            },
        ];
        check(
            hover("project/a.cpp", pos(11, 12), &results),
            expect![[r#"
                Hover at project/a.cpp, line 11, character 12.
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug
                function add
                ────────
                → int
                Parameters:
                - int lhs
                - int rhs

                Returns lhs + rhs, see docs (https://example.invalid/a_b) and bold em snake_case_name.
                ────────
                // In namespace fixture
                int add(int lhs, int rhs)

                Configurations: Release
                No hover information available."#]],
        );
    }

    #[test]
    fn locations_show_previews_or_say_why_not() {
        let results = vec![LocationsResult {
            configurations: vec!["Debug".into()],
            locations: vec![
                NavigationLocation {
                    path: "project/src/math.cpp".into(),
                    range: span((5, 4), (5, 7)),
                    preview: Some(Preview {
                        start_line: 2,
                        text: "\nnamespace fixture {\n\nint add(int lhs, int rhs)\n{\n    return lhs + rhs;\n}\n"
                            .into(),
                    }),
                },
                NavigationLocation {
                    path: "root/usr/include/c++/12/cmath".into(),
                    range: span((100, 2), (100, 8)),
                    preview: None,
                },
            ],
            omitted: 3,
        }];
        check(
            locations("Definitions", "project/a.cpp", pos(11, 12), &results),
            expect![[r#"
                Definitions at project/a.cpp, line 11, character 12.
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug
                project/src/math.cpp, line 5, character 4 to line 5, character 7
                  2 | 
                  3 | namespace fixture {
                  4 | 
                  5 | int add(int lhs, int rhs)
                  6 | {
                  7 |     return lhs + rhs;
                  8 | }

                root/usr/include/c++/12/cmath, line 100, character 2 to line 100, character 8
                  Source preview unavailable.

                …and 3 more locations not shown; pass a larger `limit`."#]],
        );
        let empty = vec![LocationsResult { configurations: vec!["Debug".into()], locations: vec![], omitted: 0 }];
        check(
            locations("References", "project/a.cpp", pos(1, 0), &empty),
            expect![[r#"
                References at project/a.cpp, line 1, character 0.
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug
                No locations found."#]],
        );
    }

    #[test]
    fn document_symbols_form_a_tree() {
        let symbol = |name: &str, kind: u32, lines: (u32, u32), detail: Option<&str>, children: Vec<DocumentSymbol>| {
            DocumentSymbol {
                name: name.into(),
                kind,
                range: span((lines.0, 0), (lines.1, 1)),
                selection_range: span((lines.0, 0), (lines.0, 1)),
                detail: detail.map(Into::into),
                tags: vec![],
                children,
            }
        };
        let tree = vec![symbol(
            "fixture",
            3,
            (3, 24),
            None,
            vec![
                symbol(
                    "Shape",
                    5,
                    (6, 11),
                    Some("class"),
                    vec![symbol("name", 6, (10, 10), Some("std::string_view () const"), vec![])],
                ),
                symbol("default_circle", 12, (20, 20), Some("const Circle &()"), vec![]),
                symbol("odd", 99, (22, 22), None, vec![]),
            ],
        )];
        let results = vec![DocumentSymbolsResult {
            configurations: vec!["Debug".into()],
            path: "project/h.hpp".into(),
            symbols: tree,
            omitted: 2,
        }];
        check(
            document_symbols("project/h.hpp", &results),
            expect![[r#"
                Document symbols of project/h.hpp.
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug
                fixture (namespace), lines 3–24
                ├── Shape (class), lines 6–11
                │   └── name (method, std::string_view () const), line 10
                ├── default_circle (function, const Circle &()), line 20
                └── odd (unknown kind (99)), line 22
                …and 2 more symbols not shown; pass a larger `limit` or `depth`."#]],
        );
    }

    #[test]
    fn workspace_symbols_name_their_scope() {
        let results = vec![WorkspaceSymbolsResult {
            configurations: vec!["Debug".into(), "Release".into()],
            symbols: vec![
                WorkspaceSymbol {
                    name: "anchor_caller".into(),
                    kind: 12,
                    location: NavigationLocation {
                        path: "project/analysis/clangd_anchors.cpp".into(),
                        range: span((15, 4), (15, 17)),
                        preview: Some(Preview { start_line: 14, text: "// Caller\nint anchor_caller()\n{\n".into() }),
                    },
                    container_name: Some("analysis".into()),
                    tags: vec![],
                },
                WorkspaceSymbol {
                    name: "anchor".into(),
                    kind: 13,
                    location: NavigationLocation {
                        path: "root/opt/x.h".into(),
                        range: span((1, 0), (1, 6)),
                        preview: None,
                    },
                    container_name: None,
                    tags: vec![],
                },
            ],
        }];
        check(
            workspace_symbols("anchor", &results),
            expect![[r#"
                Workspace symbols for "anchor".
                Coordinates: lines are one-based; characters are zero-based.

                Configurations: Debug, Release
                anchor_caller (function)
                  Scope: analysis
                  project/analysis/clangd_anchors.cpp, line 15, character 4 to line 15, character 17
                    14 | // Caller
                    15 | int anchor_caller()
                    16 | {

                anchor (variable)
                  root/opt/x.h, line 1, character 0 to line 1, character 6
                    Source preview unavailable."#]],
        );
    }

    #[test]
    fn markdown_edge_cases() {
        assert_eq!(markdown_to_text("a * b and 2*3"), "a * b and 2*3");
        assert_eq!(markdown_to_text("x *y* __z__ a_b_c _d_"), "x y z a_b_c d");
        assert_eq!(markdown_to_text("``a ` b``"), "a ` b");
        assert_eq!(markdown_to_text("[x](y"), "[x](y");
        assert_eq!(markdown_to_text("\n\n# Title\n\n\ntext\n\n"), "Title\n\ntext");
        assert_eq!(markdown_to_text("~~~\n  *kept*  \n~~~"), "  *kept*  ");
    }

    #[test]
    fn symbol_kinds_are_spelled_out() {
        assert_eq!(symbol_kind(1), "file");
        assert_eq!(symbol_kind(22), "enum member");
        assert_eq!(symbol_kind(26), "type parameter");
        assert_eq!(symbol_kind(0), "unknown kind (0)");
        assert_eq!(symbol_kind(27), "unknown kind (27)");
    }
}
