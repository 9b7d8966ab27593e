//! `cmake_targets`: per profile (or build preset) the targets of the build directory's codemodel
//! with their type, artifact, dependencies, source count, defining `CMakeLists.txt` line and the
//! CTest tests that run their artifact; with a `path`, only the targets that compile that file or,
//! by Ninja's dependency log (`ninja -t deps`, filled by a build), include it.
//!
//! Architecture invariant: reads only (the codemodel reply, CTest's listing and Ninja's log, each
//! through `process` where a program runs); it takes no lock, so it never waits for a build.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::codemodel;
use super::output::Reporter;
use super::profile::Operation;
use super::{CmakeService, Error, Selection, label, preset_of, read_cache, unusable};
use crate::call::Call;
use crate::process::{Stream, Timeout};
use crate::workspace::path::{Area, QualifiedPath, lexically_normal};

/// Why a target is listed for a `path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Compiles,
    Includes,
}

/// One target as `cmake_targets` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetInfo {
    pub name: String,
    pub kind: String,
    pub artifact: Option<QualifiedPath>,
    pub dependencies: Vec<String>,
    pub sources: usize,
    pub defined_at: Option<(QualifiedPath, u32)>,
    pub tests: Vec<String>,
    pub via: Option<Via>,
}

/// The targets of one execution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetsOutcome {
    pub profile: String,
    pub preset: Option<String>,
    pub configuration: Option<String>,
    pub targets: Vec<TargetInfo>,
    /// How many matched before `limit`.
    pub total: usize,
    /// What the answer could not use (no dependency log, so headers were not looked up).
    pub note: Option<String>,
    pub error: Option<String>,
}

/// The error of an execution whose build directory has no codemodel yet (the text names all such
/// executions in one line).
pub const NOT_CONFIGURED: &str = "the build directory has no File API codemodel; run cmake_configure";

/// `cmake_targets` arguments.
#[derive(Debug, Clone, Default)]
pub struct TargetsRequest {
    pub path: Option<QualifiedPath>,
    pub limit: usize,
}

impl CmakeService {
    /// `cmake_targets`: one answer per plain profile or build preset.
    pub async fn targets(
        &self,
        selection: &Selection<'_>,
        request: &TargetsRequest,
        call: &Call,
    ) -> Result<Vec<TargetsOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Reading CMake targets");
        let wanted = match &request.path {
            Some(path) if path.area() != Area::Project => {
                return Err(Error::Argument { argument: "path", reason: format!("`{path}` is not in project/") });
            }
            Some(path) => Some(self.host_forms(path)?),
            None => None,
        };
        let mut res = Vec::new();
        let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
        for (profile, execution) in self.executions(selection, Operation::Build, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(TargetsOutcome::failed(name, None, None, reason));
                    continue;
                }
            };
            let preset = preset_of(&execution).map(str::to_owned);
            let failed = |reason: String| {
                TargetsOutcome::failed(profile.name.clone(), preset.clone(), profile.configuration.clone(), reason)
            };
            let build = match self.execution_dir(&profile, &execution) {
                Ok((_, Some(build))) => build,
                Ok((_, None)) => {
                    res.push(failed(format!(
                        "the build directory of `{}` is unknown (its configure preset names no binaryDir)",
                        label(&profile, preset.as_deref())
                    )));
                    continue;
                }
                Err(reason) => {
                    res.push(failed(reason));
                    continue;
                }
            };
            if !seen.insert(build.clone()) {
                continue;
            }
            let Some(model) = self.configuration_model(&profile, &execution) else {
                res.push(failed(NOT_CONFIGURED.to_owned()));
                continue;
            };
            let tests = self.show_tests(&profile, &execution, call).await.unwrap_or_default();
            let mut outcome = failed(String::new());
            outcome.error = None;
            let mut matched: Vec<(&codemodel::Target, Option<Via>)> = match &wanted {
                None => model.targets.iter().map(|t| (t, None)).collect(),
                Some(forms) => {
                    let includes = self.includers(&profile, &build, forms, call, &mut outcome.note).await;
                    model
                        .targets
                        .iter()
                        .filter_map(|t| {
                            let compiles = t.sources.iter().any(|s| s.compiled && forms.contains(&s.path));
                            let via = if compiles {
                                Some(Via::Compiles)
                            } else {
                                includes.contains(&t.name).then_some(Via::Includes)
                            };
                            via.map(|via| (t, Some(via)))
                        })
                        .collect()
                }
            };
            matched.sort_by_key(|(t, via)| (*via != Some(Via::Compiles), t.kind == "utility", t.name.clone()));
            outcome.total = matched.len();
            outcome.targets =
                matched.into_iter().take(request.limit).map(|(t, via)| self.target_info(t, via, &tests)).collect();
            res.push(outcome);
        }
        Ok(res)
    }

    /// `cmake_targets`' `path` argument as a managed path.
    pub fn parse_path_argument(&self, text: &str) -> Result<QualifiedPath, Error> {
        self.workspace.parse_managed(text).map_err(|err| Error::Argument { argument: "path", reason: err.to_string() })
    }

    /// The absolute forms a managed path may take in a codemodel (lexical and canonical).
    fn host_forms(&self, path: &QualifiedPath) -> Result<Vec<PathBuf>, Error> {
        let lexical = self
            .roots()
            .lexical(path)
            .ok_or_else(|| Error::Argument { argument: "path", reason: format!("`{path}` is not in project/") })?;
        if !lexical.is_file() {
            return Err(Error::Argument { argument: "path", reason: format!("`{path}` is not a file") });
        }
        let mut forms = vec![lexical.clone()];
        if let Ok(canonical) = lexical.canonicalize()
            && canonical != lexical
        {
            forms.push(canonical);
        }
        Ok(forms)
    }

    fn target_info(
        &self,
        target: &codemodel::Target,
        via: Option<Via>,
        tests: &[super::impact::ListedTest],
    ) -> TargetInfo {
        let artifact = target.artifacts.first();
        // The codemodel lists dependencies in no stable order (CMake 3.25 gave both orders).
        let mut dependencies = target.dependencies.clone();
        dependencies.sort();
        TargetInfo {
            name: target.name.clone(),
            kind: target.kind.clone(),
            artifact: artifact.and_then(|a| self.qualify_host(a)),
            dependencies,
            sources: target.sources.len(),
            defined_at: target.defined_at.as_ref().and_then(|(file, line)| Some((self.qualify_host(file)?, *line))),
            tests: tests
                .iter()
                .filter(|t| t.command.first().is_some_and(|exe| target.artifacts.iter().any(|a| Path::new(exe) == a)))
                .map(|t| t.name.clone())
                .collect(),
            via,
        }
    }

    /// A host path as `project/…`/`storage/…` (after resolving links when needed).
    pub(super) fn qualify_host(&self, path: &Path) -> Option<QualifiedPath> {
        self.roots().qualify(path).or_else(|| {
            let canonical = |p: &Path| p.canonicalize().ok();
            let project = canonical(self.roots().project())?;
            let rest = canonical(path).unwrap_or_else(|| path.to_path_buf());
            let relative = rest.strip_prefix(&project).ok()?;
            self.roots().qualify(&self.roots().project().join(relative))
        })
    }

    /// The targets whose objects include one of `forms` by Ninja's dependency log; says in `note`
    /// when there is none (not Ninja, or nothing built yet).
    async fn includers(
        &self,
        profile: &super::Profile,
        build: &Path,
        forms: &[PathBuf],
        call: &Call,
        note: &mut Option<String>,
    ) -> BTreeSet<String> {
        let generator = read_cache(build).and_then(|cache| cache.generator().map(str::to_owned)).unwrap_or_default();
        let ninja = profile.toolset.tool("ninja").map(|tool| tool.path.clone());
        let (true, Some(ninja), true) = (generator.starts_with("Ninja"), ninja, build.join(".ninja_deps").is_file())
        else {
            *note = Some(
                "headers are looked up in Ninja's dependency log after a build (Ninja generator); none was \
                 found, so only the targets compiling the file are listed"
                    .to_owned(),
            );
            return BTreeSet::new();
        };
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let spec = self
            .profile_command(profile, &ninja, call)
            .await
            .args(["-C".into(), build.as_os_str().to_owned(), "-t".into(), "deps".into()])
            .timeout(Timeout::total(std::time::Duration::from_secs(60)))
            .on_line(Arc::new(move |stream, line| {
                if stream == Stream::Stdout {
                    let mut text = sink.lock();
                    text.push_str(line);
                    text.push('\n');
                }
            }));
        if self.processes.run(spec, call).await.is_err() {
            *note = Some("`ninja -t deps` could not run; only the targets compiling the file are listed".to_owned());
            return BTreeSet::new();
        }
        let objects = objects_depending_on(&stdout.lock(), build, forms);
        let Some((_, targets)) = super::file_api::read_codemodel(build) else { return BTreeSet::new() };
        objects
            .iter()
            .filter_map(|object| super::file_api::target_of_edge(&targets, object).map(str::to_owned))
            .collect()
    }
}

/// The outputs (object files, relative to the build directory as Ninja names them) whose recorded
/// dependencies include one of `forms`, from `ninja -t deps` output.
pub fn objects_depending_on(deps: &str, build: &Path, forms: &[PathBuf]) -> Vec<String> {
    let mut res = Vec::new();
    let mut current: Option<&str> = None;
    for line in deps.lines() {
        if !line.starts_with(' ') {
            current = line.split_once(": #deps").map(|(output, _)| output);
            continue;
        }
        let dep = line.trim();
        if dep.is_empty() {
            continue;
        }
        let abs = lexically_normal(&build.join(dep));
        if let Some(output) = current.filter(|_| forms.contains(&abs))
            && res.last().is_none_or(|last: &String| last != output)
        {
            res.push(output.to_owned());
        }
    }
    res
}

impl TargetsOutcome {
    fn failed(
        profile: String,
        preset: Option<String>,
        configuration: Option<String>,
        reason: String,
    ) -> TargetsOutcome {
        TargetsOutcome {
            profile,
            preset,
            configuration,
            targets: Vec::new(),
            total: 0,
            note: None,
            error: Some(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recorded from Ninja 1.11 (`ninja -t deps`) on a static library and an executable.
    const DEPS: &str = "CMakeFiles/core.dir/src/core.cpp.o: #deps 2, deps mtime 1733456000 (VALID)
    /p/src/core.cpp
    /p/src/core.h

CMakeFiles/app.dir/src/main.cpp.o: #deps 3, deps mtime 1733456001 (STALE)
    /p/src/main.cpp
    ../src/core.h
    /usr/include/stdio.h

";

    #[test]
    fn objects_that_include_a_header() {
        let forms = [PathBuf::from("/p/src/core.h")];
        assert_eq!(
            objects_depending_on(DEPS, Path::new("/p/b"), &forms),
            ["CMakeFiles/core.dir/src/core.cpp.o", "CMakeFiles/app.dir/src/main.cpp.o"]
        );
        assert!(objects_depending_on(DEPS, Path::new("/p/b"), &[PathBuf::from("/p/other.h")]).is_empty());
    }
}
