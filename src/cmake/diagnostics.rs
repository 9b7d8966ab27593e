//! Compiler and linker diagnostics parsed from a build transcript: GCC/Clang
//! (`file:line:col: error|warning|note: … [-Wflag]`, "In file included from" chains as notes), MSVC
//! (`file(line,col): error C1234: …`), GNU ld, lld (`error: undefined symbol:` with its
//! `>>> referenced by` location) and link.exe (`LNK2019`).
//!
//! A message printed more than once is one diagnostic with a count: the same position, severity,
//! code and message (a header's warning in every translation unit that includes it), or the same
//! position, severity and code with another message (a template's error, printed once per
//! instantiation with the template arguments in the message, which keeps the first message).
//!
//! Architecture invariant: pure and line-by-line (`Parser::line` is called from the transcript
//! callback, so it must stay cheap: one hash lookup per diagnostic); paths stay as the tool printed
//! them until `Diagnostic::path` is qualified by the caller; the build edges that printed a
//! diagnostic name its target candidates.

use crate::workspace::path::lexically_normal;
use std::collections::HashMap;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One compiler or linker message, with how often the transcript printed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// As printed (absolute, or relative to the build directory); the caller qualifies it.
    pub path: Option<String>,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub severity: Severity,
    pub message: String,
    /// `-Wflag`, `C2065`, `LNK2019`.
    pub code: Option<String>,
    /// The build edges whose output carried it (`CMakeFiles/<t>.dir/…` or the linked file), each
    /// once, in order; empty when no edge was named.
    pub edges: Vec<String>,
    /// How many times the transcript printed it (at least 1).
    pub count: u32,
    /// How many different messages it was printed with (more than 1 for a template's error).
    pub messages: u32,
}

/// Most diagnostics one build keeps, each counted once however often it was printed (the
/// transcript has the rest).
pub const MAX_DIAGNOSTICS: usize = 500;

/// What makes two printed diagnostics the same one: position, severity, code and message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    position: Position,
    message: String,
}

/// Position, severity and code: a template's error at one position differs only in its message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Position {
    path: Option<String>,
    line: Option<u32>,
    column: Option<u32>,
    severity: Severity,
    code: Option<String>,
}

impl Diagnostic {
    fn position(&self) -> Position {
        Position {
            path: self.path.clone(),
            line: self.line,
            column: self.column,
            severity: self.severity,
            code: self.code.clone(),
        }
    }

    fn key(&self) -> Key {
        Key { position: self.position(), message: self.message.clone() }
    }

    /// Counts `other`, the same diagnostic printed again.
    fn absorb(&mut self, other: Diagnostic, new_message: bool) {
        self.count += other.count;
        self.messages += u32::from(new_message);
        for edge in other.edges {
            if !self.edges.contains(&edge) {
                self.edges.push(edge);
            }
        }
    }
}

/// Collects diagnostics from the lines of one build transcript.
#[derive(Debug, Default, Clone)]
pub struct Parser {
    /// Each diagnostic once, in the order of its first printing.
    pub diagnostics: Vec<Diagnostic>,
    /// Printings of diagnostics past [`MAX_DIAGNOSTICS`].
    pub dropped: usize,
    /// Where each diagnostic (by [`Key`]) is in `diagnostics`.
    known: HashMap<Key, usize>,
    /// Where the diagnostic with a column at each [`Position`] is: a template's repeated error.
    positions: HashMap<Position, usize>,
    /// `In file included from` locations waiting for the diagnostic they lead to.
    includes: Vec<(String, u32)>,
    /// The output or description of the current build edge.
    edge: Option<String>,
    /// lld's last `undefined symbol` error, waiting for its `>>> referenced by` location.
    lld_pending: Option<usize>,
    /// The last diagnostic other than a note repeated an earlier one: its notes (include chain,
    /// "declared here", "in instantiation of") are those of the first printing, not kept again.
    repeating: bool,
}

impl Parser {
    pub fn line(&mut self, line: &str) {
        let line = line.trim_end();
        if line.is_empty() {
            return;
        }
        if let Some(edge) = edge_of(line) {
            self.edge = Some(edge.to_owned());
            self.includes.clear();
            self.lld_pending = None;
            self.repeating = false;
            return;
        }
        if let Some(rest) = line.trim_start().strip_prefix(">>> referenced by ") {
            self.referenced_by(rest);
            return;
        }
        if let Some(include) = included_from(line) {
            self.includes.push(include);
            return;
        }
        if let Some(diagnostic) = parse_line(line) {
            self.push(diagnostic);
        }
    }

    fn push(&mut self, mut diagnostic: Diagnostic) {
        diagnostic.edges = self.edge.iter().cloned().collect();
        diagnostic.path = diagnostic.path.map(normal);
        let includes = std::mem::take(&mut self.includes);
        let lld_pending = diagnostic.path.is_none() && diagnostic.message.starts_with("undefined symbol");
        let edges = diagnostic.edges.clone();
        let notes = includes.into_iter().map(|(path, line)| Diagnostic {
            path: Some(path),
            line: Some(line),
            column: None,
            severity: Severity::Note,
            message: "in file included from here".to_owned(),
            code: None,
            edges: edges.clone(),
            count: 1,
            messages: 1,
        });
        let is_note = diagnostic.severity == Severity::Note;
        if is_note && self.repeating {
            return;
        }
        let (kept, dropped) = (self.diagnostics.len(), self.dropped);
        let first = self.add(diagnostic);
        let repeat = self.diagnostics.len() == kept && self.dropped == dropped;
        if !is_note {
            self.repeating = repeat;
        }
        self.lld_pending = first.filter(|_| lld_pending);
        if !repeat || is_note {
            for note in notes {
                self.add(note);
            }
        }
    }

    /// Counts `diagnostic` in the one it repeats, or keeps it as a new one; returns its index.
    fn add(&mut self, diagnostic: Diagnostic) -> Option<usize> {
        let key = diagnostic.key();
        if let Some(&idx) = self.known.get(&key) {
            self.diagnostics[idx].absorb(diagnostic, false);
            return Some(idx);
        }
        let position = key.position.clone();
        if position.column.is_some()
            && let Some(&idx) = self.positions.get(&position)
        {
            self.diagnostics[idx].absorb(diagnostic, true);
            self.known.insert(key, idx);
            return Some(idx);
        }
        if self.diagnostics.len() == MAX_DIAGNOSTICS {
            self.dropped += diagnostic.count as usize;
            return None;
        }
        let idx = self.diagnostics.len();
        self.known.insert(key, idx);
        if position.column.is_some() {
            self.positions.insert(position, idx);
        }
        self.diagnostics.push(diagnostic);
        Some(idx)
    }

    /// `>>> referenced by link_error.cpp:6 (/p/negative/link_error.cpp:6)`.
    fn referenced_by(&mut self, rest: &str) {
        let Some(idx) = self.lld_pending.take() else { return };
        let location = rest.rsplit_once('(').and_then(|(_, tail)| tail.strip_suffix(')')).unwrap_or(rest);
        let Some((path, line)) = location.rsplit_once(':') else { return };
        let Ok(line) = line.parse::<u32>() else { return };
        // Only the diagnostic just added moves to its location: an earlier one with the same
        // message, already counted there, keeps its own.
        if idx + 1 != self.diagnostics.len() || self.diagnostics[idx].count != 1 {
            return;
        }
        let mut diagnostic = self.diagnostics.pop().expect("the pending diagnostic");
        self.known.remove(&diagnostic.key());
        diagnostic.path = Some(path.to_owned());
        diagnostic.line = Some(line);
        self.add(diagnostic);
    }
}

/// `path` without `.` and `..` segments when it has any (`/p/tests/../include/a.hpp` is
/// `/p/include/a.hpp`), so one file printed both ways is one diagnostic.
fn normal(path: String) -> String {
    let dotted = path.split(['/', '\\']).any(|segment| segment == "." || segment == "..");
    if dotted && std::path::Path::new(&path).is_absolute() {
        lexically_normal(std::path::Path::new(&path)).to_string_lossy().into_owned()
    } else {
        path
    }
}

/// The edge a Ninja or Make line starts: `FAILED: <outputs>` or `[n/m] <description>`.
fn edge_of(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix("FAILED: ") {
        return rest.split_whitespace().next();
    }
    let rest = line.strip_prefix('[')?;
    let (counts, description) = rest.split_once("] ")?;
    counts.split_once('/').filter(|(a, b)| a.trim().parse::<u64>().is_ok() && b.trim().parse::<u64>().is_ok())?;
    description.rsplit(' ').next()
}

/// `In file included from /p/a.cpp:3:` or its continuation `                 from /p/b.hpp:4,`.
fn included_from(line: &str) -> Option<(String, u32)> {
    let rest = line.strip_prefix("In file included from ").or_else(|| {
        let trimmed = line.trim_start();
        (trimmed.len() < line.len()).then(|| trimmed.strip_prefix("from ")).flatten()
    })?;
    let rest = rest.trim_end_matches([':', ',']);
    let (path, line) = rest.rsplit_once(':')?;
    let line = line.parse().ok()?;
    Some((path.to_owned(), line))
}

fn severity_word(word: &str) -> Option<Severity> {
    match word {
        "error" | "fatal error" => Some(Severity::Error),
        "warning" => Some(Severity::Warning),
        "note" => Some(Severity::Note),
        _ => None,
    }
}

/// One diagnostic line, or `None` for context lines (source excerpts, carets, "In function").
pub fn parse_line(line: &str) -> Option<Diagnostic> {
    parse_msvc(line).or_else(|| parse_gnu(line)).or_else(|| parse_linker(line))
}

fn diagnostic(
    path: Option<&str>,
    line: Option<u32>,
    column: Option<u32>,
    severity: Severity,
    message: &str,
) -> Diagnostic {
    let (message, code) = split_flag(message.trim());
    Diagnostic {
        path: path.map(str::to_owned),
        line,
        column,
        severity,
        message: message.to_owned(),
        code,
        edges: Vec::new(),
        count: 1,
        messages: 1,
    }
}

/// `message [-Wflag]` → (`message`, `-Wflag`); also `[-Werror=flag]`.
fn split_flag(message: &str) -> (&str, Option<String>) {
    if let Some(stripped) = message.strip_suffix(']')
        && let Some((head, flag)) = stripped.rsplit_once(" [")
        && flag.starts_with("-W")
    {
        let flag = flag.strip_prefix("-Werror=").map_or_else(|| flag.to_owned(), |f| format!("-W{f}"));
        return (head, Some(flag));
    }
    (message, None)
}

/// GCC and Clang: `path:line:col: severity: message` or `path:line: severity: message`.
fn parse_gnu(line: &str) -> Option<Diagnostic> {
    // The path may contain `:` (a Windows drive), so look for the severity first.
    for word in [": error: ", ": fatal error: ", ": warning: ", ": note: "] {
        let Some(idx) = line.find(word) else { continue };
        let (location, message) = (&line[..idx], &line[idx + word.len()..]);
        let severity = severity_word(word.trim_matches([':', ' ']))?;
        let mut parts = location.rsplitn(3, ':');
        let last = parts.next()?;
        let middle = parts.next();
        let first = parts.next();
        let (path, line_no, column) = match (first, middle.map(str::parse::<u32>), last.parse::<u32>()) {
            (Some(path), Some(Ok(line_no)), Ok(column)) => (path, line_no, Some(column)),
            (_, _, Ok(line_no)) => (location.rsplit_once(':')?.0, line_no, None),
            _ => {
                // `clang: error: …`, `cc1plus: fatal error: …`, `ld.lld: error: …`: a tool, not a file.
                if location.contains(' ') {
                    return None;
                }
                return tool_message(location, severity, message);
            }
        };
        if path.is_empty() || path.contains(' ') && !path.contains(['/', '\\']) {
            return None;
        }
        return Some(diagnostic(Some(path), Some(line_no), column, severity, message));
    }
    None
}

/// Build tools whose own errors the build result summarises apart from the diagnostics.
const BUILD_TOOLS: [&str; 6] = ["ninja", "make", "gmake", "cmake", "ctest", "msbuild"];

/// A message a program prints under its own name, without a position: a compiler driver, its
/// back end (`cc1plus: fatal error: x.cpp: No such file or directory` for a missing source), a
/// linker or the link-time optimizer. The build tools' own errors are not diagnostics.
fn tool_message(tool: &str, severity: Severity, message: &str) -> Option<Diagnostic> {
    // The drivers' closing lines only repeat that the linker failed.
    if message.starts_with("ld returned") || message.starts_with("linker command failed") {
        return None;
    }
    let name = tool.rsplit(['/', '\\']).next().unwrap_or(tool);
    let name = name.strip_suffix(".exe").unwrap_or(name).to_ascii_lowercase();
    if name.is_empty() || BUILD_TOOLS.contains(&name.as_str()) {
        return None;
    }
    Some(diagnostic(None, None, None, severity, message))
}

/// MSVC: `path(line,col): error C2065: message`, `path(line): warning C4996: …`, and link.exe's
/// `file.obj : error LNK2019: …`; MSBuild's trailing ` [project.vcxproj]` is dropped.
fn parse_msvc(line: &str) -> Option<Diagnostic> {
    let line = line.trim();
    let line = match line.strip_suffix(".vcxproj]").and_then(|l| l.rsplit_once(" [")) {
        Some((head, _)) => head,
        None => line,
    };
    for word in [": error ", ": fatal error ", ": warning "] {
        let Some(idx) = line.find(word) else { continue };
        let (location, rest) = (&line[..idx], &line[idx + word.len()..]);
        let (code, message) = rest.split_once(": ")?;
        if !is_msvc_code(code) {
            return None;
        }
        let severity = severity_word(word.trim_matches([':', ' ']))?;
        let mut res = if let Some(open) = location.strip_suffix(')').and_then(|l| l.rfind('(').map(|i| (l, i))) {
            let (head, idx) = open;
            let numbers = &head[idx + 1..];
            let (line_no, column) = match numbers.split_once(',') {
                Some((l, c)) => (l.parse().ok()?, c.parse().ok()),
                None => (numbers.parse().ok()?, None),
            };
            diagnostic(Some(&head[..idx]), Some(line_no), column, severity, message)
        } else {
            let location = location.trim();
            let path = (!location.is_empty() && !location.eq_ignore_ascii_case("link")).then_some(location);
            diagnostic(path, None, None, severity, message)
        };
        res.code = Some(code.to_owned());
        return Some(res);
    }
    None
}

/// `C2065`, `C4996`, `LNK2019`, `D9002`, `RC2001`.
fn is_msvc_code(code: &str) -> bool {
    let digits = code.trim_start_matches(|c: char| c.is_ascii_uppercase());
    let letters = code.len() - digits.len();
    (1..=3).contains(&letters) && digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// GNU ld without a severity: `/usr/bin/ld: cannot find -lfoo`, `file.o:(.text+0x5): undefined
/// reference to `f'`, `path:6: undefined reference to …`, `ld: symbol(s) not found …` (ld64).
fn parse_linker(line: &str) -> Option<Diagnostic> {
    if let Some(idx) = line.find(": undefined reference to ").or_else(|| line.find(": multiple definition of ")) {
        let (location, message) = (&line[..idx], &line[idx + 2..]);
        let location = location.split_once(":(").map_or(location, |(file, _)| file);
        return Some(match location.rsplit_once(':') {
            Some((path, line_no)) if line_no.parse::<u32>().is_ok() => {
                diagnostic(Some(path), line_no.parse().ok(), None, Severity::Error, message)
            }
            _ => diagnostic(Some(location), None, None, Severity::Error, message),
        });
    }
    let (tool, message) = line.split_once(": ")?;
    let name = tool.rsplit(['/', '\\']).next().unwrap_or(tool);
    if !(name == "ld" || name.starts_with("ld.") || name.ends_with("-ld")) {
        return None;
    }
    if message.contains(": in function ") {
        return None;
    }
    let severity = if message.starts_with("warning") { Severity::Warning } else { Severity::Error };
    let message = message.strip_prefix("warning: ").unwrap_or(message);
    Some(diagnostic(None, None, None, severity, message))
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};

    use super::*;

    fn check(transcript: &str, expected: Expect) {
        let mut parser = Parser::default();
        for line in transcript.lines() {
            parser.line(line);
        }
        let mut res = String::new();
        for d in &parser.diagnostics {
            let _ = write!(
                res,
                "{} {}:{}:{} [{}] {} <{}>",
                d.severity.as_str(),
                d.path.as_deref().unwrap_or("-"),
                d.line.map_or("-".to_owned(), |l| l.to_string()),
                d.column.map_or("-".to_owned(), |c| c.to_string()),
                d.code.as_deref().unwrap_or("-"),
                d.message,
                if d.edges.is_empty() { "-".to_owned() } else { d.edges.join(", ") },
            );
            if (d.count, d.messages) != (1, 1) {
                let _ = write!(res, " x{} ({} messages)", d.count, d.messages);
            }
            res.push('\n');
        }
        expected.assert_eq(&res);
    }

    #[test]
    fn gcc() {
        check(
            "[1/5] Building CXX object CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o
/p/app/warning_main.cpp: In function ‘int main()’:
/p/app/warning_main.cpp:6:30: warning: ‘int fixture::increment(int)’ is deprecated: use fixture::add(value, 1) instead [-Wdeprecated-declarations]
    6 |     return fixture::increment(41) == 42 ? 0 : 1;
      |            ~~~~~~~~~~~~~~~~~~^~~~
In file included from /p/app/warning_main.cpp:2:
/p/include/fixture/math.hpp:10:5: note: declared here
   10 | int increment(int value);
[2/5] Linking CXX executable fixture_warning
FAILED: CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o 
/usr/bin/g++   -g -std=c++20 -o CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o -c /p/negative/compile_error.cpp
/p/negative/compile_error.cpp: In function ‘int main()’:
/p/negative/compile_error.cpp:4:12: error: ‘fixture_undeclared_value’ was not declared in this scope
In file included from /p/src/a.hpp:2,
                 from /p/src/a.cpp:1:
/p/src/b.hpp:1:10: fatal error: missing.hpp: No such file or directory
cc1plus: some warnings being treated as errors
/p/x.c:3:1: error: unused variable 'x' [-Werror=unused-variable]
",
            expect![[r#"
                warning /p/app/warning_main.cpp:6:30 [-Wdeprecated-declarations] ‘int fixture::increment(int)’ is deprecated: use fixture::add(value, 1) instead <CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o>
                note /p/include/fixture/math.hpp:10:5 [-] declared here <CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o>
                note /p/app/warning_main.cpp:2:- [-] in file included from here <CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o>
                error /p/negative/compile_error.cpp:4:12 [-] ‘fixture_undeclared_value’ was not declared in this scope <CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o>
                error /p/src/b.hpp:1:10 [-] missing.hpp: No such file or directory <CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o>
                note /p/src/a.hpp:2:- [-] in file included from here <CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o>
                note /p/src/a.cpp:1:- [-] in file included from here <CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o>
                error /p/x.c:3:1 [-Wunused-variable] unused variable 'x' <CMakeFiles/fixture_compile_error.dir/negative/compile_error.cpp.o>
            "#]],
        );
    }

    #[test]
    fn clang() {
        check(
            "[1/5] Building CXX object CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o
/p/app/warning_main.cpp:6:21: warning: 'increment' is deprecated: use fixture::add(value, 1) instead [-Wdeprecated-declarations]
    return fixture::increment(41) == 42 ? 0 : 1;
                    ^
/p/include/fixture/math.hpp:9:3: note: 'increment' has been explicitly marked deprecated here
1 warning generated.
FAILED: fixture_link_error 
/usr/bin/ld: CMakeFiles/fixture_link_error.dir/negative/link_error.cpp.o: in function `main':
/p/negative/link_error.cpp:6: undefined reference to `fixture_undefined_function(int)'
clang: error: linker command failed with exit code 1 (use -v to see invocation)
clang: error: no such file or directory: 'x.cpp'
",
            expect![[r#"
                warning /p/app/warning_main.cpp:6:21 [-Wdeprecated-declarations] 'increment' is deprecated: use fixture::add(value, 1) instead <CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o>
                note /p/include/fixture/math.hpp:9:3 [-] 'increment' has been explicitly marked deprecated here <CMakeFiles/fixture_warning.dir/app/warning_main.cpp.o>
                error /p/negative/link_error.cpp:6:- [-] undefined reference to `fixture_undefined_function(int)' <fixture_link_error>
                error -:-:- [-] no such file or directory: 'x.cpp' <fixture_link_error>
            "#]],
        );
    }

    #[test]
    fn linkers() {
        check(
            "FAILED: app
/usr/bin/ld: CMakeFiles/app.dir/main.cpp.o: in function `main':
main.cpp:(.text+0x9): undefined reference to `missing()'
/usr/bin/ld: cannot find -lnosuch: No such file or directory
collect2: error: ld returned 1 exit status
ld.lld: error: undefined symbol: fixture_undefined_function(int)
>>> referenced by link_error.cpp:6 (/p/negative/link_error.cpp:6)
>>>               CMakeFiles/fixture_link_error.dir/negative/link_error.cpp.o:(main)
ld: symbol(s) not found for architecture arm64
",
            expect![[r#"
                error main.cpp:-:- [-] undefined reference to `missing()' <app>
                error -:-:- [-] cannot find -lnosuch: No such file or directory <app>
                error /p/negative/link_error.cpp:6:- [-] undefined symbol: fixture_undefined_function(int) <app>
                error -:-:- [-] symbol(s) not found for architecture arm64 <app>
            "#]],
        );
    }

    #[test]
    fn repeats_are_counted_once_with_their_edges() {
        check(
            "[1/3] Building CXX object CMakeFiles/lib.dir/src/a.cpp.o
In file included from /p/src/a.cpp:1:
/p/include/h.hpp:3:9: warning: unused variable 'x' [-Wunused-variable]
[2/3] Building CXX object CMakeFiles/check.dir/tests/b.cpp.o
In file included from /p/tests/b.cpp:2:
/p/include/h.hpp:3:9: warning: unused variable 'x' [-Wunused-variable]
FAILED: CMakeFiles/lib.dir/src/t.cpp.o
/p/include/t.hpp: In instantiation of ‘int box<T>::size() const [with T = int]’:
/p/src/t.cpp:2:62:   required from here
/p/include/t.hpp:4:37: error: request for member ‘size_of_it’ in ‘box<int>::value’, which is of non-class type ‘const int’
/p/include/t.hpp: In instantiation of ‘int box<T>::size() const [with T = long int]’:
/p/src/t.cpp:2:73:   required from here
/p/include/t.hpp:4:37: error: request for member ‘size_of_it’ in ‘box<long int>::value’, which is of non-class type ‘const long int’
/p/include/t.hpp:4:37: error: request for member ‘size_of_it’ in ‘box<int>::value’, which is of non-class type ‘const int’
FAILED: CMakeFiles/lib.dir/src/moved.cpp.o
cc1plus: fatal error: /p/src/moved.cpp: No such file or directory
compilation terminated.
ninja: error: loading 'build.ninja': No such file or directory
make: error: something
",
            expect![[r#"
                warning /p/include/h.hpp:3:9 [-Wunused-variable] unused variable 'x' <CMakeFiles/lib.dir/src/a.cpp.o, CMakeFiles/check.dir/tests/b.cpp.o> x2 (1 messages)
                note /p/src/a.cpp:1:- [-] in file included from here <CMakeFiles/lib.dir/src/a.cpp.o>
                error /p/include/t.hpp:4:37 [-] request for member ‘size_of_it’ in ‘box<int>::value’, which is of non-class type ‘const int’ <CMakeFiles/lib.dir/src/t.cpp.o> x3 (2 messages)
                error -:-:- [-] /p/src/moved.cpp: No such file or directory <CMakeFiles/lib.dir/src/moved.cpp.o>
            "#]],
        );
    }

    #[test]
    fn msvc_and_link_exe() {
        check(
            r#"[1/3] Building CXX object CMakeFiles\app.dir\main.cpp.obj
C:\p\main.cpp(4,12): error C2065: 'fixture_undeclared_value': undeclared identifier
C:\p\app\warning_main.cpp(6): warning C4996: 'fixture::increment': use fixture::add(value, 1) instead [C:\p\build\app.vcxproj]
main.cpp.obj : error LNK2019: unresolved external symbol "int __cdecl missing(void)" referenced in function main
app.exe : fatal error LNK1120: 1 unresolved externals
LINK : fatal error LNK1181: cannot open input file 'nosuch.lib'
cl : Command line warning D9002 : ignoring unknown option '-Wall'
"#,
            expect![[r#"
                error C:\p\main.cpp:4:12 [C2065] 'fixture_undeclared_value': undeclared identifier <CMakeFiles\app.dir\main.cpp.obj>
                warning C:\p\app\warning_main.cpp:6:- [C4996] 'fixture::increment': use fixture::add(value, 1) instead <CMakeFiles\app.dir\main.cpp.obj>
                error main.cpp.obj:-:- [LNK2019] unresolved external symbol "int __cdecl missing(void)" referenced in function main <CMakeFiles\app.dir\main.cpp.obj>
                error app.exe:-:- [LNK1120] 1 unresolved externals <CMakeFiles\app.dir\main.cpp.obj>
                error -:-:- [LNK1181] cannot open input file 'nosuch.lib' <CMakeFiles\app.dir\main.cpp.obj>
            "#]],
        );
    }
}
