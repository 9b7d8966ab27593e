//! Which CTest tests a change affects (`cmake_test` `select`): a test's inputs are its command's
//! executable, the artifacts of every target that executable's target depends on (the codemodel's
//! dependency closure), the files its link line names, and the files named on its command line.
//! A test is selected when one of those changed since it last passed on the profile (fingerprint:
//! modification time and size), when it never passed, failed last time, or runs no target's
//! artifact; `failed` selects the tests whose last recorded run failed.
//!
//! The record of last runs is one JSON file per profile and preset under `storage/.cmake-tests/`
//! (`record.rs` reads and writes it).
//!
//! Architecture invariant: pure; the file system is reached only through the `fingerprint`
//! function the caller passes.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::codemodel::Configuration;

/// `cmake_test` `select`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Select {
    #[default]
    All,
    Affected,
    Failed,
}

impl Select {
    pub fn parse(text: &str) -> Option<Select> {
        match text {
            "all" => Some(Select::All),
            "affected" => Some(Select::Affected),
            "failed" => Some(Select::Failed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Select::All => "all",
            Select::Affected => "affected",
            Select::Failed => "failed",
        }
    }
}

/// A file's modification time (nanoseconds since the epoch) and size.
pub type Fingerprint = (u128, u64);

/// A test as CTest lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedTest {
    pub name: String,
    /// The command, the executable first (absolute when it is a target's artifact).
    pub command: Vec<String>,
}

/// One test's last recorded run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct TestRecord {
    pub passed: bool,
    /// The inputs' fingerprints when it last passed (absolute path → fingerprint).
    #[serde(default)]
    pub inputs: BTreeMap<String, Fingerprint>,
}

/// The last runs of a profile's tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Record {
    pub tests: BTreeMap<String, TestRecord>,
}

/// Why a test was selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// An input changed since the test last passed: the target whose artifact it is (`None` for a
    /// file of the link or command line), the file (absolute here; the service qualifies it) and
    /// its modification time (`None`: it is gone or no longer an input).
    Changed {
        target: Option<String>,
        path: String,
        modified_ns: Option<u128>,
    },
    NeverPassed,
    LastFailed,
    /// Its command runs no target's artifact, so its inputs are unknown.
    NotAnArtifact,
    /// The profile has no earlier test run.
    NoEarlierRun,
}

/// The tests a selection chose, with why, and how many it left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSelection {
    pub mode: Select,
    pub selected: Vec<(String, Reason)>,
    pub not_selected: usize,
}

/// A test's inputs with the target each belongs to; `None` when its command runs no target's
/// artifact.
pub fn inputs(test: &ListedTest, model: &Configuration) -> Option<Vec<(PathBuf, Option<String>)>> {
    let executable = PathBuf::from(test.command.first()?);
    let target = model.target_with_artifact(&executable)?;
    let mut res: Vec<(PathBuf, Option<String>)> = Vec::new();
    let mut push = |path: PathBuf, target: Option<String>| {
        if !res.iter().any(|(p, _)| *p == path) {
            res.push((path, target));
        }
    };
    // Deepest dependencies first, so a library's change is named before the executables it relinked.
    for dependency in model.closure(&target.name).into_iter().rev() {
        for artifact in &dependency.artifacts {
            push(artifact.clone(), Some(dependency.name.clone()));
        }
    }
    for file in model.closure(&target.name).iter().flat_map(|t| &t.link_files) {
        push(file.clone(), None);
    }
    for arg in &test.command[1..] {
        let path = Path::new(arg);
        if path.is_absolute() {
            push(path.to_path_buf(), None);
        }
    }
    Some(res)
}

/// The fingerprints of `inputs` now (files that do not exist are left out).
pub fn fingerprints(
    inputs: &[(PathBuf, Option<String>)],
    fingerprint: &impl Fn(&Path) -> Option<Fingerprint>,
) -> BTreeMap<String, Fingerprint> {
    inputs.iter().filter_map(|(path, _)| Some((path.to_string_lossy().into_owned(), fingerprint(path)?))).collect()
}

/// Chooses among `tests` (in CTest's order) for `mode`; the inputs' current fingerprints come from
/// `fingerprint`. [`Select::All`] chooses nothing here: its caller runs every test.
pub fn select(
    mode: Select,
    tests: &[ListedTest],
    model: Option<&Configuration>,
    record: Option<&Record>,
    fingerprint: impl Fn(&Path) -> Option<Fingerprint>,
) -> TestSelection {
    let mut selected = Vec::new();
    for test in tests {
        let reason = match (mode, record.map(|r| r.tests.get(&test.name))) {
            (Select::All, _) => None,
            (_, None) => Some(Reason::NoEarlierRun),
            (Select::Failed, Some(last)) => last.filter(|last| !last.passed).map(|_| Reason::LastFailed),
            (Select::Affected, Some(None)) => Some(Reason::NeverPassed),
            (Select::Affected, Some(Some(last))) if !last.passed => Some(Reason::LastFailed),
            (Select::Affected, Some(Some(last))) => match model.and_then(|model| inputs(test, model)) {
                None => Some(Reason::NotAnArtifact),
                Some(inputs) => changed(&inputs, &last.inputs, &fingerprint),
            },
        };
        if let Some(reason) = reason {
            selected.push((test.name.clone(), reason));
        }
    }
    let not_selected = tests.len() - selected.len();
    TestSelection { mode, selected, not_selected }
}

/// The first input that differs from the fingerprints recorded at the last pass.
fn changed(
    inputs: &[(PathBuf, Option<String>)],
    recorded: &BTreeMap<String, Fingerprint>,
    fingerprint: &impl Fn(&Path) -> Option<Fingerprint>,
) -> Option<Reason> {
    for (path, target) in inputs {
        let now = fingerprint(path);
        if recorded.get(path.to_string_lossy().as_ref()) != now.as_ref() {
            return Some(Reason::Changed {
                target: target.clone(),
                path: path.to_string_lossy().into_owned(),
                modified_ns: now.map(|f| f.0),
            });
        }
    }
    // An input the test no longer has (a dependency removed) changes it too.
    let current = fingerprints(inputs, fingerprint);
    recorded.keys().find(|path| !current.contains_key(*path)).map(|path| Reason::Changed {
        target: None,
        path: path.clone(),
        modified_ns: None,
    })
}

/// The record after a run: each passed test with its inputs' fingerprints taken before the run,
/// each failed or not-run test as failed; skipped tests and tests that did not run keep theirs.
pub fn update(
    record: &mut Record,
    outcomes: &[(String, Option<bool>)],
    taken: &BTreeMap<String, BTreeMap<String, Fingerprint>>,
) {
    for (name, passed) in outcomes {
        match passed {
            Some(true) => {
                let inputs = taken.get(name).cloned().unwrap_or_default();
                record.tests.insert(name.clone(), TestRecord { passed: true, inputs });
            }
            Some(false) => {
                record.tests.insert(name.clone(), TestRecord { passed: false, inputs: BTreeMap::new() });
            }
            None => {}
        }
    }
}

#[cfg(test)]
mod tests;
