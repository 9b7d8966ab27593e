//! The Debug Adapter Protocol messages ForgeMCP sends and reads, typed after the DAP specification
//! (only the members used here; unknown members are ignored, absent optional ones default).
//!
//! Architecture invariant: pure data and (de)serialization; nothing here does I/O.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One request: its command, argument type and response body type.
pub trait Request {
    const COMMAND: &'static str;
    type Arguments: Serialize;
    type Body: DeserializeOwned;
}

/// A message as it arrives from the adapter.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Incoming {
    Request {
        seq: i64,
        command: String,
    },
    Response {
        request_seq: i64,
        success: bool,
        command: String,
        #[serde(default)]
        message: Option<String>,
        #[serde(default)]
        body: Value,
    },
    Event {
        event: String,
        #[serde(default)]
        body: Value,
    },
}

/// A request as it is sent.
#[derive(Debug, Serialize)]
pub struct Outgoing<'a, A> {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: &'a str,
    pub arguments: &'a A,
}

/// The answer to a reverse request.
#[derive(Debug, Serialize)]
pub struct ReverseResponse<'a> {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub request_seq: i64,
    pub success: bool,
    pub command: &'a str,
    pub message: &'a str,
}

/// Response bodies that carry nothing we read.
#[derive(Debug, Default, Deserialize)]
pub struct Empty {}

macro_rules! request {
    ($name:ident, $command:literal, $arguments:ty, $body:ty) => {
        #[derive(Debug)]
        pub enum $name {}
        impl Request for $name {
            const COMMAND: &'static str = $command;
            type Arguments = $arguments;
            type Body = $body;
        }
    };
}

request!(Initialize, "initialize", InitializeArguments, Capabilities);
request!(Launch, "launch", LaunchArguments, Value);
request!(Attach, "attach", AttachArguments, Value);
request!(Modules, "modules", Map<String, Value>, ModulesBody);
request!(ConfigurationDone, "configurationDone", Map<String, Value>, Value);
request!(SetBreakpoints, "setBreakpoints", SetBreakpointsArguments, BreakpointsBody);
request!(SetFunctionBreakpoints, "setFunctionBreakpoints", SetFunctionBreakpointsArguments, BreakpointsBody);
request!(Threads, "threads", Map<String, Value>, ThreadsBody);
request!(StackTrace, "stackTrace", StackTraceArguments, StackTraceBody);
request!(Scopes, "scopes", ScopesArguments, ScopesBody);
request!(Variables, "variables", VariablesArguments, VariablesBody);
request!(Evaluate, "evaluate", EvaluateArguments, EvaluateBody);
request!(Continue, "continue", ThreadArguments, Value);
request!(Next, "next", ThreadArguments, Value);
request!(StepIn, "stepIn", ThreadArguments, Value);
request!(StepOut, "stepOut", ThreadArguments, Value);
request!(Pause, "pause", ThreadArguments, Value);
request!(Disconnect, "disconnect", DisconnectArguments, Value);

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeArguments {
    #[serde(rename = "clientID")]
    pub client_id: &'static str,
    pub client_name: &'static str,
    #[serde(rename = "adapterID")]
    pub adapter_id: &'static str,
    pub lines_start_at1: bool,
    pub columns_start_at1: bool,
    pub path_format: &'static str,
    pub supports_variable_type: bool,
    pub supports_run_in_terminal_request: bool,
    pub supports_start_debugging_request: bool,
    /// lldb-dap's own member: do not read `~/.lldbinit` or a `.lldbinit` of the working directory.
    pub source_init_file: bool,
}

impl InitializeArguments {
    /// What ForgeMCP's client offers: one-based lines and columns, native paths, variable types,
    /// no reverse requests, no init files.
    pub fn forgemcp(adapter_id: &'static str) -> InitializeArguments {
        InitializeArguments {
            client_id: "forgemcp",
            client_name: "ForgeMCP",
            adapter_id,
            lines_start_at1: true,
            columns_start_at1: true,
            path_format: "path",
            supports_variable_type: true,
            supports_run_in_terminal_request: false,
            supports_start_debugging_request: false,
            source_init_file: false,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    #[serde(default)]
    pub supports_configuration_done_request: bool,
    #[serde(default)]
    pub supports_function_breakpoints: bool,
}

/// `launch`: the program, its literal arguments and working directory; `extra` holds members a given
/// adapter understands (`stopOnEntry`, `stopAtBeginningOfMainSubprogram`).
#[derive(Debug, Serialize)]
pub struct LaunchArguments {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `attach` to a core file (lldb-dap's `coreFile`): the program and its core; nothing runs.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttachArguments {
    pub program: String,
    pub core_file: String,
}

#[derive(Debug, Default, Deserialize)]
pub struct ModulesBody {
    #[serde(default)]
    pub modules: Vec<Module>,
}

/// A loaded module; lldb-dap names its load address in `addressRange` (hexadecimal).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Module {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub address_range: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Source {
    pub path: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceBreakpoint {
    pub line: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SetBreakpointsArguments {
    pub source: Source,
    pub breakpoints: Vec<SourceBreakpoint>,
}

#[derive(Debug, Clone, Serialize)]
pub struct FunctionBreakpoint {
    pub name: String,
}

#[derive(Debug, Serialize)]
pub struct SetFunctionBreakpointsArguments {
    pub breakpoints: Vec<FunctionBreakpoint>,
}

#[derive(Debug, Default, Deserialize)]
pub struct BreakpointsBody {
    #[serde(default)]
    pub breakpoints: Vec<Breakpoint>,
}

/// Where the adapter bound a breakpoint.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Breakpoint {
    #[serde(default)]
    pub id: Option<i64>,
    #[serde(default)]
    pub verified: bool,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub source: Option<SourceRef>,
    #[serde(default)]
    pub line: Option<u32>,
}

/// A source as the adapter reports it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SourceRef {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub path: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
pub struct ThreadsBody {
    #[serde(default)]
    pub threads: Vec<Thread>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Thread {
    pub id: i64,
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceArguments {
    pub thread_id: i64,
    pub start_frame: u32,
    pub levels: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StackTraceBody {
    #[serde(default)]
    pub stack_frames: Vec<StackFrame>,
    #[serde(default)]
    pub total_frames: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StackFrame {
    pub id: i64,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub source: Option<SourceRef>,
    #[serde(default)]
    pub line: u32,
    #[serde(default)]
    pub column: u32,
    /// The frame's program counter (hexadecimal), when the adapter names it.
    #[serde(default, rename = "instructionPointerReference")]
    pub instruction_pointer_reference: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScopesArguments {
    pub frame_id: i64,
}

#[derive(Debug, Default, Deserialize)]
pub struct ScopesBody {
    #[serde(default)]
    pub scopes: Vec<Scope>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scope {
    pub name: String,
    #[serde(default)]
    pub presentation_hint: Option<String>,
    pub variables_reference: i64,
    #[serde(default)]
    pub expensive: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VariablesArguments {
    pub variables_reference: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
pub struct VariablesBody {
    #[serde(default)]
    pub variables: Vec<Variable>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Variable {
    pub name: String,
    #[serde(default)]
    pub value: String,
    #[serde(default, rename = "type")]
    pub type_name: Option<String>,
    #[serde(default)]
    pub variables_reference: i64,
}

/// `evaluate`; `context` is always `watch` or `hover`, never `repl` (which reaches the console).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateArguments {
    pub expression: String,
    pub frame_id: i64,
    pub context: &'static str,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvaluateBody {
    #[serde(default)]
    pub result: String,
    #[serde(default, rename = "type")]
    pub type_name: Option<String>,
    #[serde(default)]
    pub variables_reference: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadArguments {
    pub thread_id: i64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DisconnectArguments {
    pub terminate_debuggee: bool,
}

/// The events a session follows.
#[derive(Debug, Clone)]
pub enum Event {
    Initialized,
    Stopped(StoppedEvent),
    Continued,
    Exited { exit_code: i64 },
    Terminated,
    Output { category: String, output: String },
    Process { pid: Option<u32> },
    Other(String),
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoppedEvent {
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub thread_id: Option<i64>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub hit_breakpoint_ids: Vec<i64>,
}

impl Event {
    /// Reads an event by its name; a body that does not fit is `Other`.
    pub fn parse(event: &str, body: Value) -> Event {
        let field = |name: &str| body.get(name).cloned();
        match event {
            "initialized" => Event::Initialized,
            "stopped" => serde_json::from_value(body).map_or(Event::Other(event.to_owned()), Event::Stopped),
            "continued" => Event::Continued,
            "exited" => match field("exitCode").and_then(|c| c.as_i64()) {
                Some(exit_code) => Event::Exited { exit_code },
                None => Event::Other(event.to_owned()),
            },
            "terminated" => Event::Terminated,
            "output" => {
                let text = |name| field(name).and_then(|v| v.as_str().map(str::to_owned));
                Event::Output {
                    category: text("category").unwrap_or_else(|| "console".to_owned()),
                    output: text("output").unwrap_or_default(),
                }
            }
            "process" => Event::Process {
                pid: field("systemProcessId").and_then(|p| p.as_u64()).and_then(|p| u32::try_from(p).ok()),
            },
            other => Event::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn incoming_messages_are_classified_by_type() {
        let response: Incoming = serde_json::from_value(json!({
            "seq": 0, "type": "response", "request_seq": 3, "success": false, "command": "evaluate",
            "message": "no such variable"
        }))
        .unwrap();
        assert!(matches!(response, Incoming::Response { request_seq: 3, success: false, .. }));
        let event: Incoming =
            serde_json::from_value(json!({"seq": 0, "type": "event", "event": "terminated"})).unwrap();
        assert!(matches!(event, Incoming::Event { ref event, .. } if event == "terminated"));
        let reverse: Incoming = serde_json::from_value(json!({
            "seq": 7, "type": "request", "command": "runInTerminal", "arguments": {"args": ["x"]}
        }))
        .unwrap();
        assert!(matches!(reverse, Incoming::Request { seq: 7, ref command } if command == "runInTerminal"));
    }

    #[test]
    fn events_parse_their_bodies() {
        let stopped = Event::parse(
            "stopped",
            json!({"reason": "exception", "description": "signal SIGSEGV", "threadId": 12, "allThreadsStopped": true}),
        );
        let Event::Stopped(stopped) = stopped else { panic!("not a stop") };
        assert_eq!((stopped.reason.as_str(), stopped.thread_id), ("exception", Some(12)));
        assert!(matches!(Event::parse("exited", json!({"exitCode": 3})), Event::Exited { exit_code: 3 }));
        assert!(matches!(Event::parse("process", json!({"systemProcessId": 42})), Event::Process { pid: Some(42) }));
        assert!(matches!(Event::parse("exited", json!({})), Event::Other(_)));
    }

    #[test]
    fn launch_arguments_flatten_adapter_members() {
        let mut extra = Map::new();
        extra.insert("stopOnEntry".into(), Value::Bool(true));
        let launch = LaunchArguments { program: "/p/a".into(), args: vec![String::new()], cwd: "/p".into(), extra };
        assert_eq!(
            serde_json::to_value(&launch).unwrap(),
            json!({"program": "/p/a", "args": [""], "cwd": "/p", "stopOnEntry": true})
        );
    }
}
