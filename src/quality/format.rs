//! `quality_format`: clang-format on one C/C++ file or every C/C++ file of a tree.
//!
//! Files are read, then formatted in batches (one clang-format process per file would cost more
//! than the formatting) with `--output-replacements-xml`, so the `.clang-format` nearest to each
//! file applies (or the named style); each file's replacements, against the text read before the
//! run, give the formatted text, its diff, and, when applying, the edit through the workspace.
//!
//! Architecture invariant: a tree run skips hidden directories (the workspace's file walk) and
//! CMake build trees (known build directories and any directory holding a `CMakeCache.txt`).
//! Architecture invariant: the budget counts files that need formatting; once reached, no new file
//! starts, and the files left unchecked are counted.
//! Architecture invariant: without `style`, a file that no `.clang-format` or `_clang-format` (in
//! its directory or above) applies to gets clang-format's fallback style; the report counts such
//! files, and a tree run never writes the fallback style (only a named `style` restyles a tree
//! that has no style file).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::model::RunFailure;
use super::parse::{self, Replacement};
use super::{Error, QualityService, RUN_TIMEOUT, StdoutLines, run_error, run_parallel};

/// Files one clang-format run formats at most.
const BATCH_FILES: usize = 32;
use crate::call::{Call, Progress};
use crate::compile_db::Database;
use crate::cpp_file;
use crate::process::Timeout;
use crate::toolchain::{Toolset, tool_command};
use crate::workspace::diff::{self, FileDiff};
use crate::workspace::find::FilePattern;
use crate::workspace::path::QualifiedPath;

/// What to format.
#[derive(Debug, Clone)]
pub struct FormatRequest {
    pub path: QualifiedPath,
    /// A clang-format style (`LLVM`, `Google`, `{BasedOnStyle: LLVM, IndentWidth: 8}`); `None` =
    /// the project's `.clang-format` (clang-format's LLVM fallback without one).
    pub style: Option<String>,
    /// Write the formatted text; otherwise only report.
    pub apply: bool,
    /// The toolset id or name whose clang-format runs.
    pub toolset: String,
    /// Files needing changes reported at most.
    pub max_files: usize,
}

/// One file that is (or was) not formatted.
#[derive(Debug)]
pub struct FormatFile {
    pub path: QualifiedPath,
    pub replacements: usize,
    /// clang-format could not format all of it (a syntax it does not understand).
    pub incomplete: bool,
    /// The change formatting makes (or made, when applied).
    pub diff: FileDiff,
    pub applied: bool,
    /// No style file applies and no `style` was given: the change is clang-format's fallback style.
    pub fallback: bool,
}

#[derive(Debug)]
pub struct FormatReport {
    pub path: QualifiedPath,
    pub toolset: String,
    pub files_total: usize,
    pub files_checked: usize,
    /// Files that were already formatted.
    pub formatted: usize,
    /// Files needing changes, sorted by path, at most `max_files`.
    pub files: Vec<FormatFile>,
    /// Files needing changes beyond `max_files` (checked, not listed, not written).
    pub more_files: usize,
    pub failures: Vec<RunFailure>,
    /// Without `style`: the files no style file applies to (of `files_total`), and how many of
    /// those checked the fallback style would change.
    pub fallback_files: usize,
    pub fallback_changes: usize,
    /// Whether the run was on a directory (a tree is never written in the fallback style).
    pub tree: bool,
    /// Files of a tree run left out: not C/C++ (by extension or first lines), and inside build trees.
    pub skipped: Skipped,
}

/// What a tree run left out, and why.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// Neither the extension nor the first lines (`// -*- C++ -*-`) say C/C++.
    pub not_cpp: usize,
    /// Of those, files without any extension (headers such as GSL's `include/gsl/span` are C/C++
    /// only by their first lines).
    pub without_extension: usize,
    /// Inside CMake build trees.
    pub in_build_trees: usize,
    /// clang-tidy only: translation units no selected compilation database lists.
    pub no_compile_command: usize,
    /// clang-tidy only: headers, checked only as part of the units that include them.
    pub headers: usize,
}

enum Outcome {
    Formatted,
    Changes { before: String, after: String, replacements: usize, incomplete: bool },
    Failed(RunFailure),
}

impl QualityService {
    pub async fn format(&self, request: FormatRequest, call: &Call) -> Result<FormatReport, Error> {
        let (abs, is_dir) = self.locate(&request.path)?;
        let toolset = self.toolchain.find(&request.toolset).await?;
        let missing = || Error::MissingTool { toolset: toolset.id().to_string(), tool: "clang-format" };
        let executable = toolset.tool("clang-format").ok_or_else(missing)?.path.clone();
        let known = self.databases().await;
        let (files, skipped) = if is_dir {
            self.tree_sources(&request.path, &abs, &known, call).await?
        } else if super::cpp_evidence(&request.path, &abs, &known).is_some() {
            (vec![(request.path.clone(), abs)], Skipped::default())
        } else {
            return Err(Error::NotCpp { path: request.path.clone() });
        };
        let n_files = files.len();
        let fallback: HashSet<QualifiedPath> = match request.style {
            Some(_) => HashSet::new(),
            None => {
                let mut known = HashMap::new();
                files.iter().filter(|(_, abs)| !has_style_file(abs, &mut known)).map(|(path, _)| path.clone()).collect()
            }
        };
        let style = request.style.clone().unwrap_or_else(|| "file".to_owned());
        let unformatted = AtomicUsize::new(0);
        let mut outcomes: Vec<(QualifiedPath, Outcome)> = Vec::new();
        call.progress.report(0.0, Some(n_files as f64), format!("0 of {n_files} files checked"));
        // One clang-format per batch of files: a process per file would cost more than formatting.
        let batch = n_files.div_ceil(super::parallelism()).clamp(1, BATCH_FILES);
        let batches: Vec<Vec<(QualifiedPath, PathBuf)>> = files.chunks(batch).map(<[_]>::to_vec).collect();
        run_parallel(
            batches,
            call,
            |_| unformatted.load(Ordering::Relaxed) < request.max_files,
            |batch| {
                let (toolset, executable, style) = (&toolset, &executable, style.as_str());
                async move { self.format_batch(batch, toolset, executable, style, call).await }
            },
            |done: Vec<(QualifiedPath, Outcome)>, _| {
                let changed = done.iter().filter(|(_, outcome)| matches!(outcome, Outcome::Changes { .. })).count();
                unformatted.fetch_add(changed, Ordering::Relaxed);
                outcomes.extend(done);
                let n_done = outcomes.len();
                call.progress.report(
                    n_done as f64,
                    Some(n_files as f64),
                    format!("{n_done} of {n_files} files checked"),
                );
            },
        )
        .await?;
        outcomes.sort_by(|a, b| a.0.cmp(&b.0));
        let mut report = FormatReport {
            path: request.path.clone(),
            toolset: toolset.id().to_string(),
            files_total: n_files,
            files_checked: outcomes.len(),
            formatted: 0,
            more_files: 0,
            files: Vec::new(),
            failures: Vec::new(),
            fallback_files: fallback.len(),
            fallback_changes: 0,
            tree: is_dir,
            skipped,
        };
        for (path, outcome) in outcomes {
            let is_fallback = fallback.contains(&path);
            if is_fallback && matches!(outcome, Outcome::Changes { .. }) {
                report.fallback_changes += 1;
            }
            match outcome {
                Outcome::Formatted => report.formatted += 1,
                Outcome::Failed(failure) => report.failures.push(failure),
                Outcome::Changes { .. } if report.files.len() == request.max_files => report.more_files += 1,
                Outcome::Changes { before, after, replacements, incomplete } => {
                    let mut file = FormatFile {
                        diff: diff::diff_texts(&path, &before, &after),
                        path,
                        replacements,
                        incomplete,
                        applied: false,
                        fallback: is_fallback,
                    };
                    if request.apply && !(is_fallback && is_dir) {
                        match self.replace_whole(file.path.clone(), before, after, call).await {
                            Ok(diff) => {
                                file.diff = diff;
                                file.applied = true;
                            }
                            Err(err) => report.failures.push(RunFailure {
                                path: file.path.to_string(),
                                configuration: None,
                                error: format!("not formatted: {err}"),
                                process_id: None,
                            }),
                        }
                    }
                    report.files.push(file);
                }
            }
        }
        Ok(report)
    }

    /// The C/C++ files of a tree (as `known` databases help decide), outside CMake build trees,
    /// sorted by path, and what it skipped.
    pub(super) async fn tree_sources(
        &self,
        path: &QualifiedPath,
        abs: &Path,
        known: &[Database],
        call: &Call,
    ) -> Result<(Vec<(QualifiedPath, PathBuf)>, Skipped), Error> {
        let workspace = self.workspace.clone();
        let (dir, quiet) = (path.clone(), Call::new(Progress::disabled(), call.cancel.clone(), None));
        let found = tokio::task::spawn_blocking(move || {
            let everything = FilePattern::new("*").expect("`*` is a valid pattern");
            workspace.find_files(&dir, &everything, &quiet)
        })
        .await
        .map_err(|_| Error::Cancelled)??;
        let build_dirs: Vec<QualifiedPath> =
            self.contexts.borrow().iter().map(|context| context.build_directory.clone()).collect();
        let roots = self.workspace.roots();
        let mut build_trees: HashMap<PathBuf, bool> = HashMap::new();
        let mut res = Vec::new();
        let mut skipped = Skipped::default();
        for file in found.files {
            let Some(file_abs) = roots.lexical(&file.path) else { continue };
            if build_dirs.iter().any(|dir| file.path.starts_with(dir))
                || in_build_tree(&file_abs, abs, &mut build_trees)
            {
                skipped.in_build_trees += 1;
                continue;
            }
            if super::cpp_evidence(&file.path, &file_abs, known).is_none() {
                skipped.not_cpp += 1;
                skipped.without_extension += usize::from(cpp_file::extension(&file.path).is_none());
                continue;
            }
            res.push((file.path, file_abs));
        }
        Ok((res, skipped))
    }

    /// Runs one clang-format on `batch`: each file's text is read first, and the change is computed
    /// against that text (an edit later refuses a file that changed since).
    async fn format_batch(
        &self,
        batch: Vec<(QualifiedPath, PathBuf)>,
        toolset: &Toolset,
        executable: &Path,
        style: &str,
        call: &Call,
    ) -> Vec<(QualifiedPath, Outcome)> {
        let failed = |path: &QualifiedPath, error: String, process_id: Option<u64>| {
            Outcome::Failed(RunFailure { path: path.to_string(), configuration: None, error, process_id })
        };
        let mut res = Vec::with_capacity(batch.len());
        let mut readable = Vec::with_capacity(batch.len());
        for (path, abs) in batch {
            match tokio::fs::read(&abs).await.map(String::from_utf8) {
                Ok(Ok(text)) => readable.push((path, abs, text)),
                Ok(Err(_)) => res.push((path.clone(), failed(&path, "not UTF-8 text".to_owned(), None))),
                Err(err) => res.push((path.clone(), failed(&path, format!("unreadable: {err}"), None))),
            }
        }
        if readable.is_empty() {
            return res;
        }
        let stdout = Arc::new(StdoutLines::default());
        let command = tool_command(toolset, executable, self.workspace.roots().project())
            .arg(format!("--style={style}"))
            .arg("--output-replacements-xml")
            .args(readable.iter().map(|(_, abs, _)| abs.as_os_str()))
            .timeout(Timeout::total(RUN_TIMEOUT))
            .on_line(stdout.callback());
        let (error, process_id) = match self.processes.run(command, call).await {
            Ok(completed) if completed.succeeded() => (None, Some(completed.id.0)),
            Ok(completed) => (Some(run_error("clang-format", &completed)), Some(completed.id.0)),
            Err(err) => (Some(format!("clang-format did not start: {err}")), None),
        };
        let output = stdout.take();
        let documents = parse::split_documents(&output);
        for (idx, (path, _, before)) in readable.into_iter().enumerate() {
            let outcome = match (&error, documents.get(idx)) {
                (Some(error), _) => failed(&path, error.clone(), process_id),
                (None, None) => failed(&path, "clang-format printed no replacements".to_owned(), process_id),
                (None, Some(document)) => match parse::format_replacements(document) {
                    Err(reason) => failed(&path, format!("unreadable clang-format output: {reason}"), process_id),
                    Ok(parsed) => {
                        let replacements: Vec<Replacement> = parsed.replacements;
                        let applied = parse::apply(&before, replacements);
                        if applied.text == before {
                            Outcome::Formatted
                        } else {
                            let (after, replacements) = (applied.text, applied.applied);
                            Outcome::Changes { before, after, replacements, incomplete: parsed.incomplete }
                        }
                    }
                },
            };
            res.push((path, outcome));
        }
        res
    }
}

/// Whether a `.clang-format` or `_clang-format` in the directory of `file` or above it applies (as
/// clang-format's `--style=file` looks for one); `known` caches the answer per directory.
fn has_style_file(file: &Path, known: &mut HashMap<PathBuf, bool>) -> bool {
    let mut visited = Vec::new();
    let mut found = false;
    let mut dir = file.parent();
    while let Some(current) = dir {
        if let Some(&answer) = known.get(current) {
            found = answer;
            break;
        }
        visited.push(current.to_path_buf());
        if current.join(".clang-format").is_file() || current.join("_clang-format").is_file() {
            found = true;
            break;
        }
        dir = current.parent();
    }
    for dir in visited {
        known.insert(dir, found);
    }
    found
}

/// Whether `file` lies in a directory below `top` (or `top` itself) that holds a `CMakeCache.txt`.
fn in_build_tree(file: &Path, top: &Path, known: &mut HashMap<PathBuf, bool>) -> bool {
    let mut dir = file.parent();
    while let Some(current) = dir {
        if !current.starts_with(top) {
            return false;
        }
        let is_build = *known.entry(current.to_path_buf()).or_insert_with(|| current.join("CMakeCache.txt").is_file());
        if is_build {
            return true;
        }
        dir = current.parent();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn style_files_apply_to_their_directory_and_below() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir_all(top.join("styled/deep")).unwrap();
        std::fs::create_dir_all(top.join("plain")).unwrap();
        std::fs::write(top.join("styled/_clang-format"), "BasedOnStyle: LLVM\n").unwrap();
        let mut known = HashMap::new();
        assert!(has_style_file(&top.join("styled/deep/a.cpp"), &mut known));
        assert!(has_style_file(&top.join("styled/b.cpp"), &mut known));
        // The temporary directory has no style file above it, unless the machine put one there.
        let above =
            top.ancestors().skip(1).any(|d| d.join(".clang-format").is_file() || d.join("_clang-format").is_file());
        assert_eq!(has_style_file(&top.join("plain/c.cpp"), &mut known), above);
    }

    #[test]
    fn build_trees_are_recognised_by_their_cache() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir_all(top.join("build/CMakeFiles")).unwrap();
        std::fs::create_dir_all(top.join("src")).unwrap();
        std::fs::write(top.join("build/CMakeCache.txt"), "").unwrap();
        let mut known = HashMap::new();
        assert!(in_build_tree(&top.join("build/CMakeFiles/a.cpp"), top, &mut known));
        assert!(!in_build_tree(&top.join("src/a.cpp"), top, &mut known));
        // Above the tree's top nothing is looked at.
        assert!(!in_build_tree(&top.join("build/a.cpp"), &top.join("build/x"), &mut known));
    }
}
