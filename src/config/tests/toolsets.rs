//! `--toolset` groups and the `--cmake-toolset` selector.

use super::*;

// User toolsets.

#[test]
fn toolset_paths_resolve_against_cwd() {
    let fx = Fixture::new();
    let clang = fx.tool("tools/llvm 20/clang");
    let cmake = fx.tool("proj/bin/cmake");
    let (clang_arg, cmake_arg) =
        (format!("clang={}", exe("../tools/llvm 20/clang")), format!("cmake={}", exe("./bin/cmake")));
    let serve = fx.serve(&["--toolset", "LLVM 20", &clang_arg, &cmake_arg]);
    let toolset = &serve.toolsets()[0];
    assert_eq!(toolset.name, "LLVM 20");
    let tools: Vec<_> = toolset.tools.iter().map(|tool| (tool.spec.name, tool.path.clone())).collect();
    assert_eq!(tools, [("clang", fx.root.join(exe("proj/../tools/llvm 20/clang"))), ("cmake", cmake)]);
    assert!(tools[0].1.is_absolute());
    assert_eq!(fs::canonicalize(&tools[0].1).expect("tool exists"), clang);
}

#[test]
fn toolset_values_may_contain_equals_signs() {
    let fx = Fixture::new();
    let gxx = fx.tool("tools/a=b/g++");
    let serve = fx.serve(&["--toolset", "gnu", &format!("g++={}", s(&gxx))]);
    assert_eq!(serve.toolsets()[0].tools[0].path, gxx);
}

#[test]
fn several_toolsets_stay_separate() {
    let fx = Fixture::new();
    let clang = fx.tool("tools/clang");
    let clangd = fx.tool("tools/clangd");
    let serve = fx.serve(&[
        "--toolset",
        "a",
        &format!("clang={}", s(&clang)),
        "--toolset",
        "b",
        &format!("clang={}", s(&clang)),
        &format!("clangd={}", s(&clangd)),
    ]);
    let shape: Vec<_> = serve
        .toolsets()
        .iter()
        .map(|t| (t.name.as_str(), t.tools.iter().map(|tool| tool.spec.name).collect::<Vec<_>>()))
        .collect();
    assert_eq!(shape, [("a", vec!["clang"]), ("b", vec!["clang", "clangd"])]);
}

#[cfg(unix)]
#[test]
fn toolset_links_are_kept() {
    let fx = Fixture::new();
    let clang = fx.tool("tools/clang-20");
    std::os::unix::fs::symlink(&clang, fx.root.join("tools/clang++")).expect("symlink");
    let serve = fx.serve(&["--toolset", "llvm", "clang++=../tools/clang++"]);
    assert_eq!(serve.toolsets()[0].tools[0].path, fx.root.join("proj/../tools/clang++"));
}

#[test]
fn duplicate_toolset_name() {
    let fx = Fixture::new();
    fx.tool("tools/clang");
    let clang = format!("clang={}", exe("../tools/clang"));
    let message = fx.error(&["--toolset", "LLVM 20", &clang, "--toolset", "LLVM 20", &clang]);
    assert_eq!(message, "--toolset `LLVM 20`: the name is already used by another --toolset");
}

#[test]
fn toolset_name_rules() {
    let fx = Fixture::new();
    fx.tool("tools/clang");
    assert_eq!(fx.error(&["--toolset", " ", "clang=../tools/clang"]), "--toolset ` `: the name is empty");
    assert_eq!(fx.error(&["--toolset", "", "clang=../tools/clang"]), "--toolset ``: the name is empty");
    assert_eq!(
        fx.error(&["--toolset", "clang=../tools/clang", "cmake=../tools/clang"]),
        "--toolset clang=../tools/clang: the first value is the toolset name and must not contain '='"
    );
    assert_eq!(
        fx.error(&["--toolset", "system", "clang=../tools/clang"]),
        "--toolset system: the name is reserved for the System toolset"
    );
    assert_eq!(
        fx.error(&["--toolset", "System", "clang=../tools/clang"]),
        "--toolset System: the name is reserved for the System toolset"
    );
    assert!(fx.build(&["--toolset", "SYSTEM", &format!("clang={}", exe("../tools/clang"))]).is_ok());
}

#[test]
fn unknown_tool_name() {
    let fx = Fixture::new();
    fx.tool("tools/clang");
    let message = fx.error(&["--toolset", "llvm", "clang-query=../tools/clang"]);
    assert_eq!(
        message,
        "--toolset llvm: unknown tool `clang-query` (expected one of cmake, ctest, ninja, make, msbuild, cl, link, \
         clang, clang++, clang-cl, gcc, g++, lld, lld-link, clangd, clang-tidy, clang-format, git, lldb-dap, gdb, \
         cppvsdbg, ccache, sccache, distcc, icecc)"
    );
    assert_starts(&fx.error(&["--toolset", "llvm", "Clang=../tools/clang"]), "--toolset llvm: unknown tool `Clang`");
}

#[test]
fn repeated_tool() {
    let fx = Fixture::new();
    fx.tool("tools/clang");
    assert_eq!(
        fx.error(&["--toolset", "llvm", &format!("clang={}", exe("../tools/clang")), "clang=../tools/clang"]),
        "--toolset llvm: tool `clang` is given more than once"
    );
}

#[test]
fn tool_entry_needs_equals_and_a_path() {
    let fx = Fixture::new();
    assert_eq!(fx.error(&["--toolset", "llvm", "clang"]), "--toolset llvm: `clang` is not TOOL=PATH");
    assert_eq!(fx.error(&["--toolset", "llvm", "clang="]), "--toolset llvm: `clang`= has an empty path");
}

#[test]
fn missing_tool_path() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--toolset", "llvm", "clang=../tools/none"]),
        "--toolset llvm: `clang` path ../tools/none does not exist"
    );
}

#[test]
fn tool_path_must_be_a_file() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--toolset", "llvm", "clang=../tools"]),
        "--toolset llvm: `clang` path ../tools is not a file"
    );
}

#[cfg(unix)]
#[test]
fn tool_path_must_be_executable() {
    let fx = Fixture::new();
    fx.file("tools/clang");
    assert_eq!(
        fx.error(&["--toolset", "llvm", "clang=../tools/clang"]),
        "--toolset llvm: `clang` path ../tools/clang is not executable (no execute permission)"
    );
}

#[cfg(windows)]
#[test]
fn tool_path_needs_a_pathext_suffix() {
    let fx = Fixture::new();
    fx.file("tools/clang.txt");
    fx.file("tools/clang.exe");
    assert_starts(
        &fx.error(&["--toolset", "llvm", "clang=../tools/clang.txt"]),
        "--toolset llvm: `clang` path ../tools/clang.txt is not executable",
    );
    assert!(fx.build(&["--toolset", "llvm", "clang=../tools/clang.EXE"]).is_ok());
}

#[cfg(not(windows))]
#[test]
fn windows_only_tools_are_refused_elsewhere() {
    let fx = Fixture::new();
    fx.tool("tools/link");
    for tool in ["cl", "link", "msbuild", "cppvsdbg"] {
        assert_eq!(
            fx.error(&["--toolset", "msvc", &format!("{tool}=../tools/link")]),
            format!("--toolset msvc: tool `{tool}` only exists on Windows")
        );
    }
}

// CMake toolset selector.

#[test]
fn cmake_toolset_selector() {
    let fx = Fixture::new();
    let clang = format!("clang={}", s(&fx.tool("tools/clang")));
    let llvm = ["--toolset", "LLVM 20", clang.as_str()];
    assert_eq!(fx.serve(&[&llvm[..], &["--cmake-toolset", "LLVM 20"]].concat()).cmake_toolset(), "LLVM 20");
    let id = crate::toolchain::ToolsetId::user("LLVM 20");
    assert_eq!(fx.serve(&[&llvm[..], &["--cmake-toolset", id.as_str()]].concat()).cmake_toolset(), id.as_str());
    assert_eq!(fx.serve(&["--cmake-toolset", "System"]).cmake_toolset(), "System");
    assert_eq!(fx.error(&["--cmake-toolset", " "]), "--cmake-toolset ` `: the toolset id or name is empty");
    if cfg!(not(windows)) {
        assert_eq!(
            fx.error(&[&llvm[..], &["--cmake-toolset", "nosuch"]].concat()),
            "--cmake-toolset `nosuch`: no toolset has this id or name (known: `System`, `LLVM 20`, or their ids)"
        );
        assert_eq!(
            fx.error(&["--cmake-profile", "a", "toolset=LLVM 20"]),
            "--cmake-profile a: toolset=`LLVM 20`: no toolset has this id or name (known: `System`, or their ids)"
        );
    }
}
