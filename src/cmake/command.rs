//! Argument lists of every CMake and CTest command ForgeMCP runs, and the recognition of configure
//! status lines in their output.
//!
//! Architecture invariant: pure functions of their inputs; nothing here touches the file system,
//! looks up tools or spawns anything. The service resolves paths and tools first and hands them in.
//! Architecture invariant: every value is one literal argument; no shell is involved, so values with
//! spaces, `=` or quotes need no quoting.

use std::ffi::OsString;
use std::path::Path;

use super::options::CmakeDefine;

/// The cache entries ForgeMCP sets itself (`-S`/`-B`); a `define=` may not override them.
const RESERVED_VARIABLES: &[&str] = &["CMAKE_HOME_DIRECTORY", "CMAKE_CACHEFILE_DIR"];

/// Why a plain profile's configure command cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("`define={name}=…` cannot be used: ForgeMCP sets the source and build directories itself")]
    Reserved { name: String },
    #[error("`{variable}` is set both by `{key}` and by `define={variable}=…`; keep one of them")]
    Duplicate { variable: &'static str, key: &'static str },
    #[error("`configuration={configuration}` conflicts with `define=CMAKE_BUILD_TYPE={value}`")]
    BuildTypeConflict { configuration: String, value: String },
}

/// Everything a plain profile's configure command needs, already resolved to absolute paths.
#[derive(Debug, Clone, Copy)]
pub struct PlainConfigure<'a> {
    pub source: &'a Path,
    pub build: &'a Path,
    pub generator: &'a str,
    /// `CMAKE_BUILD_TYPE` unless a define sets it (to the same value).
    pub configuration: Option<&'a str>,
    /// The operator's `define=` entries, in command-line order.
    pub defines: &'a [CmakeDefine],
    pub c_compiler: Option<&'a Path>,
    pub cxx_compiler: Option<&'a Path>,
    pub toolchain_file: Option<&'a Path>,
    /// The toolset's ninja for Ninja generators (`CMAKE_MAKE_PROGRAM` unless a define sets it).
    pub make_program: Option<&'a Path>,
    /// `compiler-launcher=`: `CMAKE_C_COMPILER_LAUNCHER` and `CMAKE_CXX_COMPILER_LAUNCHER`.
    pub launcher: Option<&'a Path>,
    /// `sanitizers=`: compile and link flags appended to the operator's `CMAKE_<LANG>_FLAGS` and
    /// `CMAKE_<KIND>_LINKER_FLAGS` defines.
    pub sanitizer_flags: Option<&'a str>,
    /// MSVC behind a caching launcher: `CMAKE_MSVC_DEBUG_INFORMATION_FORMAT=Embedded` (with policy
    /// CMP0141 set to NEW so the variable applies), unless a define sets it.
    pub embed_debug_information: bool,
}

/// The compile and link flags of `sanitizers` for a compiler (`msvc`: cl or clang-cl syntax), or why
/// that compiler lacks one.
pub fn sanitizer_flags(sanitizers: &[String], msvc: bool, clang: bool) -> Result<Option<String>, String> {
    if sanitizers.is_empty() {
        return Ok(None);
    }
    if msvc {
        if let Some(other) = sanitizers.iter().find(|s| *s != "address") {
            return Err(format!("the MSVC compiler has no `{other}` sanitizer (only address)"));
        }
        return Ok(Some("/fsanitize=address".to_owned()));
    }
    if sanitizers.iter().any(|s| s == "memory") && !clang {
        return Err("the `memory` sanitizer needs Clang (set cxx-compiler=clang++)".to_owned());
    }
    Ok(Some(format!("-fsanitize={} -fno-omit-frame-pointer", sanitizers.join(","))))
}

/// Whether `generator` runs ninja (and therefore needs the toolset's ninja).
pub fn needs_ninja(generator: &str) -> bool {
    generator == "Ninja" || generator == "Ninja Multi-Config"
}

/// Whether `generator` writes several configurations into one build directory; those take the
/// configuration at build time (`--config`), so `CMAKE_BUILD_TYPE` is not set for them.
pub fn is_multi_config(generator: &str) -> bool {
    generator == "Ninja Multi-Config" || generator.starts_with("Visual Studio") || generator == "Xcode"
}

/// `NAME` of a `NAME:TYPE` cache entry.
fn variable_name(define: &str) -> &str {
    define.split_once(':').map_or(define, |(name, _)| name)
}

fn arg(text: impl Into<OsString>) -> OsString {
    text.into()
}

fn define(name: &str, value: impl AsRef<std::ffi::OsStr>) -> OsString {
    let mut res = OsString::from(format!("-D{name}="));
    res.push(value);
    res
}

/// `cmake -S <source> -B <build> -G <generator> -D…` for a plain profile. The operator's defines come
/// first, in order; then `CMAKE_BUILD_TYPE` (single-configuration generators only),
/// `CMAKE_EXPORT_COMPILE_COMMANDS=ON`, `CMAKE_MAKE_PROGRAM`, the compilers and the toolchain file,
/// each unless a define already sets that variable.
pub fn configure_plain(c: &PlainConfigure<'_>) -> Result<Vec<OsString>, CommandError> {
    let defined = |variable: &str| c.defines.iter().find(|d| variable_name(&d.name) == variable);
    if let Some(reserved) = c.defines.iter().find(|d| RESERVED_VARIABLES.contains(&variable_name(&d.name))) {
        return Err(CommandError::Reserved { name: reserved.name.clone() });
    }
    for (variable, key, set) in [
        ("CMAKE_C_COMPILER", "c-compiler", c.c_compiler.is_some()),
        ("CMAKE_CXX_COMPILER", "cxx-compiler", c.cxx_compiler.is_some()),
        ("CMAKE_TOOLCHAIN_FILE", "toolchain-file", c.toolchain_file.is_some()),
    ] {
        if set && defined(variable).is_some() {
            return Err(CommandError::Duplicate { variable, key });
        }
    }
    if let (Some(configuration), Some(build_type)) = (c.configuration, defined("CMAKE_BUILD_TYPE"))
        && build_type.value != configuration
    {
        return Err(CommandError::BuildTypeConflict {
            configuration: configuration.to_owned(),
            value: build_type.value.clone(),
        });
    }
    let mut res = vec![arg("-S"), arg(c.source), arg("-B"), arg(c.build), arg("-G"), arg(c.generator)];
    res.extend(c.defines.iter().map(|d| define(&d.name, &d.value)));
    if let Some(configuration) = c.configuration
        && defined("CMAKE_BUILD_TYPE").is_none()
        && !is_multi_config(c.generator)
    {
        res.push(define("CMAKE_BUILD_TYPE", configuration));
    }
    if defined("CMAKE_EXPORT_COMPILE_COMMANDS").is_none() {
        res.push(define("CMAKE_EXPORT_COMPILE_COMMANDS", "ON"));
    }
    if let Some(ninja) = c.make_program
        && defined("CMAKE_MAKE_PROGRAM").is_none()
    {
        res.push(define("CMAKE_MAKE_PROGRAM", ninja));
    }
    for (variable, value) in [
        ("CMAKE_C_COMPILER", c.c_compiler),
        ("CMAKE_CXX_COMPILER", c.cxx_compiler),
        ("CMAKE_TOOLCHAIN_FILE", c.toolchain_file),
    ] {
        if let Some(value) = value {
            res.push(define(variable, value));
        }
    }
    if let Some(launcher) = c.launcher {
        for variable in ["CMAKE_C_COMPILER_LAUNCHER", "CMAKE_CXX_COMPILER_LAUNCHER"] {
            if defined(variable).is_none() {
                res.push(define(variable, launcher));
            }
        }
    }
    if c.embed_debug_information && defined("CMAKE_MSVC_DEBUG_INFORMATION_FORMAT").is_none() {
        res.push(define("CMAKE_MSVC_DEBUG_INFORMATION_FORMAT", "Embedded"));
        if defined("CMAKE_POLICY_DEFAULT_CMP0141").is_none() {
            res.push(define("CMAKE_POLICY_DEFAULT_CMP0141", "NEW"));
        }
    }
    if let Some(flags) = c.sanitizer_flags {
        for variable in [
            "CMAKE_C_FLAGS",
            "CMAKE_CXX_FLAGS",
            "CMAKE_EXE_LINKER_FLAGS",
            "CMAKE_SHARED_LINKER_FLAGS",
            "CMAKE_MODULE_LINKER_FLAGS",
        ] {
            let value = match defined(variable) {
                Some(own) if !own.value.is_empty() => format!("{} {flags}", own.value),
                _ => flags.to_owned(),
            };
            res.push(define(variable, value));
        }
    }
    Ok(res)
}

/// `cmake --preset <preset> [-DCMAKE_EXPORT_COMPILE_COMMANDS=ON]`: CMake resolves the preset's
/// directories, generator and environment; the define (after the preset, which it overrides) is
/// left out for a preset that sets the variable itself.
pub fn configure_preset(preset: &str, export_compile_commands: bool) -> Vec<OsString> {
    let mut res = vec![arg("--preset"), arg(preset)];
    if export_compile_commands {
        res.push(arg("-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"));
    }
    res
}

/// `cmake --list-presets=all`.
pub fn list_presets() -> Vec<OsString> {
    vec![arg("--list-presets=all")]
}

/// What a build or test command works on.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// An existing build directory (absolute).
    Directory(&'a Path),
    /// A build or test preset.
    Preset(&'a str),
}

/// `cmake --build <dir>|--preset <p> [--config C] [--target T…] [--parallel N]`.
pub fn build(
    target: Target<'_>,
    configuration: Option<&str>,
    targets: &[String],
    parallel: Option<u32>,
) -> Vec<OsString> {
    let mut res = vec![arg("--build")];
    match target {
        Target::Directory(dir) => res.push(arg(dir)),
        Target::Preset(preset) => res.extend([arg("--preset"), arg(preset)]),
    }
    if let Some(configuration) = configuration {
        res.extend([arg("--config"), arg(configuration)]);
    }
    if !targets.is_empty() {
        res.push(arg("--target"));
        res.extend(targets.iter().map(arg));
    }
    if let Some(parallel) = parallel {
        res.extend([arg("--parallel"), arg(parallel.to_string())]);
    }
    res
}

/// `ctest --test-dir <dir>|--preset <p> --no-tests=error --output-junit <file> --output-on-failure
/// [--build-config C] [--tests-regex ^(…)$] [--parallel N]`.
pub fn test(
    target: Target<'_>,
    junit: &Path,
    configuration: Option<&str>,
    names: &[String],
    parallel: Option<u32>,
) -> Vec<OsString> {
    let mut res = match target {
        Target::Directory(dir) => vec![arg("--test-dir"), arg(dir)],
        Target::Preset(preset) => vec![arg("--preset"), arg(preset)],
    };
    // A test preset's own `noTestsAction` gives way: finding no tests is a failure either way.
    res.extend([arg("--no-tests=error"), arg("--output-junit"), arg(junit), arg("--output-on-failure")]);
    if let Some(configuration) = configuration {
        res.extend([arg("--build-config"), arg(configuration)]);
    }
    if !names.is_empty() {
        res.extend([arg("--tests-regex"), arg(tests_regex(names))]);
    }
    if let Some(parallel) = parallel {
        res.extend([arg("--parallel"), arg(parallel.to_string())]);
    }
    res
}

/// An anchored alternation matching exactly `names`, in CMake's regular expression dialect (every
/// metacharacter escaped with a backslash).
pub fn tests_regex(names: &[String]) -> String {
    let mut res = String::from("^(");
    for (idx, name) in names.iter().enumerate() {
        if idx > 0 {
            res.push('|');
        }
        for ch in name.chars() {
            if matches!(ch, '^' | '$' | '.' | '[' | ']' | '*' | '+' | '?' | '(' | ')' | '|' | '\\') {
                res.push('\\');
            }
            res.push(ch);
        }
    }
    res.push_str(")$");
    res
}

/// A configure output line worth a progress message: `-- <status>` without the dashes, and
/// `CMake Error…`/`CMake Warning…`/`CMake Deprecation Warning…` headers as they are.
pub fn configure_status(line: &str) -> Option<&str> {
    let line = line.trim_end();
    if let Some(status) = line.strip_prefix("-- ") {
        let status = status.trim();
        return (!status.is_empty()).then_some(status);
    }
    (line.starts_with("CMake Error") || line.starts_with("CMake Warning") || line.starts_with("CMake Deprecation"))
        .then_some(line)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use expect_test::{Expect, expect};

    use super::*;

    #[track_caller]
    fn check(args: Vec<OsString>, expect: Expect) {
        let shown: Vec<String> = args.iter().map(|a| format!("[{}]", a.to_string_lossy())).collect();
        expect.assert_eq(&shown.join(" "));
    }

    fn defines(pairs: &[(&str, &str)]) -> Vec<CmakeDefine> {
        pairs.iter().map(|(name, value)| CmakeDefine { name: (*name).to_owned(), value: (*value).to_owned() }).collect()
    }

    struct Paths {
        source: PathBuf,
        build: PathBuf,
        ninja: PathBuf,
        gcc: PathBuf,
        gxx: PathBuf,
        toolchain: PathBuf,
    }

    fn paths() -> Paths {
        Paths {
            source: PathBuf::from("/w/proj"),
            build: PathBuf::from("/w/.proj.forgemcp/build/cmake-Debug"),
            ninja: PathBuf::from("/usr/bin/ninja"),
            gcc: PathBuf::from("/usr/bin/gcc"),
            gxx: PathBuf::from("/usr/bin/g++"),
            toolchain: PathBuf::from("/w/proj/cmake/tc.cmake"),
        }
    }

    fn plain<'a>(p: &'a Paths, defines: &'a [CmakeDefine]) -> PlainConfigure<'a> {
        PlainConfigure {
            source: &p.source,
            build: &p.build,
            generator: "Ninja",
            configuration: Some("Debug"),
            defines,
            c_compiler: None,
            cxx_compiler: None,
            toolchain_file: None,
            launcher: None,
            sanitizer_flags: None,
            embed_debug_information: false,
            make_program: Some(&p.ninja),
        }
    }

    #[test]
    fn automatic_debug_profile() {
        let p = paths();
        check(
            configure_plain(&plain(&p, &[])).unwrap(),
            expect![[
                r#"[-S] [/w/proj] [-B] [/w/.proj.forgemcp/build/cmake-Debug] [-G] [Ninja] [-DCMAKE_BUILD_TYPE=Debug] [-DCMAKE_EXPORT_COMPILE_COMMANDS=ON] [-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja]"#
            ]],
        );
    }

    #[test]
    fn plain_profile_with_every_setting() {
        let p = paths();
        let defines = defines(&[("FIXTURE_NEGATIVE_TESTS:BOOL", "ON"), ("CMAKE_CXX_FLAGS", "-O0 -g -DX=\"a b\"")]);
        let c = PlainConfigure {
            generator: "Ninja Multi-Config",
            configuration: Some("Debug"),
            c_compiler: Some(&p.gcc),
            cxx_compiler: Some(&p.gxx),
            toolchain_file: Some(&p.toolchain),
            ..plain(&p, &defines)
        };
        check(
            configure_plain(&c).unwrap(),
            expect![[
                r#"[-S] [/w/proj] [-B] [/w/.proj.forgemcp/build/cmake-Debug] [-G] [Ninja Multi-Config] [-DFIXTURE_NEGATIVE_TESTS:BOOL=ON] [-DCMAKE_CXX_FLAGS=-O0 -g -DX="a b"] [-DCMAKE_EXPORT_COMPILE_COMMANDS=ON] [-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja] [-DCMAKE_C_COMPILER=/usr/bin/gcc] [-DCMAKE_CXX_COMPILER=/usr/bin/g++] [-DCMAKE_TOOLCHAIN_FILE=/w/proj/cmake/tc.cmake]"#
            ]],
        );
    }

    #[test]
    fn defines_replace_the_derived_settings() {
        let p = paths();
        let defines = defines(&[
            ("CMAKE_EXPORT_COMPILE_COMMANDS", "OFF"),
            ("CMAKE_BUILD_TYPE:STRING", "Debug"),
            ("CMAKE_MAKE_PROGRAM", "/opt/ninja"),
        ]);
        let c = PlainConfigure { generator: "Unix Makefiles", make_program: None, ..plain(&p, &defines) };
        check(
            configure_plain(&c).unwrap(),
            expect![[
                r#"[-S] [/w/proj] [-B] [/w/.proj.forgemcp/build/cmake-Debug] [-G] [Unix Makefiles] [-DCMAKE_EXPORT_COMPILE_COMMANDS=OFF] [-DCMAKE_BUILD_TYPE:STRING=Debug] [-DCMAKE_MAKE_PROGRAM=/opt/ninja]"#
            ]],
        );
    }

    #[test]
    fn msvc_behind_a_cache_embeds_debug_information() {
        let p = paths();
        let launcher = PathBuf::from("/usr/bin/sccache");
        let c = PlainConfigure { launcher: Some(&launcher), embed_debug_information: true, ..plain(&p, &[]) };
        check(
            configure_plain(&c).unwrap(),
            expect![[
                r#"[-S] [/w/proj] [-B] [/w/.proj.forgemcp/build/cmake-Debug] [-G] [Ninja] [-DCMAKE_BUILD_TYPE=Debug] [-DCMAKE_EXPORT_COMPILE_COMMANDS=ON] [-DCMAKE_MAKE_PROGRAM=/usr/bin/ninja] [-DCMAKE_C_COMPILER_LAUNCHER=/usr/bin/sccache] [-DCMAKE_CXX_COMPILER_LAUNCHER=/usr/bin/sccache] [-DCMAKE_MSVC_DEBUG_INFORMATION_FORMAT=Embedded] [-DCMAKE_POLICY_DEFAULT_CMP0141=NEW]"#
            ]],
        );
        let own = defines(&[("CMAKE_MSVC_DEBUG_INFORMATION_FORMAT", "ProgramDatabase")]);
        let c = PlainConfigure { embed_debug_information: true, ..plain(&p, &own) };
        let args = configure_plain(&c).unwrap();
        assert!(
            !args.iter().any(|a| a.to_string_lossy().contains("Embedded") || a.to_string_lossy().contains("CMP0141"))
        );
    }

    #[test]
    fn refused_plain_settings() {
        let p = paths();
        let reserved = defines(&[("CMAKE_HOME_DIRECTORY:INTERNAL", "/elsewhere")]);
        let err = configure_plain(&plain(&p, &reserved)).unwrap_err();
        expect![[
            r#"`define=CMAKE_HOME_DIRECTORY:INTERNAL=…` cannot be used: ForgeMCP sets the source and build directories itself"#
        ]]
        .assert_eq(&err.to_string());
        let twice = defines(&[("CMAKE_CXX_COMPILER", "/usr/bin/clang++")]);
        let c = PlainConfigure { cxx_compiler: Some(&p.gxx), ..plain(&p, &twice) };
        expect![[
            r#"`CMAKE_CXX_COMPILER` is set both by `cxx-compiler` and by `define=CMAKE_CXX_COMPILER=…`; keep one of them"#
        ]]
        .assert_eq(&configure_plain(&c).unwrap_err().to_string());
        let conflict = defines(&[("CMAKE_BUILD_TYPE", "Release")]);
        expect![[r#"`configuration=Debug` conflicts with `define=CMAKE_BUILD_TYPE=Release`"#]]
            .assert_eq(&configure_plain(&plain(&p, &conflict)).unwrap_err().to_string());
    }

    #[test]
    fn preset_commands() {
        check(configure_preset("ninja-debug", false), expect![[r#"[--preset] [ninja-debug]"#]]);
        check(
            configure_preset("ninja-debug", true),
            expect![[r#"[--preset] [ninja-debug] [-DCMAKE_EXPORT_COMPILE_COMMANDS=ON]"#]],
        );
        check(list_presets(), expect![[r#"[--list-presets=all]"#]]);
        check(
            build(Target::Preset("build-ninja-debug"), None, &[], None),
            expect![[r#"[--build] [--preset] [build-ninja-debug]"#]],
        );
        let junit = Path::new("/w/.proj.forgemcp/tmp/ctest-1/junit.xml");
        check(
            test(Target::Preset("test-ninja-debug"), junit, Some("Debug"), &[], None),
            expect![
                "[--preset] [test-ninja-debug] [--no-tests=error] [--output-junit] [/w/.proj.forgemcp/tmp/ctest-1/junit.xml] [--output-on-failure] [--build-config] [Debug]"
            ],
        );
    }

    #[test]
    fn build_directory_commands() {
        let dir = Path::new("/w/.proj.forgemcp/build/cmake-Debug");
        let targets = vec!["fixture_good".to_owned(), "fixture tests".to_owned()];
        check(
            build(Target::Directory(dir), Some("Debug"), &targets, Some(2)),
            expect![[
                r#"[--build] [/w/.proj.forgemcp/build/cmake-Debug] [--config] [Debug] [--target] [fixture_good] [fixture tests] [--parallel] [2]"#
            ]],
        );
        let names = vec!["fixture_pass".to_owned(), "a.b[1]".to_owned()];
        let junit = Path::new("/w/.proj.forgemcp/tmp/ctest-1/junit.xml");
        check(
            test(Target::Directory(dir), junit, None, &names, Some(4)),
            expect![[
                r#"[--test-dir] [/w/.proj.forgemcp/build/cmake-Debug] [--no-tests=error] [--output-junit] [/w/.proj.forgemcp/tmp/ctest-1/junit.xml] [--output-on-failure] [--tests-regex] [^(fixture_pass|a\.b\[1\])$] [--parallel] [4]"#
            ]],
        );
    }

    #[test]
    fn configure_status_lines() {
        let lines = [
            "-- The CXX compiler identification is GNU 12.2.0",
            "-- Configuring done",
            "--   ",
            "CMake Error at CMakeLists.txt:15 (message):",
            "  FIXTURE_LLVM_DWARF needs a Clang compiler",
            "CMake Warning (dev) in CMakeLists.txt:",
            "CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):",
            "random output",
        ];
        let shown: Vec<String> = lines.iter().map(|l| format!("{:?}", configure_status(l))).collect();
        expect![[r#"
            Some("The CXX compiler identification is GNU 12.2.0")
            Some("Configuring done")
            None
            Some("CMake Error at CMakeLists.txt:15 (message):")
            None
            Some("CMake Warning (dev) in CMakeLists.txt:")
            Some("CMake Deprecation Warning at CMakeLists.txt:1 (cmake_minimum_required):")
            None"#]]
        .assert_eq(&shown.join("\n"));
    }

    #[test]
    fn generator_kinds() {
        assert!(needs_ninja("Ninja") && needs_ninja("Ninja Multi-Config"));
        assert!(!needs_ninja("Unix Makefiles") && !needs_ninja("Visual Studio 17 2022"));
        assert!(is_multi_config("Ninja Multi-Config") && is_multi_config("Visual Studio 17 2022"));
        assert!(!is_multi_config("Ninja") && !is_multi_config("Unix Makefiles"));
    }
}
