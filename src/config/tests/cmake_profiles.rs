//! `--cmake-profile` groups.

use super::*;
use crate::cmake::{CmakeProfileSpec, PlainProfile, PresetProfile, ProfileKind};
use crate::config::cmake_profiles::PROFILE_KEYS;
use crate::workspace::path::QualifiedPath;

// CMake profiles.

#[track_caller]
fn profile(fx: &Fixture, argv: &[&str]) -> CmakeProfileSpec {
    let serve = fx.serve(argv);
    assert_eq!(serve.cmake_profiles().len(), 1);
    serve.cmake_profiles()[0].clone()
}

#[track_caller]
fn plain(spec: &CmakeProfileSpec) -> &PlainProfile {
    match &spec.kind {
        ProfileKind::Plain(plain) => plain,
        ProfileKind::Presets(_) => panic!("{} should be a plain profile", spec.name),
    }
}

#[track_caller]
fn presets(spec: &CmakeProfileSpec) -> &PresetProfile {
    match &spec.kind {
        ProfileKind::Presets(presets) => presets,
        ProfileKind::Plain(_) => panic!("{} should be a preset profile", spec.name),
    }
}

fn qp(text: &str) -> QualifiedPath {
    QualifiedPath::parse(text).expect("valid test path")
}

#[test]
fn plain_profile_defaults() {
    let fx = Fixture::new();
    let spec = profile(&fx, &["--cmake-profile", "Debug"]);
    assert_eq!(spec.name, "Debug");
    assert_eq!(spec.toolset, "system");
    assert_eq!(spec.configuration, None);
    let plain = plain(&spec);
    assert_eq!(plain.build_directory.to_string(), "storage/build/cmake-Debug");
    assert_eq!(plain.generator, "Ninja");
    assert_eq!((plain.c_compiler, plain.cxx_compiler, &plain.toolchain_file), (None, None, &None));
    assert!(plain.defines.is_empty());
    assert_eq!(spec.build_directory(), Some(&qp("storage/build/cmake-Debug")));
}

#[test]
fn profile_toolset_defaults_to_cmake_toolset() {
    let fx = Fixture::new();
    let clang = format!("clang={}", s(&fx.tool("tools/clang")));
    let serve = fx.serve(&[
        "--toolset",
        "LLVM 20",
        &clang,
        "--cmake-toolset",
        "LLVM 20",
        "--cmake-profile",
        "a",
        "--cmake-profile",
        "b",
        "toolset=system",
    ]);
    let toolsets: Vec<_> = serve.cmake_profiles().iter().map(|p| p.toolset.as_str()).collect();
    assert_eq!(toolsets, ["LLVM 20", "system"]);
}

#[test]
fn plain_profile_with_every_key() {
    let fx = Fixture::new();
    fx.file("proj/cmake/toolchain.cmake");
    let clang = format!("clang={}", s(&fx.tool("tools/clang")));
    let spec = profile(
        &fx,
        &[
            "--toolset",
            "LLVM 20",
            &clang,
            "--cmake-profile",
            "debug",
            "toolset=LLVM 20",
            "configuration=Debug",
            "generator=Ninja Multi-Config",
            "build-directory=build/debug/",
            "c-compiler=clang",
            "cxx-compiler=clang++",
            "toolchain-file=./cmake/toolchain.cmake",
            "define=CMAKE_CXX_FLAGS=-O0 -g -DX=1",
            "define=EMPTY=",
            "define=OPT:BOOL=ON",
        ],
    );
    assert_eq!(spec.toolset, "LLVM 20");
    assert_eq!(spec.configuration.as_deref(), Some("Debug"));
    let plain = plain(&spec);
    assert_eq!(plain.build_directory.to_string(), "project/build/debug");
    assert_eq!(plain.generator, "Ninja Multi-Config");
    assert_eq!(plain.c_compiler.map(|t| t.name), Some("clang"));
    assert_eq!(plain.cxx_compiler.map(|t| t.name), Some("clang++"));
    assert_eq!(
        plain.toolchain_file.as_ref().map(ToString::to_string).as_deref(),
        Some("project/cmake/toolchain.cmake")
    );
    let defines: Vec<_> = plain.defines.iter().map(|d| (d.name.as_str(), d.value.as_str())).collect();
    assert_eq!(defines, [("CMAKE_CXX_FLAGS", "-O0 -g -DX=1"), ("EMPTY", ""), ("OPT:BOOL", "ON")]);
}

#[test]
fn toolchain_file_in_storage() {
    let fx = Fixture::new();
    fx.file(".proj.forgemcp/tc/arm.cmake");
    let spec = profile(&fx, &["--cmake-profile", "arm", "toolchain-file=storage/tc/arm.cmake"]);
    assert_eq!(plain(&spec).toolchain_file, Some(qp("storage/tc/arm.cmake")));
}

#[test]
fn toolchain_file_must_exist() {
    let fx = Fixture::new();
    fs::create_dir(fx.root.join("proj/cmake")).expect("directory");
    assert_eq!(
        fx.error(&["--cmake-profile", "arm", "toolchain-file=project/missing.cmake"]),
        "--cmake-profile arm: `toolchain-file=project/missing.cmake` is not an existing file"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "arm", "toolchain-file=cmake"]),
        "--cmake-profile arm: `toolchain-file=project/cmake` is not an existing file"
    );
    assert_starts(
        &fx.error(&["--cmake-profile", "arm", "toolchain-file=root/etc/tc.cmake"]),
        "--cmake-profile arm: `toolchain-file=root/etc/tc.cmake` must be in project/ or storage/",
    );
}

#[test]
fn build_directory_rules() {
    let fx = Fixture::new();
    let dir = |value: &str| plain(&profile(&fx, &["--cmake-profile", "p", value])).build_directory.to_string();
    assert_eq!(dir("build-directory=storage/build/x"), "storage/build/x");
    assert_eq!(dir("build-directory=./storage/x"), "project/storage/x");
    assert_eq!(dir("build-directory=project/out/"), "project/out");
    for (value, problem) in [
        ("build-directory=root/tmp/b", "must be in project/ or storage/, not root/"),
        ("build-directory=project/", "must name a directory or file below project/, not the root itself"),
        ("build-directory=storage", "must name a directory or file below storage/, not the root itself"),
        ("build-directory=../b", "is not a workspace path: `..` segments are not allowed"),
        ("build-directory=/abs/b", "is not a workspace path: absolute paths need the explicit `root/` prefix"),
        ("build-directory=a//b", "is not a workspace path: repeated separators (`//`) are not allowed"),
    ] {
        assert_eq!(fx.error(&["--cmake-profile", "p", value]), format!("--cmake-profile p: `{value}` {problem}"));
    }
}

#[test]
fn compilers_must_be_built_in_compilers() {
    let fx = Fixture::new();
    let spec = profile(&fx, &["--cmake-profile", "p", "c-compiler=gcc", "cxx-compiler=g++"]);
    assert_eq!(plain(&spec).c_compiler.map(|t| t.name), Some("gcc"));
    for value in ["c-compiler=cmake", "cxx-compiler=clang-19", "cxx-compiler=/usr/bin/g++"] {
        assert_eq!(
            fx.error(&["--cmake-profile", "p", value]),
            format!(
                "--cmake-profile p: `{value}` is not a built-in compiler (expected one of cl, clang, clang++, clang-cl, gcc, g++)"
            )
        );
    }
}

#[test]
fn unknown_profile_key() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--cmake-profile", "debug", "generater=Ninja"]),
        "--cmake-profile debug: unknown key `generater` (expected one of toolset, configuration, generator, \
         build-directory, c-compiler, cxx-compiler, toolchain-file, define, compiler-launcher, sanitizers, \
         env, configure-preset, build-preset, test-preset)"
    );
}

#[test]
fn profile_entry_needs_equals_and_a_value() {
    let fx = Fixture::new();
    assert_eq!(fx.error(&["--cmake-profile", "debug", "Ninja"]), "--cmake-profile debug: `Ninja` is not KEY=VALUE");
    for key in PROFILE_KEYS {
        assert_eq!(
            fx.error(&["--cmake-profile", "debug", &format!("{key}=")]),
            format!("--cmake-profile debug: `{key}`= has an empty value")
        );
    }
}

#[test]
fn single_keys_at_most_once() {
    let fx = Fixture::new();
    fx.file("proj/tc.cmake");
    for entry in [
        "toolset=a",
        "configuration=Debug",
        "generator=Ninja",
        "build-directory=storage/b",
        "c-compiler=clang",
        "cxx-compiler=clang++",
        "toolchain-file=tc.cmake",
    ] {
        let key = entry.split_once('=').map(|(key, _)| key).unwrap_or(entry);
        assert_eq!(
            fx.error(&["--cmake-profile", "p", entry, entry]),
            format!("--cmake-profile p: `{key}` is given more than once")
        );
    }
}

#[test]
fn define_rules() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--cmake-profile", "p", "define=FOO"]),
        "--cmake-profile p: `define=FOO` is not define=VAR=value"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "p", "define==1"]),
        "--cmake-profile p: `define==1` has an empty variable name"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "p", "define=A=1", "define=A=2"]),
        "--cmake-profile p: `define=A=2` defines `A` a second time"
    );
}

#[test]
fn profile_name_rules() {
    let fx = Fixture::new();
    assert_eq!(fx.error(&["--cmake-profile="]), "--cmake-profile ``: the name is empty");
    assert_eq!(
        fx.error(&["--cmake-profile", "toolset=x"]),
        "--cmake-profile toolset=x: the first value is the profile name and must not contain '='"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "debug", "--cmake-profile", "debug", "configuration=Debug"]),
        "--cmake-profile debug: the name is already used by another --cmake-profile"
    );
    let serve = fx.serve(&["--cmake-profile", "debug", "--cmake-profile", "Debug"]);
    assert_eq!(serve.cmake_profiles().len(), 2);
}

#[test]
fn default_build_directory_needs_a_safe_name() {
    let fx = Fixture::new();
    for name in ["my profile", "a/b", "x.", "ü", "a:b", "..", "."] {
        assert_eq!(
            fx.error(&["--cmake-profile", name]),
            format!(
                "--cmake-profile {}: the name cannot form the default build directory storage/build/cmake-<name> \
                 (use letters, digits, '-', '_', '.', '+') or set build-directory",
                shown(name)
            )
        );
    }
    let spec = profile(&fx, &["--cmake-profile", "my profile", "build-directory=storage/build/mine"]);
    assert_eq!(spec.name, "my profile");
    assert_eq!(plain(&spec).build_directory.to_string(), "storage/build/mine");
    for name in ["gcc-12.2_release+lto", "-x", ".hidden"] {
        let spec = profile(&fx, &[&format!("--cmake-profile={name}")]);
        assert_eq!(plain(&spec).build_directory.to_string(), format!("storage/build/cmake-{name}"));
    }
}

#[test]
fn preset_profile() {
    let fx = Fixture::new();
    let spec = profile(
        &fx,
        &[
            "--cmake-profile",
            "native",
            "toolset=system",
            "configure-preset=ninja-debug",
            "build-preset=build-ninja-debug",
            "build-preset=build-all",
            "test-preset=test-ninja-debug",
            "configuration=Debug",
            "build-directory=project/build/ninja-debug",
        ],
    );
    assert_eq!(spec.configuration.as_deref(), Some("Debug"));
    let presets = presets(&spec);
    assert_eq!(presets.configure_presets, ["ninja-debug"]);
    assert_eq!(presets.build_presets, ["build-ninja-debug", "build-all"]);
    assert_eq!(presets.test_presets, ["test-ninja-debug"]);
    assert_eq!(spec.build_directory(), Some(&qp("project/build/ninja-debug")));
}

#[test]
fn preset_profile_without_build_directory() {
    let fx = Fixture::new();
    let spec = profile(&fx, &["--cmake-profile", "any name", "test-preset=t"]);
    assert_eq!(presets(&spec).build_directory, None);
    assert_eq!(spec.build_directory(), None);
}

#[test]
fn preset_profile_refuses_configure_settings() {
    let fx = Fixture::new();
    fx.file("proj/tc.cmake");
    for entry in
        ["generator=Ninja", "c-compiler=clang", "cxx-compiler=clang++", "toolchain-file=tc.cmake", "define=A=1"]
    {
        let key = entry.split_once('=').map(|(key, _)| key).unwrap_or(entry);
        for preset in ["configure-preset=c", "build-preset=b", "test-preset=t"] {
            assert_eq!(
                fx.error(&["--cmake-profile", "native", entry, preset]),
                format!(
                    "--cmake-profile native: a preset profile takes `{key}` from its configure preset; drop `{key}` or the preset keys"
                )
            );
        }
    }
}

#[test]
fn preset_names_are_not_repeated() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--cmake-profile", "native", "configure-preset=a", "configure-preset=a"]),
        "--cmake-profile native: `configure-preset=a` is given more than once"
    );
    let spec = profile(&fx, &["--cmake-profile", "native", "configure-preset=a", "build-preset=a"]);
    assert_eq!(presets(&spec).build_presets, ["a"]);
}

#[test]
fn profiles_keep_command_line_order() {
    let fx = Fixture::new();
    let serve = fx.serve(&["--cmake-profile", "release", "--cmake-profile", "debug"]);
    let names: Vec<_> = serve.cmake_profiles().iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["release", "debug"]);
}

#[test]
fn env_entries_are_kept_in_order_on_plain_and_preset_profiles() {
    let fx = Fixture::new();
    let spec =
        profile(&fx, &["--cmake-profile", "farm", "env=DISTCC_HOSTS=127.0.0.1:3632/4 lo", "env=EMPTY=", "env=A=b=c"]);
    let shown: Vec<String> = spec.env.iter().map(|env| format!("{}={}", env.name, env.value)).collect();
    assert_eq!(shown, ["DISTCC_HOSTS=127.0.0.1:3632/4 lo", "EMPTY=", "A=b=c"]);
    let spec = profile(&fx, &["--cmake-profile", "p", "configure-preset=dev", "env=CCACHE_DIR=/c"]);
    assert_eq!(spec.env.len(), 1);
}

#[test]
fn bad_env_entries_name_the_profile_and_the_entry() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--cmake-profile", "farm", "env=DISTCC_HOSTS"]),
        "--cmake-profile farm: `env=DISTCC_HOSTS` is not env=NAME=VALUE"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "farm", "env==1"]),
        "--cmake-profile farm: `env==1` has an empty variable name"
    );
    assert_eq!(
        fx.error(&["--cmake-profile", "farm", "env=A=1", "env=A=2"]),
        "--cmake-profile farm: `env=A=2` sets `A` a second time"
    );
}

#[test]
fn launchers_with_generators_that_ignore_them_are_refused() {
    let fx = Fixture::new();
    for generator in ["Visual Studio 17 2022", "Xcode"] {
        assert_eq!(
            fx.error(&["--cmake-profile", "vs", &format!("generator={generator}"), "compiler-launcher=ccache"]),
            format!(
                "--cmake-profile vs: `compiler-launcher=ccache` cannot be used with generator `{generator}`, which ignores \
                 compiler launchers (use Ninja or a Makefiles generator)"
            )
        );
    }
    assert_eq!(
        fx.error(&["--cmake-profile", "farm", "compiler-launcher=goma"]),
        "--cmake-profile farm: `compiler-launcher=goma` is not a built-in compiler launcher (expected one of ccache, sccache, distcc, icecc)"
    );
}
