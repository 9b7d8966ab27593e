//! Process tools and resources: `processes_overview`, `process_get`, `forgemcp://processes` and
//! `forgemcp://processes/{process_id}` with id completion. The result types here and the argument
//! types in `process_args` are the wire shapes of INTERFACE.md §4.
//!
//! Architecture invariant: the MCP surface of the process service is read-only; nothing here starts
//! a program.
//! Architecture invariant: no reply exceeds the stdio line limit; a selection too large for one
//! message is a tool error that names the narrower request to make.

use std::collections::HashMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rmcp::model::ResourceContents;
use schemars::JsonSchema;
use serde::Serialize;

use crate::call::Call;
use crate::process::{
    self, Details, LogEntry, ProcessId, ProcessInfo, ProcessService, Status, StatusFilter, Stream, Timeout,
};
use crate::render;
use crate::server::process_args::{ProcessGetArgs, ProcessesOverviewArgs};
use crate::server::process_match;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec, error_chain};
use crate::server::resources::{Completer, ReadError, ResourceSpec, Resources};
use crate::server::uri_template::Variables;
use crate::server::workspace_tools::blocking_read;
use crate::widgets::{Icon, Widget};

/// Largest reply (text plus structured JSON) a process tool or resource produces; the stdio layer
/// refuses lines over 8 MiB.
const MAX_REPLY_BYTES: usize = 7 * 1024 * 1024;

pub fn register(registry: &mut Registry, resources: &mut Resources, processes: &ProcessService) {
    register_overview(registry, processes);
    register_get(registry, processes);
    register_resources(resources, processes);
}

// ---------------------------------------------------------------------------------------------
// Wire types.

/// `ProcessTimeout`: seconds, `null` when the limit is off.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessTimeout {
    pub total: Option<f64>,
    pub idle: Option<f64>,
}

impl From<Timeout> for ProcessTimeout {
    fn from(timeout: Timeout) -> ProcessTimeout {
        ProcessTimeout { total: timeout.total.map(|d| d.as_secs_f64()), idle: timeout.idle.map(|d| d.as_secs_f64()) }
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessSummary {
    pub process_id: u64,
    /// The executable as launched.
    pub executable: String,
    /// Literal arguments after the executable.
    pub arguments: Vec<String>,
    /// Absolute native working directory.
    pub cwd: String,
    pub encoding: String,
    pub timeout: ProcessTimeout,
}

/// A state that is not an exit code.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ProcessState {
    Running,
    Interrupted,
    Stopped,
    StreamFailure,
}

/// The exit code once finished normally, otherwise a state.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum CurrentStatus {
    ExitCode(i32),
    State(ProcessState),
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessStatus {
    pub pid: u32,
    /// RFC 3339 UTC start time.
    pub started: String,
    /// Seconds elapsed (running) or total (finished).
    pub work_time: f64,
    pub current_status: CurrentStatus,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessInfoResult {
    pub summary: ProcessSummary,
    pub status: ProcessStatus,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessesOverviewResult {
    /// Running processes, regardless of the filter.
    pub running: usize,
    /// Completed processes, regardless of the filter.
    pub completed: usize,
    /// Completed processes that did not exit with code 0, regardless of the filter.
    pub failed: usize,
    pub processes: Vec<ProcessInfoResult>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StreamName {
    Stdin,
    Stdout,
    Stderr,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessLogEntry {
    /// RFC 3339 UTC time the chunk was recorded.
    pub timestamp: String,
    pub stream: StreamName,
    /// Decoded text as recorded (a fragment after selection).
    pub text: String,
    /// First absolute line touched (one-based).
    pub start_line: u64,
    /// Last absolute line touched.
    pub end_line: u64,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct ProcessGetResult {
    pub process: ProcessInfoResult,
    pub transcript: Vec<ProcessLogEntry>,
    /// Inclusive `[first, last]` span of the returned fragments; null when nothing is returned.
    pub lines: Option<[u64; 2]>,
}

fn datetime(at: &DateTime<Utc>) -> String {
    render::workspace::iso_timestamp(at)
}

impl From<&ProcessInfo> for ProcessInfoResult {
    fn from(info: &ProcessInfo) -> ProcessInfoResult {
        let summary = &info.summary;
        let current_status = match info.status {
            Status::Exited(code) => CurrentStatus::ExitCode(code),
            Status::Running => CurrentStatus::State(ProcessState::Running),
            Status::Interrupted => CurrentStatus::State(ProcessState::Interrupted),
            Status::Stopped => CurrentStatus::State(ProcessState::Stopped),
            Status::StreamFailure => CurrentStatus::State(ProcessState::StreamFailure),
        };
        ProcessInfoResult {
            summary: ProcessSummary {
                process_id: info.id.0,
                executable: summary.executable.clone(),
                arguments: summary.arguments.clone(),
                cwd: summary.cwd.clone(),
                encoding: summary.encoding.clone(),
                timeout: summary.timeout.into(),
            },
            status: ProcessStatus {
                pid: info.pid,
                started: datetime(&info.started),
                work_time: info.work_time.as_secs_f64(),
                current_status,
            },
        }
    }
}

impl From<&LogEntry> for ProcessLogEntry {
    fn from(entry: &LogEntry) -> ProcessLogEntry {
        ProcessLogEntry {
            timestamp: datetime(&entry.timestamp),
            stream: match entry.stream {
                Stream::Stdin => StreamName::Stdin,
                Stream::Stdout => StreamName::Stdout,
                Stream::Stderr => StreamName::Stderr,
            },
            text: entry.text.clone(),
            start_line: entry.start_line,
            end_line: entry.end_line,
        }
    }
}

impl From<&Details> for ProcessGetResult {
    fn from(details: &Details) -> ProcessGetResult {
        ProcessGetResult {
            process: (&details.process).into(),
            transcript: details.transcript.iter().map(Into::into).collect(),
            lines: details.lines.map(|(a, b)| [a, b]),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tools.

fn register_overview(registry: &mut Registry, processes: &ProcessService) {
    let service = processes.clone();
    registry.add(
        ToolSpec {
            name: "processes_overview",
            title: "Processes overview",
            description: "External programs ForgeMCP ran or is running: by default the running and failed ones \
                          (the rest counted; status filters); logs via process_get.",
            annotations: Annotations::Inspect,
            widget: Widget::ProcessOverview,
            icon: Icon::Process,
        },
        move |args: ProcessesOverviewArgs, call: Call| {
            let service = service.clone();
            async move {
                let filter = StatusFilter::from(args.status);
                let overview = service.overview(filter);
                let n = overview.processes.len();
                // Record i is reported at i - 1 so that the final update (N of N) stays strictly larger.
                for idx in 1..=n {
                    call.progress
                        .report_with((idx - 1) as f64, Some(n as f64), || format!("Reading process state: {idx}"));
                }
                call.progress.report(n as f64, Some(n as f64), "Process state ready");
                let text = render::process::overview_text(&overview, filter, &service.shortener());
                let value = ProcessesOverviewResult {
                    running: overview.running,
                    completed: overview.completed,
                    failed: overview.failed,
                    processes: overview.processes.iter().map(Into::into).collect(),
                };
                Ok(ToolOutput::new(text, value))
            }
        },
    );
}

fn register_get(registry: &mut Registry, processes: &ProcessService) {
    let service = processes.clone();
    registry.add(
        ToolSpec {
            name: "process_get",
            title: "Process log",
            description: "One process ForgeMCP launched and part of its stdin/stdout/stderr transcript (default: last \
                          100 lines; with match: every line). Applies time, then lines, then match, then max_bytes.",
            annotations: Annotations::Inspect,
            widget: Widget::ProcessDetails,
            icon: Icon::Process,
        },
        move |args: ProcessGetArgs, call: Call| {
            let service = service.clone();
            async move {
                call.progress.report(0.0, Some(1.0), "Reading process transcript");
                let selection = args.selection();
                if let Err(err) = selection.validate() {
                    return Err(ToolError::User(format!("Invalid selector: {}", error_chain(&err))));
                }
                let regex = match args.pattern.as_deref() {
                    Some(pattern) => Some(regex::Regex::new(pattern).map_err(|err| {
                        ToolError::User(format!("Invalid argument `match`: {}", err.to_string().replace('\n', " ")))
                    })?),
                    None => None,
                };
                let id = ProcessId(args.process_id);
                let tail = args.keeps_tail();
                let reader = service.clone();
                let (details, outcome) = tokio::task::spawn_blocking(move || {
                    process_match::read(&reader, id, selection, regex.as_ref(), tail)
                })
                .await
                .map_err(|join| ToolError::User(format!("Reading the transcript failed: {join}.")))?
                .map_err(|err: crate::process::Error| ToolError::user(&err))?;
                let cut = outcome.omitted.map(|bytes| render::process::Cut { bytes, at_start: tail });
                let cwd = service.shortener().shorten(&details.process.summary.cwd);
                let text = render::process::details_text(&details, &cwd, cut, outcome.search);
                let value = ProcessGetResult::from(&details);
                check_reply_size(&text, &value)?;
                call.progress.report(1.0, Some(1.0), "Process transcript ready");
                Ok(ToolOutput::new(text, value))
            }
        },
    );
}

/// Refuses replies that would not fit in one stdio message.
fn check_reply_size(text: &str, value: &ProcessGetResult) -> Result<(), ToolError> {
    let encoded = serde_json::to_string(text).map_or(usize::MAX, |t| t.len())
        + serde_json::to_string(value).map_or(usize::MAX, |v| v.len());
    if encoded <= MAX_REPLY_BYTES {
        return Ok(());
    }
    Err(ToolError::User(format!(
        "The selected transcript needs {encoded} bytes, more than one reply can carry ({MAX_REPLY_BYTES}); \
         lower max_bytes (for example to 1000000) or narrow the lines or time selector."
    )))
}

// ---------------------------------------------------------------------------------------------
// Resources.

fn register_resources(resources: &mut Resources, processes: &ProcessService) {
    let service = processes.clone();
    resources.add_static(
        ResourceSpec {
            uri: "forgemcp://processes",
            name: "processes",
            title: "Processes",
            description: "Every process ForgeMCP launched in this server lifetime, as a Markdown table.",
            mime_type: "text/markdown",
            icon: Icon::Process,
        },
        move |uri: String, _call: Call| {
            let service = service.clone();
            async move {
                let markdown = render::process::overview_markdown(&service.overview(StatusFilter::All));
                Ok(vec![ResourceContents::text(markdown, uri).with_mime_type("text/markdown")])
            }
        },
    );
    let service = processes.clone();
    let for_completion = processes.clone();
    let completer: Completer = Arc::new(move |argument: &str, _value: &str, _context: &HashMap<String, String>| {
        if argument != "process_id" {
            return Vec::new();
        }
        for_completion.ids().into_iter().map(|id| id.to_string()).collect()
    });
    resources.add_template(
        ResourceSpec {
            uri: "forgemcp://processes/{process_id}",
            name: "process",
            title: "Process",
            description: "One process with its state and complete transcript, as Markdown.",
            mime_type: "text/markdown",
            icon: Icon::Process,
        },
        move |uri: String, vars: Variables, _call: Call| {
            let service = service.clone();
            async move {
                let raw = vars.get("process_id").unwrap_or_default().to_owned();
                let id = parse_process_id(&raw)?;
                let markdown = blocking_read(move || process_markdown(&service, id)).await?;
                Ok(vec![ResourceContents::text(markdown, uri).with_mime_type("text/markdown")])
            }
        },
        Some(completer),
    );
}

fn parse_process_id(raw: &str) -> Result<ProcessId, ReadError> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ReadError::InvalidParams(format!(
            "invalid parameter `process_id`: `{raw}` is not a positive integer"
        )));
    }
    // A number too large to be an id names no retained process.
    Ok(ProcessId(raw.parse().unwrap_or(u64::MAX)))
}

fn process_markdown(service: &ProcessService, id: ProcessId) -> Result<String, ReadError> {
    let not_found = |err: process::Error| match err {
        process::Error::NotRetained(_) => ReadError::NotFound(err.to_string()),
        other => ReadError::InvalidParams(error_chain(&other)),
    };
    // The resource holds the complete transcript; refuse one that cannot fit in a reply.
    let bytes = service.transcript_bytes(id).map_err(not_found)?;
    if bytes > (MAX_REPLY_BYTES / 2) as u64 {
        return Err(ReadError::InvalidParams(format!(
            "the transcript of process {id} has {bytes} bytes, too many for one reply; read it in parts with process_get"
        )));
    }
    let (info, transcript) = service.full(id).map_err(not_found)?;
    Ok(render::process::process_markdown(&info, &transcript))
}

#[cfg(all(test, unix))]
mod tests {
    use std::time::Duration;

    use serde_json::{Value, json};

    use super::*;
    use crate::process::CommandSpec;
    use crate::server::registry::Outcome;
    use crate::workspace::path::Roots;

    struct Fixture {
        _dir: tempfile::TempDir,
        service: ProcessService,
        registry: Registry,
        resources: Resources,
        project: std::path::PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let project = base.join("proj");
        std::fs::create_dir(&project).unwrap();
        let service = ProcessService::new(Roots::new(project.clone(), base.join(".proj.forgemcp")));
        let mut registry = Registry::default();
        let mut resources = Resources::default();
        register(&mut registry, &mut resources, &service);
        Fixture { _dir: dir, service, registry, resources, project }
    }

    impl Fixture {
        async fn sh(&self, script: &str) -> ProcessId {
            let spec = CommandSpec::new("/bin/sh", &self.project).args(["-c", script]);
            self.service.run(spec, &Call::detached()).await.unwrap().id
        }

        async fn call(&self, tool: &str, args: Value) -> Outcome {
            let args = std::sync::Arc::new(args.as_object().cloned().unwrap());
            self.registry.invoke(tool, args, Call::detached()).unwrap().await
        }
    }

    fn success(outcome: Outcome) -> (String, Value) {
        match outcome {
            Outcome::Success { text, structured, .. } => (text, structured),
            Outcome::Failure(message) => panic!("tool failed: {message}"),
            _ => panic!("unexpected outcome"),
        }
    }

    fn failure(outcome: Outcome) -> String {
        match outcome {
            Outcome::Failure(message) => message,
            _ => panic!("expected a tool error"),
        }
    }

    #[tokio::test]
    async fn process_get_returns_the_selected_fragments() {
        let fx = fixture();
        let id = fx.sh("printf 'a\\nb\\n'; sleep 0.1; printf 'c\\n' >&2; exit 3").await;
        let (text, value) =
            success(fx.call("process_get", json!({"process_id": id.0, "lines": {"last": 1}, "max_bytes": 100})).await);
        assert_eq!(value["process"]["status"]["current_status"], json!(3));
        assert_eq!(value["process"]["summary"]["arguments"][0], json!("-c"));
        assert_eq!(value["lines"], json!([3, 3]));
        assert_eq!(value["transcript"][0]["stream"], json!("stderr"));
        assert_eq!(value["transcript"][0]["text"], json!("c\n"));
        assert!(text.contains("Outcome: Exited with code 3"), "{text}");
        assert!(text.contains("Returned transcript line 3:"), "{text}");
    }

    #[tokio::test]
    async fn process_get_with_zero_bytes_returns_metadata_only() {
        let fx = fixture();
        let id = fx.sh("echo hi").await;
        let (_, value) = success(fx.call("process_get", json!({"process_id": id.0, "max_bytes": 0})).await);
        assert_eq!(value["transcript"], json!([]));
        assert_eq!(value["lines"], Value::Null);
        assert_eq!(value["process"]["status"]["current_status"], json!(0));
    }

    #[tokio::test]
    async fn selectors_must_take_exactly_one_form() {
        let fx = fixture();
        let id = fx.sh("true").await;
        let mixed =
            failure(fx.call("process_get", json!({"process_id": id.0, "lines": {"first": 1, "last": 2}})).await);
        assert!(mixed.contains("expected exactly one line selector form"), "{mixed}");
        let zero = failure(fx.call("process_get", json!({"process_id": id.0, "lines": {"first": 0}})).await);
        assert!(zero.contains("at least 1"), "{zero}");
        let backwards =
            failure(fx.call("process_get", json!({"process_id": id.0, "time": {"start": 2.0, "end": 1.0}})).await);
        assert!(backwards.contains("start < end"), "{backwards}");
    }

    #[tokio::test]
    async fn unknown_process_is_a_tool_error() {
        let fx = fixture();
        let message = failure(fx.call("process_get", json!({"process_id": 9})).await);
        assert_eq!(message, "Process 9 is not retained.");
    }

    #[tokio::test]
    async fn overview_counts_globally_and_filters_the_list() {
        let fx = fixture();
        fx.sh("true").await;
        let (text, value) = success(fx.call("processes_overview", json!({"status": "running"})).await);
        assert_eq!(value["running"], json!(0));
        assert_eq!(value["completed"], json!(1));
        assert_eq!(value["processes"], json!([]));
        assert!(text.starts_with("0 running, 0 failed, 1 succeeded. Showing 0 processes (status: running)."), "{text}");
        let (_, value) = success(fx.call("processes_overview", json!({"status": "all"})).await);
        assert_eq!(value["processes"][0]["summary"]["process_id"], json!(1));
        assert_eq!(value["processes"][0]["summary"]["timeout"], json!({"total": null, "idle": null}));
    }

    #[tokio::test]
    async fn resources_show_the_list_and_the_complete_transcript() {
        let fx = fixture();
        let id = fx.sh("printf 'x ``` y\\n'").await;
        let list = fx.resources.read("forgemcp://processes", Call::detached()).await.unwrap();
        let text = serde_json::to_value(&list[0]).unwrap()["text"].as_str().unwrap().to_owned();
        assert!(text.contains("| [1](forgemcp://processes/1) | /bin/sh |"), "{text}");
        let detail = fx.resources.read(&format!("forgemcp://processes/{id}"), Call::detached()).await.unwrap();
        let text = serde_json::to_value(&detail[0]).unwrap()["text"].as_str().unwrap().to_owned();
        assert!(text.starts_with("# Process 1: /bin/sh\n"), "{text}");
        assert!(text.contains("````\nx ``` y\n````"), "{text}");
        assert!(matches!(
            fx.resources.read("forgemcp://processes/7", Call::detached()).await,
            Err(ReadError::NotFound(_))
        ));
        assert!(matches!(
            fx.resources.read("forgemcp://processes/x", Call::detached()).await,
            Err(ReadError::InvalidParams(_))
        ));
        let _ = Duration::ZERO;
    }

    #[test]
    fn selector_schemas_are_any_of_named_closed_variants() {
        let fx = fixture();
        let tool = fx.registry.get("process_get").unwrap();
        let schema = serde_json::to_value(tool.input_schema.as_ref()).unwrap();
        let refs = |property: &str| -> Vec<String> {
            schema["properties"][property]["anyOf"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.get("$ref").and_then(Value::as_str).unwrap_or("null").to_owned())
                .collect()
        };
        assert_eq!(refs("lines"), ["#/$defs/FirstLines", "#/$defs/LastLines", "#/$defs/LineRange", "null"]);
        assert_eq!(refs("time"), ["#/$defs/FirstSeconds", "#/$defs/LastSeconds", "#/$defs/TimeRange", "null"]);
        let range = &schema["$defs"]["LineRange"];
        assert_eq!(range["additionalProperties"], json!(false));
        assert_eq!(range["required"], json!(["start", "end"]));
        assert_eq!(schema["properties"]["max_bytes"]["default"], json!(65536));
    }
}
