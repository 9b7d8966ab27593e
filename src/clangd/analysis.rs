//! The analyses one session answers: diagnostics, hover, definitions, references, document and
//! workspace symbols, and the annotations (diagnostics plus semantic tokens) of `clangd.json`.
//!
//! Each file analysis opens the complete current text, asks, and closes the document before it
//! returns (the [`OpenDocument`](super::session::OpenDocument) guard). Answers are converted to the
//! model types: one-based lines, code points, qualified paths, previews.
//!
//! Architecture invariant: requests that read clangd's index (definitions, references, workspace
//! symbols) first let the session's index settle, but never for more than two thirds of the time
//! left, so a slow index degrades the answer instead of failing the call.

use std::sync::Arc;

use lsp_types::request::{
    DocumentSymbolRequest, GotoDefinition, HoverRequest, References, SemanticTokensFullRequest, WorkspaceSymbolRequest,
};
use lsp_types::{
    DocumentSymbolResponse, GotoDefinitionResponse, HoverContents, MarkedString, SemanticTokensResult,
    TextDocumentPositionParams, WorkspaceSymbolResponse,
};
use tokio::time::Instant;

use super::Error;
use super::convert::{Located, Locator, SourceFile, range_from_wire, to_wire};
use super::model::{
    Diagnostic, DiagnosticCode, DocumentSymbol, Hover, HoverContent, HoverKind, Indexed, Location, NavigationLocation,
    Position, RelatedInformation, SemanticSpan, Severity, SourceRange, WorkspaceSymbol,
};
use super::session::{OpenDocument, Session};
use crate::lsp::{LineIndex, PositionEncoding};
use crate::workspace::path::Roots;

/// Lets the index settle before an index-backed request, for at most two thirds of the time left.
/// Returns whether the index is still busy (the answer may then miss files not indexed yet).
async fn settle_index(session: &Session, deadline: Instant) -> bool {
    let now = Instant::now();
    let budget = deadline.saturating_duration_since(now) * 2 / 3;
    let busy = !session.index_settled(now + budget).await;
    if busy {
        tracing::info!(context = %session.context_id, "clangd's index is still busy; answering from what it has");
    }
    busy
}

/// The diagnostics clangd publishes for the current text of `file`.
pub async fn diagnostics(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    deadline: Instant,
) -> Result<Vec<Diagnostic>, Error> {
    let mut doc = session.open(file, deadline).await?;
    let published = doc.diagnostics(deadline).await?;
    drop(doc);
    Ok(converted_diagnostics(session, roots, file, published))
}

/// The diagnostics of `file` parsed afresh against the current contents of what it includes (the
/// documents open in the session, else the disk), its document closed afterwards; remembered as
/// the file's diagnostics only with `remember` (not when a header's draft is not its disk content).
pub async fn fresh_diagnostics(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    deadline: Instant,
    remember: bool,
) -> Result<Vec<Diagnostic>, Error> {
    let mut doc = session.open(file, deadline).await?;
    let published = doc.diagnostics(deadline).await;
    doc.close();
    let published = published?;
    if remember {
        return Ok(converted_diagnostics(session, roots, file, published));
    }
    Ok(converted(session, roots, file, published))
}

/// Converted diagnostics sorted by position.
fn converted(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    published: Vec<lsp_types::Diagnostic>,
) -> Vec<Diagnostic> {
    let mut locator = Locator::new(roots, session.encoding, Some(file));
    let mut res: Vec<Diagnostic> = published.into_iter().map(|d| diagnostic(&mut locator, file, d)).collect();
    super::delta::by_position(&mut res);
    res
}

/// Converted diagnostics sorted by position, remembered as the file's before-state.
fn converted_diagnostics(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    published: Vec<lsp_types::Diagnostic>,
) -> Vec<Diagnostic> {
    let res = converted(session, roots, file, published);
    session.remember(&file.path.to_string(), file.lines.text(), &res);
    res
}

/// Diagnostics and semantic spans of `file` for `clangd.json`; with `before`, also the diagnostics
/// of that earlier content of the file (the before-state of a write or edit).
///
/// The before-state is remembered from an earlier analysis of exactly that content in this
/// session, else analysed in the same document: it is opened with the old text and, without
/// waiting, changed to the new one, so clangd builds the preamble (the includes, usually the
/// larger part of the work) once and parses the old and the new main file in turn. The file on
/// disk is not read for the old content. `prepared` is that document already opened with exactly
/// `before`, before the file was written ([`super::ClangdService`]'s provider prepares it), so
/// clangd started on the old content while the file was written; it is closed unused when the
/// before-state turns out to be known.
pub async fn annotations(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    before: Option<&str>,
    prepared: Option<OpenDocument>,
    deadline: Instant,
) -> Result<Annotations, Error> {
    let path = file.path.to_string();
    let before = match before {
        None => Before::NotAsked,
        // clangd would publish nothing for a change to the same text: one analysis answers both.
        Some(text) if text == file.lines.text() => Before::Same,
        Some(text) => match session.remembered(&path, text) {
            Some(known) => Before::Known(known.as_ref().clone()),
            None => Before::Analyse(SourceFile { lines: Arc::new(LineIndex::new(text)), ..file.clone() }),
        },
    };
    let (mut doc, old_version) = match (&before, prepared) {
        (Before::Analyse(old), prepared) => {
            let mut doc = match prepared {
                Some(doc) => doc,
                None => session.open(old, deadline).await?,
            };
            let old_version = doc.version();
            doc.change(file.lines.text())?;
            (doc, Some(old_version))
        }
        // The prepared document already holds the new content.
        (Before::Same, Some(doc)) => (doc, None),
        (_, prepared) => {
            drop(prepared);
            (session.open(file, deadline).await?, None)
        }
    };
    let same = matches!(before, Before::Same);
    let params = lsp_types::SemanticTokensParams {
        text_document: doc.identifier(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let tokens = if session.capabilities.semantic_tokens_provider.is_some() {
        session.request::<SemanticTokensFullRequest>(params, deadline).await?
    } else {
        None
    };
    let published_before = match old_version {
        Some(version) => doc.diagnostics_of(version, deadline).await?,
        None => Vec::new(),
    };
    let published = doc.diagnostics(deadline).await?;
    drop(doc);
    // The old content first, so the new one is what the session remembers.
    let before = match before {
        Before::NotAsked | Before::Same => None,
        Before::Known(known) => Some(known),
        Before::Analyse(old) => Some(converted_diagnostics(session, roots, &old, published_before)),
    };
    let diagnostics = converted_diagnostics(session, roots, file, published);
    let before = before.or_else(|| same.then(|| diagnostics.clone()));
    let spans = match tokens {
        Some(SemanticTokensResult::Tokens(tokens)) => semantic_spans(session, file, &tokens.data),
        Some(SemanticTokensResult::Partial(partial)) => semantic_spans(session, file, &partial.data),
        None => Vec::new(),
    };
    Ok(Annotations { diagnostics, spans, before })
}

/// Where the before-state of one analysis comes from.
enum Before {
    NotAsked,
    /// The content did not change.
    Same,
    /// Remembered from an earlier analysis of that content.
    Known(Vec<Diagnostic>),
    /// Analysed now, as this earlier content of the file.
    Analyse(SourceFile),
}

/// What [`annotations`] found.
pub struct Annotations {
    pub diagnostics: Vec<Diagnostic>,
    pub spans: Vec<SemanticSpan>,
    /// The diagnostics of the content before (when it was asked for).
    pub before: Option<Vec<Diagnostic>>,
}

fn position_params(
    session: &Session,
    file: &SourceFile,
    uri: lsp_types::TextDocumentIdentifier,
    position: Position,
) -> TextDocumentPositionParams {
    TextDocumentPositionParams { text_document: uri, position: to_wire(&file.lines, position, session.encoding) }
}

pub async fn hover(
    session: &Session,
    file: &SourceFile,
    position: Position,
    deadline: Instant,
) -> Result<Option<Hover>, Error> {
    let doc = session.open(file, deadline).await?;
    let params = lsp_types::HoverParams {
        text_document_position_params: position_params(session, file, doc.identifier(), position),
        work_done_progress_params: Default::default(),
    };
    let answer = session.request::<HoverRequest>(params, deadline).await?;
    drop(doc);
    Ok(answer.map(|hover| Hover {
        contents: hover_contents(hover.contents),
        range: hover.range.map(|range| range_from_wire(Some(&file.lines), range, session.encoding)),
    }))
}

fn hover_contents(contents: HoverContents) -> Vec<HoverContent> {
    let marked = |marked: MarkedString| match marked {
        MarkedString::String(text) => HoverContent { kind: HoverKind::Markdown, text, language: None },
        MarkedString::LanguageString(code) => {
            HoverContent { kind: HoverKind::Code, text: code.value, language: Some(code.language) }
        }
    };
    match contents {
        HoverContents::Scalar(one) => vec![marked(one)],
        HoverContents::Array(many) => many.into_iter().map(marked).collect(),
        HoverContents::Markup(markup) => vec![HoverContent {
            kind: match markup.kind {
                lsp_types::MarkupKind::Markdown => HoverKind::Markdown,
                lsp_types::MarkupKind::PlainText => HoverKind::Plaintext,
            },
            text: markup.value,
            language: None,
        }],
    }
}

/// What a navigation request looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Navigation {
    Definition,
    References { include_declaration: bool },
}

/// Definitions or references of the symbol at `position`.
pub async fn locations(
    session: &Session,
    roots: &Roots,
    file: &SourceFile,
    position: Position,
    navigation: Navigation,
    deadline: Instant,
) -> Result<Indexed<Vec<NavigationLocation>>, Error> {
    let index_busy = settle_index(session, deadline).await;
    let doc = session.open(file, deadline).await?;
    let at = position_params(session, file, doc.identifier(), position);
    let locations: Vec<(lsp_types::Uri, lsp_types::Range)> = match navigation {
        Navigation::Definition => {
            let params = lsp_types::GotoDefinitionParams {
                text_document_position_params: at,
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            match session.request::<GotoDefinition>(params, deadline).await? {
                None => Vec::new(),
                Some(GotoDefinitionResponse::Scalar(one)) => vec![(one.uri, one.range)],
                Some(GotoDefinitionResponse::Array(many)) => many.into_iter().map(|l| (l.uri, l.range)).collect(),
                Some(GotoDefinitionResponse::Link(links)) => {
                    links.into_iter().map(|l| (l.target_uri, l.target_selection_range)).collect()
                }
            }
        }
        Navigation::References { include_declaration } => {
            let params = lsp_types::ReferenceParams {
                text_document_position: at,
                context: lsp_types::ReferenceContext { include_declaration },
                work_done_progress_params: Default::default(),
                partial_result_params: Default::default(),
            };
            let answer = session.request::<References>(params, deadline).await?;
            answer.unwrap_or_default().into_iter().map(|l| (l.uri, l.range)).collect()
        }
    };
    drop(doc);
    Ok(Indexed { answer: converted_locations(roots, session.encoding, file, locations), index_busy })
}

/// Converted locations with previews, without duplicates, sorted by path and range.
fn converted_locations(
    roots: &Roots,
    encoding: PositionEncoding,
    file: &SourceFile,
    locations: Vec<(lsp_types::Uri, lsp_types::Range)>,
) -> Vec<NavigationLocation> {
    let mut locator = Locator::new(roots, encoding, Some(file));
    let mut res: Vec<NavigationLocation> = locations
        .into_iter()
        .filter_map(|(uri, range)| locator.locate(&uri, range))
        .map(|Located { path, range, preview }| NavigationLocation { path: path.to_string(), range, preview })
        .collect();
    res.sort_by(|a, b| (&a.path, a.range).cmp(&(&b.path, b.range)));
    res.dedup();
    res
}

pub async fn document_symbols(
    session: &Session,
    file: &SourceFile,
    deadline: Instant,
) -> Result<Vec<DocumentSymbol>, Error> {
    let doc = session.open(file, deadline).await?;
    let params = lsp_types::DocumentSymbolParams {
        text_document: doc.identifier(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let answer = session.request::<DocumentSymbolRequest>(params, deadline).await?;
    drop(doc);
    let range = |r| range_from_wire(Some(&file.lines), r, session.encoding);
    Ok(match answer {
        None => Vec::new(),
        Some(DocumentSymbolResponse::Nested(symbols)) => {
            symbols.into_iter().map(|s| nested_symbol(s, &range)).collect()
        }
        // A flat answer becomes a flat outline.
        Some(DocumentSymbolResponse::Flat(symbols)) => symbols
            .into_iter()
            .map(|s| {
                let r = range(s.location.range);
                DocumentSymbol {
                    name: s.name,
                    kind: symbol_kind(s.kind),
                    range: r,
                    selection_range: r,
                    detail: None,
                    tags: tags(s.tags),
                    children: Vec::new(),
                }
            })
            .collect(),
    })
}

fn nested_symbol(
    symbol: lsp_types::DocumentSymbol,
    range: &impl Fn(lsp_types::Range) -> SourceRange,
) -> DocumentSymbol {
    DocumentSymbol {
        name: symbol.name,
        kind: symbol_kind(symbol.kind),
        range: range(symbol.range),
        selection_range: range(symbol.selection_range),
        detail: symbol.detail.filter(|d| !d.is_empty()),
        tags: tags(symbol.tags),
        children: symbol.children.unwrap_or_default().into_iter().map(|child| nested_symbol(child, range)).collect(),
    }
}

fn symbol_kind(kind: lsp_types::SymbolKind) -> u32 {
    serde_json::to_value(kind).ok().and_then(|v| v.as_u64()).map_or(0, |n| n as u32)
}

fn tags(tags: Option<Vec<lsp_types::SymbolTag>>) -> Vec<u32> {
    tags.unwrap_or_default()
        .into_iter()
        .filter_map(|tag| serde_json::to_value(tag).ok().and_then(|v| v.as_u64()).map(|n| n as u32))
        .collect()
}

/// The most symbols clangd answers one `workspace/symbol` with (its `--limit-results` default).
pub const WORKSPACE_SYMBOLS_CAP: usize = 100;

/// The symbols matching `query`, and whether clangd's own cap may have cut the answer.
pub async fn workspace_symbols(
    session: &Session,
    roots: &Roots,
    query: &str,
    deadline: Instant,
) -> Result<Indexed<(Vec<WorkspaceSymbol>, bool)>, Error> {
    let index_busy = settle_index(session, deadline).await;
    let params = lsp_types::WorkspaceSymbolParams {
        query: query.to_owned(),
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };
    let answer = session.request::<WorkspaceSymbolRequest>(params, deadline).await?;
    // Both answer shapes become (name, kind, uri, range, container, tags).
    let found: Vec<_> = match answer {
        None => Vec::new(),
        Some(WorkspaceSymbolResponse::Flat(symbols)) => symbols
            .into_iter()
            .map(|s| (s.name, s.kind, s.location.uri, s.location.range, s.container_name, s.tags))
            .collect(),
        Some(WorkspaceSymbolResponse::Nested(symbols)) => symbols
            .into_iter()
            .map(|s| {
                let (uri, range) = match s.location {
                    lsp_types::OneOf::Left(location) => (location.uri, location.range),
                    lsp_types::OneOf::Right(uri_only) => (uri_only.uri, lsp_types::Range::default()),
                };
                (s.name, s.kind, uri, range, s.container_name, s.tags)
            })
            .collect(),
    };
    let mut locator = Locator::new(roots, session.encoding, None);
    let capped = found.len() >= WORKSPACE_SYMBOLS_CAP;
    let answer = found
        .into_iter()
        .filter_map(|(name, kind, uri, range, container_name, symbol_tags)| {
            let Located { path, range, preview } = locator.locate(&uri, range)?;
            Some(WorkspaceSymbol {
                name,
                kind: symbol_kind(kind),
                location: NavigationLocation { path: path.to_string(), range, preview },
                container_name: container_name.filter(|c| !c.is_empty()),
                tags: tags(symbol_tags),
            })
        })
        .collect();
    Ok(Indexed { answer: (answer, capped), index_busy })
}

fn diagnostic(locator: &mut Locator<'_>, file: &SourceFile, d: lsp_types::Diagnostic) -> Diagnostic {
    let severity = d.severity.map(|s| match s {
        lsp_types::DiagnosticSeverity::ERROR => Severity::Error,
        lsp_types::DiagnosticSeverity::WARNING => Severity::Warning,
        lsp_types::DiagnosticSeverity::INFORMATION => Severity::Information,
        _ => Severity::Hint,
    });
    let code = d.code.map(|code| match code {
        lsp_types::NumberOrString::Number(n) => DiagnosticCode::Number(i64::from(n)),
        lsp_types::NumberOrString::String(s) => DiagnosticCode::Text(s),
    });
    let tags = d
        .tags
        .unwrap_or_default()
        .into_iter()
        .filter_map(|tag| serde_json::to_value(tag).ok().and_then(|v| v.as_i64()).map(|n| n as i32))
        .collect();
    let related = d
        .related_information
        .unwrap_or_default()
        .into_iter()
        .filter_map(|info| {
            let located = locator.locate(&info.location.uri, info.location.range)?;
            Some(RelatedInformation {
                location: Location { path: located.path.to_string(), range: located.range },
                message: info.message,
            })
        })
        .collect();
    Diagnostic {
        range: range_from_wire(Some(&file.lines), d.range, locator.encoding()),
        severity,
        message: d.message,
        code,
        source: d.source,
        tags,
        related,
    }
}

/// Decodes relative semantic tokens (five numbers per token) with the server's legend.
fn semantic_spans(session: &Session, file: &SourceFile, data: &[lsp_types::SemanticToken]) -> Vec<SemanticSpan> {
    let Some(legend) = session.capabilities.semantic_tokens_provider.as_ref().map(|provider| match provider {
        lsp_types::SemanticTokensServerCapabilities::SemanticTokensOptions(options) => &options.legend,
        lsp_types::SemanticTokensServerCapabilities::SemanticTokensRegistrationOptions(options) => {
            &options.semantic_tokens_options.legend
        }
    }) else {
        return Vec::new();
    };
    decode_tokens(&file.lines, session.encoding, legend, data)
}

pub(crate) fn decode_tokens(
    lines: &crate::lsp::LineIndex,
    encoding: PositionEncoding,
    legend: &lsp_types::SemanticTokensLegend,
    data: &[lsp_types::SemanticToken],
) -> Vec<SemanticSpan> {
    let mut res = Vec::with_capacity(data.len());
    let (mut line, mut start) = (0u32, 0u32);
    for token in data {
        if token.delta_line > 0 {
            line += token.delta_line;
            start = token.delta_start;
        } else {
            start += token.delta_start;
        }
        let wire = lsp_types::Range {
            start: lsp_types::Position { line, character: start },
            end: lsp_types::Position { line, character: start + token.length },
        };
        let kind = legend
            .token_types
            .get(token.token_type as usize)
            .map_or_else(|| format!("type-{}", token.token_type), |t| t.as_str().to_owned());
        let modifiers = legend
            .token_modifiers
            .iter()
            .enumerate()
            .filter(|(bit, _)| *bit < 32 && token.token_modifiers_bitset & (1 << bit) != 0)
            .map(|(_, modifier)| modifier.as_str().to_owned())
            .collect();
        res.push(SemanticSpan { range: range_from_wire(Some(lines), wire, encoding), kind, modifiers });
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::LineIndex;

    #[test]
    fn relative_tokens_decode_to_absolute_code_point_ranges() {
        let lines = LineIndex::new("int x;\n/* 😀 */ int y = x;\n");
        let legend = lsp_types::SemanticTokensLegend {
            token_types: vec!["variable".into(), "function".into()],
            token_modifiers: vec!["declaration".into(), "readonly".into()],
        };
        let token = |delta_line, delta_start, length, token_type, token_modifiers_bitset| lsp_types::SemanticToken {
            delta_line,
            delta_start,
            length,
            token_type,
            token_modifiers_bitset,
        };
        // UTF-16: `y` on line 2 starts after "/* 😀 */ int " = 13 units (12 code points).
        let data = [token(0, 4, 1, 0, 1), token(1, 13, 1, 0, 3), token(0, 4, 1, 0, 0)];
        let spans = decode_tokens(&lines, PositionEncoding::Utf16, &legend, &data);
        let summary: Vec<String> = spans
            .iter()
            .map(|s| {
                format!(
                    "{}:{}-{}:{} {} {:?}",
                    s.range.start.line,
                    s.range.start.character,
                    s.range.end.line,
                    s.range.end.character,
                    s.kind,
                    s.modifiers
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                "1:4-1:5 variable [\"declaration\"]",
                "2:12-2:13 variable [\"declaration\", \"readonly\"]",
                "2:16-2:17 variable []",
            ]
        );
    }
}
