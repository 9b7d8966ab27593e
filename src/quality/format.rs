//! `quality_format`: clang-format on one C/C++ file or every C/C++ file of a tree.
//!
//! Each file's current text goes to clang-format on stdin with `--assume-filename` (so the
//! `.clang-format` nearest to the file applies, or the named style) and
//! `--output-replacements-xml`; the replacements give the formatted text, its diff, and, when
//! applying, the edit through the workspace.
//!
//! Architecture invariant: a tree run skips hidden directories (the workspace's file walk) and
//! CMake build trees (known build directories and any directory holding a `CMakeCache.txt`).
//! Architecture invariant: the budget counts files that need formatting; once reached, no new file
//! starts, and the files left unchecked are counted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::model::RunFailure;
use super::parse::{self, Replacement};
use super::{Error, QualityService, RUN_TIMEOUT, StdoutLines, run_error, run_parallel};
use crate::call::{Call, Progress};
use crate::clangd::convert::is_cpp_source;
use crate::process::{Stdin, Timeout};
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
}

#[derive(Debug)]
pub struct FormatReport {
    pub path: QualifiedPath,
    pub toolset: String,
    pub files_total: usize,
    pub files_checked: usize,
    /// Files that were already formatted.
    pub formatted: usize,
    /// Files needing changes, sorted by path.
    pub files: Vec<FormatFile>,
    pub failures: Vec<RunFailure>,
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
        let files = if is_dir {
            self.tree_sources(&request.path, &abs, call).await?
        } else if is_cpp_source(&request.path) {
            vec![(request.path.clone(), abs)]
        } else {
            return Err(Error::NotCpp { path: request.path.clone() });
        };
        let n_files = files.len();
        let style = request.style.clone().unwrap_or_else(|| "file".to_owned());
        let unformatted = AtomicUsize::new(0);
        let mut outcomes: Vec<(QualifiedPath, Outcome)> = Vec::new();
        call.progress.report(0.0, Some(n_files as f64), format!("0 of {n_files} files checked"));
        let not_started = run_parallel(
            files,
            call,
            |_| unformatted.load(Ordering::Relaxed) < request.max_files,
            |(path, abs): (QualifiedPath, PathBuf)| {
                let (toolset, executable, style) = (&toolset, &executable, style.as_str());
                async move {
                    let outcome = self.format_one(&path, &abs, toolset, executable, style, call).await;
                    (path, outcome)
                }
            },
            |(path, outcome), n_done| {
                if matches!(outcome, Outcome::Changes { .. }) {
                    unformatted.fetch_add(1, Ordering::Relaxed);
                }
                call.progress.report(
                    n_done as f64,
                    Some(n_files as f64),
                    format!("{n_done} of {n_files} files checked"),
                );
                outcomes.push((path, outcome));
            },
        )
        .await?;
        outcomes.sort_by(|a, b| a.0.cmp(&b.0));
        let mut report = FormatReport {
            path: request.path.clone(),
            toolset: toolset.id().to_string(),
            files_total: n_files,
            files_checked: n_files - not_started,
            formatted: 0,
            files: Vec::new(),
            failures: Vec::new(),
        };
        for (path, outcome) in outcomes {
            match outcome {
                Outcome::Formatted => report.formatted += 1,
                Outcome::Failed(failure) => report.failures.push(failure),
                Outcome::Changes { before, after, replacements, incomplete } => {
                    let mut file = FormatFile {
                        diff: diff::diff_texts(&path, &before, &after),
                        path,
                        replacements,
                        incomplete,
                        applied: false,
                    };
                    if request.apply {
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

    /// The C/C++ files of a tree, outside CMake build trees, sorted by path.
    async fn tree_sources(
        &self,
        path: &QualifiedPath,
        abs: &Path,
        call: &Call,
    ) -> Result<Vec<(QualifiedPath, PathBuf)>, Error> {
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
        for file in found.files {
            if !is_cpp_source(&file.path) || build_dirs.iter().any(|dir| file.path.starts_with(dir)) {
                continue;
            }
            let Some(file_abs) = roots.lexical(&file.path) else { continue };
            if in_build_tree(&file_abs, abs, &mut build_trees) {
                continue;
            }
            res.push((file.path, file_abs));
        }
        Ok(res)
    }

    async fn format_one(
        &self,
        path: &QualifiedPath,
        abs: &Path,
        toolset: &Toolset,
        executable: &Path,
        style: &str,
        call: &Call,
    ) -> Outcome {
        let failure = |error: String, process_id: Option<u64>| {
            Outcome::Failed(RunFailure { path: path.to_string(), configuration: None, error, process_id })
        };
        let before = match tokio::fs::read(abs).await.map(String::from_utf8) {
            Ok(Ok(text)) => text,
            Ok(Err(_)) => return failure("not UTF-8 text".to_owned(), None),
            Err(err) => return failure(format!("unreadable: {err}"), None),
        };
        let stdout = Arc::new(StdoutLines::default());
        let command = tool_command(toolset, executable, self.workspace.roots().project())
            .arg(format!("--style={style}"))
            .arg("--output-replacements-xml")
            .arg(format!("--assume-filename={}", abs.display()))
            .stdin(Stdin::Bytes(before.clone().into_bytes()))
            .timeout(Timeout::total(RUN_TIMEOUT))
            .on_line(stdout.callback());
        let completed = match self.processes.run(command, call).await {
            Ok(completed) => completed,
            Err(err) => return failure(format!("clang-format did not start: {err}"), None),
        };
        let process_id = Some(completed.id.0);
        if !completed.succeeded() {
            return failure(run_error("clang-format", &completed), process_id);
        }
        let parsed = match parse::format_replacements(&stdout.take()) {
            Ok(parsed) => parsed,
            Err(reason) => return failure(format!("unreadable clang-format output: {reason}"), process_id),
        };
        let replacements: Vec<Replacement> = parsed.replacements;
        let applied = parse::apply(&before, replacements);
        if applied.text == before {
            return Outcome::Formatted;
        }
        Outcome::Changes { before, after: applied.text, replacements: applied.applied, incomplete: parsed.incomplete }
    }
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
