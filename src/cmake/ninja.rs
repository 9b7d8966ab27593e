//! Build output lines: which ones become progress messages (ninja's `[n/m]` steps, make's `[ nn%]`
//! lines, `FAILED:` and `ninja:` lines, MSBuild's banner and per-project results), and the step
//! counts of the build result.
//!
//! Architecture invariant: pure functions of one line; no state beyond what the caller keeps (the
//! last `[n/m]` seen is the build's step count).

/// What a build output line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildLine {
    /// Ninja's status line `[n/m] …`.
    Step { completed: u64, total: u64 },
    /// A Makefile generator's `[ nn%] …` line.
    Percent,
    /// Ninja's `FAILED: …` line naming the failed edge.
    Failed,
    /// Ninja's own messages (`ninja: no work to do.`, `ninja: build stopped: …`).
    Ninja,
    /// MSBuild's banner or a project's `x.vcxproj -> <output>` line.
    MsBuild,
}

/// Classifies one line (its trailing CR/LF already removed).
pub fn classify(line: &str) -> Option<BuildLine> {
    if let Some((completed, total)) = ninja_step(line) {
        return Some(BuildLine::Step { completed, total });
    }
    if is_make_percent(line) {
        return Some(BuildLine::Percent);
    }
    if line.starts_with("FAILED: ") {
        return Some(BuildLine::Failed);
    }
    if line.starts_with("ninja: ") {
        return Some(BuildLine::Ninja);
    }
    let trimmed = line.trim_start();
    let msbuild = trimmed.starts_with("MSBuild version ")
        || trimmed.starts_with("Microsoft (R) Build Engine version ")
        || trimmed.contains(".vcxproj -> ");
    msbuild.then_some(BuildLine::MsBuild)
}

/// The progress message for a build output line, when it deserves one: the line itself, trimmed.
pub fn progress_message(line: &str) -> Option<&str> {
    classify(line).map(|_| line.trim())
}

/// `(n, m)` of a ninja status line `[n/m] …` (ninja's default `NINJA_STATUS`).
fn ninja_step(line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix('[')?;
    let (inside, _) = rest.split_once(']')?;
    let (completed, total) = inside.split_once('/')?;
    let number = |text: &str| -> Option<u64> {
        (!text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
    };
    Some((number(completed)?, number(total)?))
}

/// `[ 42%] …` or `[100%] …` (Makefile generators).
fn is_make_percent(line: &str) -> bool {
    let Some(rest) = line.strip_prefix('[') else { return false };
    let Some((inside, _)) = rest.split_once("%]") else { return false };
    let digits = inside.trim_start();
    !digits.is_empty() && digits.len() <= 3 && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;

    #[track_caller]
    fn check(lines: &str, expect: Expect) {
        let shown: Vec<String> = lines
            .lines()
            .map(|line| match classify(line) {
                Some(kind) => format!("{kind:?}: {}", progress_message(line).unwrap_or_default()),
                None => format!("-: {line}"),
            })
            .collect();
        expect.assert_eq(&shown.join("\n"));
    }

    #[test]
    fn ninja_lines() {
        check(
            "[1/9] Building CXX object CMakeFiles/fixture_core.dir/src/math.cpp.o
/tmp/fx/app/warning_main.cpp:6:30: warning: 'int fixture::increment(int)' is deprecated
[0/2] Re-checking globbed directories...
[12/130] Linking CXX executable fixture_tests
FAILED: CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o
ninja: build stopped: subcommand failed.
ninja: no work to do.
[a/b] not a step
[3/] not a step",
            expect![[r#"
                Step { completed: 1, total: 9 }: [1/9] Building CXX object CMakeFiles/fixture_core.dir/src/math.cpp.o
                -: /tmp/fx/app/warning_main.cpp:6:30: warning: 'int fixture::increment(int)' is deprecated
                Step { completed: 0, total: 2 }: [0/2] Re-checking globbed directories...
                Step { completed: 12, total: 130 }: [12/130] Linking CXX executable fixture_tests
                Failed: FAILED: CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o
                Ninja: ninja: build stopped: subcommand failed.
                Ninja: ninja: no work to do.
                -: [a/b] not a step
                -: [3/] not a step"#]],
        );
    }

    #[test]
    fn make_lines() {
        check(
            "[  5%] Building CXX object CMakeFiles/fixture_core.dir/src/math.cpp.o
[100%] Built target fixture_tests
make[2]: *** [CMakeFiles/x.dir/build.make:76: x.o] Error 1
[1234%] not a percentage",
            expect![[r#"
                Percent: [  5%] Building CXX object CMakeFiles/fixture_core.dir/src/math.cpp.o
                Percent: [100%] Built target fixture_tests
                -: make[2]: *** [CMakeFiles/x.dir/build.make:76: x.o] Error 1
                -: [1234%] not a percentage"#]],
        );
    }

    #[test]
    fn msbuild_lines() {
        check(
            "MSBuild version 17.8.3+195e7f5a3 for .NET Framework
Microsoft (R) Build Engine version 16.11.2+f32259642 for .NET Framework
  Checking Build System
  fixture_core.vcxproj -> C:\\b\\Debug\\fixture_core.lib
  math.cpp",
            expect![[r#"
                MsBuild: MSBuild version 17.8.3+195e7f5a3 for .NET Framework
                MsBuild: Microsoft (R) Build Engine version 16.11.2+f32259642 for .NET Framework
                -:   Checking Build System
                MsBuild: fixture_core.vcxproj -> C:\b\Debug\fixture_core.lib
                -:   math.cpp"#]],
        );
    }
}
