//! Visual Studio discovery on recorded vswhere output and a recorded VsDevCmd + `set` capture.

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

/// The LLVM `bin` directory of an installation for the server's architecture.
fn llvm_bin() -> &'static [&'static str] {
    match vs_arch() {
        "arm64" => &["VC", "Tools", "Llvm", "ARM64", "bin"],
        "amd64" => &["VC", "Tools", "Llvm", "x64", "bin"],
        _ => &["VC", "Tools", "Llvm", "bin"],
    }
}

#[test]
fn tools_are_located_in_the_installation_layout() {
    let [host, target] = msvc_host_dir();
    let llvm = |exe: &'static str| -> Vec<&'static str> { llvm_bin().iter().copied().chain([exe]).collect() };
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

/// Version banners of the tools a Visual Studio Community 2022 (17.8) installation ships, in the
/// form they print them (CRLF line ends).
const VS_BANNERS: &[(&str, &str)] = &[
    (
        "cmake",
        "cmake version 3.27.2-msvc1\r\n\r\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\r\n",
    ),
    (
        "ctest",
        "ctest version 3.27.2-msvc1\r\n\r\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\r\n",
    ),
    ("ninja", "1.11.0\r\n"),
    ("msbuild", "MSBuild version 17.8.3+195e7f5a3 for .NET Framework\r\n17.8.3.51904\r\n"),
    ("clang-cl", "clang version 17.0.3\r\nTarget: x86_64-pc-windows-msvc\r\nThread model: posix\r\n"),
    ("lld-link", "LLD 17.0.3\r\n"),
    ("clangd", "clangd version 17.0.3\r\nFeatures: windows\r\nPlatform: x86_64-pc-windows-msvc\r\n"),
    ("git", "git version 2.42.0.windows.2\r\n"),
];

/// vswhere's listing and the capture, recorded on Windows, with the Community instance moved into
/// a fake layout in the test's temporary directory: the environment is parsed, the toolset finds
/// the instance's tools where the captured environment and the layout put them, and every tool the
/// specification gives a version probe is probed with its arguments and read from its banner.
#[test]
fn recorded_discovery_gives_each_instance_its_toolset() {
    let [host, target] = msvc_host_dir();
    let llvm = llvm_bin();
    let in_llvm = |exe: &'static str| -> Vec<&'static str> { llvm.iter().copied().chain([exe]).collect() };
    let cmake_dir = ["Common7", "IDE", "CommonExtensions", "Microsoft", "CMake"];
    let with = |dir: &[&'static str], rest: &[&'static str]| -> Vec<&'static str> { [dir, rest].concat() };
    let msvc = |exe| vec!["VC", "Tools", "MSVC", "14.38.33130", "bin", host, target, exe];
    let files = [
        msvc("cl.exe"),
        msvc("link.exe"),
        // A newer MSVC that VsDevCmd did not select.
        vec!["VC", "Tools", "MSVC", "14.40.33807", "bin", host, target, "cl.exe"],
        with(&cmake_dir, &["CMake", "bin", "cmake.exe"]),
        with(&cmake_dir, &["CMake", "bin", "ctest.exe"]),
        with(&cmake_dir, &["Ninja", "ninja.exe"]),
        vec!["MSBuild", "Current", "Bin", "amd64", "MSBuild.exe"],
        vec!["MSBuild", "Current", "Bin", "MSBuild.exe"],
        in_llvm("clang-cl.exe"),
        in_llvm("lld-link.exe"),
        in_llvm("clangd.exe"),
        with(
            &["Common7", "IDE", "CommonExtensions", "Microsoft", "TeamFoundation", "Team Explorer"],
            &["Git", "cmd", "git.exe"],
        ),
    ];
    let parts: Vec<&[&str]> = files.iter().map(Vec::as_slice).collect();
    let (_tmp, root) = layout(&parts);

    let mut instances = parse_vswhere(VSWHERE_SAMPLE).unwrap();
    let recorded_root = instances[0].installation_path.to_string_lossy().into_owned();
    instances[0].installation_path = root.clone();
    // The capture's paths point into the moved installation, with this platform's separator.
    let capture = SET_SAMPLE.replace(&recorded_root, &root.to_string_lossy());
    let capture = if cfg!(windows) { capture } else { capture.replace('\\', "/") };
    let community = instance_toolset(&instances[0], parse_environment(&capture));
    // VsDevCmd of the second instance failed: no marker, no `set` output.
    let build_tools = instance_toolset(&instances[1], parse_environment("[ERROR:VsDevCmd.bat] failed\r\n"));

    assert_eq!(community.id().as_str(), "visual-studio-1d4f0a53");
    assert_eq!(community.name(), "Visual Studio Community 2022");
    let env = community.environment().expect("the captured environment");
    assert_eq!(env.get(std::ffi::OsStr::new("VSCMD_VER")).map(|v| v.to_string_lossy()), Some("17.8.3".into()));
    let shown: Vec<String> = community
        .tools()
        .iter()
        .map(|tool| {
            let path = rel(&root, Some(tool.path.clone())).expect("inside the installation");
            let path = path.replace(&llvm.join("/"), "<llvm>");
            let path = path.replace(&format!("{host}/{target}"), "<host>/<target>");
            let probe = match tool.spec.version_args {
                None => "no version probe".to_owned(),
                Some(args) => {
                    let banner = VS_BANNERS.iter().find(|(name, _)| *name == tool.spec.name).expect("a banner").1;
                    let version = crate::toolchain::version::parse(tool.spec, banner, "");
                    format!("{} -> {}", args.join(" "), version.as_deref().unwrap_or("null"))
                }
            };
            format!("{}: {path}: {probe}", tool.spec.name)
        })
        .collect();
    let msbuild =
        if vs_arch() == "amd64" { "MSBuild/Current/Bin/amd64/MSBuild.exe" } else { "MSBuild/Current/Bin/MSBuild.exe" };
    let expected_msbuild = format!("msbuild: {msbuild}: -version -nologo -> 17.8.3.51904");
    assert!(shown.contains(&expected_msbuild), "{shown:#?}");
    let shown: Vec<&String> = shown.iter().filter(|line| !line.starts_with("msbuild:")).collect();
    expect![[r#"
        [
            "cl: VC/Tools/MSVC/14.38.33130/bin/<host>/<target>/cl.exe: no version probe",
            "clang-cl: <llvm>/clang-cl.exe: --version -> 17.0.3",
            "clangd: <llvm>/clangd.exe: --version -> 17.0.3",
            "cmake: Common7/IDE/CommonExtensions/Microsoft/CMake/CMake/bin/cmake.exe: --version -> 3.27.2-msvc1",
            "ctest: Common7/IDE/CommonExtensions/Microsoft/CMake/CMake/bin/ctest.exe: --version -> 3.27.2-msvc1",
            "git: Common7/IDE/CommonExtensions/Microsoft/TeamFoundation/Team Explorer/Git/cmd/git.exe: --version -> 2.42.0.windows.2",
            "link: VC/Tools/MSVC/14.38.33130/bin/<host>/<target>/link.exe: no version probe",
            "lld-link: <llvm>/lld-link.exe: --version -> 17.0.3",
            "ninja: Common7/IDE/CommonExtensions/Microsoft/CMake/Ninja/ninja.exe: --version -> 1.11.0",
        ]
    "#]].assert_debug_eq(&shown);

    assert_eq!(build_tools.id().as_str(), "visual-studio-9b2c7e11");
    assert_eq!(build_tools.name(), "Visual Studio Build Tools 2019");
    assert!(build_tools.tools().is_empty() && build_tools.environment().is_none(), "never the server's environment");
}
