//! Text of the debug tools: the stop (why, where, the frames, numbered source lines, locals, the
//! program's output), inspections, breakpoints and ended sessions.

use std::fmt::Write;

use crate::debug::model::{Breakpoint, Breakpoints, Excerpt, Frame, Inspection, RunState, Stop, Stopped, Value};

pub fn stop_text(stop: &Stop) -> String {
    let mut out = format!("Debug session {}: {}.", stop.session_id, stop.summary);
    if let Some(thread) = stop.thread_id {
        let _ = write!(out, " Thread {thread}.");
    }
    out.push('\n');
    frames(&mut out, &stop.frames);
    if let Some(source) = &stop.source {
        excerpt(&mut out, source);
    }
    if stop.state == RunState::Stopped {
        if stop.locals.is_empty() {
            out.push_str("No locals.\n");
        } else {
            out.push_str("Locals:\n");
            values(&mut out, &stop.locals, 1);
        }
    }
    if !stop.output.is_empty() {
        out.push_str("Program output:\n");
        for line in stop.output.trim_end_matches('\n').split('\n') {
            let _ = writeln!(out, "  {line}");
        }
    }
    if !stop.breakpoints.is_empty() {
        out.push_str("Breakpoints:\n");
        breakpoints(&mut out, &stop.breakpoints);
    }
    out
}

pub fn inspect_text(session_id: Option<u64>, found: &Inspection) -> String {
    let mut out = String::new();
    let Some(session_id) = session_id else {
        if found.sessions.is_empty() {
            return "No debug sessions are running.\n".to_owned();
        }
        let _ = writeln!(out, "{} debug session(s):", found.sessions.len());
        for s in &found.sessions {
            let state = match s.state {
                RunState::Stopped => "stopped",
                RunState::Running => "running",
                RunState::Exited => "exited",
            };
            let pid = s.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
            let debuggee = s.debuggee_process_id.map(|p| format!(", debuggee process {p}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  session {}: {} under {}, {state}, adapter process {}{debuggee}{pid}, ends in {} s",
                s.session_id, s.executable, s.adapter, s.process_id, s.remaining_seconds
            );
        }
        return out;
    };
    if let Some(value) = &found.value {
        let _ = writeln!(out, "Debug session {session_id}:");
        values(&mut out, std::slice::from_ref(value), 1);
    } else if !found.scopes.is_empty() {
        let _ = writeln!(out, "Debug session {session_id}, scopes:");
        for scope in &found.scopes {
            if scope.skipped {
                let _ = writeln!(out, "  {} (not expanded)", scope.name);
            } else if scope.variables.is_empty() {
                let _ = writeln!(out, "  {}: none", scope.name);
            } else {
                let _ = writeln!(out, "  {}:", scope.name);
                values(&mut out, &scope.variables, 2);
            }
        }
    } else if !found.frames.is_empty() {
        let _ = writeln!(out, "Debug session {session_id}:");
        frames(&mut out, &found.frames);
        if let Some(source) = &found.source {
            excerpt(&mut out, source);
        }
    } else {
        let _ = writeln!(out, "Debug session {session_id}, {} thread(s):", found.threads.len());
        for t in &found.threads {
            let _ = writeln!(out, "  thread {} {}", t.id, t.name);
        }
    }
    out
}

pub fn breakpoints_text(res: &Breakpoints) -> String {
    if res.breakpoints.is_empty() {
        return format!("Debug session {} has no breakpoints.\n", res.session_id);
    }
    let mut out = format!("Debug session {}, {} breakpoint(s):\n", res.session_id, res.breakpoints.len());
    breakpoints(&mut out, &res.breakpoints);
    out
}

pub fn stopped_text(res: &Stopped) -> String {
    let code = res.exit_code.map(|c| format!(" (the program had exited with code {c})")).unwrap_or_default();
    format!("Debug session {} of {} ended; its processes are stopped{code}.\n", res.session_id, res.executable)
}

fn frames(out: &mut String, frames: &[Frame]) {
    if frames.is_empty() {
        return;
    }
    out.push_str("Frames:\n");
    for (i, f) in frames.iter().enumerate() {
        let place = f.path.as_ref().map(|p| format!(" at {p}:{}", f.line)).unwrap_or_default();
        let _ = writeln!(out, "  {i}: {}{place} (frame_id {})", f.function, f.id);
    }
}

fn excerpt(out: &mut String, source: &Excerpt) {
    let _ = writeln!(out, "Source {}:", source.path);
    let width = (source.start_line as usize + source.lines.len()).to_string().len();
    for (i, line) in source.lines.iter().enumerate() {
        let number = source.start_line + i as u32;
        let mark = if number == source.line { '>' } else { ' ' };
        let _ = writeln!(out, "  {mark} {number:>width$} | {line}");
    }
}

fn values(out: &mut String, values: &[Value], indent: usize) {
    for v in values {
        let type_name = v.type_name.as_ref().map(|t| format!(" ({t})")).unwrap_or_default();
        let more = if v.more { " …" } else { "" };
        let _ = writeln!(out, "{:width$}{}{type_name} = {}{more}", "", v.name, v.value, width = indent * 2);
        self::values(out, &v.children, indent + 1);
    }
}

fn breakpoints(out: &mut String, list: &[Breakpoint]) {
    for b in list {
        let place = match (&b.path, b.line) {
            (Some(path), Some(line)) => format!(" at {path}:{line}"),
            (None, Some(line)) => format!(" at line {line}"),
            _ => String::new(),
        };
        let state = if b.bound { "bound" } else { "not bound" };
        let message = b.message.as_ref().map(|m| format!(": {m}")).unwrap_or_default();
        let _ = writeln!(out, "  {}: {state}{place}{message}", b.spec);
    }
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn a_signal_stop() {
        let value = |name: &str, t: &str, v: &str| Value {
            name: name.into(),
            type_name: Some(t.into()),
            value: v.into(),
            children: Vec::new(),
            more: false,
        };
        let mut origin = value("origin", "Point", "");
        origin.children = vec![value("x", "int", "3"), value("y", "int", "4")];
        let stop = Stop {
            session_id: 2,
            state: RunState::Stopped,
            reason: "exception".into(),
            summary: "Stopped by signal SIGSEGV (segmentation fault: invalid memory access) in read_through at project/p.cpp:21"
                .into(),
            signal: Some("SIGSEGV".into()),
            exit_code: None,
            thread_id: Some(77),
            frames: vec![
                Frame { id: 1, function: "read_through".into(), path: Some("project/p.cpp".into()), line: 21 },
                Frame { id: 2, function: "__libc_start_main".into(), path: None, line: 0 },
            ],
            source: Some(Excerpt {
                path: "project/p.cpp".into(),
                line: 21,
                start_line: 19,
                lines: vec!["int f(const int *ptr) {".into(), "    // read".into(), "    return *ptr;".into()],
            }),
            locals: vec![value("ptr", "const int *", "0x0000000000000000"), origin],
            output: "probe 25\n".into(),
            breakpoints: vec![Breakpoint {
                spec: "main".into(),
                bound: true,
                path: Some("project/p.cpp".into()),
                line: Some(30),
                message: None,
            }],
            ended: false,
            crash: None,
        };
        expect![[r#"
            Debug session 2: Stopped by signal SIGSEGV (segmentation fault: invalid memory access) in read_through at project/p.cpp:21. Thread 77.
            Frames:
              0: read_through at project/p.cpp:21 (frame_id 1)
              1: __libc_start_main (frame_id 2)
            Source project/p.cpp:
                19 | int f(const int *ptr) {
                20 |     // read
              > 21 |     return *ptr;
            Locals:
              ptr (const int *) = 0x0000000000000000
              origin (Point) = 
                x (int) = 3
                y (int) = 4
            Program output:
              probe 25
            Breakpoints:
              main: bound at project/p.cpp:30
        "#]]
        .assert_eq(&stop_text(&stop));
    }
}
