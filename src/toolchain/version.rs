//! Version probes: run a tool with its version arguments through the process service and read the
//! version from its banner.
//!
//! A probe is bounded by a total timeout (15 s unless the service was built with another), only the
//! first [`INSPECTED_BYTES`] of each stream are looked at, and a non-zero exit, a timeout, a start
//! failure or a banner without a recognisable version all give `None`: the tool stays listed with a
//! null version.
//!
//! Architecture invariant: probes run only through `process`, so each one is listed in
//! `processes_overview` with its transcript; versions are never cached.
//! Architecture invariant: banner parsing is a pure function of the tool and the captured text.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::spec::ToolSpec;
use super::toolset::{Environment, Tool};
use crate::call::Call;
use crate::process::{ProcessService, Stream, Timeout};

/// Total time a version probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
/// How much of each output stream a probe inspects.
pub const INSPECTED_BYTES: usize = 4096;

/// Runs the version probe of `tool` (if its spec has one) in `cwd`, with `env` as the whole
/// environment when given (Visual Studio toolsets) or the server's environment otherwise.
pub async fn probe(
    processes: &ProcessService,
    tool: &Tool,
    env: Option<&Environment>,
    cwd: &Path,
    timeout: Duration,
    call: &Call,
) -> Option<String> {
    let args = tool.spec.version_args?;
    let captured = Arc::new(Mutex::new(Captured::default()));
    let sink = captured.clone();
    let command = super::command_in(env, &tool.path, cwd)
        .args(args.iter().copied())
        .timeout(Timeout::total(timeout))
        .on_line(Arc::new(move |stream, line| sink.lock().push(stream, line)));
    let completed = match processes.run(command, call).await {
        Ok(completed) => completed,
        Err(err) => {
            tracing::debug!("version probe of {} did not start: {err}", tool.path.display());
            return None;
        }
    };
    if !completed.succeeded() {
        return None;
    }
    let captured = captured.lock();
    parse(tool.spec, &captured.stdout, &captured.stderr)
}

/// The first [`INSPECTED_BYTES`] of each stream, rebuilt from output lines.
#[derive(Default)]
struct Captured {
    stdout: String,
    stderr: String,
}

impl Captured {
    fn push(&mut self, stream: Stream, line: &str) {
        let text = match stream {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
            Stream::Stdin => return,
        };
        for ch in line.chars().chain(std::iter::once('\n')) {
            if text.len() + ch.len_utf8() > INSPECTED_BYTES {
                return;
            }
            text.push(ch);
        }
    }
}

/// Reads the version of `spec` from the captured streams: stdout first, then stderr.
pub fn parse(spec: &ToolSpec, stdout: &str, stderr: &str) -> Option<String> {
    [stdout, stderr].into_iter().find_map(|text| parse_banner(spec.name, text))
}

fn parse_banner(tool: &str, text: &str) -> Option<String> {
    let res = match tool {
        // `cmake version 3.25.1`, `ctest version 3.25.1`.
        "cmake" | "ctest" => after_word(text, "version"),
        // `1.11.1`.
        "ninja" => first_line(text).and_then(version_like),
        // `GNU Make 4.3`.
        "make" => after_word(text, "Make"),
        // `17.8.3.51904`, possibly after a logo line.
        "msbuild" => text.lines().rev().map(str::trim).find(|line| !line.is_empty()).and_then(version_like),
        // `gcc (Debian 12.2.0-14+deb12u1) 12.2.0`, `gcc (GCC) 13.2.1 20230728 (Red Hat 13.2.1-1)`;
        // Apple's `gcc` is clang: `Apple clang version 15.0.0 (clang-1500.3.9.4)`.
        "gcc" | "g++" => first_line(text).and_then(outside_parentheses),
        // `Debian clang version 14.0.6`, `Apple clang version 15.0.0 (clang-1500.3.9.4)`.
        "clang" | "clang++" | "clang-cl" | "clangd" => after_word(text, "version"),
        // `Debian LLVM version 14.0.6`, `Ubuntu clang-format version 18.1.3 (1ubuntu1)`.
        "clang-tidy" | "clang-format" => after_word(text, "version"),
        // `Debian LLD 14.0.6 (compatible with GNU linkers)`.
        "lld" | "lld-link" => after_word(text, "LLD"),
        // `git version 2.47.3`, `git version 2.43.0.windows.1`.
        "git" => after_word(text, "version"),
        // `GNU gdb (Debian 13.1-3) 13.1`.
        "gdb" => first_line(text).and_then(outside_parentheses),
        _ => None,
    };
    res.map(str::to_owned)
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|line| !line.is_empty())
}

/// The first version-like word of `line` that is not inside parentheses (where distributions put
/// their package versions).
fn outside_parentheses(line: &str) -> Option<&str> {
    let mut depth = 0usize;
    let mut word_start: Option<usize> = None;
    for (idx, ch) in line.char_indices().chain([(line.len(), ' ')]) {
        let boundary = ch.is_whitespace() || ch == '(' || ch == ')';
        if boundary {
            if let Some(start) = word_start.take()
                && depth == 0
                && let Some(version) = version_like(&line[start..idx])
            {
                return Some(version);
            }
            match ch {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => {}
            }
        } else if word_start.is_none() {
            word_start = Some(idx);
        }
    }
    None
}

/// The version-like word right after the first occurrence of `word` (as a whole word), line by line.
fn after_word<'a>(text: &'a str, word: &str) -> Option<&'a str> {
    text.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        words.by_ref().find(|w| *w == word)?;
        words.next().and_then(version_like)
    })
}

/// `word` without trailing punctuation, when it starts with a digit, has a dot, and consists of
/// letters, digits and `.-+_~` only.
fn version_like(word: &str) -> Option<&str> {
    let word = word.trim_end_matches([',', ';', ':']);
    let valid = word.starts_with(|c: char| c.is_ascii_digit())
        && word.contains('.')
        && word.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_' | '~'));
    valid.then_some(word)
}

#[cfg(test)]
mod tests {
    use expect_test::{Expect, expect};

    use super::*;
    use crate::toolchain::spec::lookup;

    #[track_caller]
    fn check(tool: &str, banner: &str, expect: Expect) {
        let spec = lookup(tool).expect("a built-in tool");
        let version = parse(spec, banner, "");
        expect.assert_eq(version.as_deref().unwrap_or("<none>"));
    }

    // Banners recorded from the real tools (Debian 12 packages unless noted).

    #[test]
    fn cmake() {
        check(
            "cmake",
            "cmake version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n",
            expect!["3.25.1"],
        );
        check("cmake", "cmake version 3.28.0-rc2\n", expect!["3.28.0-rc2"]);
    }

    #[test]
    fn ctest() {
        check(
            "ctest",
            "ctest version 3.25.1\n\nCMake suite maintained and supported by Kitware (kitware.com/cmake).\n",
            expect!["3.25.1"],
        );
    }

    #[test]
    fn ninja() {
        check("ninja", "1.11.1\n", expect!["1.11.1"]);
        check("ninja", "1.12.1.git.kitware.jobserver-1\n", expect!["1.12.1.git.kitware.jobserver-1"]);
        check("ninja", "ninja: unknown option\n", expect!["<none>"]);
    }

    #[test]
    fn make() {
        check(
            "make",
            "GNU Make 4.3\nBuilt for x86_64-pc-linux-gnu\nCopyright (C) 1988-2020 Free Software Foundation, Inc.\n\
             License GPLv3+: GNU GPL version 3 or later <http://gnu.org/licenses/gpl.html>\n",
            expect!["4.3"],
        );
        // BSD make has no --version; whatever it prints is not a GNU banner.
        check("make", "make: unknown option -- -\nusage: make [-BeikNnqrSstWwX]\n", expect!["<none>"]);
    }

    #[test]
    fn msbuild() {
        check("msbuild", "17.8.3.51904\n", expect!["17.8.3.51904"]);
        check(
            "msbuild",
            "MSBuild version 17.8.3+195e7f5a3 for .NET Framework\r\n17.8.3.51904\r\n",
            expect!["17.8.3.51904"],
        );
    }

    #[test]
    fn gcc() {
        check(
            "gcc",
            "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n\
             This is free software; see the source for copying conditions.  There is NO\n\
             warranty; not even for MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.\n\n",
            expect!["12.2.0"],
        );
        check("gcc", "gcc.exe (Rev3, Built by MSYS2 project) 13.2.0\n", expect!["13.2.0"]);
        // Fedora.
        check("gcc", "gcc (GCC) 13.2.1 20230728 (Red Hat 13.2.1-1)\n", expect!["13.2.1"]);
        check("gcc", "gcc-13 (Homebrew GCC 13.2.0) 13.2.0\n", expect!["13.2.0"]);
        // macOS: `gcc` is Apple clang.
        check(
            "gcc",
            "Apple clang version 15.0.0 (clang-1500.3.9.4)\nTarget: arm64-apple-darwin23.4.0\nThread model: posix\n",
            expect!["15.0.0"],
        );
    }

    #[test]
    fn gxx() {
        check(
            "g++",
            "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n",
            expect!["12.2.0"],
        );
        check("g++", "g++ (Ubuntu 13.2.0-23ubuntu4) 13.2.0\n", expect!["13.2.0"]);
    }

    #[test]
    fn clang() {
        let debian =
            "Debian clang version 14.0.6\nTarget: x86_64-pc-linux-gnu\nThread model: posix\nInstalledDir: /usr/bin\n";
        check("clang", debian, expect!["14.0.6"]);
        check("clang++", debian, expect!["14.0.6"]);
        check("clang", "Ubuntu clang version 18.1.3 (1ubuntu1)\nTarget: x86_64-pc-linux-gnu\n", expect!["18.1.3"]);
        check(
            "clang",
            "clang version 19.1.0 (https://github.com/llvm/llvm-project a4bf6cd7cfb1a1421ba92bca9d017b49936c55e4)\n",
            expect!["19.1.0"],
        );
        check(
            "clang-cl",
            "clang version 17.0.6\nTarget: x86_64-pc-windows-msvc\nThread model: posix\nInstalledDir: C:\\Program Files\\LLVM\\bin\n",
            expect!["17.0.6"],
        );
    }

    #[test]
    fn clangd() {
        check(
            "clangd",
            "Debian clangd version 14.0.6\nFeatures: linux+grpc\nPlatform: x86_64-pc-linux-gnu\n",
            expect!["14.0.6"],
        );
        check("clangd", "clangd version 18.1.8\nFeatures: windows\n", expect!["18.1.8"]);
    }

    #[test]
    fn clang_tidy_and_clang_format() {
        check(
            "clang-tidy",
            "Debian LLVM version 14.0.6\n  Optimized build.\n  Default target: x86_64-pc-linux-gnu\n",
            expect!["14.0.6"],
        );
        check("clang-format", "Debian clang-format version 14.0.6\n", expect!["14.0.6"]);
        check("clang-format", "Ubuntu clang-format version 18.1.3 (1ubuntu1)\n", expect!["18.1.3"]);
    }

    #[test]
    fn lld() {
        check("lld", "Debian LLD 14.0.6 (compatible with GNU linkers)\n", expect!["14.0.6"]);
        check("lld-link", "LLD 17.0.6\n", expect!["17.0.6"]);
        // Plain `lld` refuses to run without a flavour.
        check(
            "lld",
            "lld is a generic driver.\nInvoke ld.lld (Unix), ld64.lld (macOS), lld-link (Windows), wasm-ld (WebAssembly) instead\n",
            expect!["<none>"],
        );
    }

    #[test]
    fn git() {
        check("git", "git version 2.47.3\n", expect!["2.47.3"]);
        check("git", "git version 2.43.0.windows.1\n", expect!["2.43.0.windows.1"]);
        check("git", "git version 2.39.3 (Apple Git-145)\n", expect!["2.39.3"]);
    }

    #[test]
    fn gdb() {
        check(
            "gdb",
            "GNU gdb (Debian 13.1-3) 13.1\nCopyright (C) 2023 Free Software Foundation, Inc.\n\
             License GPLv3+: GNU GPL version 3 or later <http://gnu.org/licenses/gpl.html>\n",
            expect!["13.1"],
        );
        check("gdb", "GNU gdb (GDB) 14.2\n", expect!["14.2"]);
        check("gdb", "GNU gdb (GDB) Fedora Linux 13.2-6.fc38\n", expect!["13.2-6.fc38"]);
        check(
            "gdb",
            "GNU gdb (Ubuntu 15.0.50.20240403-0ubuntu1) 15.0.50.20240403-git\n",
            expect!["15.0.50.20240403-git"],
        );
    }

    #[test]
    fn tools_without_a_probe_have_no_version() {
        for tool in ["cl", "link", "lldb-dap", "cppvsdbg"] {
            check(tool, "version 1.2.3\n", expect!["<none>"]);
        }
    }

    #[test]
    fn empty_or_garbage_banners_have_no_version() {
        check("cmake", "", expect!["<none>"]);
        check("cmake", "cmake version\n", expect!["<none>"]);
        check("cmake", "cmake version unknown\n", expect!["<none>"]);
        check("gcc", "gcc: fatal error: no input files\n", expect!["<none>"]);
        check("git", "versions 2.1\n", expect!["<none>"]);
    }

    #[test]
    fn stderr_is_read_when_stdout_has_no_version() {
        let gcc = lookup("gcc").unwrap();
        assert_eq!(parse(gcc, "", "gcc (GCC) 13.2.1 20230801\n").as_deref(), Some("13.2.1"));
        assert_eq!(parse(gcc, "gcc (GCC) 13.2.1\n", "gcc (GCC) 9.9.9\n").as_deref(), Some("13.2.1"));
    }

    #[test]
    fn captured_streams_are_cut_at_the_inspected_size() {
        let mut captured = Captured::default();
        for _ in 0..2000 {
            captured.push(Stream::Stdout, "ü line");
        }
        captured.push(Stream::Stderr, "err");
        captured.push(Stream::Stdin, "ignored");
        assert!(captured.stdout.len() <= INSPECTED_BYTES && captured.stdout.len() > INSPECTED_BYTES - 8);
        assert!(captured.stdout.starts_with("ü line\nü line\n"));
        assert_eq!(captured.stderr, "err\n");
    }
}
