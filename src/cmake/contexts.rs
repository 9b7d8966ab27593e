//! Compilation contexts: the configurations whose build directory, compilation database and inputs
//! are confirmed in this server lifetime, published on a `tokio::sync::watch` channel (clangd
//! subscribes), and withdrawn when a workspace mutation changes one of their inputs.
//!
//! A context is confirmed only by a successful configure/generate (or a build that regenerated)
//! whose new File API reply listed its inputs; replies and databases found on disk never count.
//! Withdrawing leaves build trees and databases untouched; only configure (or a regenerating build)
//! brings a context back.
//!
//! Architecture invariant: the published list is sorted by id, holds only active contexts, and at
//! most one context per build directory.
//! Architecture invariant: the mutation observer only reads the touched input files (never the
//! workspace service, whose lock is held while it runs) and never blocks on anything but this
//! module's own short lock.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tokio::sync::watch;

use super::inputs::{self, Baseline, Cause, Digest};
use crate::toolchain::ToolsetId;
use crate::workspace::observer::{Mutation, MutationObserver};
use crate::workspace::path::{QualifiedPath, Roots};

/// Characters of a profile or preset name kept as they are in a context id (RFC 3986 unreserved).
const ID_KEPT: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');

/// One usable configuration for analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompilationContext {
    /// The percent-encoded profile name, plus `/<percent-encoded preset>` for a preset execution.
    pub id: String,
    pub toolset_id: ToolsetId,
    pub build_directory: QualifiedPath,
    /// `<build>/compile_commands.json`; it existed when the context was confirmed.
    pub compilation_database: QualifiedPath,
}

/// The id of a profile's (or one of its configure presets') context.
pub fn context_id(profile: &str, preset: Option<&str>) -> String {
    let mut res = utf8_percent_encode(profile, ID_KEPT).to_string();
    if let Some(preset) = preset {
        res.push('/');
        res.extend(utf8_percent_encode(preset, ID_KEPT));
    }
    res
}

/// The configurations one mutation withdrew, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Withdrawal {
    pub ids: Vec<String>,
    /// When no tracked input changed: the directory whose glob the mutation may change (the new
    /// or removed entry reaches the compilation database only through a configure).
    pub glob_dir: Option<QualifiedPath>,
}

/// The published contexts, sorted by id.
pub type Contexts = Arc<[CompilationContext]>;

struct Entry {
    context: CompilationContext,
    baseline: Baseline,
    active: bool,
}

#[derive(Default)]
struct State {
    entries: BTreeMap<String, Entry>,
    /// Every build directory CMake was run in during this lifetime (exempt from the glob rule).
    build_dirs: BTreeSet<QualifiedPath>,
    /// The paths of the last mutation that withdrew contexts, with what it withdrew (until asked).
    withdrawn_by: HashMap<QualifiedPath, Withdrawal>,
}

/// Owns the context set and checks workspace mutations against the recorded inputs.
pub struct Tracker {
    roots: Roots,
    state: Mutex<State>,
    sender: watch::Sender<Contexts>,
}

impl Tracker {
    pub fn new(roots: Roots) -> Tracker {
        let (sender, _) = watch::channel(Contexts::from(Vec::new()));
        Tracker { roots, state: Mutex::new(State::default()), sender }
    }

    /// A receiver of the context set; it sees the current value and every later publication.
    pub fn subscribe(&self) -> watch::Receiver<Contexts> {
        self.sender.subscribe()
    }

    /// The contexts published now.
    pub fn current(&self) -> Contexts {
        self.sender.borrow().clone()
    }

    /// Remembers a build directory CMake works in.
    pub fn add_build_dir(&self, dir: &QualifiedPath) {
        self.state.lock().build_dirs.insert(dir.clone());
    }

    /// Confirms a context with a fresh baseline (replacing any other context of the same build
    /// directory) and publishes the set. Always publishes, so subscribers can re-check the database
    /// after a reconfigure.
    pub fn confirm(&self, context: CompilationContext, baseline: Baseline) {
        let mut state = self.state.lock();
        let dir = context.build_directory.clone();
        state.build_dirs.insert(dir.clone());
        state.entries.retain(|id, entry| *id == context.id || entry.context.build_directory != dir);
        state.entries.insert(context.id.clone(), Entry { context, baseline, active: true });
        self.publish(&state);
    }

    /// Withdraws the context `id` (a failed configure cannot keep or restore it).
    pub fn withdraw(&self, id: &str) {
        let mut state = self.state.lock();
        if let Some(entry) = state.entries.get_mut(id)
            && entry.active
        {
            entry.active = false;
            self.publish(&state);
        }
    }

    /// What the last withdrawing mutation of `path` withdrew, once (clangd names it in the write or
    /// edit result).
    pub fn take_withdrawn_by(&self, path: &QualifiedPath) -> Withdrawal {
        self.state.lock().withdrawn_by.remove(path).unwrap_or_default()
    }

    /// The context id last confirmed for a build directory (active or withdrawn).
    pub fn id_for_build_dir(&self, dir: &QualifiedPath) -> Option<String> {
        let state = self.state.lock();
        state.entries.values().find(|entry| entry.context.build_directory == *dir).map(|entry| entry.context.id.clone())
    }

    fn publish(&self, state: &State) {
        let contexts: Vec<CompilationContext> =
            state.entries.values().filter(|entry| entry.active).map(|entry| entry.context.clone()).collect();
        self.sender.send_replace(contexts.into());
    }

    /// The hash of a managed file as it is now (`None` when missing or unreadable).
    pub fn hash_now(roots: &Roots, path: &QualifiedPath) -> Option<Digest> {
        let abs = roots.lexical(path)?;
        std::fs::read(abs).ok().map(|bytes| inputs::sha256(&bytes))
    }
}

impl MutationObserver for Tracker {
    fn mutated(&self, change: &Mutation) {
        let mut state = self.state.lock();
        if !state.entries.values().any(|entry| entry.active) {
            return;
        }
        let build_dirs: Vec<QualifiedPath> = state.build_dirs.iter().cloned().collect();
        // One read per touched input, shared by every configuration that tracks it.
        let mut hashes: HashMap<QualifiedPath, Option<Digest>> = HashMap::new();
        let mut current =
            |path: &QualifiedPath| *hashes.entry(path.clone()).or_insert_with(|| Tracker::hash_now(&self.roots, path));
        let mut withdrawn = Vec::new();
        let mut glob_dir = None;
        let mut input_changed = false;
        for entry in state.entries.values_mut().filter(|entry| entry.active) {
            match inputs::invalidates(&entry.baseline, change, &build_dirs, &mut current) {
                None => continue,
                Some(Cause::Input) => input_changed = true,
                Some(Cause::Glob { dir }) => glob_dir = glob_dir.or(Some(dir)),
            }
            entry.active = false;
            withdrawn.push(entry.context.id.clone());
        }
        if !withdrawn.is_empty() {
            tracing::info!(?withdrawn, ?change.kind, ?glob_dir, "compilation contexts withdrawn by a CMake input or glob");
            let withdrawal = Withdrawal { ids: withdrawn, glob_dir: glob_dir.filter(|_| !input_changed) };
            state.withdrawn_by =
                change.before.iter().chain(&change.after).map(|a| (a.path.clone(), withdrawal.clone())).collect();
            self.publish(&state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmake::inputs::Globs;
    use crate::workspace::observer::{Affected, EntryKind, MutationKind};

    fn q(text: &str) -> QualifiedPath {
        QualifiedPath::parse(text).unwrap()
    }

    fn context(id: &str, dir: &str) -> CompilationContext {
        CompilationContext {
            id: id.to_owned(),
            toolset_id: ToolsetId::system(),
            build_directory: q(dir),
            compilation_database: q(&format!("{dir}/compile_commands.json")),
        }
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        project: std::path::PathBuf,
        tracker: Tracker,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("proj");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(project.join("CMakeLists.txt"), "project(x)\n").unwrap();
        let tracker = Tracker::new(Roots::new(project.clone(), dir.path().join("storage")));
        Fixture { _dir: dir, project, tracker }
    }

    fn baseline(fx: &Fixture) -> Baseline {
        let input = q("project/CMakeLists.txt");
        let hash = Tracker::hash_now(&fx.tracker.roots, &input);
        assert!(hash.is_some());
        Baseline { inputs: [(input, hash)].into_iter().collect(), globs: Globs::Known(Vec::new()) }
    }

    fn ids(contexts: &Contexts) -> Vec<&str> {
        contexts.iter().map(|c| c.id.as_str()).collect()
    }

    fn edited(path: &str) -> Mutation {
        let affected = vec![Affected { path: q(path), kind: EntryKind::File }];
        Mutation { kind: MutationKind::Edited, before: affected.clone(), after: affected }
    }

    #[test]
    fn ids_are_percent_encoded() {
        assert_eq!(context_id("Debug", None), "Debug");
        assert_eq!(context_id("my profile", Some("ninja/debug")), "my%20profile/ninja%2Fdebug");
    }

    #[test]
    fn confirm_publish_and_withdraw_on_a_real_input_change() {
        let fx = fixture();
        let mut rx = fx.tracker.subscribe();
        fx.tracker.confirm(context("Release", "storage/build/cmake-Release"), baseline(&fx));
        fx.tracker.confirm(context("Debug", "storage/build/cmake-Debug"), baseline(&fx));
        assert!(rx.has_changed().unwrap());
        assert_eq!(ids(&rx.borrow_and_update()), ["Debug", "Release"]);

        // Identical content: nothing happens.
        fx.tracker.mutated(&edited("project/CMakeLists.txt"));
        assert!(!rx.has_changed().unwrap());
        // A source file: nothing happens.
        fx.tracker.mutated(&edited("project/src/main.cpp"));
        assert!(!rx.has_changed().unwrap());
        // A real change withdraws both.
        std::fs::write(fx.project.join("CMakeLists.txt"), "project(y)\n").unwrap();
        fx.tracker.mutated(&edited("project/CMakeLists.txt"));
        assert!(rx.has_changed().unwrap());
        assert!(rx.borrow_and_update().is_empty());
        assert_eq!(fx.tracker.id_for_build_dir(&q("storage/build/cmake-Debug")).as_deref(), Some("Debug"));

        // A new confirmation restores one.
        fx.tracker.confirm(context("Debug", "storage/build/cmake-Debug"), baseline(&fx));
        assert_eq!(ids(&fx.tracker.current()), ["Debug"]);
    }

    #[test]
    fn one_context_per_build_directory() {
        let fx = fixture();
        fx.tracker.confirm(context("native/a", "project/build"), baseline(&fx));
        fx.tracker.confirm(context("native/b", "project/build"), baseline(&fx));
        assert_eq!(ids(&fx.tracker.current()), ["native/b"]);
        fx.tracker.withdraw("native/b");
        assert!(fx.tracker.current().is_empty());
        assert_eq!(fx.tracker.id_for_build_dir(&q("project/build")).as_deref(), Some("native/b"));
    }
}
