//! Plain text for the clangd tools (INTERFACE.md §12): a title naming the request, then one block
//! per merged answer headed `Configurations: a, b`. Places are `path:line:column` with one-based
//! columns and diagnostics one compiler-style line each (`diagnostic_line`), hover Markdown becomes
//! plain text, locations carry numbered previews, document symbols form a tree. No Markdown.

use std::fmt::Write as _;

use crate::clangd::model::{
    CompilationContext, Diagnostic, DiagnosticsResult, DocumentSymbol, DocumentSymbolsResult, HoverKind, HoverResult,
    LocationsResult, NavigationLocation, Position, SourceRange, WorkspaceSymbolsResult,
};
use crate::clangd::standing::Unavailable;
use crate::render::diagnostic_line::{diagnostic_line, place};
use crate::render::excerpt;
use crate::render::tree::{BLANK, ELBOW, PIPE, TEE};

mod markdown;

pub use markdown::markdown_to_text;

/// What a Markdown rule (`---`) becomes.
const RULE: &str = "────────";

/// `line L, character C to line L2, character C2`.
pub fn range(range: &SourceRange) -> String {
    format!(
        "line {}, character {} to line {}, character {}",
        range.start.line, range.start.character, range.end.line, range.end.character
    )
}

/// `path:line:column` of a one-based line and zero-based code-point character.
fn at(path: &str, position: Position) -> String {
    place(path, u64::from(position.line), u64::from(position.character) + 1)
}

fn block(res: &mut String, configurations: &[String]) {
    let _ = write!(res, "\n\nConfigurations: {}", configurations.join(", "));
}

/// `clangd_configurations`: the usable ones, and why there are none (or why some are missing).
pub fn configurations(contexts: &[CompilationContext], unavailable: &Unavailable) -> String {
    let mut res = format!("Available clangd configurations: {}.", contexts.len());
    if contexts.is_empty() {
        let _ = write!(res, "\nNone is available: {unavailable}.");
    } else {
        let missing = Unavailable { no_cmake: None, ..unavailable.clone() };
        if missing != Unavailable::default() {
            let _ = write!(res, "\nNot available: {missing}.");
        }
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
    let mut res = format!("Diagnostics for {path}.");
    for result in results {
        block(&mut res, &result.configurations);
        if result.diagnostics.is_empty() {
            res.push_str("\nNo diagnostics reported.");
        }
        for diagnostic in &result.diagnostics {
            res.push('\n');
            res.push_str(&diagnostic_text(&result.path, diagnostic));
        }
    }
    res
}

/// One diagnostic as a compiler prints it: its line, the rest of a multi-line message indented,
/// then its related places as `note:` lines.
pub fn diagnostic_text(path: &str, diagnostic: &Diagnostic) -> String {
    let code = diagnostic.code.as_ref().map(ToString::to_string);
    let start = diagnostic.range.start;
    let mut res = diagnostic_line(
        path,
        u64::from(start.line),
        u64::from(start.character) + 1,
        diagnostic.severity.map_or("diagnostic", |s| s.as_str()),
        &diagnostic.message,
        diagnostic.source.as_deref(),
        code.as_deref(),
    );
    if let Some(note) = code.as_deref().and_then(clangd_only) {
        res.push_str(note);
    }
    for line in diagnostic.message.lines().skip(1).filter(|line| !line.trim().is_empty()) {
        let _ = write!(res, "\n  {line}");
    }
    for related in &diagnostic.related {
        let start = related.location.range.start;
        let line = diagnostic_line(
            &related.location.path,
            u64::from(start.line),
            u64::from(start.character) + 1,
            "note",
            &related.message,
            None,
            None,
        );
        let _ = write!(res, "\n  {line}");
    }
    res
}

/// What to add to a diagnostic only clangd's own compiler reports: a flag of the build's compiler
/// (GCC's, say) that clangd's clang does not know is not the project's error.
pub fn clangd_only(code: &str) -> Option<&'static str> {
    code.starts_with("drv_unknown_argument")
        .then_some(" (the build's compiler knows this flag; clangd's clang does not, so the build is not affected)")
}

/// One diagnostic for the quality texts: its place, `  <severity> (<source>, <code>): <message>`,
/// tags and notes.
pub fn compiler_style(path: &str, diagnostic: &Diagnostic) -> String {
    let mut res = format!("{path}, {}\n  ", range(&diagnostic.range));
    res.push_str(diagnostic.severity.map_or("diagnostic", |s| s.as_str()));
    let code = diagnostic.code.as_ref().map(ToString::to_string);
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
    let mut res = format!("Hover at {}.", at(path, position));
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
    let mut res = format!("{what} at {}.", at(path, position));
    for result in results {
        block(&mut res, &result.configurations);
        if result.locations.is_empty() {
            res.push_str("\nNo locations found.");
        } else if what == "Definitions" && result.locations.iter().all(is_declaration) {
            res.push_str("\nOnly a declaration was found; nothing in the index defines it (a link would fail with an undefined reference unless another library defines it).");
        }
        for (idx, location) in result.locations.iter().enumerate() {
            if idx > 0 {
                res.push('\n');
            }
            res.push('\n');
            res.push_str(&navigation_location(location, ""));
        }
        if result.omitted > 0 {
            let _ = write!(res, "\n\n…and {} more locations not shown; pass a larger limit.", result.omitted);
        }
        if result.index_busy {
            res.push_str(INDEX_BUSY);
        }
    }
    res
}

/// The note of an answer given while clangd's index was still busy.
const INDEX_BUSY: &str = "\n\nclangd's index was still busy: files it had not indexed yet are missing from this \
                          answer; ask again when it is done (a larger timeout waits longer).";

/// Whether the line a location points at reads as a function's declaration without a body
/// (`bool as_bool(bool def) const;`): what clangd answers a definition request with when its index
/// knows no definition.
fn is_declaration(location: &NavigationLocation) -> bool {
    let Some(preview) = &location.preview else { return false };
    let Some(idx) = u64::from(location.range.start.line).checked_sub(preview.start_line) else { return false };
    let Some(line) = crate::workspace::read::split_lines(&preview.text).nth(idx as usize) else { return false };
    let line = crate::workspace::read::trim_line_ending(line).trim();
    let Some((_, tail)) = line.rsplit_once(')') else { return false };
    line.ends_with(';') && !line.contains('{') && !tail.contains("default")
}

/// A location line and its numbered preview (or why there is none), indented by `indent`.
fn navigation_location(location: &NavigationLocation, indent: &str) -> String {
    let start = location.range.start;
    let mut res = format!("{indent}{}", place(&location.path, u64::from(start.line), u64::from(start.character) + 1));
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
    let mut res = format!("Document symbols of {path}.");
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
            let _ = write!(res, "\n…and {} more symbols not shown; pass a larger limit or depth.", result.omitted);
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
    let mut res = format!("Workspace symbols for \"{query}\".");
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
        if result.omitted > 0 {
            let _ = write!(res, "\n\n…and {} more symbols not shown; pass a larger limit.", result.omitted);
        }
        if result.capped {
            let _ = write!(
                res,
                "\n\nclangd returns at most {} symbols per query, so more may match; a longer query narrows it.",
                crate::clangd::analysis::WORKSPACE_SYMBOLS_CAP
            );
        }
        if result.index_busy {
            res.push_str(INDEX_BUSY);
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

#[cfg(test)]
mod tests;
