//! The toolchain service: discovers the System, Visual Studio and user toolsets once per server
//! lifetime and probes tool versions on request.
//!
//! Discovery runs in a task the service owns. `app` starts it right after the stdio transport
//! starts (it never delays `initialize`); anything that needs toolsets awaits
//! [`ToolchainService::toolsets`], which also starts discovery if nobody has yet. Nothing else waits.
//!
//! Architecture invariant: this module starts processes only through `process` (probes, vswhere,
//! VsDevCmd captures), so every one of them is listed in `processes_overview`.
//! Architecture invariant: discovery runs at most once per service; toolsets never change
//! afterwards, and there is no current or preferred toolset: consumers pass explicit ids.
//! Architecture invariant: versions are probed on every request and never cached.
//! Architecture invariant: this module knows nothing about MCP; environments captured from Visual
//! Studio are available to other services but never rendered.

pub mod options;
pub mod path_scan;
pub mod spec;
pub mod toolset;
pub mod version;
pub mod visual_studio;

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use options::{DiscoveryEnv, DiscoveryOptions, UserTool, UserToolsetSpec};
pub use toolset::{Environment, SYSTEM_ID, SYSTEM_NAME, Tool, Toolset, ToolsetId};

use crate::call::Call;
use crate::process::{CommandSpec, ProcessService};

/// Errors of the toolchain service.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no toolset has the id `{id}`; toolsets_list names the discovered toolsets")]
    UnknownToolset { id: String },
    #[error("no toolset has the id or name `{value}`")]
    NoMatch { value: String },
    #[error("`{value}` matches several toolsets ({ids}); use one of the ids")]
    Ambiguous { value: String, ids: String },
    #[error("toolset discovery failed; see the server log")]
    DiscoveryFailed,
}

/// A command running `executable` in `cwd` in an environment: `env` replaces the server's
/// environment when given (a captured Visual Studio environment); otherwise the server's is inherited.
pub fn command_in(env: Option<&Environment>, executable: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> CommandSpec {
    let mut command = CommandSpec::new(executable, cwd);
    if let Some(env) = env {
        command = command.env_clear();
        for (key, value) in env {
            command = command.env(key, value);
        }
    }
    command
}

/// A command running one of `toolset`'s tools (or any program) in that toolset's environment.
pub fn tool_command(toolset: &Toolset, executable: impl Into<PathBuf>, cwd: impl Into<PathBuf>) -> CommandSpec {
    command_in(toolset.environment().map(|env| &**env), executable, cwd)
}

/// A tool of a toolset with its freshly probed version (`None`: no probe, or it failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolVersion {
    pub tool: Tool,
    pub version: Option<String>,
}

type Discovered = Option<Arc<[Arc<Toolset>]>>;

/// The toolchain service. Dropping it aborts a discovery still running (its processes are stopped
/// by the process service).
pub struct ToolchainService {
    processes: ProcessService,
    options: Arc<DiscoveryOptions>,
    discovered: watch::Receiver<Discovered>,
    start: Mutex<Start>,
}

/// Discovery's state before and after it starts: the sender moves into the task, which owns it.
struct Start {
    sender: Option<watch::Sender<Discovered>>,
    task: Option<JoinHandle<()>>,
}

impl ToolchainService {
    pub fn new(processes: ProcessService, options: DiscoveryOptions) -> ToolchainService {
        let (sender, discovered) = watch::channel(None);
        ToolchainService {
            processes,
            options: Arc::new(options),
            discovered,
            start: Mutex::new(Start { sender: Some(sender), task: None }),
        }
    }

    /// Starts discovery in the background unless it has started already. Needs a tokio runtime.
    pub fn start_discovery(&self) {
        let mut start = self.start.lock();
        let Some(sender) = start.sender.take() else { return };
        let processes = self.processes.clone();
        let options = self.options.clone();
        start.task = Some(tokio::spawn(async move {
            let toolsets = discover(&processes, &options).await;
            tracing::info!(toolsets = toolsets.len(), "toolset discovery finished");
            sender.send_replace(Some(toolsets.into()));
        }));
    }

    /// All toolsets sorted by id, waiting for discovery (and starting it if needed).
    pub async fn toolsets(&self) -> Result<Arc<[Arc<Toolset>]>, Error> {
        self.start_discovery();
        let mut discovered = self.discovered.clone();
        // The sender lives in the discovery task: an error here means that task died.
        let ready = discovered.wait_for(Option::is_some).await.map_err(|_| Error::DiscoveryFailed)?;
        Ok(ready.clone().expect("wait_for returned a discovered value"))
    }

    /// The toolset with exactly this id.
    pub async fn get(&self, id: &str) -> Result<Arc<Toolset>, Error> {
        let toolsets = self.toolsets().await?;
        toolsets
            .iter()
            .find(|toolset| toolset.id().as_str() == id)
            .cloned()
            .ok_or_else(|| Error::UnknownToolset { id: id.to_owned() })
    }

    /// The one toolset whose id or name is exactly `id_or_name` (`--cmake-toolset`, profile
    /// `toolset=`).
    pub async fn find(&self, id_or_name: &str) -> Result<Arc<Toolset>, Error> {
        let toolsets = self.toolsets().await?;
        let matches: Vec<&Arc<Toolset>> =
            toolsets.iter().filter(|t| t.id().as_str() == id_or_name || t.name() == id_or_name).collect();
        match matches.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(Error::NoMatch { value: id_or_name.to_owned() }),
            many => Err(Error::Ambiguous {
                value: id_or_name.to_owned(),
                ids: many.iter().map(|t| t.id().as_str()).collect::<Vec<_>>().join(", "),
            }),
        }
    }

    /// Probes every tool of `toolset` (concurrently, each through the process service) and returns
    /// them in the toolset's order. Progress: `(0, N, "Reading tool versions")`, then
    /// `(i, N, "Read <tool>")` as probes finish.
    pub async fn versions(&self, toolset: &Toolset, call: &Call) -> Vec<ToolVersion> {
        let tools = toolset.tools();
        let total = tools.len() as f64;
        call.progress.report(0.0, Some(total), "Reading tool versions");
        let env = toolset.environment().cloned();
        let mut probes = tokio::task::JoinSet::new();
        for (idx, tool) in tools.iter().enumerate() {
            let processes = self.processes.clone();
            let tool = tool.clone();
            let env = env.clone();
            let cwd = self.options.cwd.clone();
            let timeout = self.options.probe_timeout;
            let call = call.clone();
            probes.spawn(async move {
                let version = version::probe(&processes, &tool, env.as_deref(), &cwd, timeout, &call).await;
                (idx, version)
            });
        }
        let mut versions: Vec<Option<String>> = vec![None; tools.len()];
        let mut n_done = 0;
        while let Some(joined) = probes.join_next().await {
            // A panicking probe leaves its version unknown; the others still count.
            let Ok((idx, version)) = joined else { continue };
            versions[idx] = version;
            n_done += 1;
            let name = tools[idx].name();
            call.progress.report_with(n_done as f64, Some(total), || format!("Read {name}"));
        }
        tools.iter().cloned().zip(versions).map(|(tool, version)| ToolVersion { tool, version }).collect()
    }
}

impl Drop for ToolchainService {
    fn drop(&mut self) {
        if let Some(task) = self.start.get_mut().task.take() {
            task.abort();
        }
    }
}

/// One discovery: System from `PATH`, Visual Studio instances on Windows, then user toolsets;
/// sorted by id, the first of a repeated id kept.
async fn discover(processes: &ProcessService, options: &DiscoveryOptions) -> Vec<Arc<Toolset>> {
    let env = &options.env;
    let system_tools = path_scan::scan(env.path.as_deref(), env.pathext.as_deref());
    let mut res = vec![Toolset::new(ToolsetId::system(), SYSTEM_NAME.to_owned(), system_tools, None)];
    #[cfg(windows)]
    res.extend(
        visual_studio::discover(processes, &options.cwd, env.program_files_x86.as_deref(), &Call::detached()).await,
    );
    #[cfg(not(windows))]
    let _ = processes;
    for user in &options.user_toolsets {
        let tools = user.tools.iter().map(|tool| Tool { spec: tool.spec, path: tool.path.clone() }).collect();
        res.push(Toolset::new(ToolsetId::user(&user.name), user.name.clone(), tools, None));
    }
    res.sort_by(|a, b| a.id().cmp(b.id()));
    res.dedup_by(|later, earlier| later.id() == earlier.id());
    res.into_iter().map(Arc::new).collect()
}
