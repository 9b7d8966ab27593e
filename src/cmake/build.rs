//! Build executions: `cmake --build` of a build directory or a build preset, with step progress,
//! the failure summary, and the context refresh when the build regenerated.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::diagnostics::Diagnostic;
use super::output::{BuildWatch, Reporter, Shortener, failure, qualify_reported, with_summary};
use super::profile::{Execution, Operation};
use super::{
    BuildDiagnostic, BuildOutcome, BuildRequest, CmakeService, Error, Mode, Profile, Selection, command, context_id,
    file_api, label, ninja, preset_of, read_cache, required_tool, unusable,
};
use crate::call::Call;
use crate::process::Timeout;
use crate::text::error_chain;
use crate::workspace::path::QualifiedPath;

impl CmakeService {
    /// `cmake_build`: one execution per plain profile or build preset (or the preset profile's
    /// build directory when it has no build presets).
    pub async fn build(
        &self,
        selection: &Selection<'_>,
        request: &BuildRequest,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<BuildOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CMake build");
        let _serialized = self.lock.acquire("cmake_build", |waiting| reporter.say("", waiting)).await;
        let mut res = Vec::new();
        for (profile, execution) in self.executions(selection, Operation::Build, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(BuildOutcome {
                        profile: name,
                        preset: None,
                        configuration: None,
                        completed_steps: None,
                        total_steps: None,
                        up_to_date: false,
                        diagnostics: Vec::new(),
                        failed_steps: Vec::new(),
                        error: Some(reason),
                        process_id: None,
                        acceleration: None,
                    });
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            res.push(self.build_one(&profile, &execution, request, timeout, &reporter, call).await);
        }
        Ok(res)
    }

    pub(super) async fn build_one(
        &self,
        profile: &Profile,
        execution: &Execution,
        request: &BuildRequest,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> BuildOutcome {
        let preset = preset_of(execution);
        let label = label(profile, preset);
        let mut out = BuildOutcome {
            profile: profile.name.clone(),
            preset: preset.map(str::to_owned),
            configuration: self.execution_configuration(profile, preset, false),
            completed_steps: None,
            total_steps: None,
            up_to_date: false,
            diagnostics: Vec::new(),
            failed_steps: Vec::new(),
            error: None,
            process_id: None,
            acceleration: None,
        };
        let result = async {
            let cmake = required_tool(profile, "cmake", None)?;
            let (dir, build) = self.execution_dir(profile, execution)?;
            let target = match (execution, &build) {
                (Execution::Directory(_), Some(build)) => command::Target::Directory(build),
                _ => command::Target::Preset(preset.unwrap_or_default()),
            };
            let parallel = request.parallel.or_else(|| self.farm_parallel(profile));
            let args = command::build(target, profile.configuration.as_deref(), &request.targets, parallel);
            let before = build.as_deref().and_then(file_api::latest_index);
            let watch = Arc::new(Mutex::new(BuildWatch::in_source(self.roots().project())));
            let shortener = Shortener::new(self.roots());
            let (seen, progress, label_owned, short) =
                (watch.clone(), reporter.clone(), label.clone(), shortener.clone());
            reporter.say(&label, "Starting build");
            let probe = self.acceleration_start(profile, build.as_deref(), call).await;
            let mut spec = self.profile_command(profile, &cmake.path, call).await;
            if let Some(probe) = &probe {
                spec = probe.apply(spec);
            }
            let spec = spec.args(args).timeout(timeout).on_line(Arc::new(move |_stream, line| {
                seen.lock().line(line);
                if let Some(message) = ninja::progress_message(line) {
                    progress.build_line(&label_owned, &short.shorten(message));
                }
            }));
            let completed = self.run_protected(spec, dir.as_ref(), call).await.map_err(|err| error_chain(&err))?;
            out.process_id = Some(completed.id);
            if let Some(probe) = probe {
                out.acceleration = Some(self.acceleration_finish(profile, probe, call).await);
            }
            let seen = std::mem::take(&mut *watch.lock());
            if let Some((completed_steps, total_steps)) = seen.steps {
                out.completed_steps = Some(completed_steps);
                out.total_steps = Some(total_steps);
            }
            out.up_to_date = seen.no_work;
            out.diagnostics = self.locate(&seen.parser.diagnostics, build.as_deref());
            out.failed_steps.clone_from(&seen.failed_steps);
            // A new File API generation during the build restores (or refreshes) the context, even
            // when compiling failed afterwards. A build in which ninja ran no step at all (a
            // regeneration is a step) made none, so a no-op build reads the reply directory once.
            let ran_steps = !seen.no_work || seen.steps.is_some();
            if ran_steps
                && let (Some(dir), Some(build)) = (&dir, &build)
                && file_api::is_new(before.as_ref(), file_api::latest_index(build).as_ref())
            {
                let id = self.tracker.id_for_build_dir(dir).or_else(|| match execution {
                    Execution::Directory(_) if matches!(profile.mode, Mode::Plain(_)) => {
                        Some(context_id(&profile.name, None))
                    }
                    _ => None,
                });
                if let Some(id) = id {
                    self.after_generation(
                        &id,
                        profile,
                        dir,
                        build,
                        before.as_ref(),
                        matches!(profile.mode, Mode::Presets(_)),
                    );
                }
            }
            match failure("cmake --build", &completed, Some(timeout)) {
                Some(reason) => Err(with_summary(reason, seen.summary().map(|summary| shortener.shorten(&summary)))),
                None => Ok(()),
            }
        }
        .await;
        out.error = result.err();
        reporter.say(&label, out.error.as_deref().unwrap_or("Completed successfully"));
        out
    }

    /// The build directory of an execution (known for plain profiles, preset profiles with
    /// `build-directory` and presets whose configure preset names a `binaryDir` in the workspace),
    /// checked; for ordinary (non-preset) executions the cache must belong to
    /// this project and match the profile's configuration.
    pub(super) fn execution_dir(
        &self,
        profile: &Profile,
        execution: &Execution,
    ) -> Result<(Option<QualifiedPath>, Option<PathBuf>), String> {
        let dir = match execution {
            Execution::Directory(dir) => dir.clone(),
            Execution::Preset(preset) => {
                match profile.build_directory().cloned().or_else(|| self.preset_build_dir(preset)) {
                    Some(dir) => dir,
                    None => return Ok((None, None)),
                }
            }
        };
        let build = self.check_build_dir(&dir)?;
        if let Execution::Directory(_) = execution {
            let Some(cache) = read_cache(&build) else {
                return Err(format!(
                    "profile `{}` is not configured: `{dir}` has no CMakeCache.txt; run cmake_configure first",
                    profile.name
                ));
            };
            self.check_cache_project(&dir, &cache)?;
            if let Some(mismatch) = cache.configuration_mismatch(profile.configuration.as_deref()) {
                return Err(mismatch);
            }
        }
        Ok((Some(dir), Some(build)))
    }

    /// Qualifies the paths of a build's diagnostics (relative ones are relative to the build
    /// directory, else the project) and of the host paths in their messages, and names their
    /// targets from the codemodel.
    pub(super) fn locate(&self, found: &[Diagnostic], build: Option<&Path>) -> Vec<BuildDiagnostic> {
        if found.is_empty() {
            return Vec::new();
        }
        let model = build.and_then(file_api::read_codemodel);
        let base = model.as_ref().map(|(top, _)| top.as_path()).or(build).unwrap_or(self.roots().project());
        let targets = model.as_ref().map_or(&[][..], |(_, targets)| targets.as_slice());
        let shortener = Shortener::new(self.roots());
        let mut paths: HashMap<&str, Option<QualifiedPath>> = HashMap::new();
        let located = found.iter().map(|d| {
            let mut named: Vec<String> = Vec::new();
            for target in d.edges.iter().filter_map(|edge| file_api::target_of_edge(targets, edge)) {
                if !named.iter().any(|known| known == target) {
                    named.push(target.to_owned());
                }
            }
            BuildDiagnostic {
                path: d.path.as_deref().and_then(|raw| {
                    paths.entry(raw).or_insert_with(|| qualify_reported(self.roots(), base, raw)).clone()
                }),
                line: d.line,
                column: d.column,
                severity: d.severity,
                message: shortener.shorten(&d.message),
                code: d.code.clone(),
                targets: named,
                count: d.count,
                steps: u32::try_from(d.edges.len()).unwrap_or(u32::MAX),
                compiled: !d.edges.is_empty() && d.edges.iter().all(|edge| is_object_file(edge)),
                messages: d.messages,
            }
        });
        merge_located(located)
    }
}

/// Counts diagnostics that became the same once their paths were qualified (a header printed as
/// `/p/src/a.hpp` by one unit and `../src/a.hpp` by another) as one.
fn merge_located(located: impl Iterator<Item = BuildDiagnostic>) -> Vec<BuildDiagnostic> {
    let mut res: Vec<BuildDiagnostic> = Vec::new();
    for d in located {
        // At most `MAX_DIAGNOSTICS` of them: a search of the kept ones costs little.
        match res.iter_mut().find(|kept| kept.is_same(&d)) {
            Some(kept) => {
                kept.count += d.count;
                kept.steps += d.steps;
                kept.compiled &= d.compiled;
                kept.messages = kept.messages.max(d.messages);
                for target in d.targets {
                    if !kept.targets.contains(&target) {
                        kept.targets.push(target);
                    }
                }
            }
            None => res.push(d),
        }
    }
    res
}

/// Whether a build edge's output is an object file (the step compiled a translation unit).
fn is_object_file(edge: &str) -> bool {
    [".o", ".obj"].iter().any(|ext| edge.ends_with(ext))
}
