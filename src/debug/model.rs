//! The typed results of the debug tools: stops, frames, variables, breakpoints, sessions. The MCP
//! surface serializes these as `structuredContent` and renders the same data as text.
//!
//! Architecture invariant: every path is a qualified path (`project/…`, `storage/…`, `root/…`), so
//! each one is valid input for the workspace and breakpoint arguments.

use schemars::JsonSchema;
use serde::Serialize;

/// Where a session is after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Stopped,
    Running,
    Exited,
}

/// One stack frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Frame {
    /// Valid until the program runs again.
    pub id: i64,
    pub function: String,
    /// Qualified path of the source, when the frame has one.
    pub path: Option<String>,
    pub line: u32,
}

/// Numbered source lines around a frame's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Excerpt {
    pub path: String,
    pub line: u32,
    pub start_line: u32,
    pub lines: Vec<String>,
}

/// A variable or an expression's value, with its children up to the requested depth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Value {
    pub name: String,
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    pub value: String,
    /// Expanded children (within depth and limit).
    pub children: Vec<Value>,
    /// True when it has children that are not shown.
    pub more: bool,
}

/// A breakpoint as the adapter bound it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Breakpoint {
    /// As given: `path:line` (qualified) or a function name.
    pub spec: String,
    pub bound: bool,
    pub path: Option<String>,
    pub line: Option<u32>,
    pub message: Option<String>,
}

/// The result of `debug_launch` and `debug_continue`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Stop {
    pub session_id: u64,
    pub state: RunState,
    /// DAP's reason (`breakpoint`, `step`, `exception`, `signal`, `entry`, `pause`), `exited` or
    /// `running`.
    pub reason: String,
    /// Plain English: why it stopped or how it ended.
    pub summary: String,
    /// The signal's name when a signal stopped it (`SIGSEGV`).
    pub signal: Option<String>,
    pub exit_code: Option<i64>,
    pub thread_id: Option<i64>,
    /// The top frames of the stopped thread.
    pub frames: Vec<Frame>,
    /// The top frame with a source inside the project or storage.
    pub source: Option<Excerpt>,
    /// The locals of that frame.
    pub locals: Vec<Value>,
    /// Program output since the previous result (its end, within a budget).
    pub output: String,
    /// Breakpoints as bound (launch only; empty otherwise).
    pub breakpoints: Vec<Breakpoint>,
    /// True when the session ended with this result.
    pub ended: bool,
    /// When a crash signal (SIGSEGV, SIGABRT, …) stopped the program: its whole stack, the crashing
    /// line, the locals of the innermost project frame, a failed assertion's text.
    pub crash: Option<super::postmortem::Crash>,
}

/// One thread of the debuggee.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Thread {
    pub id: i64,
    pub name: String,
}

/// One scope of a frame and its variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Scope {
    pub name: String,
    pub variables: Vec<Value>,
    /// Not expanded (registers, expensive scopes).
    pub skipped: bool,
}

/// A live debug session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SessionInfo {
    pub session_id: u64,
    pub executable: String,
    pub adapter: String,
    pub state: RunState,
    /// The adapter's process in `processes_overview`.
    pub process_id: u64,
    /// The debuggee's own entry there (its output), once known.
    pub debuggee_process_id: Option<u64>,
    /// The debuggee's OS process id, once known.
    pub pid: Option<u32>,
    /// Seconds until the session's timeout ends it.
    pub remaining_seconds: u64,
}

/// The result of `debug_inspect`: the part that was asked for is filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Inspection {
    /// Live sessions (when no session was named).
    pub sessions: Vec<SessionInfo>,
    pub threads: Vec<Thread>,
    pub frames: Vec<Frame>,
    pub source: Option<Excerpt>,
    pub scopes: Vec<Scope>,
    /// The expression's value.
    pub value: Option<Value>,
}

/// The result of `debug_breakpoints`: every breakpoint of the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Breakpoints {
    pub session_id: u64,
    pub breakpoints: Vec<Breakpoint>,
}

/// The result of `debug_stop`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Stopped {
    pub session_id: u64,
    pub executable: String,
    pub exit_code: Option<i64>,
}
