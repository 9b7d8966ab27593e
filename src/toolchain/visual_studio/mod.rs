//! Visual Studio toolsets (Windows): instances from the standard Installer `vswhere.exe`, one
//! developer environment captured per instance from its `VsDevCmd.bat`, and the instance's tools
//! located in its installation layout.
//!
//! The parsers (vswhere's JSON, the captured `set` output), the layout lookup and the toolset of an
//! instance are plain functions compiled and unit-tested on every platform with recorded samples
//! (`tests.rs`); only `discover`, which runs `vswhere` and the captures, is Windows-only.
//!
//! Architecture invariant: `vswhere` and every capture run through `process`, so they are listed in
//! `processes_overview` with their transcripts (the capture's stdout is the environment; it stays
//! in that transcript and is never part of a toolset result).
//! Architecture invariant: an instance whose environment cannot be captured stays visible as an
//! empty toolset; its tools are never bound to the server's environment instead.
//!
//! Known limitation: the process service decodes output as UTF-8, while `cmd`'s `set` writes the
//! OEM code page; non-ASCII characters in captured values are replaced.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::spec::{self, BUILTIN_TOOLS, ToolSpec};
use super::toolset::{Environment, Tool, Toolset, ToolsetId};
use crate::process::{CommandSpec, Timeout};

/// Where the Visual Studio Installer keeps `vswhere.exe`, below `%ProgramFiles(x86)%`.
pub const VSWHERE_RELATIVE: &[&str] = &["Microsoft Visual Studio", "Installer", "vswhere.exe"];
/// `%ProgramFiles(x86)%` when the variable is missing.
pub const DEFAULT_PROGRAM_FILES_X86: &str = r"C:\Program Files (x86)";
/// Arguments of the instance listing: every product, prereleases included, UTF-8 JSON.
pub const VSWHERE_ARGS: &[&str] = &["-products", "*", "-prerelease", "-format", "json", "-utf8", "-nologo"];
/// Time limit of the instance listing.
pub const VSWHERE_TIMEOUT: Duration = Duration::from_secs(30);
/// Time limit of one environment capture (VsDevCmd runs many scripts).
pub const CAPTURE_TIMEOUT: Duration = Duration::from_secs(60);
/// Printed between VsDevCmd's own output and `set`'s, so the parser knows where variables start.
pub const ENVIRONMENT_MARKER: &str = "FORGEMCP_ENVIRONMENT_FOLLOWS";
/// Largest vswhere listing or captured environment that is kept.
pub const MAX_CAPTURE_BYTES: usize = 4 * 1024 * 1024;
/// Most instances turned into toolsets.
pub const MAX_INSTANCES: usize = 64;

/// One Visual Studio instance as vswhere reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub instance_id: String,
    pub display_name: String,
    pub installation_path: PathBuf,
}

/// Why vswhere's output could not be read.
#[derive(Debug, thiserror::Error)]
pub enum VswhereError {
    #[error("vswhere printed invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("vswhere printed JSON that is not a list of instances")]
    NotAList,
}

/// Parses `vswhere -format json`: a list of instance objects. Entries without a non-empty
/// `instanceId`, `displayName` and `installationPath` are skipped, and so are repeated instance ids.
pub fn parse_vswhere(json: &str) -> Result<Vec<Instance>, VswhereError> {
    let json = json.trim_start_matches('\u{feff}').trim();
    let value: Value = serde_json::from_str(json)?;
    let Value::Array(entries) = value else { return Err(VswhereError::NotAList) };
    let mut res: Vec<Instance> = Vec::new();
    for entry in &entries {
        let field = |name: &str| entry.get(name).and_then(Value::as_str).filter(|s| !s.is_empty());
        let (Some(instance_id), Some(display_name), Some(path)) =
            (field("instanceId"), field("displayName"), field("installationPath"))
        else {
            continue;
        };
        if res.iter().any(|known| known.instance_id == instance_id) {
            continue;
        }
        res.push(Instance {
            instance_id: instance_id.to_owned(),
            display_name: display_name.to_owned(),
            installation_path: PathBuf::from(path),
        });
        if res.len() == MAX_INSTANCES {
            break;
        }
    }
    Ok(res)
}

/// `-arch`/`-host_arch` value for the architecture the server was built for.
pub fn vs_arch() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "arm64"
    } else if cfg!(target_arch = "x86") {
        "x86"
    } else {
        "amd64"
    }
}

/// `VsDevCmd.bat` of an installation.
pub fn vsdevcmd(installation: &Path) -> PathBuf {
    installation.join("Common7").join("Tools").join("VsDevCmd.bat")
}

/// The capture: `cmd /d /c call "<VsDevCmd.bat>" -no_logo -arch=A -host_arch=A && echo MARKER && set`.
/// `/c` is followed by `call`, not a quote, so cmd keeps the quoted script path as it is.
pub fn capture_command(vsdevcmd: &Path, cwd: &Path) -> CommandSpec {
    let arch = vs_arch();
    CommandSpec::new("cmd.exe", cwd)
        .args(["/d", "/c", "call"])
        .arg(vsdevcmd)
        .args(["-no_logo".to_owned(), format!("-arch={arch}"), format!("-host_arch={arch}")])
        .args(["&&", "echo", ENVIRONMENT_MARKER, "&&", "set"])
        // The end of VsDevCmd may start a telemetry helper that outlives the capture.
        .env("VSCMD_SKIP_SENDTELEMETRY", "1")
        .timeout(Timeout::total(CAPTURE_TIMEOUT))
}

/// Parses the capture's stdout: the `NAME=value` lines after [`ENVIRONMENT_MARKER`]. `None` when the
/// marker is missing (VsDevCmd failed before `set` ran) or no `PATH` was captured.
pub fn parse_environment(stdout: &str) -> Option<Environment> {
    let mut lines = stdout.lines().map(|line| line.trim_end_matches('\r'));
    lines.by_ref().find(|line| line.trim_end() == ENVIRONMENT_MARKER)?;
    let mut env = Environment::new();
    for line in lines {
        // `set` never prints the hidden `=C:` variables; a name cannot be empty.
        let Some((name, value)) = line.split_once('=') else { continue };
        if name.is_empty() {
            continue;
        }
        env.insert(OsString::from(name), OsString::from(value));
    }
    env_var_ascii_ci(&env, "PATH")?;
    Some(env)
}

/// Case-insensitive lookup on every platform (the captured names follow Windows rules).
fn env_var_ascii_ci<'a>(env: &'a Environment, name: &str) -> Option<&'a OsString> {
    env.iter().find(|(key, _)| key.to_str().is_some_and(|key| key.eq_ignore_ascii_case(name))).map(|(_, value)| value)
}

/// `Host<arch>\<arch>` below an MSVC tools directory's `bin`.
fn msvc_host_dir() -> [&'static str; 2] {
    match vs_arch() {
        "arm64" => ["Hostarm64", "arm64"],
        "x86" => ["Hostx86", "x86"],
        _ => ["Hostx64", "x64"],
    }
}

fn join(base: &Path, parts: &[&str]) -> PathBuf {
    parts.iter().fold(base.to_path_buf(), |path, part| path.join(part))
}

/// Candidate paths of `spec` in an installation, in order of preference. `env` is the captured
/// environment (its `VCToolsInstallDir` names the MSVC version VsDevCmd selected).
pub fn candidates(root: &Path, env: &Environment, spec: &'static ToolSpec) -> Vec<PathBuf> {
    let exes: Vec<String> = spec::executables(spec).iter().map(|exe| format!("{exe}.exe")).collect();
    let mut res = Vec::new();
    match spec.name {
        "cl" | "link" => {
            let host = msvc_host_dir();
            let mut tool_dirs: Vec<PathBuf> = Vec::new();
            if let Some(dir) = env_var_ascii_ci(env, "VCToolsInstallDir") {
                tool_dirs.push(PathBuf::from(dir));
            }
            tool_dirs.extend(newest_first(&join(root, &["VC", "Tools", "MSVC"])));
            for dir in tool_dirs {
                res.push(join(&dir, &["bin", host[0], host[1], &exes[0]]));
            }
        }
        "msbuild" => {
            let bin = join(root, &["MSBuild", "Current", "Bin"]);
            match vs_arch() {
                "arm64" => res.push(join(&bin, &["arm64", "MSBuild.exe"])),
                "amd64" => res.push(join(&bin, &["amd64", "MSBuild.exe"])),
                _ => {}
            }
            res.push(bin.join("MSBuild.exe"));
        }
        "cmake" | "ctest" => {
            res.push(join(
                root,
                &["Common7", "IDE", "CommonExtensions", "Microsoft", "CMake", "CMake", "bin", &exes[0]],
            ));
        }
        "ninja" => {
            res.push(join(root, &["Common7", "IDE", "CommonExtensions", "Microsoft", "CMake", "Ninja", "ninja.exe"]));
        }
        "clang" | "clang++" | "clang-cl" | "lld" | "lld-link" | "clangd" | "clang-tidy" | "clang-format"
        | "lldb-dap" => {
            let llvm = join(root, &["VC", "Tools", "Llvm"]);
            let bins = match vs_arch() {
                "arm64" => vec![join(&llvm, &["ARM64", "bin"])],
                "amd64" => vec![join(&llvm, &["x64", "bin"])],
                _ => Vec::new(),
            };
            for bin in bins.into_iter().chain([llvm.join("bin")]) {
                res.extend(exes.iter().map(|exe| bin.join(exe)));
            }
        }
        "git" => res.push(join(
            root,
            &[
                "Common7",
                "IDE",
                "CommonExtensions",
                "Microsoft",
                "TeamFoundation",
                "Team Explorer",
                "Git",
                "cmd",
                "git.exe",
            ],
        )),
        "cppvsdbg" => {
            res.push(join(
                root,
                &["Common7", "IDE", "Extensions", "Microsoft", "DebugAdapterHost", "OpenDebugAD7.exe"],
            ));
            res.push(join(
                root,
                &["Common7", "IDE", "CommonExtensions", "Microsoft", "VC", "Debugger", "OpenDebugAD7.exe"],
            ));
        }
        // make, gcc, g++ and gdb do not ship with Visual Studio.
        _ => {}
    }
    res
}

/// The first existing candidate of `spec` in the installation.
pub fn locate(root: &Path, env: &Environment, spec: &'static ToolSpec) -> Option<PathBuf> {
    candidates(root, env, spec).into_iter().find(|path| path.is_file())
}

/// Subdirectories of `dir`, newest version first (by version-aware name order).
fn newest_first(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    dirs.sort_by_key(|path| std::cmp::Reverse(version_key(path)));
    dirs
}

/// `14.38.33130` → `[14, 38, 33130]`; non-numeric parts count as 0.
fn version_key(path: &Path) -> Vec<u64> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.split('.').map(|part| part.parse().unwrap_or(0)).collect()
}

/// The toolset of one instance from its captured environment: the tools of its installation
/// layout with that environment, or, when the capture failed (`None`), an empty toolset that is
/// never bound to the server's environment.
pub fn instance_toolset(instance: &Instance, env: Option<Environment>) -> Toolset {
    let id = ToolsetId::visual_studio(&instance.instance_id);
    let name = instance.display_name.clone();
    let Some(env) = env else {
        tracing::warn!("Visual Studio discovery: no developer environment for {name} ({id})");
        return Toolset::new(id, name, Vec::new(), None);
    };
    let tools = BUILTIN_TOOLS
        .iter()
        .filter_map(|spec| locate(&instance.installation_path, &env, spec).map(|path| Tool { spec, path }))
        .collect();
    Toolset::new(id, name, tools, Some(Arc::new(env)))
}

#[cfg(windows)]
pub use discovery::discover;

#[cfg(windows)]
mod discovery {
    use std::ffi::OsStr;
    use std::path::Path;
    use std::sync::Arc;

    use parking_lot::Mutex;

    use super::*;
    use crate::call::Call;
    use crate::process::{ProcessService, Stream};

    /// One toolset per Visual Studio instance; none when vswhere is missing or fails.
    pub async fn discover(
        processes: &ProcessService,
        cwd: &Path,
        program_files_x86: Option<&OsStr>,
        call: &Call,
    ) -> Vec<Toolset> {
        let base = program_files_x86.map_or_else(|| PathBuf::from(DEFAULT_PROGRAM_FILES_X86), PathBuf::from);
        let vswhere = join(&base, VSWHERE_RELATIVE);
        if !vswhere.is_file() {
            return Vec::new();
        }
        let listing =
            CommandSpec::new(&vswhere, cwd).args(VSWHERE_ARGS.iter().copied()).timeout(Timeout::total(VSWHERE_TIMEOUT));
        let Some(json) = run_for_stdout(processes, listing, call).await else { return Vec::new() };
        let instances = match parse_vswhere(&json) {
            Ok(instances) => instances,
            Err(err) => {
                tracing::warn!("Visual Studio discovery: {err}");
                return Vec::new();
            }
        };
        let mut res = Vec::with_capacity(instances.len());
        for instance in instances {
            res.push(capture(processes, cwd, &instance, call).await);
        }
        res
    }

    async fn capture(processes: &ProcessService, cwd: &Path, instance: &Instance, call: &Call) -> Toolset {
        let script = vsdevcmd(&instance.installation_path);
        let env = if script.is_file() {
            run_for_stdout(processes, capture_command(&script, cwd), call).await.as_deref().and_then(parse_environment)
        } else {
            None
        };
        instance_toolset(instance, env)
    }

    /// Runs `command` and returns its stdout when it exits with 0.
    async fn run_for_stdout(processes: &ProcessService, command: CommandSpec, call: &Call) -> Option<String> {
        let out = Arc::new(Mutex::new(String::new()));
        let sink = out.clone();
        let command = command.on_line(Arc::new(move |stream, line| {
            let mut out = sink.lock();
            if stream == Stream::Stdout && out.len() + line.len() < MAX_CAPTURE_BYTES {
                out.push_str(line);
                out.push('\n');
            }
        }));
        match processes.run(command, call).await {
            Ok(completed) if completed.succeeded() => Some(std::mem::take(&mut *out.lock())),
            Ok(completed) => {
                tracing::warn!("Visual Studio discovery: process {} ended with {:?}", completed.id, completed.status);
                None
            }
            Err(err) => {
                tracing::warn!("Visual Studio discovery: {err}");
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
