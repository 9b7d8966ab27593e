//! Shared test support: temporary workspaces, an in-process server over a duplex pipe, the real
//! binary over stdio, and a configurable MCP test client.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use forgemcp::cmake::CmakeOptions;
use forgemcp::process::ProcessService;
use forgemcp::server::{ForgeServer, Services};
use forgemcp::toolchain::DiscoveryEnv;
use forgemcp::toolchain::DiscoveryOptions;
use forgemcp::workspace::WorkspaceService;
use forgemcp::workspace::path::Roots;
use parking_lot::Mutex;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A temporary directory holding `proj/` (the project) and, once used, `.proj.forgemcp/` (storage).
pub struct TempWorkspace {
    _dir: tempfile::TempDir,
    pub base: PathBuf,
    pub project: PathBuf,
    pub storage: PathBuf,
}

impl TempWorkspace {
    /// Creates the project from a fixture (see [`TempWorkspace::write_fixture`]).
    pub fn new(fixture: &str) -> TempWorkspace {
        let dir = tempfile::tempdir().expect("temporary directory");
        let base = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let project = base.join("proj");
        std::fs::create_dir(&project).expect("project dir");
        let ws = TempWorkspace { storage: base.join(".proj.forgemcp"), _dir: dir, base, project };
        ws.write_fixture(fixture);
        ws
    }

    /// Writes the files of a fixture (`//- path` lines start files; four-space indents are removed).
    pub fn write_fixture(&self, fixture: &str) {
        let mut current: Option<(String, String)> = None;
        for line in fixture.lines() {
            if let Some(path) = line.trim_start().strip_prefix("//- ") {
                if let Some((p, text)) = current.take() {
                    self.write(&p, &text);
                }
                current = Some((path.trim().to_owned(), String::new()));
            } else if let Some((_, text)) = current.as_mut() {
                text.push_str(line.strip_prefix("    ").unwrap_or(line));
                text.push('\n');
            }
        }
        if let Some((p, text)) = current.take() {
            self.write(&p, &text);
        }
    }

    /// Writes a project-relative file, creating parents.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.project.join(rel);
        std::fs::create_dir_all(path.parent().expect("file has a parent")).expect("parent dirs");
        std::fs::write(path, contents).expect("write fixture file");
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }

    pub fn roots(&self) -> Roots {
        Roots::new(self.project.clone(), self.storage.clone())
    }

    /// Every service for this workspace, around the given workspace service.
    pub fn services_with(&self, workspace: Arc<WorkspaceService>) -> Services {
        self.assemble(workspace, ProcessService::new(self.roots()), self.discovery())
    }

    /// Toolset discovery for this workspace with nothing on `PATH` and no user toolsets (tests that
    /// need toolsets fill in `env.path` and `user_toolsets`).
    pub fn discovery(&self) -> DiscoveryOptions {
        DiscoveryOptions {
            cwd: self.project.clone(),
            env: DiscoveryEnv::default(),
            user_toolsets: Vec::new(),
            probe_timeout: forgemcp::toolchain::version::PROBE_TIMEOUT,
        }
    }

    /// Every service for this workspace, sharing `processes` with the test, with toolset discovery
    /// as `discovery` says.
    pub fn services_with_discovery(&self, processes: ProcessService, discovery: DiscoveryOptions) -> Services {
        self.assemble(Arc::new(WorkspaceService::new(self.roots())), processes, discovery)
    }

    fn assemble(
        &self,
        workspace: Arc<WorkspaceService>,
        processes: ProcessService,
        discovery: DiscoveryOptions,
    ) -> Services {
        forgemcp::app::assemble(workspace, processes, discovery, CmakeOptions::default())
    }

    pub fn server(&self, progress_interval: Duration) -> ForgeServer {
        let workspace = Arc::new(WorkspaceService::new(self.roots()));
        ForgeServer::new(self.services_with(workspace), progress_interval)
    }

    /// An rmcp client connected in-process to a fresh server on this workspace.
    pub async fn connect(&self, client: TestClient) -> RunningService<RoleClient, TestClient> {
        connect(self.server(Duration::ZERO), client).await
    }
}

/// Connects `client` to `server` over an in-memory duplex pipe.
pub async fn connect(server: ForgeServer, client: TestClient) -> RunningService<RoleClient, TestClient> {
    let (server_io, client_io) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(forgemcp::server::duplex::transport(server_io)).await {
            let _ = running.waiting().await;
        }
    });
    client.serve(client_io).await.expect("client connects")
}

/// How the test client answers elicitation requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// No elicitation capability is advertised.
    NoCapability,
    Accept,
    AcceptButRefuse,
    Decline,
    Cancel,
}

/// An MCP client that records progress and elicitation messages.
#[derive(Clone)]
pub struct TestClient {
    pub answer: Answer,
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub questions: Arc<Mutex<Vec<String>>>,
}

impl TestClient {
    pub fn new() -> TestClient {
        TestClient::answering(Answer::NoCapability)
    }

    pub fn answering(answer: Answer) -> TestClient {
        TestClient { answer, progress: Arc::default(), questions: Arc::default() }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match self.answer {
            Answer::NoCapability => ClientCapabilities::default(),
            _ => ClientCapabilities::builder().enable_elicitation().build(),
        };
        ClientConfig::new(capabilities, Implementation::new("forgemcp-tests", "0.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.questions.lock().push(message.clone());
        }
        Ok(match self.answer {
            Answer::Accept => ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "allow": true })),
            Answer::AcceptButRefuse => {
                ElicitResult::new(ElicitationAction::Accept).with_content(json!({ "allow": false }))
            }
            Answer::Decline | Answer::NoCapability => ElicitResult::new(ElicitationAction::Decline),
            Answer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.lock().push(params);
    }
}

/// Calls a tool and returns its result (panics on protocol errors).
pub async fn call(client: &RunningService<RoleClient, TestClient>, tool: &str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_owned())
        .with_arguments(args.as_object().cloned().expect("arguments are a JSON object"));
    client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

/// The single text item of a result.
/// The text item of a result: the first content item; any others are resource links.
pub fn text(result: &CallToolResult) -> &str {
    let links = &result.content[1.min(result.content.len())..];
    assert!(links.iter().all(|item| item.as_resource_link().is_some()), "one text item, then links: {result:?}");
    result.content.first().and_then(|item| item.as_text()).map(|t| t.text.as_str()).expect("a text item")
}

/// The structured content of a successful result.
pub fn structured(result: &CallToolResult) -> &Value {
    assert_ne!(result.is_error, Some(true), "unexpected tool error: {}", text(result));
    result.structured_content.as_ref().unwrap_or_else(|| panic!("structured content: {result:?}"))
}

/// Asserts the result is a tool error and returns its text.
pub fn tool_error(result: &CallToolResult) -> &str {
    assert_eq!(result.is_error, Some(true), "expected a tool error, got {result:?}");
    text(result)
}

/// Path of the built server binary.
pub fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_forgemcp"))
}

/// Reads a resource; protocol errors come back as their JSON-RPC error.
pub async fn read_resource(
    client: &RunningService<RoleClient, TestClient>,
    uri: &str,
) -> Result<Vec<rmcp::model::ResourceContents>, ErrorData> {
    match client.read_resource(rmcp::model::ReadResourceRequestParams::new(uri)).await {
        Ok(result) => Ok(result.contents),
        Err(rmcp::ServiceError::McpError(data)) => Err(data),
        Err(other) => panic!("reading {uri} failed outside JSON-RPC: {other}"),
    }
}

/// Reads a resource that must be one text item with `mime_type`, and returns the text.
pub async fn resource_text(client: &RunningService<RoleClient, TestClient>, uri: &str, mime_type: &str) -> String {
    let contents = read_resource(client, uri).await.unwrap_or_else(|e| panic!("reading {uri}: {e:?}"));
    assert_eq!(contents.len(), 1, "one content item for {uri}");
    match &contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { uri: got, mime_type: mime, text, .. } => {
            assert_eq!(got, uri);
            assert_eq!(mime.as_deref(), Some(mime_type), "{uri}");
            text.clone()
        }
        other => panic!("expected text contents for {uri}, got {other:?}"),
    }
}

/// Reads a resource that must fail and returns `(code, message)`.
pub async fn resource_error(client: &RunningService<RoleClient, TestClient>, uri: &str) -> (i32, String) {
    match read_resource(client, uri).await {
        Ok(contents) => panic!("expected {uri} to fail, got {contents:?}"),
        Err(data) => (data.code.0, data.message.to_string()),
    }
}

/// Completes `argument` of the resource template `template`, with other arguments in `context`.
pub async fn complete(
    client: &RunningService<RoleClient, TestClient>,
    template: &str,
    argument: &str,
    value: &str,
    context: &[(&str, &str)],
) -> Vec<String> {
    let context = (!context.is_empty()).then(|| {
        rmcp::model::CompletionContext::with_arguments(
            context.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        )
    });
    client
        .complete_resource_argument(template, argument, value, context)
        .await
        .unwrap_or_else(|e| panic!("completing {argument} of {template}: {e}"))
        .values
}

/// The progress notifications a client has received so far, as `(progress, total, message)`.
pub fn progress_log(client: &TestClient) -> Vec<(f64, Option<f64>, Option<String>)> {
    client.progress.lock().iter().map(|p| (p.progress, p.total, p.message.clone())).collect()
}

/// Whether tests that need real tools (cmake, ninja, compilers, clangd) run: always when `CI` is set,
/// locally with `FORGEMCP_HEAVY_TESTS=1`. Prints one line when they are skipped. Under `CI` a
/// missing tool must fail the test, never skip it.
#[expect(clippy::print_stderr, reason = "a skipped heavy test says so in the test output")]
pub fn heavy_tests(test: &str) -> bool {
    let heavy = heavy_enabled();
    if !heavy {
        eprintln!("skipping {test}: needs real tools (runs under CI or with FORGEMCP_HEAVY_TESTS=1)");
    }
    heavy
}

/// Whether `CI` is set or `FORGEMCP_HEAVY_TESTS=1` (races then run at their full size).
pub fn heavy_enabled() -> bool {
    let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false" && v != "0");
    let local = std::env::var_os("FORGEMCP_HEAVY_TESTS").is_some_and(|v| v == "1");
    ci || local
}

/// Whether the real-tool tests run (see [`heavy_tests`]); when they do, every one of `tools` must be
/// on `PATH`, or the test fails naming the missing tool.
pub fn real_tools(test: &str, tools: &[&str]) -> bool {
    if !heavy_tests(test) {
        return false;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for tool in tools {
        let found = std::env::split_paths(&path).any(|dir| dir.join(tool).is_file());
        assert!(found, "{test} needs `{tool}` on PATH (install cmake, ninja-build, g++ and clangd)");
    }
    true
}

/// A fresh temporary copy of `examples/cpp-acceptance-project` as the project.
pub fn acceptance_project() -> TempWorkspace {
    let ws = TempWorkspace::new("");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cpp-acceptance-project");
    copy_tree(&source, &ws.project);
    ws
}

/// Copies a directory tree, leaving out build outputs a developer may have made in the checked-in
/// fixture (`build/`, `.cache/`).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create directory");
    for entry in std::fs::read_dir(from).expect("read fixture directory") {
        let entry = entry.expect("directory entry");
        let name = entry.file_name();
        if from.ends_with("cpp-acceptance-project") && (name == "build" || name == ".cache") {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture file");
        }
    }
}

/// The services the real server builds for `ws` with `extra` command-line options, discovering
/// toolsets on the real `PATH`.
pub fn real_services(ws: &TempWorkspace, extra: &[&str]) -> Services {
    let mut argv: Vec<String> = vec!["forgemcp".into(), "--workspace".into(), ws.project.display().to_string()];
    argv.extend(["--workspace-storage".into(), ws.storage.display().to_string()]);
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    let args = forgemcp::cli::Args::try_parse_from(argv).expect("valid command line");
    let config = forgemcp::config::build(args, &ws.base).expect("valid configuration");
    let serve = config.serve().expect("serve mode");
    let mut discovery = serve.discovery().clone();
    discovery.env.path = std::env::var_os("PATH");
    let workspace = Arc::new(WorkspaceService::new(serve.roots()));
    let processes = ProcessService::new(serve.roots());
    forgemcp::app::assemble(workspace, processes, discovery, serve.cmake().clone())
}
