//! Build directories: checks, creation with the File API queries, the cache's project check, the
//! link-safe clearing for a generator change, protection while CMake runs in them, and where a
//! preset builds.

use std::path::{Path, PathBuf};

use super::cache::Cache;
use super::preset_files::PresetFiles;
use super::profile::Profile;
use super::{CmakeService, PROTECTION_OWNER, file_api};
use crate::call::Call;
use crate::process::Completed;
use crate::text::error_chain;
use crate::workspace::WorkspaceService;
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath};

impl CmakeService {
    /// Checks a build directory: reached without links, not protected, a directory if it exists.
    /// Returns its absolute path (it may not exist yet).
    pub(super) fn check_build_dir(&self, dir: &QualifiedPath) -> Result<PathBuf, String> {
        if dir.area() == Area::Root || dir.is_area_root() {
            return Err(format!("`{dir}` cannot be a build directory"));
        }
        if let Some(protection) = self.workspace.protected().guarding_contents(dir) {
            return Err(format!("build directory `{dir}` is protected by {}", protection.owner));
        }
        let resolved = self.roots().resolve(dir, LinkPolicy::Refuse).map_err(|err| error_chain(&err))?;
        if resolved.exists && !resolved.abs.is_dir() {
            return Err(format!("build directory `{dir}` exists and is not a directory"));
        }
        Ok(resolved.abs)
    }

    /// The build directory of a configure, build or test preset named `preset`: its configure
    /// preset's (inherited) `binaryDir` as the preset files say, when that lies in `project/` or
    /// `storage/` (a build or test preset of that name first: presets of one name usually share it).
    pub(super) fn preset_build_dir(&self, preset: &str) -> Option<QualifiedPath> {
        let files = PresetFiles::read(self.roots().project());
        let configure = files
            .configure_preset_of(preset, false)
            .or_else(|| files.configure_preset_of(preset, true))
            .unwrap_or(preset);
        let dir = files.qualified_binary_dir(configure, self.roots())?;
        (dir.area() != Area::Root).then_some(dir)
    }

    /// The configuration an execution builds or tests (`test`), for its result: the profile's when
    /// it names one, else for a preset the `CMAKE_BUILD_TYPE` its configure preset sets.
    pub(super) fn execution_configuration(
        &self,
        profile: &Profile,
        preset: Option<&str>,
        test: bool,
    ) -> Option<String> {
        if profile.configuration.is_some() {
            return profile.configuration.clone();
        }
        let preset = preset?;
        let files = PresetFiles::read(self.roots().project());
        files.build_type(files.configure_preset_of(preset, test).unwrap_or(preset))
    }

    /// Creates the build directory (and its parents) and the File API queries.
    pub(super) fn create_build_dir(&self, dir: &QualifiedPath, build: &Path) -> Result<(), String> {
        std::fs::create_dir_all(build).map_err(|err| format!("cannot create build directory `{dir}`: {err}"))?;
        // Nothing on the way may have become a link in the meantime.
        self.check_build_dir(dir)?;
        self.tracker.add_build_dir(dir);
        file_api::write_queries(build).map_err(|err| format!("cannot write the File API queries in `{dir}`: {err}"))
    }

    /// The cache must belong to this project (its source directory is the project root).
    pub(super) fn check_cache_project(&self, dir: &QualifiedPath, cache: &Cache) -> Result<(), String> {
        let belongs = cache
            .source_dir()
            .and_then(|source| std::fs::canonicalize(source).ok())
            .is_some_and(|source| source == self.roots().project());
        if belongs {
            Ok(())
        } else {
            Err(format!("`{dir}` holds the CMake cache of another source directory; use another build-directory"))
        }
    }

    /// Removes a build directory through the workspace (root, protected-path and link checks) for a
    /// generator change; `create_build_dir` recreates it.
    pub(super) async fn clear_build_dir(&self, dir: &QualifiedPath, call: &Call) -> Result<(), String> {
        let workspace = self.workspace.clone();
        let target = dir.clone();
        let quiet = call.quiet();
        let removed = tokio::task::spawn_blocking(move || workspace.delete_path(&target, true, &quiet))
            .await
            .map_err(|err| format!("clearing `{dir}` failed: {err}"))?;
        removed.map(drop).map_err(|err| format!("cannot clear `{dir}` for the generator change: {}", error_chain(&err)))
    }

    /// Runs `spec` with `dir` protected for the duration.
    pub(super) async fn run_protected(
        &self,
        spec: crate::process::CommandSpec,
        dir: Option<&QualifiedPath>,
        call: &Call,
    ) -> Result<Completed, crate::process::Error> {
        let _protected = dir.map(|dir| Protected::new(&self.workspace, dir));
        self.processes.run(spec, call).await
    }
}

/// A protected-path registration that ends when dropped.
pub(super) struct Protected<'a> {
    workspace: &'a WorkspaceService,
    path: QualifiedPath,
}

impl<'a> Protected<'a> {
    pub(super) fn new(workspace: &'a WorkspaceService, path: &QualifiedPath) -> Protected<'a> {
        workspace.protected().add(path.clone(), PROTECTION_OWNER);
        Protected { workspace, path: path.clone() }
    }
}

impl Drop for Protected<'_> {
    fn drop(&mut self) {
        self.workspace.protected().remove(&self.path, PROTECTION_OWNER);
    }
}
