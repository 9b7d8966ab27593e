//! Configure executions: plain `cmake -S -B -G -D…` runs and `cmake --preset` runs, and what a
//! successful generation records (the File API baseline and the published context).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

use super::contexts::{CompilationContext, Tracker, context_id};
use super::file_api::{IndexStamp, ObjectReply};
use super::globs::{self, Expression, Glob};
use super::inputs::{Baseline, Globs};
use super::output::{FirstError, Reporter, Shortener, failure, qualify_reported, with_summary};
use super::preset_files::{Export, PresetFiles};
use super::profile::{Execution, Operation, PRESET_FILES};
use super::{
    CmakeService, ConfigureOutcome, Error, Mode, Profile, Selection, acceleration, command, file_api, read_cache,
    required_tool, unusable,
};
use crate::call::Call;
use crate::process::{Completed, Timeout};
use crate::text::error_chain;
use crate::toolchain::ToolsetId;
use crate::workspace::path::lexically_normal;
use crate::workspace::path::{Area, LinkPolicy, QualifiedPath, Roots};

impl CmakeService {
    /// `cmake_configure`: one execution per plain profile or configure preset (a preset repeated in
    /// one call runs once).
    pub async fn configure(
        &self,
        selection: &Selection<'_>,
        timeout: Timeout,
        call: &Call,
    ) -> Result<Vec<ConfigureOutcome>, Error> {
        let reporter = Reporter::start(&call.progress, "Preparing CMake configure");
        let _serialized = self.lock.acquire("cmake_configure", |waiting| reporter.say("", waiting)).await;
        let mut res = Vec::new();
        let mut done: HashMap<(ToolsetId, String), ConfigureOutcome> = HashMap::new();
        for (profile, execution) in self.executions(selection, Operation::Configure, &reporter, call).await? {
            let (profile, execution) = match (profile, execution) {
                (Ok(profile), Ok(execution)) => (profile, execution),
                (profile, execution) => {
                    let (name, reason) = unusable(profile, execution);
                    res.push(ConfigureOutcome::failed(name, None, None, reason));
                    continue;
                }
            };
            if call.is_cancelled() {
                break;
            }
            let outcome = match execution {
                Execution::Directory(dir) => self.configure_plain(&profile, &dir, timeout, &reporter, call).await,
                Execution::Preset(preset) => {
                    let key = (profile.toolset.id().clone(), preset.clone());
                    if let Some(prior) = done.get(&key) {
                        res.push(ConfigureOutcome { profile: profile.name.clone(), ..prior.clone() });
                        continue;
                    }
                    let outcome = self.configure_preset(&profile, &preset, timeout, &reporter, call).await;
                    done.insert(key, outcome.clone());
                    outcome
                }
            };
            res.push(outcome);
        }
        // Once per configure: the project's sources no configuration compiles.
        if let Some(first) = res.iter_mut().find(|o| o.error.is_none())
            && let Some(sentence) =
                self.orphans().project_orphans().as_deref().and_then(super::orphans::orphans_sentence)
        {
            first.note = Some(first.note.take().map_or(sentence.clone(), |note| format!("{note}\n{sentence}")));
        }
        Ok(res)
    }

    pub(super) async fn configure_plain(
        &self,
        profile: &Profile,
        dir: &QualifiedPath,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> ConfigureOutcome {
        let label = profile.name.clone();
        let id = context_id(&profile.name, None);
        let mut out = ConfigureOutcome::failed(profile.name.clone(), None, Some(dir.clone()), String::new());
        let result = self.configure_plain_inner(profile, dir, timeout, reporter, &label, call, &mut out).await;
        self.finish_configure(&id, &label, result, reporter, &mut out);
        out
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) async fn configure_plain_inner(
        &self,
        profile: &Profile,
        dir: &QualifiedPath,
        timeout: Timeout,
        reporter: &Reporter,
        label: &str,
        call: &Call,
        out: &mut ConfigureOutcome,
    ) -> Result<(), String> {
        let Mode::Plain(plain) = &profile.mode else {
            return Err("a preset profile configures through its configure presets".to_owned());
        };
        let cmake = required_tool(profile, "cmake", None)?;
        let make_program = if command::needs_ninja(&plain.generator) {
            let reason = format!("the {} generator needs (there is no generator fallback)", plain.generator);
            Some(required_tool(profile, "ninja", Some(&reason))?.path.clone())
        } else {
            None
        };
        let compiler =
            |spec: Option<&'static crate::toolchain::spec::ToolSpec>, key: &str| -> Result<Option<PathBuf>, String> {
                spec.map(|spec| {
                    let why = format!("`{key}={}` names (no other compiler is used)", spec.name);
                    required_tool(profile, spec.name, Some(&why)).map(|tool| tool.path.clone())
                })
                .transpose()
            };
        let c_compiler = compiler(plain.c_compiler, "c-compiler")?;
        let cxx_compiler = compiler(plain.cxx_compiler, "cxx-compiler")?;
        let toolchain_file = match &plain.toolchain_file {
            Some(file) => {
                let resolved = self
                    .roots()
                    .resolve_existing(file, LinkPolicy::FollowInsideRoots)
                    .map_err(|err| format!("toolchain file: {}", error_chain(&err)))?;
                if !resolved.abs.is_file() {
                    return Err(format!("toolchain file `{file}` is not a regular file"));
                }
                Some(resolved.abs)
            }
            None => None,
        };
        let launcher = plain
            .compiler_launcher
            .map(|spec| {
                let why = format!("`compiler-launcher={}` names", spec.name);
                required_tool(profile, spec.name, Some(&why)).map(|tool| tool.path.clone())
            })
            .transpose()?;
        let compiler_name = plain.cxx_compiler.or(plain.c_compiler).map_or("", |spec| spec.name);
        let msvc = compiler_name == "cl" || compiler_name == "clang-cl" || (compiler_name.is_empty() && cfg!(windows));
        let sanitizer_flags = command::sanitizer_flags(&plain.sanitizers, msvc, compiler_name.starts_with("clang"))?;
        let build = self.check_build_dir(dir)?;
        if let Some(cache) = read_cache(&build) {
            self.check_cache_project(dir, &cache)?;
            if cache.generator().is_some_and(|generator| generator != plain.generator) {
                reporter.say(label, "Clearing build directory for generator change");
                self.clear_build_dir(dir, call).await?;
            }
        }
        let args = command::configure_plain(&command::PlainConfigure {
            source: self.roots().project(),
            build: &build,
            generator: &plain.generator,
            configuration: profile.configuration.as_deref(),
            defines: &plain.defines,
            c_compiler: c_compiler.as_deref(),
            cxx_compiler: cxx_compiler.as_deref(),
            toolchain_file: toolchain_file.as_deref(),
            make_program: make_program.as_deref(),
            launcher: launcher.as_deref(),
            sanitizer_flags: sanitizer_flags.as_deref(),
            embed_debug_information: acceleration::embeds_debug_information(profile, msvc),
        })
        .map_err(|err| err.to_string())?;
        self.create_build_dir(dir, &build)?;
        let before = file_api::latest_index(&build);
        let completed =
            self.run_configure(profile, &cmake.path, args, Some(dir), timeout, reporter, label, call).await?;
        out.process_id = Some(completed.0.id);
        if let Some(reason) = completed.1 {
            return Err(reason);
        }
        out.compilation_database =
            self.after_generation(&context_id(&profile.name, None), profile, dir, &build, before.as_ref(), false);
        Ok(())
    }

    pub(super) async fn configure_preset(
        &self,
        profile: &Profile,
        preset: &str,
        timeout: Timeout,
        reporter: &Reporter,
        call: &Call,
    ) -> ConfigureOutcome {
        let label = format!("{}/{preset}", profile.name);
        let id = context_id(&profile.name, Some(preset));
        let key = (profile.toolset.id().clone(), preset.to_owned());
        // The operator's `build-directory=`, else the one CMake reported for this preset earlier in
        // this lifetime.
        let dir = profile.build_directory().cloned().or_else(|| self.learned.lock().get(&key).cloned());
        let mut out =
            ConfigureOutcome::failed(profile.name.clone(), Some(preset.to_owned()), dir.clone(), String::new());
        // Presets get a compilation database like plain profiles, unless one turns it off.
        let export = PresetFiles::read(self.roots().project()).export_compile_commands(preset);
        if export == Export::Off {
            out.note = Some(format!(
                "configure preset `{preset}` sets CMAKE_EXPORT_COMPILE_COMMANDS to OFF, so CMake writes no \
                 compile_commands.json and clangd gets no configuration from it"
            ));
        }
        let export = export == Export::Unset;
        let result = async {
            let cmake = required_tool(profile, "cmake", None)?;
            // The build directory is only known when the operator named it; CMake resolves the rest.
            let known = match &dir {
                Some(dir) => {
                    let build = self.check_build_dir(dir)?;
                    self.create_build_dir(dir, &build)?;
                    let before = file_api::latest_index(&build);
                    Some((dir, build, before))
                }
                None => None,
            };
            let args = command::configure_preset(preset, export);
            let completed =
                self.run_configure(profile, &cmake.path, args, dir.as_ref(), timeout, reporter, &label, call).await?;
            out.process_id = Some(completed.0.id);
            if let Some(reason) = completed.1 {
                return Err(reason);
            }
            if let Some((dir, build, before)) = known {
                out.compilation_database = self.after_generation(&id, profile, dir, &build, before.as_ref(), true);
                return Ok(());
            }
            // Learn the build directory from CMake itself, then reach it with the File API queries.
            let Some(written) = self.written_to.lock().remove(&label) else { return Ok(()) };
            let Some(dir) = self.roots().qualify(&lexically_normal(&written)).filter(QualifiedPath::is_managed) else {
                // Named as a `root/…` path, which the file tools accept.
                let shown = qualify_reported(self.roots(), self.roots().project(), &written.to_string_lossy())
                    .map_or_else(|| written.display().to_string(), |path| path.to_string());
                out.note = Some(format!(
                    "CMake wrote the build files to {shown} (outside project/ and storage/), so clangd gets no \
                     configuration from this preset"
                ));
                return Ok(());
            };
            let build = self.check_build_dir(&dir)?;
            out.build_directory = Some(dir.clone());
            self.learned.lock().insert(key, dir.clone());
            let queried = file_api::has_queries(&build);
            self.create_build_dir(&dir, &build)?;
            let mut before = None;
            if !queried {
                // The first configure could not answer queries it did not know about; a second run
                // of the preset (fast: the cache exists) writes the reply.
                before = file_api::latest_index(&build);
                let args = command::configure_preset(preset, export);
                let again =
                    self.run_configure(profile, &cmake.path, args, Some(&dir), timeout, reporter, &label, call).await?;
                out.process_id = Some(again.0.id);
                if let Some(reason) = again.1 {
                    return Err(reason);
                }
            }
            out.compilation_database = self.after_generation(&id, profile, &dir, &build, before.as_ref(), true);
            Ok(())
        }
        .await;
        self.finish_configure(&id, &label, result, reporter, &mut out);
        out
    }

    pub(super) fn finish_configure(
        &self,
        id: &str,
        label: &str,
        result: Result<(), String>,
        reporter: &Reporter,
        out: &mut ConfigureOutcome,
    ) {
        match result {
            Ok(()) => {
                out.error = None;
                reporter.say(label, "Completed successfully");
            }
            Err(reason) => {
                // A failed configure can neither keep nor restore the context.
                self.tracker.withdraw(id);
                out.compilation_database = None;
                reporter.say(label, &reason);
                out.error = Some(reason);
            }
        }
    }

    /// Runs one configure command; returns the run and, when it failed, why (with the first CMake
    /// error of its output).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn run_configure(
        &self,
        profile: &Profile,
        cmake: &Path,
        args: Vec<std::ffi::OsString>,
        dir: Option<&QualifiedPath>,
        timeout: Timeout,
        reporter: &Reporter,
        label: &str,
        call: &Call,
    ) -> Result<(Completed, Option<String>), String> {
        let first_error = Arc::new(Mutex::new(FirstError::in_source(self.roots().project())));
        let shortener = Shortener::new(self.roots());
        let (errors, progress, label_owned, short) =
            (first_error.clone(), reporter.clone(), label.to_owned(), shortener.clone());
        reporter.say(label, "Starting configure");
        let (written_to, key) = (self.written_to.clone(), label.to_owned());
        written_to.lock().remove(&key);
        let spec = self.profile_command(profile, cmake, call).await.args(args).timeout(timeout).on_line(Arc::new(
            move |_stream, line| {
                errors.lock().configure_line(line);
                if let Some(dir) = line.strip_prefix("-- Build files have been written to: ") {
                    written_to.lock().insert(key.clone(), PathBuf::from(dir.trim_end()));
                }
                if let Some(status) = command::configure_status(line) {
                    progress.say(&label_owned, &short.shorten(status));
                }
            },
        ));
        let completed = self.run_protected(spec, dir, call).await.map_err(|err| error_chain(&err))?;
        let summary = first_error.lock().summary().map(|summary| shortener.shorten(&summary));
        let reason = failure("cmake", &completed, Some(timeout)).map(|reason| with_summary(reason, summary));
        Ok((completed, reason))
    }

    /// After a successful generation: reads the new File API reply, records the inputs and confirms
    /// the context `id` when the build directory has a compilation database. Returns the database.
    pub(super) fn after_generation(
        &self,
        id: &str,
        profile: &Profile,
        dir: &QualifiedPath,
        build: &Path,
        before: Option<&IndexStamp>,
        presets: bool,
    ) -> Option<QualifiedPath> {
        let database = dir.join_name("compile_commands.json").filter(|db| {
            self.roots().resolve_existing(db, LinkPolicy::FollowInsideRoots).is_ok_and(|r| r.abs.is_file())
        });
        let baseline = match self.new_baseline(build, before, presets) {
            Ok(baseline) => baseline,
            Err(reason) => {
                tracing::warn!(context = id, "no compilation context for `{dir}`: {reason}");
                self.tracker.withdraw(id);
                return database;
            }
        };
        match &database {
            Some(database) => self.tracker.confirm(
                CompilationContext {
                    id: id.to_owned(),
                    toolset_id: profile.toolset.id().clone(),
                    build_directory: dir.clone(),
                    compilation_database: database.clone(),
                },
                baseline,
            ),
            None => {
                tracing::info!(context = id, "no compilation context for `{dir}`: it has no compile_commands.json");
                self.tracker.withdraw(id);
            }
        }
        database
    }

    /// The baseline of the reply CMake wrote after `before`.
    pub(super) fn new_baseline(
        &self,
        build: &Path,
        before: Option<&IndexStamp>,
        presets: bool,
    ) -> Result<Baseline, String> {
        let after = file_api::latest_index(build);
        let Some(after) = after.filter(|after| file_api::is_new(before, Some(after))) else {
            return Err("CMake wrote no new File API reply".to_owned());
        };
        let index = file_api::read_reply(build, &after.name)?;
        let file = match file_api::cmake_files_reply(&index)? {
            Some(ObjectReply::File(file)) => file,
            Some(ObjectReply::Error(error)) => {
                return Err(format!("CMake did not answer the cmakeFiles query: {error}"));
            }
            None => return Err("the File API reply does not answer the cmakeFiles query".to_owned()),
        };
        let files = file_api::parse_cmake_files(&file_api::read_reply(build, &file)?)?;
        Ok(baseline(self.roots(), &files, presets))
    }
}

/// The baseline of a `cmakeFiles` reply: its inputs inside project/ or storage/ (external ones are
/// not tracked), plus the preset files for preset executions, hashed now.
pub(super) fn baseline(roots: &Roots, files: &file_api::CmakeFiles, presets: bool) -> Baseline {
    let mut inputs = BTreeMap::new();
    for input in &files.inputs {
        if let Some(path) = qualify(roots, &input.path) {
            let hash = Tracker::hash_now(roots, &path);
            inputs.insert(path, hash);
        }
    }
    if presets {
        let project = QualifiedPath::area_root(Area::Project);
        for name in PRESET_FILES {
            if let Some(path) = project.join_name(name) {
                let hash = Tracker::hash_now(roots, &path);
                inputs.insert(path, hash);
            }
        }
    }
    let globs = glob_list(roots, files).map_or(Globs::Unknown, Globs::Known);
    Baseline { inputs, globs }
}

/// Every glob of a configuration: the reply's `globsDependent`, CMake's `VerifyGlobs.cmake` in the
/// build tree, and those the CMake files of project/ and storage/ run (read now). `None` when one
/// of those files exists but cannot be read.
fn glob_list(roots: &Roots, files: &file_api::CmakeFiles) -> Option<Vec<Glob>> {
    let slashed = |path: &Path| path.to_string_lossy().replace('\\', "/");
    let source = slashed(&files.source);
    let mut expressions: Vec<Expression> = (files.globs.iter().flatten())
        .map(|glob| Expression { text: slashed(&glob.expression), recurse: glob.recurse })
        .collect();
    let verify = files.build.join("CMakeFiles").join("VerifyGlobs.cmake");
    let scripts = files.inputs.iter().filter(|input| !input.is_generated && is_cmake_script(&input.path));
    let managed = scripts.filter_map(|input| roots.lexical(&qualify(roots, &input.path)?));
    for path in std::iter::once(verify).chain(managed) {
        match std::fs::read_to_string(&path) {
            Ok(text) => expressions.extend(globs::scan(&text, &slashed(&path), &source)),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
    }
    Some(expressions.iter().filter_map(|expression| Glob::new(roots, expression)).collect())
}

/// Whether a CMake input is a script that can run commands (`CMakeLists.txt`, `*.cmake`).
fn is_cmake_script(path: &Path) -> bool {
    let name = path.file_name().map(|name| name.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    name == "cmakelists.txt" || name.ends_with(".cmake")
}

/// The qualified form of an absolute path CMake reported, when it lies in a managed root.
pub(super) fn qualify(roots: &Roots, path: &Path) -> Option<QualifiedPath> {
    let normal: PathBuf = path.components().collect();
    roots.qualify(&normal).filter(QualifiedPath::is_managed)
}
