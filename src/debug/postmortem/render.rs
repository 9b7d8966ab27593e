//! A crash or hang as text: where the stack came from, the signal, a failed assertion, at most
//! [`TEXT_FRAMES`] frame lines (`function at project/src/x.cpp:25`; a run of frames outside the project
//! collapsed to one line naming their library), the crashing line and the locals of the innermost
//! project frame; for a hang, each thread's innermost frame and project frames.
//!
//! Architecture invariant: pure functions of a [`Crash`].

use std::fmt::Write as _;

use super::{Crash, CrashFrame, CrashSource, SourceLine};
use crate::debug::model::Value;

/// Frame lines the text shows at most; `crash.frames` has them all.
pub const TEXT_FRAMES: usize = 16;
/// Locals the text shows.
const TEXT_LOCALS: usize = 8;

/// The text of a crash, every line indented by `indent`.
pub fn text(crash: &Crash, indent: &str) -> String {
    let mut res = String::new();
    let signal = crash.signal.as_deref().unwrap_or("a signal");
    let description = crash.description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default();
    let head = match crash.source {
        CrashSource::CoreFile => format!("Stack of the {signal}{description}, from the core file:"),
        CrashSource::Reproduced => format!("Stack of the {signal}{description}, reproduced under lldb-dap:"),
        CrashSource::Session => format!("Stack of the {signal}{description}:"),
        CrashSource::Intermittent if crash.signal.is_some() => format!(
            "No stack: the program did not crash again under the debugger: the crash is intermittent ({})",
            crash.note.as_deref().unwrap_or("it did not crash")
        ),
        CrashSource::Intermittent => {
            format!("No stack: {}", crash.note.as_deref().unwrap_or("the hang did not happen again"))
        }
        CrashSource::Paused => {
            let threads = crate::text::plural(crash.threads.len(), "thread", "threads");
            format!("Threads of the hung program, paused under lldb-dap ({threads}):")
        }
        CrashSource::Unavailable => crash.note.clone().unwrap_or_else(|| "No stack".to_owned()),
    };
    res.push_str(indent);
    res.push_str(&head);
    if let Some(assertion) = &crash.assertion {
        let _ = write!(res, "\n{indent}  Assertion failed: `{assertion}`");
    }
    for line in frame_lines(&crash.frames) {
        let _ = write!(res, "\n{indent}  {line}");
    }
    if let Some(line) = &crash.line {
        let _ = write!(res, "\n{indent}  Crashed at {}", shown_line(line));
    }
    if !crash.locals.is_empty() {
        let function = crash.frames.iter().find(|f| f.project).map_or("", |f| f.function.as_str());
        let _ = write!(res, "\n{indent}  Locals of {function}: {}", locals(&crash.locals));
    }
    for thread in &crash.threads {
        let name = if thread.name.is_empty() { String::new() } else { format!(" ({})", thread.name) };
        let mut frames = thread.frames.iter();
        let at = frames.next().map(frame).unwrap_or_default();
        let _ = write!(res, "\n{indent}  Thread {}{name}: {at}", thread.thread_id);
        for f in frames {
            let _ = write!(res, "\n{indent}    in {}", frame(f));
        }
        if let Some(line) = &thread.line {
            let _ = write!(res, "\n{indent}    line {}", shown_line(line));
        }
    }
    res
}

fn shown_line(line: &SourceLine) -> String {
    format!("{}:{}: {}", line.path, line.line, line.text)
}

fn frame(f: &CrashFrame) -> String {
    match (&f.path, f.project, &f.library) {
        (Some(path), true, _) => format!("{} at {path}:{}", f.function, f.line),
        (_, _, Some(library)) => format!("{} in {library}", f.function),
        (Some(path), false, None) => format!("{} at {path}:{}", f.function, f.line),
        (None, _, None) => f.function.clone(),
    }
}

/// One line per project frame, one per run of other frames of one library; at most
/// [`TEXT_FRAMES`] lines, then how many frames are left out.
fn frame_lines(frames: &[CrashFrame]) -> Vec<String> {
    let mut res = Vec::new();
    let mut idx = 0;
    while idx < frames.len() {
        if res.len() == TEXT_FRAMES {
            res.push(format!("… {} more frames (all in crash.frames)", frames.len() - idx));
            break;
        }
        let f = &frames[idx];
        if f.project {
            res.push(frame(f));
            idx += 1;
            continue;
        }
        let run = frames[idx..].iter().take_while(|g| !g.project && g.library == f.library).count();
        let library = f.library.as_deref().unwrap_or("system code");
        res.push(match run {
            1 => frame(f),
            2 => format!("{library}: {}, {}", f.function, frames[idx + 1].function),
            n => format!("{library}: {} … {} ({n} frames)", f.function, frames[idx + n - 1].function),
        });
        idx += run;
    }
    res
}

/// `name = value`, …; a null pointer reads `0x0`.
fn locals(values: &[Value]) -> String {
    let mut shown: Vec<String> = values
        .iter()
        .take(TEXT_LOCALS)
        .map(|v| {
            let value = null_pointer(&v.value).unwrap_or(&v.value);
            match &v.type_name {
                Some(t) => format!("{} = {value} ({t})", v.name),
                None => format!("{} = {value}", v.name),
            }
        })
        .collect();
    if values.len() > TEXT_LOCALS {
        shown.push(format!("… {} more", values.len() - TEXT_LOCALS));
    }
    shown.join("; ")
}

fn null_pointer(value: &str) -> Option<&'static str> {
    let digits = value.strip_prefix("0x")?;
    (!digits.is_empty() && digits.bytes().all(|b| b == b'0')).then_some("0x0")
}

/// The expression of a failed `assert` in a program's output: glibc's ``Assertion `x > 0' failed.``,
/// musl's `Assertion failed: x > 0 (file: func: line)`, MSVC's `Assertion failed: x > 0, file …`.
pub fn assertion(output: &str) -> Option<String> {
    output.lines().find_map(|line| {
        if let Some((_, rest)) = line.split_once("Assertion `") {
            return rest.rsplit_once("' failed").map(|(text, _)| text.to_owned());
        }
        let rest = line.split_once("Assertion failed: ")?.1;
        let end = rest.find(" (").or_else(|| rest.find(", file ")).unwrap_or(rest.len());
        Some(rest[..end].to_owned())
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;
    use crate::debug::postmortem::ThreadStack;

    fn f(function: &str, path: Option<&str>, line: u32, library: Option<&str>) -> CrashFrame {
        let project = path.is_some_and(|p| p.starts_with("project/"));
        CrashFrame {
            function: function.into(),
            path: path.map(Into::into),
            line,
            library: library.map(Into::into),
            project,
        }
    }

    fn assert_crash() -> Crash {
        let libc = Some("libc.so.6");
        Crash {
            source: CrashSource::Reproduced,
            signal: Some("SIGABRT".into()),
            description: None,
            assertion: assertion("t: t.cpp:2: int check(int): Assertion `x > 0' failed."),
            frames: vec![
                f("__pthread_kill_implementation", None, 44, libc),
                f("__GI_raise", None, 26, libc),
                f("__GI___assert_fail", None, 103, libc),
                f("check(int)", Some("project/tests/t.cpp"), 2, Some("t")),
                f("main", Some("project/tests/t.cpp"), 3, Some("t")),
                f("__libc_start_call_main", None, 58, libc),
                f("__libc_start_main_impl", None, 360, libc),
                f("_start", None, 0, Some("t")),
            ],
            line: Some(SourceLine { path: "project/tests/t.cpp".into(), line: 2, text: "assert(x > 0);".into() }),
            locals: vec![Value {
                name: "x".into(),
                type_name: Some("int".into()),
                value: "0".into(),
                children: Vec::new(),
                more: false,
            }],
            threads: Vec::new(),
            note: None,
        }
    }

    #[test]
    fn a_failed_assertion() {
        expect![[r#"
            Stack of the SIGABRT, reproduced under lldb-dap:
              Assertion failed: `x > 0`
              libc.so.6: __pthread_kill_implementation … __GI___assert_fail (3 frames)
              check(int) at project/tests/t.cpp:2
              main at project/tests/t.cpp:3
              libc.so.6: __libc_start_call_main, __libc_start_main_impl
              _start in t
              Crashed at project/tests/t.cpp:2: assert(x > 0);
              Locals of check(int): x = 0 (int)"#]]
        .assert_eq(&text(&assert_crash(), ""));
    }

    #[test]
    fn deep_stacks_stop_at_sixteen_lines_and_null_pointers_read_0x0() {
        let mut crash = assert_crash();
        crash.assertion = None;
        crash.source = CrashSource::CoreFile;
        crash.signal = Some("SIGSEGV".into());
        crash.description = Some("address not mapped to object".into());
        crash.frames = (0..20).map(|i| f(&format!("r{i}"), Some("project/r.cpp"), i, None)).collect();
        crash.locals[0].value = "0x0000000000000000".into();
        crash.locals[0].name = "p".into();
        crash.locals[0].type_name = Some("int *".into());
        let shown = text(&crash, "  ");
        assert!(shown.starts_with("  Stack of the SIGSEGV (address not mapped to object), from the core file:"));
        assert!(shown.contains("\n    r15 at project/r.cpp:15\n    … 4 more frames (all in crash.frames)"), "{shown}");
        assert!(shown.ends_with("Locals of r0: p = 0x0 (int *)"), "{shown}");
    }

    #[test]
    fn hung_threads_and_intermittent_crashes() {
        let mut crash = Crash::unavailable(None, String::new());
        crash.source = CrashSource::Paused;
        crash.note = None;
        crash.threads = vec![ThreadStack {
            thread_id: 7,
            name: "worker".into(),
            frames: vec![
                f("__futex_abstimed_wait_common", None, 57, Some("libc.so.6")),
                f("lock_ab()", Some("project/d.cpp"), 12, Some("d")),
            ],
            line: Some(SourceLine { path: "project/d.cpp".into(), line: 12, text: "std::lock_guard b(mb);".into() }),
        }];
        expect![[r#"
            Threads of the hung program, paused under lldb-dap (1 thread):
              Thread 7 (worker): __futex_abstimed_wait_common in libc.so.6
                in lock_ab() at project/d.cpp:12
                line project/d.cpp:12: std::lock_guard b(mb);"#]]
        .assert_eq(&text(&crash, ""));
        let mut again = Crash::unavailable(Some("SIGSEGV".into()), "it exited with code 0 under lldb-dap".into());
        again.source = CrashSource::Intermittent;
        expect!["No stack: the program did not crash again under the debugger: the crash is intermittent (it exited with code 0 under lldb-dap)"]
            .assert_eq(&text(&again, ""));
    }

    #[test]
    fn assertion_texts() {
        assert_eq!(
            assertion("a\nt: t.cpp:2: int f(): Assertion `p != nullptr' failed.\n").as_deref(),
            Some("p != nullptr")
        );
        assert_eq!(assertion("Assertion failed: x > 0 (t.c: main: 3)").as_deref(), Some("x > 0"));
        assert_eq!(assertion("nothing"), None);
    }
}
