//! Tests of the affected-test selection on a hand-made codemodel: two libraries, three test
//! executables, a test running a script, and fingerprints from a map.

use std::cell::RefCell;
use std::collections::HashMap;

use super::*;
use crate::cmake::codemodel::Target;

fn target(name: &str, artifact: &str, dependencies: &[&str]) -> Target {
    Target {
        name: name.into(),
        id: format!("{name}::@1"),
        kind: "executable".into(),
        artifacts: vec![PathBuf::from(artifact)],
        dependencies: dependencies.iter().map(|d| (*d).to_owned()).collect(),
        sources: Vec::new(),
        link_files: Vec::new(),
        defined_at: None,
    }
}

fn model() -> Configuration {
    Configuration {
        name: "Debug".into(),
        source: "/p".into(),
        build: "/p/b".into(),
        targets: vec![
            target("base", "/p/b/libbase.a", &[]),
            target("core", "/p/b/libcore.a", &["base"]),
            target("core_test", "/p/b/core_test", &["core"]),
            target("base_test", "/p/b/base_test", &["base"]),
            target("app_test", "/p/b/app_test", &[]),
        ],
    }
}

fn listed(name: &str, command: &[&str]) -> ListedTest {
    ListedTest { name: name.into(), command: command.iter().map(|c| (*c).to_owned()).collect() }
}

fn tests() -> Vec<ListedTest> {
    vec![
        listed("core", &["/p/b/core_test"]),
        listed("base", &["/p/b/base_test", "/p/data/input.txt"]),
        listed("app", &["/p/b/app_test"]),
        listed("script", &["/bin/sh", "run.sh"]),
    ]
}

struct Files(RefCell<HashMap<PathBuf, Fingerprint>>);

impl Files {
    fn new() -> Files {
        let files = ["/p/b/libbase.a", "/p/b/libcore.a", "/p/b/core_test", "/p/b/base_test", "/p/b/app_test"];
        let mut map: HashMap<PathBuf, Fingerprint> = files.iter().map(|f| (PathBuf::from(f), (1, 10))).collect();
        map.insert("/p/data/input.txt".into(), (1, 3));
        Files(RefCell::new(map))
    }

    fn get(&self, path: &Path) -> Option<Fingerprint> {
        self.0.borrow().get(path).copied()
    }

    fn touch(&self, path: &str, at: u128) {
        self.0.borrow_mut().get_mut(Path::new(path)).expect("a known file").0 = at;
    }

    /// The record after every test passed now.
    fn all_passed(&self, model: &Configuration) -> Record {
        let mut record = Record::default();
        let taken = tests()
            .iter()
            .map(|t| (t.name.clone(), inputs(t, model).map(|i| fingerprints(&i, &|p| self.get(p))).unwrap_or_default()))
            .collect();
        let outcomes: Vec<(String, Option<bool>)> = tests().iter().map(|t| (t.name.clone(), Some(true))).collect();
        update(&mut record, &outcomes, &taken);
        record
    }
}

fn shown(selection: &TestSelection) -> String {
    let mut res: Vec<String> = selection.selected.iter().map(|(name, reason)| format!("{name}: {reason:?}")).collect();
    res.push(format!("not selected: {}", selection.not_selected));
    res.join("\n")
}

#[test]
fn a_library_change_selects_the_tests_of_every_executable_linking_it() {
    let (model, files) = (model(), Files::new());
    let record = files.all_passed(&model);
    // Nothing changed: only the test that runs no target's artifact.
    let selection = select(Select::Affected, &tests(), Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(shown(&selection), "script: NotAnArtifact\nnot selected: 3");
    files.touch("/p/b/libbase.a", 7);
    let selection = select(Select::Affected, &tests(), Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(
        shown(&selection),
        "core: Changed { target: Some(\"base\"), path: \"/p/b/libbase.a\", modified_ns: Some(7) }\n\
         base: Changed { target: Some(\"base\"), path: \"/p/b/libbase.a\", modified_ns: Some(7) }\n\
         script: NotAnArtifact\nnot selected: 1"
    );
}

#[test]
fn command_line_files_count_as_inputs() {
    let (model, files) = (model(), Files::new());
    let record = files.all_passed(&model);
    files.touch("/p/data/input.txt", 5);
    let selection = select(Select::Affected, &tests(), Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(
        shown(&selection),
        "base: Changed { target: None, path: \"/p/data/input.txt\", modified_ns: Some(5) }\nscript: NotAnArtifact\nnot selected: 2"
    );
}

#[test]
fn failures_and_unknown_tests_are_always_selected_and_failed_selects_failures() {
    let (model, files) = (model(), Files::new());
    let mut record = files.all_passed(&model);
    update(&mut record, &[("core".into(), Some(false)), ("app".into(), None)], &BTreeMap::new());
    record.tests.remove("base");
    let selection = select(Select::Affected, &tests(), Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(shown(&selection), "core: LastFailed\nbase: NeverPassed\nscript: NotAnArtifact\nnot selected: 1");
    let selection = select(Select::Failed, &tests(), Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(shown(&selection), "core: LastFailed\nnot selected: 3");
}

#[test]
fn no_earlier_run_selects_everything_and_all_selects_nothing_here() {
    let (model, files) = (model(), Files::new());
    let selection = select(Select::Affected, &tests(), Some(&model), None, |p| files.get(p));
    assert_eq!(selection.selected.len(), 4);
    assert!(selection.selected.iter().all(|(_, reason)| *reason == Reason::NoEarlierRun));
    let selection = select(Select::All, &tests(), Some(&model), None, |p| files.get(p));
    assert_eq!(shown(&selection), "not selected: 4");
}

#[test]
fn a_removed_dependency_changes_the_test() {
    let (mut model, files) = (model(), Files::new());
    let record = files.all_passed(&model);
    model.targets[2].dependencies.clear();
    let selection = select(Select::Affected, &tests()[..1], Some(&model), Some(&record), |p| files.get(p));
    assert_eq!(
        shown(&selection),
        "core: Changed { target: None, path: \"/p/b/libbase.a\", modified_ns: None }\nnot selected: 0"
    );
}

#[test]
fn select_values() {
    assert_eq!(
        ["all", "affected", "failed"].map(|s| Select::parse(s).map(Select::as_str)),
        [Some("all"), Some("affected"), Some("failed")]
    );
    assert_eq!(Select::parse("Affected"), None);
}
