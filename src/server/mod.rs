//! The MCP surface: the only module that uses rmcp handler types.
//!
//! `ForgeServer` answers MCP requests by dispatching to the tool registry and the resource
//! registry that the per-service `*_tools.rs` files fill in.
//!
//! Architecture invariant: the server holds no domain state; everything it shows belongs to a
//! service. Every tool call passes the history observer exactly once at start and once at end.

#![allow(deprecated)] // rmcp marks the logging and legacy subscription APIs deprecated (SEP-2577).

pub mod clangd_tools;
pub mod cmake_args;
pub mod cmake_targets_tool;
pub mod cmake_test_items;
pub mod cmake_tools;
pub mod debug_tools;
pub mod duplex;
pub mod heavy;
mod history;
mod history_tools;
mod instructions;
mod kept_replies;
mod mcp_call;
mod mutation_tools;
mod process_args;
mod process_match;
pub mod process_tools;
pub mod quality_tools;
pub mod raw_json;
pub mod registry;
pub mod resources;
pub mod schema;
mod search_tools;
mod stdin;
pub mod stdio;
mod tasks;
pub mod toolchain_tools;
pub mod uri_template;
mod widget_resources;
mod workspace_tools;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::Utc;
use parking_lot::{Mutex, RwLock};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, CompleteRequestParams, CompleteResult,
    CompletionInfo, CustomRequest, CustomResult, ExtensionCapabilities, GetPromptRequestParams, GetPromptResponse,
    GetTaskParams, GetTaskResult, Implementation, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    LoggingLevel, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, ServerCapabilities, ServerConfig, ServerResult, SetLevelRequestParams,
    SubscribeRequestParams, TASKS_EXTENSION_ID, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;

use heavy::HeavyWork;
pub use history::{CallEnd, CallObserver, CallStarted, Origin};
use mcp_call::{McpAsker, PeerProgress};
use registry::{Outcome, Registry};
use resources::Resources;

use crate::call::{Asker, Author, Call, Progress, ProgressSink, ProgressUpdate};
use crate::clangd::ClangdService;
use crate::cmake::CmakeService;
use crate::debug::DebugService;
use crate::process::ProcessService;
use crate::quality::QualityService;
use crate::toolchain::ToolchainService;
use crate::widgets::Icon;
use crate::workspace::WorkspaceService;

/// The services the MCP surface exposes.
#[derive(Clone)]
pub struct Services {
    pub workspace: Arc<WorkspaceService>,
    pub processes: ProcessService,
    pub toolchain: Arc<ToolchainService>,
    pub cmake: Arc<CmakeService>,
    pub clangd: Arc<ClangdService>,
    pub debug: DebugService,
    pub quality: Arc<QualityService>,
}

struct Shared {
    registry: Registry,
    resources: Resources,
    observer: RwLock<Option<Arc<dyn CallObserver>>>,
    progress_interval: Duration,
    next_call_id: AtomicU64,
    log_level: Mutex<LoggingLevel>,
    tasks: tasks::Tasks,
    /// Tasks of task-augmented calls (MCP 2025-11-25).
    augmented: tasks::AugmentedTasks,
    /// Questions of input-required rounds awaiting their retry.
    asked: mcp_call::AskedQuestions,
    heavy: HeavyWork,
}

/// The MCP server. Cheap to clone; clones share all state. A clone with another `Origin` serves
/// the admin panel's in-process session on the same state.
#[derive(Clone)]
pub struct ForgeServer {
    shared: Arc<Shared>,
    origin: Origin,
}

impl ForgeServer {
    pub fn new(services: Services, progress_interval: Duration) -> ForgeServer {
        let mut registry = Registry::default();
        let mut resources = Resources::default();
        workspace_tools::register(&mut registry, &mut resources, &services.workspace);
        search_tools::register(&mut registry, &mut resources, &services.workspace);
        mutation_tools::register(&mut registry, &services.workspace);
        history_tools::register(&mut registry, &services.workspace);
        process_tools::register(&mut registry, &mut resources, &services.processes);
        toolchain_tools::register(&mut registry, &mut resources, &services.toolchain);
        cmake_tools::register(&mut registry, &services.cmake);
        cmake_targets_tool::register(&mut registry, &services.cmake);
        clangd_tools::register(&mut registry, &services.clangd);
        debug_tools::register(&mut registry, &services.debug, &services.cmake);
        quality_tools::register(&mut registry, &services.workspace, &services.quality);
        widget_resources::register(&mut resources);
        let shared = Shared {
            registry,
            resources,
            observer: RwLock::new(None),
            progress_interval,
            next_call_id: AtomicU64::new(1),
            log_level: Mutex::new(LoggingLevel::Warning),
            tasks: tasks::Tasks::default(),
            augmented: tasks::AugmentedTasks::default(),
            asked: mcp_call::AskedQuestions::default(),
            heavy: HeavyWork::default(),
        };
        let shared = Arc::new(shared);
        let warm = shared.clone();
        // Describing the tools is left out of the path to the `initialize` reply; a spare thread
        // does it meanwhile, and a `tools/list` that comes first builds what is still missing.
        let spawned = std::thread::Builder::new().name("forgemcp-tools".into()).spawn(move || warm.registry.prepare());
        if let Err(err) = spawned {
            tracing::debug!("tool descriptions are built on first use: {err}");
        }
        ForgeServer { shared, origin: Origin::Client }
    }

    /// A handle on the same state whose calls are recorded with `origin`.
    pub fn with_origin(&self, origin: Origin) -> ForgeServer {
        ForgeServer { shared: self.shared.clone(), origin }
    }

    /// Installs the call observer (the admin instance's history).
    pub fn set_observer(&self, observer: Arc<dyn CallObserver>) {
        *self.shared.observer.write() = Some(observer);
    }

    /// The slots of CPU-heavy calls (searches, listings, large reads).
    pub fn heavy_work(&self) -> &HeavyWork {
        &self.shared.heavy
    }

    pub fn tools(&self) -> Vec<Tool> {
        self.shared.registry.list()
    }

    fn observer(&self) -> Option<Arc<dyn CallObserver>> {
        self.shared.observer.read().clone()
    }

    fn progress_for(
        &self,
        context: &RequestContext<RoleServer>,
        history: Option<(Arc<dyn CallObserver>, u64)>,
        mut sinks: Vec<Arc<dyn ProgressSink>>,
    ) -> (Progress, Option<Arc<PeerProgress>>) {
        let peer = context.meta.get_progress_token().map(|token| PeerProgress::start(context.peer.clone(), token));
        if let Some(peer) = &peer {
            sinks.push(peer.clone());
        }
        if let Some((observer, call_id)) = history {
            sinks.push(Arc::new(HistoryProgress { observer, call_id }));
        }
        (Progress::new(self.shared.progress_interval, sinks), peer)
    }

    /// One tool call, from the history's start to its end: the path of plain `tools/call`
    /// requests and of tasks (whose `context.ct` is the task's cancellation).
    async fn run_call(
        &self,
        name: String,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        sinks: Vec<Arc<dyn ProgressSink>>,
        delivery: Delivery,
    ) -> Result<CallToolResponse, ErrorData> {
        // One copy of the arguments, shared by the observer, the question round and the tool.
        let arguments = Arc::new(request.arguments.take().unwrap_or_default());
        let heavy = heavy::is_heavy(&name, &arguments);
        let call_id = self.shared.next_call_id.fetch_add(1, Ordering::Relaxed);
        let observer = self.observer();
        if let Some(observer) = &observer {
            observer.started(&CallStarted {
                call_id,
                origin: self.origin,
                tool: name.clone(),
                arguments: arguments.clone(),
                at: Utc::now(),
                request_meta: context.meta.clone(),
            });
        }
        let (progress, peer_progress) = self.progress_for(&context, observer.clone().map(|o| (o, call_id)), sinks);
        let asker: Arc<dyn Asker> = Arc::new(McpAsker::new(&context, &name, &arguments, &request, &self.shared.asked));
        let author = Author {
            tool: name.clone(),
            origin: match self.origin {
                Origin::Client => "client",
                Origin::Panel => "panel",
            },
            client: context
                .peer
                .peer_info()
                .map(|peer| format!("{} {}", peer.client_info.name, peer.client_info.version)),
        };
        let call = Call::new(progress, context.ct.clone(), Some(asker)).with_author(author);
        let slot = if heavy { self.shared.heavy.acquire(&call).await } else { None };
        let outcome = if heavy && slot.is_none() {
            Outcome::Failure("The call was cancelled while it waited for other heavy calls to finish.".into())
        } else {
            let future =
                self.shared.registry.invoke(&name, arguments.clone(), call).expect("the tool exists (checked above)");
            future.await
        };
        drop(slot);
        if let Some(peer_progress) = peer_progress {
            peer_progress.finish().await;
        }
        let (response, end) = match outcome {
            Outcome::InputRequired(question) => match self
                .shared
                .asked
                .remember(&name, &arguments, &question)
                .and_then(|state| mcp_call::input_required(&question, state))
            {
                Ok(result) => (Ok(CallToolResponse::InputRequired(result)), CallEnd::InputRequired),
                Err(err) => {
                    let err = ErrorData::internal_error(err.to_string(), None);
                    (Err(err.clone()), CallEnd::Error(err))
                }
            },
            Outcome::Protocol(err) => (Err(err.clone()), CallEnd::Error(err)),
            other => {
                let mut result = other.into_result().expect("success and failure outcomes carry a result");
                if context.extensions.get::<raw_json::Wire>().is_none()
                    && let Some(value) = &mut result.structured_content
                {
                    // Another transport writes this reply: no embedded result may reach it.
                    raw_json::settle(value);
                }
                let Some(observer) = &observer else {
                    // No observer (`--no-admin`): the result goes out as it is, never copied.
                    return Ok(CallToolResponse::Complete(result));
                };
                if context.ct.is_cancelled() {
                    observer.finished(call_id, Utc::now(), &CallEnd::Cancelled);
                    return Ok(CallToolResponse::Complete(result));
                }
                // The observer reads the reply as the client gets it and keeps its JSON text; the
                // reply is then written from that text, not serialized again.
                let mut result = legacy_shape(result, &context);
                let kept = observer.finished(call_id, Utc::now(), &CallEnd::Result(&result));
                if let (Some(text), Some(wire), Delivery::Reply) =
                    (kept, context.extensions.get::<raw_json::Wire>(), delivery)
                {
                    wire.kept.lend(&mut result, &text);
                }
                return Ok(CallToolResponse::Complete(result));
            }
        };
        if let Some(observer) = &observer {
            let end = if context.ct.is_cancelled() { CallEnd::Cancelled } else { end };
            observer.finished(call_id, Utc::now(), &end);
        }
        response
    }
}

/// How a call's result reaches the client.
#[derive(Clone, Copy)]
pub(crate) enum Delivery {
    /// As the reply to its `tools/call`.
    Reply,
    /// Kept by the task store, for `tasks/result`.
    Task,
}

/// `result` as rmcp sends it to this request's peer: without `resultType: "complete"` before the
/// 2026-07-28 revision (rmcp strips it after the handler returns; stripping it first lets the
/// observer keep the very text the client gets). Our structured results are objects already.
fn legacy_shape(result: CallToolResult, context: &RequestContext<RoleServer>) -> CallToolResult {
    let current = context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if current {
        return result;
    }
    let mut wrapped = ServerResult::CallToolResult(result);
    wrapped.strip_result_type_for_legacy_peer();
    match wrapped {
        ServerResult::CallToolResult(result) => result,
        _ => unreachable!("wrapped as a tool result above"),
    }
}

struct HistoryProgress {
    observer: Arc<dyn CallObserver>,
    call_id: u64,
}

impl ProgressSink for HistoryProgress {
    fn deliver(&self, update: ProgressUpdate) {
        self.observer.progress(self.call_id, &update);
    }
}

impl ServerHandler for ForgeServer {
    fn get_info(&self) -> ServerConfig {
        let mut extensions = ExtensionCapabilities::new();
        let ui = json!({ "mimeTypes": ["text/html;profile=mcp-app"] });
        extensions.insert(
            "io.modelcontextprotocol/ui".into(),
            ui.as_object().cloned().expect("the UI capability is a JSON object"),
        );
        extensions.insert(TASKS_EXTENSION_ID.into(), rmcp::model::JsonObject::new());
        let capabilities = ServerCapabilities::builder()
            .enable_extensions_with(extensions)
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("forgemcp", env!("CARGO_PKG_VERSION"))
                    .with_title("ForgeMCP")
                    .with_description("Structured C/C++ development tools for one local workspace.")
                    .with_icons(vec![Icon::Workspace.to_rmcp()]),
            )
            .with_instructions(instructions::TEXT)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.shared.registry.list()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.registry.get(name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !self.shared.registry.contains(&name) {
            return Err(ErrorData::invalid_params(format!("unknown tool `{name}`"), Some(json!({ "name": name }))));
        }
        if tasks::runs_long(&name) && context.client_capabilities().is_some_and(|caps| caps.supports_tasks()) {
            let server = self.clone();
            let task = self.shared.tasks.spawn(move |stop, status| {
                let mut context = context;
                context.ct = stop;
                Box::pin(async move { server.run_call(name, request, context, vec![status], Delivery::Task).await })
            });
            return Ok(CallToolResponse::Task(task));
        }
        self.run_call(name, request, context, Vec::new(), Delivery::Reply).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.shared.tasks.get(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.tasks.update(&request.task_id)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.tasks.cancel(&request.task_id)
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        self.custom_request(request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        // The prompts capability is declared with no prompts: every name is an unknown one.
        let name = request.name;
        Err(ErrorData::invalid_params(format!("unknown prompt `{name}`"), Some(json!({ "name": name }))))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.shared.resources.list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(self.shared.resources.list_templates()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (progress, peer_progress) = self.progress_for(&context, None, Vec::new());
        let call = Call::new(progress, context.ct.clone(), None);
        let result = self.shared.resources.read(&request.uri, call).await;
        if let Some(peer_progress) = peer_progress {
            peer_progress.finish().await;
        }
        match result {
            Ok(contents) => Ok(ReadResourceResult::new(contents).into()),
            Err(err) => Err(err.into_error_data(&request.uri)),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Reference::Resource(reference) = &request.r#ref else {
            return Err(ErrorData::invalid_params("this server has no prompts to complete", None));
        };
        let context = request.context.as_ref().and_then(|c| c.arguments.clone()).unwrap_or_default();
        let completion = self
            .shared
            .resources
            .complete(&reference.uri, &request.argument.name, &request.argument.value, &context)
            .await?;
        let total = u32::try_from(completion.total).unwrap_or(u32::MAX);
        let info = CompletionInfo::with_pagination(completion.values, Some(total), completion.has_more)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CompleteResult::new(info))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.shared.log_level.lock() = request.level;
        Ok(())
    }

    async fn subscribe(
        &self,
        _request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // Every resource is a snapshot computed on read; nothing changes behind a subscription.
        Ok(())
    }

    async fn unsubscribe(
        &self,
        _request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
