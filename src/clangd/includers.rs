//! A header's write or edit checks the translation units of each configuration's compilation
//! database that include it, most relevant first ([`crate::include_graph`]: the same stem, the same
//! target, the same directory, direct before indirect includers).
//!
//! Each unit is analysed afresh against the header as written (its document closed afterwards);
//! a unit with errors is analysed again with the header's earlier text in its place (a copy in
//! `storage/tmp/clangd/` put over it by a clang `-ivfsoverlay` added to the unit's command through
//! clangd's `compilationDatabaseChanges`, the database's command given back afterwards; clangd 14
//! reads included headers from disk, never from open documents), and only the errors that this
//! baseline lacks are new.
//! The most relevant unit may use the operation's whole deadline, the others [`INCLUDERS_BUDGET`];
//! two run at once.
//!
//! Architecture invariant: only units the database lists are analysed; the answer says how many it
//! checked (a unit counts as checked only once compared with its baseline) of how many include the
//! header, and within which budget. A unit's overlaid command is given back before its check ends,
//! and the overlay's files are removed when the check is done.

use std::collections::HashMap;

use futures_util::StreamExt as _;

use schemars::JsonSchema;
use serde::Serialize;

use super::*;
use crate::include_graph::including_units;
use model::DiagnosticBrief;

/// How long a header's write or edit spends on the units that include it.
pub const INCLUDERS_BUDGET: Duration = Duration::from_secs(2);
/// Units analysed at once (clangd runs with `-j=2`).
const AT_ONCE: usize = 2;
/// Errors listed per check (the rest are counted).
const ERRORS_LISTED: usize = 10;

/// One error in a translation unit that includes an edited header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnitError {
    pub path: String,
    #[serde(flatten)]
    pub diagnostic: DiagnosticBrief,
}

/// What a header's write or edit did to the translation units that include it, per group of
/// agreeing configurations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IncludersCheck {
    pub configurations: Vec<String>,
    /// Translation units of the compilation database whose text includes the header by name,
    /// directly or through another header.
    pub including: u32,
    /// Those analysed and compared with their state before the edit within the budget (the same
    /// stem first, then the same target, then the same directory, then the rest).
    pub checked: u32,
    /// The budget in milliseconds.
    pub budget_ms: u64,
    /// The first checked unit when none was checked in time (the one to ask `clangd_diagnostics` about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Errors the edit introduced in the checked units (absent before it).
    pub error_count: u32,
    /// Up to 10 of them.
    pub errors: Vec<UnitError>,
}

/// Checks the units of `slot`'s database that include the header `file`, comparing each unit with
/// errors against its diagnostics with `before` (the header's earlier text; `None` for a created
/// header): the first until `last`, the others within [`INCLUDERS_BUDGET`].
pub(super) async fn check(
    inner: &Inner,
    slot: &Slot,
    session: Arc<Session>,
    file: &SourceFile,
    before: Option<&str>,
    last: Instant,
) -> IncludersCheck {
    let budget = (Instant::now() + INCLUDERS_BUDGET).min(last);
    let (database, header_abs) = (slot.database.clone(), file.abs.clone());
    let found = tokio::task::spawn_blocking(move || including_units(&database, &header_abs)).await.unwrap_or_default();
    let roots = &inner.roots;
    let files: Vec<Arc<SourceFile>> = found
        .iter()
        .filter_map(|abs| roots.qualify(abs))
        .filter_map(|path| convert::read_source(roots, &path).ok().map(Arc::new))
        .collect();
    let deadline_of = |idx: usize| if idx == 0 { last } else { budget };
    let analyse = |remember: bool| {
        let session = session.clone();
        move |(idx, file): (usize, Arc<SourceFile>)| {
            let session = session.clone();
            let deadline = deadline_of(idx);
            async move {
                let found = analysis::fresh_diagnostics(&session, roots, &file, deadline, remember);
                let found = tokio::time::timeout_at(deadline, found).await.ok().and_then(Result::ok);
                found.map(|diagnostics| (idx, file, diagnostics))
            }
        }
    };
    let after: Vec<(usize, Arc<SourceFile>, Vec<Diagnostic>)> =
        futures_util::stream::iter(files.iter().cloned().enumerate())
            .map(analyse(true))
            .buffered(AT_ONCE)
            .filter_map(std::future::ready)
            .collect()
            .await;
    let has_errors =
        |diagnostics: &[Diagnostic]| diagnostics.iter().any(|d| d.severity == Some(model::Severity::Error));
    // The baseline of the units with errors: each parsed with the header's earlier text in its place.
    let mut baseline: HashMap<usize, Vec<Diagnostic>> = HashMap::new();
    let broken: Vec<(usize, Arc<SourceFile>)> =
        after.iter().filter(|(_, _, d)| has_errors(d)).map(|(idx, file, _)| (*idx, file.clone())).collect();
    if let Some(old) = before.filter(|_| !broken.is_empty())
        && let Some(overlay) = Overlay::write(roots, file, old)
    {
        let database = &slot.database;
        let found: Vec<_> = futures_util::stream::iter(broken)
            .map(|(idx, unit)| {
                let (session, overlay) = (session.clone(), &overlay);
                async move {
                    let deadline = deadline_of(idx);
                    let found = with_earlier_header(&session, roots, database, overlay, &unit, deadline);
                    tokio::time::timeout_at(deadline, found).await.ok().flatten().map(|d| (idx, d))
                }
            })
            .buffered(AT_ONCE)
            .filter_map(std::future::ready)
            .collect()
            .await;
        baseline.extend(found);
    }
    let mut check = IncludersCheck {
        configurations: vec![slot.spec.id.clone()],
        including: found.len() as u32,
        checked: 0,
        budget_ms: INCLUDERS_BUDGET.as_millis() as u64,
        first: None,
        error_count: 0,
        errors: Vec::new(),
    };
    for (idx, unit, diagnostics) in after {
        let new: Vec<Diagnostic> = if !has_errors(&diagnostics) {
            Vec::new()
        } else if before.is_none() {
            diagnostics
        } else if let Some(old) = baseline.get(&idx) {
            delta::compare(old, &unit.lines, &diagnostics, &unit.lines).0
        } else {
            // Not compared with its state before the edit in time: not checked.
            continue;
        };
        check.checked += 1;
        for diagnostic in new.iter().filter(|d| d.severity == Some(model::Severity::Error)) {
            check.error_count += 1;
            if check.errors.len() < ERRORS_LISTED {
                check.errors.push(UnitError { path: unit.path.to_string(), diagnostic: delta::brief(diagnostic) });
            }
        }
    }
    if check.checked == 0 {
        check.first = files.first().map(|file| file.path.to_string());
    }
    check
}

/// The header's earlier text on disk in `storage/tmp/clangd/`, and a clang VFS overlay that puts it
/// in the header's place; both removed when dropped.
struct Overlay {
    dir: PathBuf,
    yaml: PathBuf,
}

impl Overlay {
    fn write(roots: &Roots, header: &SourceFile, old: &str) -> Option<Overlay> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = roots.storage().join("tmp").join("clangd").join(format!("earlier-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let overlay = Overlay { yaml: dir.join("overlay.yaml"), dir };
        let earlier = overlay.dir.join("earlier");
        std::fs::write(&earlier, old).ok()?;
        let mut names = vec![header.abs.clone()];
        names.extend(roots.lexical(&header.path).filter(|lexical| *lexical != header.abs));
        let entries: Vec<serde_json::Value> = names
            .iter()
            .map(|name| serde_json::json!({ "type": "file", "name": name, "external-contents": earlier }))
            .collect();
        let yaml = serde_json::json!({ "version": 0, "roots": entries });
        std::fs::write(&overlay.yaml, yaml.to_string()).ok()?;
        Some(overlay)
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Tells clangd to compile `unit` with `arguments` in `directory` (its `compilationDatabaseChanges`
/// extension; the database's own command is given back the same way).
fn set_command(session: &Session, unit: &Path, directory: &Path, arguments: &[String]) {
    let mut changes = serde_json::Map::new();
    changes.insert(
        unit.to_string_lossy().into_owned(),
        serde_json::json!({ "workingDirectory": directory, "compilationCommand": arguments }),
    );
    let settings = serde_json::json!({ "compilationDatabaseChanges": changes });
    let params = lsp_types::DidChangeConfigurationParams { settings };
    session.notify::<lsp_types::notification::DidChangeConfiguration>(params);
}

/// The diagnostics of `unit` parsed with the header's earlier text (`-ivfsoverlay`), its command
/// given back afterwards; `None` when the database has no command for it or clangd did not answer.
async fn with_earlier_header(
    session: &Session,
    roots: &Roots,
    database: &crate::compile_db::Database,
    overlay: &Overlay,
    unit: &SourceFile,
    deadline: Instant,
) -> Option<Vec<Diagnostic>> {
    let lexical = roots.lexical(&unit.path);
    let command = lexical.as_ref().and_then(|lexical| database.commands.get(lexical));
    let (directory, arguments) = command.or_else(|| database.commands.get(&unit.abs))?;
    let mut overlaid = arguments.clone();
    overlaid.extend(["-ivfsoverlay".to_owned(), overlay.yaml.to_string_lossy().into_owned()]);
    set_command(session, &unit.abs, directory, &overlaid);
    let found = analysis::fresh_diagnostics(session, roots, unit, deadline, false).await;
    set_command(session, &unit.abs, directory, arguments);
    found.ok()
}
