//! The quality value types the tools serialize as `structuredContent`: clang-tidy diagnostics in
//! `clangd::model`'s diagnostic shape plus their fix-its, grouped per file and per agreeing
//! configurations.
//!
//! These are wire contracts, like `clangd::model`: a change here is a schema change.
//!
//! Architecture invariant: positions follow `clangd::model` (one-based lines, zero-based code
//! points, half-open ranges); every path is a qualified path (`project/…`, `storage/…`, `root/…`).

use schemars::JsonSchema;
use serde::Serialize;

use crate::clangd::model::{Diagnostic, SourceRange};

/// One fix-it: replace `old_text` at `range` of `path` with `new_text`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Fix {
    pub path: String,
    pub range: SourceRange,
    pub old_text: String,
    pub new_text: String,
}

/// A clang-tidy diagnostic: the clangd shape (`code` is the check name, `source` `clang-tidy`)
/// with its fix-its, listed once however often clang-tidy reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TidyDiagnostic {
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
    pub fixes: Vec<Fix>,
    /// How many times clang-tidy reported this check and message at this position (once per
    /// expansion of a macro, once per translation unit that includes a header); the notes and
    /// fix-its are those of the first report.
    pub count: u32,
}

/// The diagnostics of one file that one or more configurations agree on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TidyFile {
    /// The configurations that gave this answer.
    pub configurations: Vec<String>,
    pub path: String,
    /// Sorted by range, then check name and message.
    pub diagnostics: Vec<TidyDiagnostic>,
}

/// A run that gave no answer: clang-tidy or clang-format failed for one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RunFailure {
    pub path: String,
    /// The configuration of a clang-tidy run; null for clang-format and for fixes.
    pub configuration: Option<String>,
    pub error: String,
    /// The run's process (read its output with process_get); null when none ran.
    pub process_id: Option<u64>,
}

/// How many findings one check had, listed or beyond the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CheckCount {
    pub check: String,
    pub findings: u64,
}
