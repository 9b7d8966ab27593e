//! The composition root: builds the services in dependency order, wires them together, serves MCP
//! on stdio, and shuts everything down in order. [`ServeConfig`], the options of every service for
//! one server, is defined here, where it is consumed; `config` validates the command line and
//! builds it.
//!
//! Architecture invariant: nothing slow happens before the stdio transport starts; `initialize` is
//! answered immediately. The admin link joins the Hub in the background from the start (so the
//! panel line appears before any client connects); failing to reach or start a Hub is a warning,
//! never fatal. Started from a terminal, the server says at once that it waits for a client.
//! Architecture invariant: stdin EOF, SIGINT, SIGTERM and SIGHUP start the shutdown at once (clangd gets half a second to exit
//! politely, then every process tree is killed), without waiting for rmcp, which lets calls still in
//! flight finish for up to 5 s; no process of any tree, and no stray a tree left (this process owns
//! every descendant, `process::own_every_descendant`), is alive a second after EOF or the signal.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use rmcp::ServiceExt;
use tokio::sync::watch;

use crate::admin::instance::{AdminLink, HubCommand, InstanceInfo, LinkOptions};
use crate::admin::ipc::Endpoint;
use crate::admin::options::{AdminConfig, AdminEnv};
use crate::admin::settings::StartupSettings;
use crate::clangd::standing::EarlierBuild;
use crate::clangd::{ClangdService, ContextSpec};
use crate::cmake::contexts::Contexts;
use crate::cmake::{CmakeOptions, CmakeProfileSpec, CmakeService, CompilationContext};
use crate::debug::DebugService;
use crate::process::ProcessService;
use crate::quality::QualityService;
use crate::server::{ForgeServer, Services};
use crate::toolchain::{DiscoveryOptions, ToolchainService, ToolsetId, UserToolsetSpec};
use crate::workspace::WorkspaceService;
use crate::workspace::path::{Area, QualifiedPath, Roots};

/// Settings of an MCP server process: the options of every service, as `config` validated them.
/// It is defined here, where it is consumed; `config` builds it.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    workspace_root: PathBuf,
    storage_root: PathBuf,
    progress_interval: Duration,
    // Boxed: rarely read, and it would make `RunMode::Serve` much larger than the other modes.
    discovery: Box<DiscoveryOptions>,
    cmake: CmakeOptions,
    /// `--exclude-dir`: absolute directories every search and find leaves out by default.
    excluded_dirs: Vec<PathBuf>,
    journal_limit: u64,
    /// `--compile-commands DIR`: the directory whose `compile_commands.json` is the configuration
    /// `external`.
    compile_commands: Option<QualifiedPath>,
}

impl ServeConfig {
    /// The settings as `config` validated them: `workspace_root` is canonical and an existing
    /// directory, `storage_root` is canonical up to its first missing component and neither is nor
    /// contains nor lies inside the project root, `discovery.cwd` is the project root.
    pub(crate) fn new(
        workspace_root: PathBuf,
        storage_root: PathBuf,
        progress_interval: Duration,
        discovery: DiscoveryOptions,
        cmake: CmakeOptions,
    ) -> ServeConfig {
        ServeConfig {
            workspace_root,
            storage_root,
            progress_interval,
            discovery: Box::new(discovery),
            cmake,
            excluded_dirs: Vec::new(),
            journal_limit: crate::workspace::journal::DEFAULT_LIMIT,
            compile_commands: None,
        }
    }

    /// The directories every search and find leaves out by default (`--exclude-dir`).
    pub fn excluded_dirs(&self) -> &[PathBuf] {
        &self.excluded_dirs
    }

    /// The settings with directories every search and find leaves out by default (absolute, inside
    /// the project).
    pub(crate) fn with_excluded_dirs(mut self, dirs: Vec<PathBuf>) -> ServeConfig {
        self.excluded_dirs = dirs;
        self
    }

    /// The same settings with the undo journal's size limit in bytes (`--journal-limit`).
    pub(crate) fn with_journal_limit(mut self, bytes: u64) -> ServeConfig {
        self.journal_limit = bytes;
        self
    }

    /// The undo journal's size limit in bytes.
    pub fn journal_limit(&self) -> u64 {
        self.journal_limit
    }

    /// With `--compile-commands DIR` (a workspace directory).
    pub(crate) fn with_compile_commands(self, compile_commands: Option<QualifiedPath>) -> ServeConfig {
        ServeConfig { compile_commands, ..self }
    }

    /// `--compile-commands DIR`, when given.
    pub fn compile_commands(&self) -> Option<&QualifiedPath> {
        self.compile_commands.as_ref()
    }

    /// The project root: absolute, canonical (links resolved), an existing directory.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The storage root: absolute, canonical up to its first missing component, not created here.
    /// It is neither the project root nor contains it nor lies inside it.
    pub fn storage_root(&self) -> &Path {
        &self.storage_root
    }

    /// The two roots for the workspace service.
    pub fn roots(&self) -> Roots {
        Roots::new(self.workspace_root.clone(), self.storage_root.clone())
    }

    /// Minimum time between two progress notifications of one invocation; zero disables throttling.
    pub fn progress_interval(&self) -> Duration {
        self.progress_interval
    }

    /// User toolsets in command-line order; names are unique.
    pub fn toolsets(&self) -> &[UserToolsetSpec] {
        &self.discovery.user_toolsets
    }

    /// `--cmake-toolset`: an id or name, matched against discovered toolsets later.
    pub fn cmake_toolset(&self) -> &str {
        &self.cmake.toolset
    }

    /// Explicit CMake profiles in command-line order (empty: use the automatic profiles).
    pub fn cmake_profiles(&self) -> &[CmakeProfileSpec] {
        &self.cmake.profiles
    }

    /// What toolchain discovery is given: the project root as probe directory, the environment,
    /// the user toolsets.
    pub fn discovery(&self) -> &DiscoveryOptions {
        &self.discovery
    }

    /// The CMake service's options: `--cmake-toolset` and the `--cmake-profile`s.
    pub fn cmake(&self) -> &CmakeOptions {
        &self.cmake
    }

    /// What the admin panel shows as this server's startup settings.
    pub fn startup_settings<'a>(&'a self, admin: &'a AdminConfig) -> StartupSettings<'a> {
        StartupSettings {
            workspace_root: &self.workspace_root,
            storage_root: &self.storage_root,
            progress_interval: self.progress_interval,
            toolsets: self.toolsets(),
            cmake: &self.cmake,
            admin,
        }
    }
}

/// Builds every service for one workspace.
pub fn build_services(config: &ServeConfig) -> Services {
    let workspace = Arc::new(
        WorkspaceService::with_journal(config.roots(), Some(config.journal_limit()))
            .with_excluded_dirs(config.excluded_dirs().to_vec())
            .with_search_index(crate::workspace::search::index::IndexOptions::default()),
    );
    let processes = ProcessService::new(config.roots());
    assemble_with(
        workspace,
        processes,
        config.discovery().clone(),
        config.cmake().clone(),
        config.compile_commands.clone(),
    )
}

/// Builds the services above the workspace and process services and wires their hooks: the CMake
/// input checks and clangd's file notifications observe workspace mutations, clangd follows CMake's
/// contexts and provides `resources.clangd`.
pub fn assemble(
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    discovery: DiscoveryOptions,
    cmake: CmakeOptions,
) -> Services {
    assemble_with(workspace, processes, discovery, cmake, None)
}

/// [`assemble`] with `--compile-commands DIR`: the configuration `external` that clangd and the
/// quality tools use beside CMake's (also without the option, for a project without
/// `CMakeLists.txt`: its root `compile_commands.json`, which `bear -- make` writes).
pub fn assemble_with(
    workspace: Arc<WorkspaceService>,
    processes: ProcessService,
    discovery: DiscoveryOptions,
    cmake: CmakeOptions,
    compile_commands: Option<QualifiedPath>,
) -> Services {
    let external = external_context(workspace.roots(), compile_commands);
    let toolchain = Arc::new(ToolchainService::new(processes.clone(), discovery));
    let cmake = Arc::new(CmakeService::new(workspace.clone(), processes.clone(), toolchain.clone(), cmake));
    workspace.add_observer(cmake.observer());
    workspace.add_path_notes(cmake.orphans());
    let contexts = with_external(cmake.contexts(), external);
    let clangd = Arc::new(ClangdService::new(processes.clone(), toolchain.clone(), workspace.roots().clone()));
    clangd.follow(contexts.clone(), |contexts| contexts.iter().map(clangd_context).collect());
    let tracker = cmake.clone();
    clangd.explain_withdrawals(move |path| {
        let withdrawal = tracker.take_withdrawn_by(path);
        (withdrawal.ids, withdrawal.glob_dir)
    });
    let tracker = cmake.clone();
    clangd.explain_earlier(move || tracker.earlier_builds().into_iter().map(EarlierBuild::from).collect());
    workspace.add_observer(clangd.observer());
    workspace.add_provider(clangd.provider(crate::render::clangd_note::mutation_note));
    workspace.add_path_notes(clangd.withdrawal_notes(crate::render::clangd_note::mutation_note));
    let debug = DebugService::new(workspace.clone(), processes.clone(), toolchain.clone());
    cmake.explain_crashes_with(debug.clone());
    // Quality runs read the same compilation contexts clangd follows.
    let quality = Arc::new(QualityService::new(workspace.clone(), processes.clone(), toolchain.clone(), contexts));
    Services { workspace, processes, toolchain, cmake, clangd, debug, quality }
}

/// The id of the configuration a `compile_commands.json` outside CMake supplies.
pub const EXTERNAL_CONFIGURATION: &str = "external";

/// The configuration `external`: `--compile-commands DIR`, else, for a project without
/// `CMakeLists.txt`, the project root (its database may appear later; until then clangd says it is
/// missing). Analysed with the System toolset's clangd.
fn external_context(roots: &Roots, dir: Option<QualifiedPath>) -> Option<CompilationContext> {
    let dir = match dir {
        Some(dir) => dir,
        None if roots.project().join("CMakeLists.txt").is_file() => return None,
        None => QualifiedPath::area_root(Area::Project),
    };
    Some(CompilationContext {
        id: EXTERNAL_CONFIGURATION.to_owned(),
        toolset_id: ToolsetId::system(),
        compilation_database: dir.join_name("compile_commands.json")?,
        build_directory: dir,
    })
}

/// CMake's contexts with the external one after them, as one subscription (CMake's unchanged when
/// there is none).
fn with_external(cmake: watch::Receiver<Contexts>, external: Option<CompilationContext>) -> watch::Receiver<Contexts> {
    let Some(external) = external else { return cmake };
    let merged =
        move |contexts: &Contexts| -> Contexts { contexts.iter().cloned().chain([external.clone()]).collect() };
    let (sender, receiver) = watch::channel(merged(&cmake.borrow()));
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let mut cmake = cmake;
        runtime.spawn(async move {
            while cmake.changed().await.is_ok() {
                let contexts = merged(&cmake.borrow_and_update());
                if sender.send(contexts).is_err() {
                    return;
                }
            }
        });
    }
    receiver
}

/// What clangd needs of a CMake compilation context.
fn clangd_context(context: &CompilationContext) -> ContextSpec {
    ContextSpec {
        id: context.id.clone(),
        toolset_id: context.toolset_id.to_string(),
        build_directory: context.build_directory.clone(),
        compilation_database: context.compilation_database.clone(),
    }
}

/// The async runtime every mode runs on: one worker thread, plus tokio's blocking pool for the
/// file-system work, searches and listings. One worker is the fast path of a request: the thread
/// the reactor wakes for a request's line (`server::stdin`) parses it, answers it and writes the
/// reply, with no hand-off to another thread. On an idle machine each hand-off wakes an idle CPU
/// and costs more than a cheap request's whole answer (a ping: 0.028 ms on one worker, 0.076 ms on
/// two; docs/performance.md). Everything CPU-heavy already runs on the blocking pool.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build()
}

/// Serves MCP on stdin/stdout until the client closes stdin or the process is interrupted; unless
/// `--no-admin`, joins the admin Hub of its group in the background.
pub async fn serve_stdio(config: &ServeConfig, admin: &AdminConfig, admin_env: &AdminEnv) -> anyhow::Result<()> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        let _ = writeln!(std::io::stderr().lock(), "{TERMINAL_LINE}");
    }
    // Before anything is spawned: a signal from now on ends the session like stdin EOF.
    let mut signals = Signals::install()?;
    crate::process::own_every_descendant();
    let services = build_services(config);
    let server = ForgeServer::new(services.clone(), config.progress_interval());
    // Before the transport: every call, even the first, is in the panel's history.
    let history = admin.join_hub().then(|| AdminLink::install_history(&server));
    tracing::info!(workspace = %config.workspace_root().display(), "serving MCP on stdio");
    let stdio = crate::server::stdio::start(std::io::stdout());
    let input_ended = stdio.input_ended;
    // In the background: the panel line appears now, not only once a client initializes.
    let admin_link = history.and_then(|history| start_admin_link(&server, history, config, admin, admin_env));
    let running = server.clone().serve(stdio.transport).await.context("MCP session did not start")?;
    // Only now: discovery launches processes and must never delay `initialize`.
    services.toolchain.start_discovery();
    if let (Some(link), Some(peer)) = (&admin_link, running.peer().peer_info()) {
        link.set_client(format!("{} {}", peer.client_info.name, peer.client_info.version));
    }
    let session = async {
        let reason = running.waiting().await;
        tracing::info!(?reason, "MCP session ended");
    };
    tokio::pin!(session);
    let mut session_over = false;
    tokio::select! {
        () = &mut session => session_over = true,
        // rmcp ends the session only after calls still running (a build, a probe) answered, for up
        // to 5 s; stdin EOF stops their processes now instead.
        () = input_ended.cancelled() => tracing::info!("stdin closed"),
        signal = signals.received() => tracing::info!("{signal} received"),
    }
    // clangd first, politely (shutdown, exit), but briefly: every process tree must be gone within a
    // second of stdin EOF. Then every external process tree still running.
    if tokio::time::timeout(CLANGD_GRACE, services.clangd.shutdown()).await.is_err() {
        tracing::warn!("clangd did not exit in time; it is stopped with the other processes");
    }
    services.processes.shutdown().await;
    if !session_over && input_ended.is_cancelled() {
        // The calls the shutdown ended answer now; let their replies out.
        let _ = tokio::time::timeout(REPLY_GRACE, session).await;
    }
    if let Some(link) = admin_link {
        link.leave().await;
    }
    Ok(())
}

/// What a person who started the server in a terminal reads first.
pub const TERMINAL_LINE: &str = "forgemcp: this is an MCP server; it waits for an MCP client on stdin \
(JSON-RPC). Connect a client such as Claude Code or Codex as the README section \"Connect Codex or Claude Code\" explains.";
/// SIGINT, SIGTERM and SIGHUP (Unix) or Ctrl-C (elsewhere): each ends the session like stdin EOF.
struct Signals {
    #[cfg(unix)]
    streams: Vec<(&'static str, tokio::signal::unix::Signal)>,
}

impl Signals {
    fn install() -> anyhow::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let kinds = [
                ("SIGINT", SignalKind::interrupt()),
                ("SIGTERM", SignalKind::terminate()),
                ("SIGHUP", SignalKind::hangup()),
            ];
            let mut streams = Vec::new();
            for (name, kind) in kinds {
                streams.push((name, signal(kind).with_context(|| format!("cannot handle {name}"))?));
            }
            Ok(Signals { streams })
        }
        #[cfg(not(unix))]
        Ok(Signals {})
    }

    /// The name of the first signal received.
    async fn received(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            let waits = self.streams.iter_mut().map(|(name, stream)| {
                let name = *name;
                Box::pin(async move {
                    stream.recv().await;
                    name
                })
            });
            futures_util::future::select_all(waits).await.0
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// How long clangd may take to exit politely at the end of the session.
const CLANGD_GRACE: Duration = Duration::from_millis(500);
/// How long the replies of calls ended by the shutdown may take after stdin EOF.
const REPLY_GRACE: Duration = Duration::from_secs(5);

/// Starts the admin link; a problem with the private directory is a warning.
fn start_admin_link(
    server: &ForgeServer,
    history: Arc<crate::admin::history::History>,
    config: &ServeConfig,
    admin: &AdminConfig,
    admin_env: &AdminEnv,
) -> Option<AdminLink> {
    let endpoint = match Endpoint::resolve(admin.ipc_name(), admin_env) {
        Ok(endpoint) => endpoint,
        Err(err) => {
            tracing::warn!("the admin panel is unavailable: {err}");
            return None;
        }
    };
    let hub_command = match std::env::current_exe() {
        Ok(executable) => Some(HubCommand { executable, ipc_name: admin.ipc_name().to_owned(), port: admin.port() }),
        Err(err) => {
            tracing::warn!("cannot locate this executable to start an admin Hub: {err}");
            None
        }
    };
    let options = LinkOptions { endpoint, hub_command, announce: true, default_group: admin.is_default_ipc() };
    Some(AdminLink::start(server, history, InstanceInfo::new(&config.startup_settings(admin)), options))
}
