//! `quality_tidy`: clang-tidy on the translation units of one file or a tree, once per selected CMake
//! configuration with that configuration's compilation database and toolset.
//!
//! Each run writes `--export-fixes` YAML into `storage/tmp/quality/` (removed after reading); its
//! byte offsets become `clangd::model` positions against the text read from disk, the check name is
//! the diagnostic `code` and `clang-tidy` its `source`. Per file, configurations whose diagnostics
//! are identical are merged. Fix-its are applied, when asked, once per file: identical replacements
//! from several configurations count once, overlapping ones are left out.
//!
//! Architecture invariant: files outside the project and storage are never read (their notes and
//! diagnostics are left out: positions there are unknown without reading them).
//! Architecture invariant: the result budget stops new files from starting once it is reached;
//! files already started finish, and what lies beyond the budget is counted, never silently lost.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::format::Skipped;
use super::model::{CheckCount, Fix, RunFailure, TidyDiagnostic, TidyFile};
use super::parse::{self, ExportedDiagnostic, Offsets, Replacement};
use super::{Changed, Error, QualityService, RUN_TIMEOUT, export_name, run_error, run_parallel};
use crate::call::Call;
use crate::clangd::model::{Diagnostic, DiagnosticCode, Location, RelatedInformation, Severity};
use crate::cmake::CompilationContext;
use crate::compile_db::Database;
use crate::include_graph::including_units;
use crate::process::Timeout;
use crate::toolchain::{Toolset, tool_command};
use crate::workspace::path::{QualifiedPath, Roots};

/// What to check.
#[derive(Debug, Clone)]
pub struct TidyRequest {
    /// A translation unit or a directory (its translation units in the databases).
    pub path: QualifiedPath,
    /// Configuration ids; empty = every configuration with a compilation database.
    pub configurations: Vec<String>,
    /// Exactly these checks (`-*,` is put in front), instead of the project's `.clang-tidy`.
    pub checks: Option<String>,
    pub apply_fixes: bool,
    /// Diagnostics listed at most.
    pub max_diagnostics: usize,
}

/// What a check found.
#[derive(Debug)]
pub struct TidyReport {
    pub path: QualifiedPath,
    /// The configurations that ran.
    pub configurations: Vec<String>,
    /// Translation units selected and checked.
    pub files_total: usize,
    pub files_checked: usize,
    /// Files with diagnostics, sorted by path, within the budget.
    pub files: Vec<TidyFile>,
    /// Diagnostics found beyond the budget.
    pub more_diagnostics: usize,
    /// Findings per check, listed and beyond the budget together, most frequent first.
    pub checks: Vec<CheckCount>,
    /// Files changed by `apply_fixes`.
    pub changed: Vec<Changed>,
    pub failures: Vec<RunFailure>,
    /// For a header: the unit that includes it, within which it was checked.
    pub through: Option<QualifiedPath>,
    /// What a tree run left out, and why.
    pub skipped: Skipped,
}

/// One configuration as a run needs it.
struct Configuration {
    context: CompilationContext,
    toolset: Arc<Toolset>,
    executable: PathBuf,
    build_dir: PathBuf,
}

/// One clang-tidy run: a translation unit in one configuration.
#[derive(Clone, Copy)]
struct Job {
    file: usize,
    configuration: usize,
}

/// What one run gave.
struct JobOutput {
    job: Job,
    diagnostics: Vec<(QualifiedPath, TidyDiagnostic)>,
    replacements: Vec<(QualifiedPath, Replacement)>,
    failure: Option<RunFailure>,
}

/// Texts read during one call, shared by its runs (offsets refer to what was read first).
struct Texts<'a> {
    roots: &'a Roots,
    read: Mutex<HashMap<PathBuf, Option<Arc<Offsets>>>>,
}

impl Texts<'_> {
    async fn get(&self, abs: &Path) -> Option<Arc<Offsets>> {
        if let Some(known) = self.read.lock().get(abs) {
            return known.clone();
        }
        // Only managed files are read; positions in external ones stay unknown.
        let text = if self.roots.contains(abs) { tokio::fs::read_to_string(abs).await.ok() } else { None };
        let offsets = text.map(|text| Arc::new(Offsets::new(text)));
        self.read.lock().entry(abs.to_path_buf()).or_insert(offsets).clone()
    }
}

impl QualityService {
    pub async fn tidy(&self, request: TidyRequest, call: &Call) -> Result<TidyReport, Error> {
        let (abs, is_dir) = self.locate(&request.path)?;
        let known = self.databases().await;
        if !is_dir && super::cpp_evidence(&request.path, &abs, &known).is_none() {
            return Err(Error::NotCpp { path: request.path.clone() });
        }
        let roots = self.workspace.roots().clone();
        let contexts = self.select(&request.configurations)?;
        let mut configurations = Vec::new();
        let mut databases = Vec::new();
        let mut units: BTreeMap<QualifiedPath, (PathBuf, Vec<usize>)> = BTreeMap::new();
        for (idx, context) in contexts.into_iter().enumerate() {
            let toolset = self.toolchain.get(context.toolset_id.as_str()).await?;
            let missing = || Error::MissingTool { toolset: context.toolset_id.to_string(), tool: "clang-tidy" };
            let executable = toolset.tool("clang-tidy").ok_or_else(missing)?.path.clone();
            let database = context.compilation_database.clone();
            let unreadable = |reason: String| Error::Database { path: database.clone(), reason };
            let database_abs = roots.lexical(&database).ok_or_else(|| unreadable("outside the roots".into()))?;
            let json = tokio::fs::read(&database_abs).await.map_err(|err| unreadable(err.to_string()))?;
            let database = Database::parse(&json).map_err(unreadable)?;
            for abs in &database.files {
                if let Some(path) = roots.qualify(abs).filter(|path| path.starts_with(&request.path)) {
                    units.entry(path).or_insert_with(|| (abs.clone(), Vec::new())).1.push(idx);
                }
            }
            databases.push(database);
            let build_dir = roots.lexical(&context.build_directory).unwrap_or_default();
            configurations.push(Configuration { context, toolset, executable, build_dir });
        }
        let ids: Vec<String> = configurations.iter().map(|c| c.context.id.clone()).collect();
        // A header is checked within the most relevant unit that includes it, for its own findings.
        let mut through = None;
        if !is_dir && units.is_empty() && !crate::cpp_file::is_translation_unit(&request.path) {
            let (header, listed) = (abs.clone(), databases.clone());
            let including = tokio::task::spawn_blocking(move || {
                listed.iter().find_map(|database| including_units(database, &header).into_iter().next())
            })
            .await
            .ok()
            .flatten();
            let Some(unit) = including.and_then(|abs| roots.qualify(&abs).map(|path| (path, abs))) else {
                return Err(Error::HeaderNotIncluded { path: request.path.clone(), configurations: ids.join(", ") });
            };
            let configs = (0..databases.len()).filter(|idx| databases[*idx].listed.contains(&unit.1)).collect();
            through = Some(unit.0.clone());
            units.insert(unit.0, (unit.1, configs));
        }
        if !is_dir && units.is_empty() {
            return Err(Error::NoCompileCommand { path: request.path.clone(), configurations: ids.join(", ") });
        }
        let only = through.is_some().then_some(abs.as_path());
        let skipped =
            if is_dir { self.unchecked(&request.path, &abs, &known, &units, call).await? } else { Skipped::default() };
        let units: Vec<(QualifiedPath, PathBuf, Vec<usize>)> =
            units.into_iter().map(|(path, (abs, configs))| (path, abs, configs)).collect();
        let export_dir = roots.storage().join("tmp").join("quality");
        std::fs::create_dir_all(&export_dir).map_err(|source| {
            let path = QualifiedPath::parse("storage/tmp/quality").expect("a valid qualified path");
            Error::Workspace(crate::workspace::Error::io(&path, source))
        })?;

        let jobs: Vec<Job> = units
            .iter()
            .enumerate()
            .flat_map(|(file, (_, _, configs))| configs.iter().map(move |&configuration| Job { file, configuration }))
            .collect();
        let n_jobs = jobs.len();
        let texts = Texts { roots: &roots, read: Mutex::new(HashMap::new()) };
        let started: Mutex<BTreeSet<usize>> = Mutex::default();
        let found = AtomicUsize::new(0);
        let mut outputs: Vec<JobOutput> = Vec::new();
        call.progress.report(0.0, Some(n_jobs as f64), format!("0 of {} files checked", units.len()));
        let mut finished_per_file: HashMap<usize, usize> = HashMap::new();
        let mut files_done = 0;
        run_parallel(
            jobs,
            call,
            |job| {
                let mut started = started.lock();
                if started.contains(&job.file) || found.load(Ordering::Relaxed) < request.max_diagnostics {
                    started.insert(job.file);
                    true
                } else {
                    false
                }
            },
            |job| {
                let (_, abs, _) = &units[job.file];
                let configuration = &configurations[job.configuration];
                let checks = request.checks.as_deref();
                self.run_one(job, (abs, only), configuration, checks, &export_dir, &texts, call)
            },
            |output: JobOutput, n_done| {
                found.fetch_add(output.diagnostics.len(), Ordering::Relaxed);
                let finished = finished_per_file.entry(output.job.file).or_default();
                *finished += 1;
                if *finished == units[output.job.file].2.len() {
                    files_done += 1;
                }
                call.progress.report(
                    n_done as f64,
                    Some(n_jobs as f64),
                    format!("{files_done} of {} files checked", units.len()),
                );
                outputs.push(output);
            },
        )
        .await?;

        let files_checked = started.lock().len();
        let mut report = TidyReport {
            path: request.path.clone(),
            configurations: ids.clone(),
            files_total: units.len(),
            files_checked,
            files: Vec::new(),
            more_diagnostics: 0,
            checks: Vec::new(),
            changed: Vec::new(),
            failures: Vec::new(),
            through,
            skipped,
        };
        // Per file, per configuration: a checked translation unit answers even without diagnostics.
        let mut answers: BTreeMap<QualifiedPath, BTreeMap<usize, Vec<TidyDiagnostic>>> = BTreeMap::new();
        let mut replacements: BTreeMap<QualifiedPath, Vec<Replacement>> = BTreeMap::new();
        for output in outputs {
            answers.entry(units[output.job.file].0.clone()).or_default().entry(output.job.configuration).or_default();
            for (path, diagnostic) in output.diagnostics {
                answers.entry(path).or_default().entry(output.job.configuration).or_default().push(diagnostic);
            }
            for (path, replacement) in output.replacements {
                replacements.entry(path).or_default().push(replacement);
            }
            report.failures.extend(output.failure);
        }
        report.failures.sort_by(|a, b| (&a.path, &a.configuration).cmp(&(&b.path, &b.configuration)));
        let mut budget = request.max_diagnostics;
        let mut checks: BTreeMap<String, u64> = BTreeMap::new();
        for (path, per_configuration) in answers {
            let per_configuration = per_configuration
                .into_iter()
                .map(|(idx, mut diagnostics)| {
                    sort_diagnostics(&mut diagnostics);
                    (ids[idx].clone(), diagnostics)
                })
                .collect();
            for (configurations, mut diagnostics) in crate::clangd::model::merge(per_configuration) {
                if diagnostics.is_empty() {
                    continue;
                }
                for finding in &diagnostics {
                    *checks.entry(check_name(&finding.diagnostic)).or_default() += 1;
                }
                if diagnostics.len() > budget {
                    report.more_diagnostics += diagnostics.len() - budget;
                    diagnostics.truncate(budget);
                }
                budget -= diagnostics.len();
                if !diagnostics.is_empty() {
                    report.files.push(TidyFile { configurations, path: path.to_string(), diagnostics });
                }
            }
        }
        report.checks = checks.into_iter().map(|(check, findings)| CheckCount { check, findings }).collect();
        report.checks.sort_by(|a, b| b.findings.cmp(&a.findings).then_with(|| a.check.cmp(&b.check)));
        if request.apply_fixes {
            self.apply_fixes(replacements, &texts, &mut report, call).await;
        }
        Ok(report)
    }

    /// What a tree run of clang-tidy leaves out: the tree's C/C++ files that are no unit of the
    /// databases (headers, units without a compile command), besides what `tree_sources` skips.
    async fn unchecked(
        &self,
        path: &QualifiedPath,
        abs: &Path,
        known: &[Database],
        units: &BTreeMap<QualifiedPath, (PathBuf, Vec<usize>)>,
        call: &Call,
    ) -> Result<Skipped, Error> {
        let (files, mut skipped) = self.tree_sources(path, abs, known, call).await?;
        for (file, _) in files.iter().filter(|(file, _)| !units.contains_key(file)) {
            if crate::cpp_file::is_translation_unit(file) {
                skipped.no_compile_command += 1;
            } else {
                skipped.headers += 1;
            }
        }
        Ok(skipped)
    }

    /// One clang-tidy run on the unit `abs`; with `only` (a header it includes), only that
    /// header's findings and fixes are kept.
    #[allow(clippy::too_many_arguments)]
    async fn run_one(
        &self,
        job: Job,
        (abs, only): (&Path, Option<&Path>),
        configuration: &Configuration,
        checks: Option<&str>,
        export_dir: &Path,
        texts: &Texts<'_>,
        call: &Call,
    ) -> JobOutput {
        let roots = self.workspace.roots();
        let unit = roots.qualify(abs).map_or_else(|| abs.display().to_string(), |path| path.to_string());
        let mut output = JobOutput { job, diagnostics: Vec::new(), replacements: Vec::new(), failure: None };
        // The unit's text is read before clang-tidy runs, so the fixes refer to what it saw.
        texts.get(abs).await;
        let export = ExportFile(export_dir.join(export_name(&self.next_export)));
        let mut command = tool_command(&configuration.toolset, &configuration.executable, roots.project())
            .arg("-p")
            .arg(&configuration.build_dir)
            .arg("--quiet")
            .arg(format!("--export-fixes={}", export.0.display()))
            .timeout(Timeout::total(RUN_TIMEOUT));
        if let Some(checks) = checks {
            command = command.arg(format!("--checks=-*,{checks}"));
        }
        if let Some(header) = only {
            command = command.arg(format!("--header-filter=^{}$", regex::escape(&header.to_string_lossy())));
        }
        let command = command.arg(abs);
        let failure = |error: String, process_id: Option<u64>| RunFailure {
            path: unit.clone(),
            configuration: Some(configuration.context.id.clone()),
            error,
            process_id,
        };
        let completed = match self.processes.run(command, call).await {
            Ok(completed) => completed,
            Err(err) => {
                output.failure = Some(failure(format!("clang-tidy did not start: {err}"), None));
                return output;
            }
        };
        let process_id = Some(completed.id.0);
        let exported = match tokio::fs::read_to_string(&export.0).await {
            Ok(yaml) => match parse::exported_fixes(&yaml) {
                Ok(exported) => exported.diagnostics,
                Err(reason) => {
                    output.failure = Some(failure(format!("unreadable --export-fixes output: {reason}"), process_id));
                    return output;
                }
            },
            // clang-tidy writes no file when it found nothing.
            Err(_) => Vec::new(),
        };
        if exported.is_empty() && !completed.succeeded() {
            output.failure = Some(failure(run_error("clang-tidy", &completed), process_id));
            return output;
        }
        let header = only.and_then(|header| roots.qualify(header));
        for exported in &exported {
            if let Some((path, diagnostic, mut replacements)) = convert(exported, abs, roots, texts).await {
                if let Some(header) = &header {
                    if path != *header {
                        continue;
                    }
                    replacements.retain(|(fix, _)| fix == header);
                }
                output.replacements.extend(replacements);
                output.diagnostics.push((path, diagnostic));
            }
        }
        output
    }

    /// Applies the collected replacements file by file through the workspace.
    async fn apply_fixes(
        &self,
        replacements: BTreeMap<QualifiedPath, Vec<Replacement>>,
        texts: &Texts<'_>,
        report: &mut TidyReport,
        call: &Call,
    ) {
        let roots = self.workspace.roots();
        for (path, replacements) in replacements {
            let Some(abs) = roots.lexical(&path) else { continue };
            let Some(before) = texts.get(&abs).await else { continue };
            let applied = parse::apply(before.text(), replacements);
            if applied.text == before.text() {
                continue;
            }
            let (replacements, name) = (applied.applied, path.to_string());
            match self.replace_whole(path.clone(), before.text().to_owned(), applied.text, call).await {
                Ok(diff) => report.changed.push(Changed { path, replacements, diff }),
                Err(err) => report.failures.push(RunFailure {
                    path: name,
                    configuration: None,
                    error: format!("fix-its not applied: {}", crate::text::error_chain(&err)),
                    process_id: None,
                }),
            }
        }
    }
}

/// Removes an export file when dropped (also when the run is cancelled).
struct ExportFile(PathBuf);

impl Drop for ExportFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Sorts by position, check and message, and keeps one of each position, check and message:
/// a header's finding is reported by every unit that includes it, a macro's by every expansion
/// (with other notes each time).
fn sort_diagnostics(diagnostics: &mut Vec<TidyDiagnostic>) {
    let key = |d: &TidyDiagnostic| {
        (d.diagnostic.range.start, check_name(&d.diagnostic), d.diagnostic.message.clone(), d.diagnostic.range.end)
    };
    diagnostics.sort_by_cached_key(key);
    diagnostics.dedup_by(|later, kept| {
        let same = (later.diagnostic.range.start, &later.diagnostic.code, &later.diagnostic.message)
            == (kept.diagnostic.range.start, &kept.diagnostic.code, &kept.diagnostic.message);
        if same {
            kept.count += later.count;
        }
        same
    });
}

/// The check that reported a diagnostic (its `code`; empty without one).
pub fn check_name(diagnostic: &Diagnostic) -> String {
    match &diagnostic.code {
        Some(DiagnosticCode::Text(text)) => text.clone(),
        Some(DiagnosticCode::Number(n)) => n.to_string(),
        None => String::new(),
    }
}

/// One exported diagnostic in the clangd shape, with its file and raw replacements; `None` when it
/// lies outside the managed roots.
async fn convert(
    exported: &ExportedDiagnostic,
    unit: &Path,
    roots: &Roots,
    texts: &Texts<'_>,
) -> Option<(QualifiedPath, TidyDiagnostic, Vec<(QualifiedPath, Replacement)>)> {
    let build = exported.build_directory.as_str();
    let message = &exported.diagnostic_message;
    let abs = parse::exported_path(build, &message.file_path).unwrap_or_else(|| unit.to_path_buf());
    let path = roots.qualify(&abs)?;
    let offsets = texts.get(&abs).await?;
    let offset = message.file_offset;
    let same_file = |file: &str| parse::exported_path(build, file).as_deref() == Some(abs.as_path());
    let range = if let Some(r) = message.ranges.iter().find(|r| same_file(&r.file_path) && r.file_offset == offset) {
        offsets.range(r.file_offset, r.length)
    } else if let Some(r) = message.replacements.iter().find(|r| same_file(&r.file_path) && r.offset == offset) {
        offsets.range(r.offset, r.length)
    } else {
        offsets.range(offset, offsets.token_length(offset))
    };
    let mut related = Vec::new();
    for note in &exported.notes {
        let Some(note_abs) = parse::exported_path(build, &note.file_path) else { continue };
        let (Some(note_path), Some(note_text)) = (roots.qualify(&note_abs), texts.get(&note_abs).await) else {
            continue;
        };
        let range = note_text.range(note.file_offset, note_text.token_length(note.file_offset));
        related.push(RelatedInformation {
            location: Location { path: note_path.to_string(), range },
            message: note.message.clone(),
        });
    }
    let mut fixes = Vec::new();
    let mut replacements = Vec::new();
    for replacement in &message.replacements {
        let Some(fix_abs) = parse::exported_path(build, &replacement.file_path) else { continue };
        let (Some(fix_path), Some(fix_text)) = (roots.qualify(&fix_abs), texts.get(&fix_abs).await) else {
            continue;
        };
        fixes.push(Fix {
            path: fix_path.to_string(),
            range: fix_text.range(replacement.offset, replacement.length),
            old_text: fix_text.slice(replacement.offset, replacement.length).to_owned(),
            new_text: replacement.replacement_text.clone(),
        });
        let raw = Replacement {
            offset: replacement.offset,
            length: replacement.length,
            text: replacement.replacement_text.clone(),
        };
        replacements.push((fix_path, raw));
    }
    let diagnostic = Diagnostic {
        range,
        severity: Some(severity(&exported.level)),
        message: message.message.clone(),
        code: Some(DiagnosticCode::Text(exported.diagnostic_name.clone())),
        source: Some("clang-tidy".to_owned()),
        tags: Vec::new(),
        related,
    };
    Some((path, TidyDiagnostic { diagnostic, fixes, count: 1 }, replacements))
}

fn severity(level: &str) -> Severity {
    match level {
        "Error" => Severity::Error,
        "Remark" => Severity::Information,
        _ => Severity::Warning,
    }
}
