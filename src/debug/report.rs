//! Stop results in plain English: why the program stopped (breakpoint, step, a signal with its
//! meaning, an exception), how it ended, and the budget values are cut to.
//!
//! Architecture invariant: pure; the session gathers frames and variables, this only describes them.

use std::time::Duration;

use super::model::{Excerpt, Frame, RunState, Stop, Value};
use crate::dap::protocol::StoppedEvent;

/// Longest value text kept.
const VALUE_BUDGET: usize = 200;

pub fn value(name: String, type_name: Option<String>, mut text: String) -> Value {
    if text.len() > VALUE_BUDGET {
        let mut cut = VALUE_BUDGET;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    Value { name, type_name: type_name.filter(|t| !t.is_empty()), value: text, children: Vec::new(), more: false }
}

fn base(session_id: u64, state: RunState, reason: &str, summary: String, output: String) -> Stop {
    Stop {
        session_id,
        state,
        reason: reason.to_owned(),
        summary,
        signal: None,
        exit_code: None,
        thread_id: None,
        frames: Vec::new(),
        source: None,
        locals: Vec::new(),
        output,
        breakpoints: Vec::new(),
        ended: false,
        crash: None,
    }
}

pub fn running(session_id: u64, waited: Duration, output: String) -> Stop {
    let summary = format!(
        "Still running after {} s; debug_continue waits again (action continue) or stops it (action pause)",
        waited.as_secs_f64()
    );
    base(session_id, RunState::Running, "running", summary, output)
}

pub fn ended(session_id: u64, exit_code: Option<i64>, output: String) -> Stop {
    let summary = match exit_code {
        Some(code) => format!("The program exited with code {code}; the session ended"),
        None => "The program ended; the session ended".to_owned(),
    };
    let mut stop = base(session_id, RunState::Exited, "exited", summary, output);
    stop.exit_code = exit_code;
    stop.ended = true;
    stop
}

pub fn stopped(
    session_id: u64,
    event: &StoppedEvent,
    thread_id: Option<i64>,
    frames: Vec<Frame>,
    source: Option<Excerpt>,
    locals: Vec<Value>,
    output: String,
) -> Stop {
    let (summary, signal) = describe(event);
    let location = source
        .as_ref()
        .and_then(|s| frames.iter().find(|f| f.path.as_deref() == Some(s.path.as_str())))
        .or(frames.first())
        .map(|f| match &f.path {
            Some(path) => format!(" in {} at {path}:{}", f.function, f.line),
            None => format!(" in {}", f.function),
        })
        .unwrap_or_default();
    let mut stop = base(session_id, RunState::Stopped, &event.reason, format!("{summary}{location}"), output);
    stop.signal = signal;
    stop.thread_id = thread_id;
    stop.frames = frames;
    stop.source = source;
    stop.locals = locals;
    stop
}

/// Why the program stopped, and the signal when one did.
pub fn describe(event: &StoppedEvent) -> (String, Option<String>) {
    let detail = event.description.as_deref().or(event.text.as_deref()).unwrap_or_default().trim();
    let signal = find_signal(detail).or_else(|| event.text.as_deref().and_then(find_signal));
    if let Some(signal) = &signal {
        let meaning = signal_meaning(signal).map(|m| format!(" ({m})")).unwrap_or_default();
        // lldb: "signal SIGSEGV: address not mapped to object (fault address: 0x0)".
        let rest = detail.split_once(signal.as_str()).map(|(_, r)| r.trim_start_matches(':').trim()).unwrap_or("");
        let rest = if rest.is_empty() { String::new() } else { format!(": {rest}") };
        return (format!("Stopped by signal {signal}{meaning}{rest}"), signal.clone().into());
    }
    let summary = match event.reason.as_str() {
        "breakpoint" | "function breakpoint" | "data breakpoint" | "instruction breakpoint" => {
            "Stopped at a breakpoint".to_owned()
        }
        "step" => "Stopped after the step".to_owned(),
        "entry" => "Stopped at the program's entry".to_owned(),
        "pause" => "Paused".to_owned(),
        "exception" if detail.is_empty() => "Stopped on an exception".to_owned(),
        "exception" => format!("Stopped on an exception: {detail}"),
        "goto" => "Stopped after the jump".to_owned(),
        other if detail.is_empty() => format!("Stopped ({other})"),
        other => format!("Stopped ({other}): {detail}"),
    };
    (summary, None)
}

fn find_signal(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric()))
        .find(|word| word.len() > 3 && word.starts_with("SIG") && word[3..].bytes().all(|b| b.is_ascii_uppercase()))
        .map(str::to_owned)
}

fn signal_meaning(signal: &str) -> Option<&'static str> {
    Some(match signal {
        "SIGSEGV" => "segmentation fault: invalid memory access",
        "SIGABRT" => "abort, e.g. a failed assertion or std::terminate",
        "SIGFPE" => "arithmetic error, e.g. integer division by zero",
        "SIGILL" => "illegal instruction",
        "SIGBUS" => "bus error: misaligned or unmapped memory",
        "SIGTRAP" => "trace or breakpoint trap",
        "SIGINT" => "interrupt",
        "SIGTERM" => "termination request",
        "SIGKILL" => "killed",
        "SIGPIPE" => "write to a closed pipe",
        "SIGSTOP" => "stopped",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    fn event(reason: &str, description: Option<&str>) -> StoppedEvent {
        StoppedEvent { reason: reason.to_owned(), description: description.map(str::to_owned), ..Default::default() }
    }

    #[test]
    fn stop_reasons_in_plain_english() {
        let lines: Vec<String> = [
            event("exception", Some("signal SIGSEGV: address not mapped to object (fault address: 0x0)")),
            event("signal", Some("SIGSEGV")),
            event("exception", Some("signal SIGABRT")),
            event("breakpoint", Some("breakpoint 1.1")),
            event("step", None),
            event("exception", Some("C++ Throw")),
            event("pause", None),
            event("entry", None),
        ]
        .iter()
        .map(|e| {
            let (summary, signal) = describe(e);
            format!("{summary} [{}]", signal.unwrap_or_default())
        })
        .collect();
        expect![[r#"
            Stopped by signal SIGSEGV (segmentation fault: invalid memory access): address not mapped to object (fault address: 0x0) [SIGSEGV]
            Stopped by signal SIGSEGV (segmentation fault: invalid memory access) [SIGSEGV]
            Stopped by signal SIGABRT (abort, e.g. a failed assertion or std::terminate) [SIGABRT]
            Stopped at a breakpoint []
            Stopped after the step []
            Stopped on an exception: C++ Throw []
            Paused []
            Stopped at the program's entry []"#]]
        .assert_eq(&lines.join("\n"));
    }

    #[test]
    fn long_values_are_cut() {
        let v = value("s".into(), Some(String::new()), "é".repeat(150));
        assert!(v.value.len() <= VALUE_BUDGET + '…'.len_utf8());
        assert!(v.value.ends_with('…'));
        assert_eq!(v.type_name, None);
    }
}
