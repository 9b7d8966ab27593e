//! Visual Studio toolsets (Windows): instances from the standard Installer `vswhere.exe`, one
//! developer environment captured per instance from its `VsDevCmd.bat`, and the instance's tools
//! located in its installation layout.
//!
//! The parsers (vswhere's JSON, the captured `set` output) and the layout lookup are plain
//! functions compiled and unit-tested on every platform with recorded samples; only [`discover`],
//! which runs `vswhere` and the captures, is Windows-only.
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
use std::time::Duration;

use serde_json::Value;

use super::spec::{self, ToolSpec};
use super::toolset::Environment;
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
    use crate::toolchain::spec::BUILTIN_TOOLS;
    use crate::toolchain::toolset::{Tool, Toolset, ToolsetId};

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
            res.push(instance_toolset(processes, cwd, &instance, call).await);
        }
        res
    }

    async fn instance_toolset(processes: &ProcessService, cwd: &Path, instance: &Instance, call: &Call) -> Toolset {
        let id = ToolsetId::visual_studio(&instance.instance_id);
        let name = instance.display_name.clone();
        let script = vsdevcmd(&instance.installation_path);
        let env = if script.is_file() {
            run_for_stdout(processes, capture_command(&script, cwd), call).await.as_deref().and_then(parse_environment)
        } else {
            None
        };
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
mod tests {
    use std::fs;

    use expect_test::expect;

    use super::*;
    use crate::toolchain::spec::lookup;

    /// Recorded from `vswhere -products * -prerelease -format json -utf8 -nologo` on a machine with
    /// Visual Studio Community 2022 and Build Tools 2019 (trimmed to the fields that matter plus a
    /// few others; the second entry is a repeated id, the third lacks a path).
    const VSWHERE_SAMPLE: &str = r#"[
  {
    "instanceId": "1d4f0a53",
    "installDate": "2023-11-20T09:12:45Z",
    "installationName": "VisualStudio/17.8.3+34330.188",
    "installationPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community",
    "installationVersion": "17.8.34330.188",
    "productId": "Microsoft.VisualStudio.Product.Community",
    "productPath": "C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\Common7\\IDE\\devenv.exe",
    "state": 4294967295,
    "isComplete": true,
    "isLaunchable": true,
    "isPrerelease": false,
    "isRebootRequired": false,
    "displayName": "Visual Studio Community 2022",
    "description": "Powerful IDE, free for students, open-source contributors, and individuals",
    "channelId": "VisualStudio.17.Release",
    "channelUri": "https://aka.ms/vs/17/release/channel",
    "catalog": {
      "buildBranch": "d17.8",
      "productDisplayVersion": "17.8.3",
      "productLineVersion": "2022"
    },
    "properties": {
      "nickname": "",
      "setupEngineFilePath": "C:\\Program Files (x86)\\Microsoft Visual Studio\\Installer\\setup.exe"
    }
  },
  {
    "instanceId": "9b2c7e11",
    "installationPath": "C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools",
    "installationVersion": "16.11.34301.259",
    "productId": "Microsoft.VisualStudio.Product.BuildTools",
    "isPrerelease": false,
    "displayName": "Visual Studio Build Tools 2019",
    "catalog": { "productDisplayVersion": "16.11.32" }
  },
  {
    "instanceId": "1d4f0a53",
    "installationPath": "D:\\Elsewhere",
    "displayName": "Repeated instance"
  },
  {
    "instanceId": "c0ffee00",
    "displayName": "Broken entry without a path"
  }
]
"#;

    #[test]
    fn vswhere_listing() {
        let instances = parse_vswhere(&format!("\u{feff}{VSWHERE_SAMPLE}")).unwrap();
        let shown: Vec<String> = instances
            .iter()
            .map(|i| format!("{} | {} | {}", i.instance_id, i.display_name, i.installation_path.display()))
            .collect();
        expect![[r#"
            [
                "1d4f0a53 | Visual Studio Community 2022 | C:\\Program Files\\Microsoft Visual Studio\\2022\\Community",
                "9b2c7e11 | Visual Studio Build Tools 2019 | C:\\Program Files (x86)\\Microsoft Visual Studio\\2019\\BuildTools",
            ]
        "#]]
        .assert_debug_eq(&shown);
    }

    #[test]
    fn vswhere_without_instances() {
        assert_eq!(parse_vswhere("[]\r\n").unwrap(), []);
    }

    #[test]
    fn vswhere_garbage_is_an_error() {
        expect!["vswhere printed invalid JSON: expected value at line 1 column 1"]
            .assert_eq(&parse_vswhere("Visual Studio Locator version 3.1.7").unwrap_err().to_string());
        expect!["vswhere printed JSON that is not a list of instances"]
            .assert_eq(&parse_vswhere("{\"instanceId\": \"x\"}").unwrap_err().to_string());
    }

    /// Recorded stdout of the capture command (`call VsDevCmd.bat -no_logo … && echo MARKER && set`)
    /// for Visual Studio Community 2022, shortened; lines end in CRLF as cmd writes them.
    const SET_SAMPLE: &str = "\
**********************************************************************\r
** Visual Studio 2022 Developer Command Prompt v17.8.3\r
**********************************************************************\r
FORGEMCP_ENVIRONMENT_FOLLOWS \r
ALLUSERSPROFILE=C:\\ProgramData\r
CommandPromptType=Native\r
CommonProgramFiles(x86)=C:\\Program Files (x86)\\Common Files\r
DevEnvDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\Common7\\IDE\\\r
INCLUDE=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\include;C:\\Program Files (x86)\\Windows Kits\\10\\include\\10.0.22621.0\\ucrt\r
Path=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\bin\\HostX64\\x64;C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\Common7\\IDE\\CommonExtensions\\Microsoft\\CMake\\CMake\\bin;C:\\WINDOWS\\system32\r
PATHEXT=.COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC\r
PROMPT=$P$G\r
VCToolsInstallDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\\r
VSCMD_ARG_HOST_ARCH=x64\r
VSCMD_ARG_TGT_ARCH=x64\r
VSCMD_VER=17.8.3\r
WindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\\r
EMPTY_VALUE=\r
EQUALS_IN_VALUE=a=b=c\r
";

    #[test]
    fn captured_environment() {
        let env = parse_environment(SET_SAMPLE).unwrap();
        let shown: Vec<String> =
            env.iter().map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy())).collect();
        expect![[r#"
            [
                "ALLUSERSPROFILE=C:\\ProgramData",
                "CommandPromptType=Native",
                "CommonProgramFiles(x86)=C:\\Program Files (x86)\\Common Files",
                "DevEnvDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\Common7\\IDE\\",
                "EMPTY_VALUE=",
                "EQUALS_IN_VALUE=a=b=c",
                "INCLUDE=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\include;C:\\Program Files (x86)\\Windows Kits\\10\\include\\10.0.22621.0\\ucrt",
                "PATHEXT=.COM;.EXE;.BAT;.CMD;.VBS;.VBE;.JS;.JSE;.WSF;.WSH;.MSC",
                "PROMPT=$P$G",
                "Path=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\bin\\HostX64\\x64;C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\Common7\\IDE\\CommonExtensions\\Microsoft\\CMake\\CMake\\bin;C:\\WINDOWS\\system32",
                "VCToolsInstallDir=C:\\Program Files\\Microsoft Visual Studio\\2022\\Community\\VC\\Tools\\MSVC\\14.38.33130\\",
                "VSCMD_ARG_HOST_ARCH=x64",
                "VSCMD_ARG_TGT_ARCH=x64",
                "VSCMD_VER=17.8.3",
                "WindowsSdkDir=C:\\Program Files (x86)\\Windows Kits\\10\\",
            ]
        "#]]
        .assert_debug_eq(&shown);
    }

    #[test]
    fn failed_capture_has_no_environment() {
        // VsDevCmd failed, so `&&` skipped the marker and `set`.
        let failed = "[ERROR:VsDevCmd.bat] Invalid command line argument: '-arch=sparc'.\r\n";
        assert_eq!(parse_environment(failed), None);
        assert_eq!(parse_environment(""), None);
        assert_eq!(parse_environment("FORGEMCP_ENVIRONMENT_FOLLOWS\r\nA=1\r\n"), None, "no PATH");
    }

    #[test]
    fn capture_command_line() {
        let spec = capture_command(Path::new("C:/VS/Common7/Tools/VsDevCmd.bat"), Path::new("/project"));
        let args: Vec<String> = spec.arguments.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        let arch = vs_arch();
        assert_eq!(spec.executable, PathBuf::from("cmd.exe"));
        assert_eq!(
            args,
            [
                "/d".to_owned(),
                "/c".to_owned(),
                "call".to_owned(),
                "C:/VS/Common7/Tools/VsDevCmd.bat".to_owned(),
                "-no_logo".to_owned(),
                format!("-arch={arch}"),
                format!("-host_arch={arch}"),
                "&&".to_owned(),
                "echo".to_owned(),
                ENVIRONMENT_MARKER.to_owned(),
                "&&".to_owned(),
                "set".to_owned(),
            ]
        );
        assert_eq!(spec.timeout.total, Some(CAPTURE_TIMEOUT));
    }

    /// A fake installation layout with `.exe` files (plain files; nothing runs them).
    fn layout(files: &[&[&str]]) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("Community");
        for parts in files {
            let path = join(&root, parts);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, "").unwrap();
        }
        (tmp, root)
    }

    fn rel(root: &Path, path: Option<PathBuf>) -> Option<String> {
        let path = path?;
        let rel = path.strip_prefix(root).ok()?;
        Some(rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/"))
    }

    #[test]
    fn tools_are_located_in_the_installation_layout() {
        let [host, target] = msvc_host_dir();
        let llvm_bin: &[&str] = match vs_arch() {
            "arm64" => &["VC", "Tools", "Llvm", "ARM64", "bin"],
            "amd64" => &["VC", "Tools", "Llvm", "x64", "bin"],
            _ => &["VC", "Tools", "Llvm", "bin"],
        };
        let llvm = |exe: &'static str| -> Vec<&'static str> { llvm_bin.iter().copied().chain([exe]).collect() };
        let cmake_bin = ["Common7", "IDE", "CommonExtensions", "Microsoft", "CMake", "CMake", "bin", "cmake.exe"];
        let (_tmp, root) = layout(&[
            &["VC", "Tools", "MSVC", "14.9.1", "bin", host, target, "cl.exe"],
            &["VC", "Tools", "MSVC", "14.38.33130", "bin", host, target, "cl.exe"],
            &["VC", "Tools", "MSVC", "14.38.33130", "bin", host, target, "link.exe"],
            &cmake_bin,
            &["Common7", "IDE", "CommonExtensions", "Microsoft", "CMake", "Ninja", "ninja.exe"],
            &["MSBuild", "Current", "Bin", "MSBuild.exe"],
            &llvm("clang-cl.exe"),
            &llvm("lld.exe"),
        ]);
        let env = Environment::new();
        let find = |name: &str| rel(&root, locate(&root, &env, lookup(name).unwrap()));
        assert_eq!(find("cl"), Some(format!("VC/Tools/MSVC/14.38.33130/bin/{host}/{target}/cl.exe")), "newest MSVC");
        assert_eq!(find("link"), Some(format!("VC/Tools/MSVC/14.38.33130/bin/{host}/{target}/link.exe")));
        assert_eq!(find("cmake").as_deref(), Some(cmake_bin.join("/").as_str()));
        assert_eq!(find("ctest"), None);
        assert_eq!(find("ninja").as_deref(), Some("Common7/IDE/CommonExtensions/Microsoft/CMake/Ninja/ninja.exe"));
        assert_eq!(find("msbuild").as_deref(), Some("MSBuild/Current/Bin/MSBuild.exe"));
        assert_eq!(find("clang-cl"), Some(llvm("clang-cl.exe").join("/")));
        assert_eq!(find("lld"), Some(llvm("lld.exe").join("/")));
        for absent in ["gcc", "g++", "make", "gdb", "git", "cppvsdbg", "clangd"] {
            assert_eq!(find(absent), None, "{absent}");
        }
    }

    #[test]
    fn the_captured_msvc_version_wins() {
        let [host, target] = msvc_host_dir();
        let (_tmp, root) = layout(&[
            &["VC", "Tools", "MSVC", "14.40.1", "bin", host, target, "cl.exe"],
            &["VC", "Tools", "MSVC", "14.38.33130", "bin", host, target, "cl.exe"],
        ]);
        let mut env = Environment::new();
        env.insert("VCToolsInstallDir".into(), join(&root, &["VC", "Tools", "MSVC", "14.38.33130"]).into());
        let found = rel(&root, locate(&root, &env, lookup("cl").unwrap()));
        assert_eq!(found, Some(format!("VC/Tools/MSVC/14.38.33130/bin/{host}/{target}/cl.exe")));
    }

    #[test]
    fn msvc_versions_sort_numerically() {
        let mut dirs = vec![PathBuf::from("14.9.0"), PathBuf::from("14.38.33130"), PathBuf::from("14.100")];
        dirs.sort_by_key(|p| std::cmp::Reverse(version_key(p)));
        assert_eq!(dirs, [PathBuf::from("14.100"), PathBuf::from("14.38.33130"), PathBuf::from("14.9.0")]);
    }
}
