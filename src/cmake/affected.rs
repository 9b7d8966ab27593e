//! `cmake_test` around one CTest execution: the selection of `select` (`impact.rs`) from CTest's
//! test listing (`ctest --show-only=json-v1`), the build directory's codemodel and the record of
//! last runs, and the record's update after the run.
//!
//! The record is `storage/.cmake-tests/<hex of the profile's label>.json`; a record that cannot be
//! read counts as no earlier run, one that cannot be written is said in the outcome's error.
//!
//! Architecture invariant: every run of the execution updates the record, whatever `select` was,
//! with the inputs' fingerprints taken before the run (so a rebuild during it is never missed).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use super::impact::{self, Fingerprint, ListedTest, Record, Select};
use super::output::Reporter;
use super::profile::Execution;
use super::{CmakeService, Profile, TestOutcome, TestRequest, TestStatus, codemodel, label, preset_of};
use crate::call::Call;
use crate::process::Timeout;

/// The directory of the records under the storage root.
pub const RECORD_DIR: &str = ".cmake-tests";

/// A file's fingerprint now (`None` when it does not exist).
pub fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let meta = std::fs::metadata(path).ok()?;
    let modified = meta.modified().ok()?.duration_since(UNIX_EPOCH).ok()?.as_nanos();
    Some((modified, meta.len()))
}

/// The commands `add_test` names in the `CTestTestfile.cmake` files of a build tree (following
/// `subdirs`), the first for each test.
fn testfile_commands(build: &Path) -> HashMap<String, Vec<String>> {
    let mut res = HashMap::new();
    let mut pending = vec![build.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(text) = std::fs::read_to_string(dir.join("CTestTestfile.cmake")) else { continue };
        for command in super::cmake_lang::commands(&text) {
            match command.name.to_ascii_lowercase().as_str() {
                "add_test" if command.args.len() >= 2 => {
                    let args: Vec<String> = command.args.iter().map(|a| a.text.clone()).collect();
                    res.entry(args[0].clone()).or_insert_with(|| args[1..].to_vec());
                }
                "subdirs" => pending.extend(command.args.iter().map(|a| dir.join(&a.text))),
                _ => {}
            }
        }
    }
    res
}

impl CmakeService {
    /// The tests CTest lists for an execution with their commands; `None` when they cannot be
    /// listed (not configured, for example).
    pub(super) async fn show_tests(
        &self,
        profile: &Profile,
        execution: &Execution,
        call: &Call,
    ) -> Option<Vec<ListedTest>> {
        let (_, build) = self.execution_dir(profile, execution).ok()?;
        let listing = self.show_only(profile, execution, call).await?;
        let tests = listing.get("tests")?.as_array()?;
        // CTest leaves out the command of a test whose executable is not built yet; the test
        // files of the build tree name it.
        let mut written: Option<HashMap<String, Vec<String>>> = None;
        Some(
            tests
                .iter()
                .filter_map(|t| {
                    let name = t.get("name")?.as_str()?.to_owned();
                    let mut command: Vec<String> = t
                        .get("command")
                        .and_then(serde_json::Value::as_array)
                        .map(|c| c.iter().filter_map(|a| a.as_str().map(str::to_owned)).collect())
                        .unwrap_or_default();
                    if command.is_empty()
                        && let Some(build) = &build
                    {
                        let written = written.get_or_insert_with(|| testfile_commands(build));
                        command = written.get(&name).cloned().unwrap_or_default();
                    }
                    Some(ListedTest { name, command })
                })
                .collect(),
        )
    }

    /// `project/…` or `storage/…` for a managed path, else its file name.
    fn shown_path(&self, path: &Path) -> String {
        self.roots().qualify(path).map_or_else(
            || path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned()),
            |q| q.to_string(),
        )
    }

    fn record_path(&self, key: &str) -> PathBuf {
        let hex: String = key.bytes().map(|b| format!("{b:02x}")).collect();
        self.roots().storage().join(RECORD_DIR).join(format!("{hex}.json"))
    }

    /// The record of an execution's last runs; `None` when there is none (or it cannot be read).
    pub fn test_record(&self, profile: &Profile, preset: Option<&str>) -> Option<Record> {
        let text = std::fs::read_to_string(self.record_path(&label(profile, preset))).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn write_record(&self, key: &str, record: &Record) -> Result<(), String> {
        let path = self.record_path(key);
        let text = serde_json::to_string(record).map_err(|err| err.to_string())?;
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, text))
            .map_err(|err| format!("cannot remember the test results under `storage/{RECORD_DIR}`: {err}"))
    }

    /// The codemodel configuration of an execution's build directory matching the profile's.
    pub(super) fn configuration_model(
        &self,
        profile: &Profile,
        execution: &Execution,
    ) -> Option<codemodel::Configuration> {
        let (_, build) = self.execution_dir(profile, execution).ok()?;
        let configurations = codemodel::read(&build?)?;
        let wanted = profile.configuration.as_deref();
        let index = configurations.iter().position(|c| Some(c.name.as_str()) == wanted).unwrap_or(0);
        configurations.into_iter().nth(index)
    }

    /// One execution of `cmake_test` with its selection: what `select` chose runs (nothing runs when
    /// it chose nothing), then the record is updated.
    pub(super) async fn test_selected(
        &self,
        profile: &Profile,
        execution: &Execution,
        request: &TestRequest,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> TestOutcome {
        let preset = preset_of(execution);
        let key = label(profile, preset);
        let listed = self.show_tests(profile, execution, call).await.map(|all| {
            all.into_iter().filter(|t| request.names.is_empty() || request.names.contains(&t.name)).collect::<Vec<_>>()
        });
        let model = self.configuration_model(profile, execution);
        let mut record = self.test_record(profile, preset);
        let selection = match (&listed, request.select) {
            (Some(listed), Select::Affected | Select::Failed) => {
                let mut selection =
                    impact::select(request.select, listed, model.as_ref(), record.as_ref(), fingerprint);
                for (_, reason) in &mut selection.selected {
                    if let impact::Reason::Changed { path, .. } = reason {
                        *path = self.shown_path(Path::new(path));
                    }
                }
                Some(selection)
            }
            _ => None,
        };
        let mut names = request.names.clone();
        if let Some(selection) = &selection {
            if selection.selected.is_empty() {
                return TestOutcome {
                    profile: profile.name.clone(),
                    preset: preset.map(str::to_owned),
                    configuration: self.execution_configuration(profile, preset, true),
                    tests: Vec::new(),
                    error: None,
                    process_id: None,
                    selection: Some(selection.clone()),
                };
            }
            names = selection.selected.iter().map(|(name, _)| name.clone()).collect();
        }
        // The inputs' fingerprints before the run, for the tests that pass.
        let taken: BTreeMap<String, BTreeMap<String, Fingerprint>> = listed
            .iter()
            .flatten()
            .filter_map(|test| {
                let inputs = impact::inputs(test, model.as_ref()?)?;
                Some((test.name.clone(), impact::fingerprints(&inputs, &fingerprint)))
            })
            .collect();
        let request = TestRequest { names, ..request.clone() };
        let mut outcome = self.test_one(profile, execution, &request, timeout, reporter, call).await;
        outcome.selection = selection;
        let results: Vec<(String, Option<bool>)> = outcome
            .tests
            .iter()
            .map(|t| {
                let passed = match t.status {
                    TestStatus::Passed => Some(true),
                    TestStatus::Failed | TestStatus::NotRun => Some(false),
                    TestStatus::Skipped => None,
                };
                (t.name.clone(), passed)
            })
            .collect();
        if !results.is_empty() {
            let record = record.get_or_insert_with(Record::default);
            impact::update(record, &results, &taken);
            if let Err(reason) = self.write_record(&key, record) {
                outcome.error = Some(outcome.error.map_or(reason.clone(), |error| format!("{error}; {reason}")));
            }
        }
        outcome
    }
}
