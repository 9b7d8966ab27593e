//! The structured parts of a `cmake_test` result beyond each case's status: the failing inner
//! cases of test frameworks, a flaky test's failed run, and what `select` chose.
//!
//! Architecture invariant: wire shapes only; every value comes from the `cmake` outcome.

use schemars::JsonSchema;
use serde::Serialize;

use crate::cmake::frameworks::Failure;
use crate::cmake::repeat::Flaky;
use crate::cmake::{Reason, TestSelection};
use crate::render::cmake_selection::{UNTRACKED, reason_text};

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename = "TestFailure")]
pub struct TestFailureItem {
    /// `Suite.Name` (GoogleTest) or the case's name with its sections after ` / `.
    pub case: String,
    /// `project/…`; null when the program named no file (or the case never finished).
    pub path: Option<String>,
    pub line: Option<u32>,
    /// The whole assertion message.
    pub message: String,
}

impl From<&Failure> for TestFailureItem {
    fn from(f: &Failure) -> TestFailureItem {
        TestFailureItem {
            case: f.case.clone(),
            path: f.path.as_ref().map(ToString::to_string),
            line: f.line,
            message: f.message.clone(),
        }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct FlakyItem {
    pub failed_on_run: u32,
    pub of: u32,
}

impl From<&Flaky> for FlakyItem {
    fn from(f: &Flaky) -> FlakyItem {
        FlakyItem { failed_on_run: f.failed_run, of: f.limit }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct SelectedTestItem {
    pub name: String,
    /// changed | never_passed | last_failed | not_an_artifact | no_earlier_run
    pub reason: &'static str,
    /// The target whose artifact changed.
    pub target: Option<String>,
    /// The changed input (`project/…`).
    pub changed: Option<String>,
    /// The reason as the text says it.
    pub why: String,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct TestSelectionItem {
    /// affected | failed
    pub mode: &'static str,
    pub selected: Vec<SelectedTestItem>,
    pub not_selected: usize,
    /// What the selection cannot see (affected only).
    pub untracked: Option<&'static str>,
}

impl From<&TestSelection> for TestSelectionItem {
    fn from(s: &TestSelection) -> TestSelectionItem {
        let selected = s
            .selected
            .iter()
            .map(|(name, reason)| {
                let (code, target, changed) = match reason {
                    Reason::Changed { target, path, .. } => ("changed", target.clone(), Some(path.clone())),
                    Reason::NeverPassed => ("never_passed", None, None),
                    Reason::LastFailed => ("last_failed", None, None),
                    Reason::NotAnArtifact => ("not_an_artifact", None, None),
                    Reason::NoEarlierRun => ("no_earlier_run", None, None),
                };
                SelectedTestItem { name: name.clone(), reason: code, target, changed, why: reason_text(reason) }
            })
            .collect();
        TestSelectionItem {
            mode: s.mode.as_str(),
            selected,
            not_selected: s.not_selected,
            untracked: (s.mode == crate::cmake::Select::Affected).then_some(UNTRACKED),
        }
    }
}
