//! Files no target compiles (issue 30 §2), from the codemodels of the build directories of the
//! published compilation contexts: a created or moved C/C++ translation unit that no target of any
//! configuration compiles gets a note naming the nearest candidate target (the one whose compiled
//! sources share the file's directory, else the nearest ancestor) with its defining line; a moved or
//! deleted file that targets compile names them and their lines; after a configure, the project's
//! translation units no configuration compiles (at most [`MAX_NAMED`] named).
//!
//! Architecture invariant: reads only; codemodels are parsed once per reply (keyed by the reply
//! index's name and time); with no confirmed context it says nothing (it cannot know).

use std::cmp::Reverse;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

use super::codemodel::{self, Configuration, Target};
use super::contexts::Contexts;
use super::file_api::{IndexStamp, latest_index};
use crate::cpp_file::is_translation_unit;
use crate::workspace::journal::model::Action;
use crate::workspace::path::{QualifiedPath, Roots};
use crate::workspace::path_notes::{PathChange, PathNotes};

/// The most orphans a configure names.
pub const MAX_NAMED: usize = 10;
/// The most entries the orphan scan of the project looks at.
const SCAN_LIMIT: usize = 50_000;

/// A build directory's configurations with the File API reply they were read from.
type Cached = (IndexStamp, Arc<Vec<Configuration>>);

/// The codemodels of the confirmed contexts' build directories, cached per reply.
pub struct Orphans {
    roots: Roots,
    contexts: watch::Receiver<Contexts>,
    cache: Mutex<HashMap<PathBuf, Cached>>,
}

impl Orphans {
    pub fn new(roots: Roots, contexts: watch::Receiver<Contexts>) -> Orphans {
        Orphans { roots, contexts, cache: Mutex::new(HashMap::new()) }
    }

    /// Every configuration of every confirmed context (`None`: no context is confirmed).
    fn configurations(&self) -> Option<Vec<Arc<Vec<Configuration>>>> {
        let builds: Vec<PathBuf> =
            self.contexts.borrow().iter().filter_map(|c| self.roots.lexical(&c.build_directory)).collect();
        if builds.is_empty() {
            return None;
        }
        let mut cache = self.cache.lock();
        let mut res = Vec::new();
        for build in builds {
            let Some(stamp) = latest_index(&build) else { continue };
            if let Some((cached, model)) = cache.get(&build)
                && *cached == stamp
            {
                res.push(model.clone());
                continue;
            }
            if let Some(model) = codemodel::read(&build) {
                let model = Arc::new(model);
                cache.insert(build, (stamp, model.clone()));
                res.push(model);
            }
        }
        (!res.is_empty()).then_some(res)
    }

    fn shown(&self, path: &Path) -> String {
        self.roots.qualify(path).map_or_else(|| path.display().to_string(), |q| q.to_string())
    }

    fn defined(&self, target: &Target) -> String {
        match &target.defined_at {
            Some((file, line)) => format!("{} at {}:{line}", target.name, self.shown(file)),
            None => target.name.clone(),
        }
    }

    /// The note for a translation unit at `path` that no target compiles, or `None` when one does.
    fn orphan_note(&self, models: &[Arc<Vec<Configuration>>], path: &QualifiedPath) -> Option<String> {
        let abs = self.roots.lexical(path)?;
        let all = || models.iter().flat_map(|m| m.iter());
        if all().any(|c| !c.compiling(&abs).is_empty()) {
            return None;
        }
        // The nearest candidate: most path components shared with one of its compiled sources,
        // then the shallowest such source (a target compiling `dir/x.c` before one compiling
        // `dir/test/y.c`).
        let dir = abs.parent()?;
        let closeness = |source: &Path| {
            source
                .parent()
                .map_or((0, Reverse(usize::MAX)), |p| (common_components(p, dir), Reverse(p.components().count())))
        };
        let candidate = all()
            .flat_map(|c| c.targets.iter())
            .filter_map(|t| t.sources.iter().filter(|s| s.compiled).map(|s| closeness(&s.path)).max().map(|n| (n, t)))
            .max_by_key(|(n, t)| (*n, Reverse(t.name.clone())))
            .map(|(_, t)| t);
        Some(match candidate {
            Some(target) => format!("{path} is compiled by no target; add it to {}", self.defined(target)),
            None => format!("{path} is compiled by no target"),
        })
    }

    /// The targets compiling files at or below `path`, each with its line: `compiled by core at
    /// project/CMakeLists.txt:5`.
    fn compiled_below(&self, models: &[Arc<Vec<Configuration>>], path: &QualifiedPath) -> Vec<(PathBuf, String)> {
        let Some(abs) = self.roots.lexical(path) else { return Vec::new() };
        let mut res: Vec<(PathBuf, String)> = Vec::new();
        for target in models.iter().flat_map(|m| m.iter()).flat_map(|c| c.targets.iter()) {
            for source in target.sources.iter().filter(|s| s.compiled && s.path.starts_with(&abs)) {
                let entry = (source.path.clone(), self.defined(target));
                if !res.contains(&entry) {
                    res.push(entry);
                }
            }
        }
        res
    }

    /// The translation units of the project that no configuration compiles (outside hidden
    /// directories and build trees), sorted; `None` without a confirmed context.
    pub fn project_orphans(&self) -> Option<Vec<QualifiedPath>> {
        let models = self.configurations()?;
        let compiled: std::collections::HashSet<&PathBuf> = models
            .iter()
            .flat_map(|m| m.iter())
            .flat_map(|c| c.targets.iter())
            .flat_map(|t| t.sources.iter().filter(|s| s.compiled).map(|s| &s.path))
            .collect();
        let mut res = Vec::new();
        let mut pending = vec![self.roots.project().to_path_buf()];
        let mut seen = 0usize;
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            for entry in entries.flatten() {
                seen += 1;
                if seen > SCAN_LIMIT {
                    break;
                }
                let path = entry.path();
                let name = entry.file_name();
                let Ok(kind) = entry.file_type() else { continue };
                if kind.is_dir() {
                    if !name.to_string_lossy().starts_with('.') && !path.join("CMakeCache.txt").exists() {
                        pending.push(path);
                    }
                } else if kind.is_file()
                    && let Some(qualified) = self.roots.qualify(&path)
                    && is_translation_unit(&qualified)
                    && !compiled.contains(&path)
                {
                    res.push(qualified);
                }
            }
        }
        res.sort_by_key(ToString::to_string);
        Some(res)
    }
}

/// `3 source files no configuration compiles: project/a.cpp, …` (at most [`MAX_NAMED`] named).
pub fn orphans_sentence(orphans: &[QualifiedPath]) -> Option<String> {
    if orphans.is_empty() {
        return None;
    }
    let named: Vec<String> = orphans.iter().take(MAX_NAMED).map(ToString::to_string).collect();
    let more = orphans.len().saturating_sub(MAX_NAMED);
    let count = if orphans.len() == 1 { "1 source file".to_owned() } else { format!("{} source files", orphans.len()) };
    let mut res = format!("{count} in project/ no configuration compiles: {}", named.join(", "));
    if more > 0 {
        res.push_str(&format!(" and {more} more"));
    }
    Some(res)
}

fn common_components(a: &Path, b: &Path) -> usize {
    a.components().zip(b.components()).take_while(|(x, y)| x == y).count()
}

impl PathNotes for Orphans {
    fn notes(&self, change: PathChange<'_>) -> Vec<String> {
        let Some(models) = self.configurations() else { return Vec::new() };
        match change {
            PathChange::Created(path) if is_translation_unit(path) => {
                self.orphan_note(&models, path).into_iter().collect()
            }
            PathChange::Created(_) => Vec::new(),
            PathChange::Moved { from, to } => {
                let mut res: Vec<String> = self
                    .compiled_below(&models, from)
                    .into_iter()
                    .map(|(source, target)| {
                        format!("{} was compiled by {target}; update its sources there", self.shown(&source))
                    })
                    .collect();
                if res.is_empty() && is_translation_unit(to) {
                    res.extend(self.orphan_note(&models, to));
                }
                res.truncate(MAX_NAMED);
                res
            }
            PathChange::Deleted(path) => {
                let mut res = self.deleted_notes(&models, path);
                res.truncate(MAX_NAMED);
                res
            }
            PathChange::Reverted(paths) => {
                let mut res = Vec::new();
                for reverted in paths {
                    match reverted.action {
                        Action::Created if !reverted.directory && is_translation_unit(&reverted.path) => {
                            res.extend(self.orphan_note(&models, &reverted.path));
                        }
                        Action::Deleted => res.extend(self.deleted_notes(&models, &reverted.path)),
                        _ => {}
                    }
                    if res.len() >= MAX_NAMED {
                        break;
                    }
                }
                res.truncate(MAX_NAMED);
                res
            }
        }
    }
}

impl Orphans {
    /// What a build loses when `path` (a file or a tree) is gone: each source a target compiled.
    fn deleted_notes(&self, models: &[Arc<Vec<Configuration>>], path: &QualifiedPath) -> Vec<String> {
        self.compiled_below(models, path)
            .into_iter()
            .map(|(source, target)| format!("{} was compiled by {target}; remove it there", self.shown(&source)))
            .collect()
    }
}
