//! Debug tools: `debug_launch`, `debug_continue`, `debug_inspect`, `debug_breakpoints`,
//! `debug_stop`. Arguments are decoded and bounded here; the results are `debug::model`'s types.
//!
//! Architecture invariant: no tool takes a debugger command, an adapter argument or a process id:
//! programs are launched from checked paths and expressions are evaluated, never run as commands.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::call::Call;
use crate::cmake::CmakeService;
use crate::debug::{Action, AdapterKind, DebugService, InspectRequest, LaunchRequest};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::widgets::{Icon, Widget};

pub fn register(registry: &mut Registry, debug: &DebugService, cmake: &Arc<CmakeService>) {
    register_launch(registry, debug, cmake);
    register_continue(registry, debug);
    register_inspect(registry, debug);
    register_breakpoints(registry, debug);
    register_stop(registry, debug);
}

fn default_cwd() -> String {
    "project/".to_owned()
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugLaunchArgs {
    /// Or `test`.
    #[serde(default)]
    pub executable: Option<String>,
    /// CTest test name.
    #[serde(default)]
    pub test: Option<String>,
    /// For `test`; default first.
    #[serde(default)]
    pub profile: Option<String>,
    /// Inspect only.
    #[serde(default)]
    pub core: Option<String>,
    #[serde(default)]
    pub arguments: Option<Vec<String>>,
    #[serde(default)]
    pub cwd: Option<String>,
    /// Default system.
    #[serde(default)]
    pub toolset: Option<String>,
    /// lldb-dap, else gdb≥14.
    #[serde(default)]
    pub debugger: Option<String>,
    /// path:line or function.
    #[serde(default)]
    pub breakpoints: Option<Vec<String>>,
    #[serde(default)]
    pub stop_on_entry: bool,
    /// Lifetime s, default 600.
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Stop wait s, default 30.
    #[serde(default)]
    pub wait: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugContinueArgs {
    pub session_id: u64,
    /// Default continue.
    #[serde(default)]
    pub action: Option<ContinueAction>,
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Stop wait s, default 30.
    #[serde(default)]
    pub wait: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugInspectArgs {
    /// Omit: list sessions.
    #[serde(default)]
    pub session_id: Option<u64>,
    /// Its frames.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Its variables.
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// In the frame, default top.
    #[serde(default)]
    pub expression: Option<String>,
    /// Nesting ≤5, default 1.
    #[serde(default)]
    pub depth: Option<u32>,
    /// Default 100.
    #[serde(default)]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugBreakpointsArgs {
    pub session_id: u64,
    /// path:line or function.
    #[serde(default)]
    pub set: Option<Vec<String>>,
    #[serde(default)]
    pub clear: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugStopArgs {
    pub session_id: u64,
}

fn debugger(value: Option<&str>) -> Result<Option<AdapterKind>, ToolError> {
    match value {
        None => Ok(None),
        Some("lldb-dap") => Ok(Some(AdapterKind::LldbDap)),
        Some("gdb") => Ok(Some(AdapterKind::Gdb)),
        Some(other) => Err(ToolError::User(format!("Invalid argument `debugger`: `{other}` is not lldb-dap or gdb."))),
    }
}

/// How `debug_continue` moves the program on (an enum in the schema).
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum ContinueAction {
    Continue,
    StepOver,
    StepIn,
    StepOut,
    Pause,
}

fn action(value: Option<ContinueAction>) -> Action {
    match value.unwrap_or(ContinueAction::Continue) {
        ContinueAction::Continue => Action::Continue,
        ContinueAction::StepOver => Action::StepOver,
        ContinueAction::StepIn => Action::StepIn,
        ContinueAction::StepOut => Action::StepOut,
        ContinueAction::Pause => Action::Pause,
    }
}

/// Seconds → a duration: finite, > 0, at most a day.
fn seconds(argument: &str, value: Option<f64>, default: f64) -> Result<Duration, ToolError> {
    let secs = value.unwrap_or(default);
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 {
        return Err(ToolError::User(format!(
            "Invalid argument `{argument}`: it must be a number of seconds above 0 and at most 86400."
        )));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn spec(name: &'static str, title: &'static str, description: &'static str) -> ToolSpec {
    ToolSpec { name, title, description, annotations: Annotations::Exec, widget: Widget::Debug, icon: Icon::Process }
}

fn register_launch(registry: &mut Registry, debug: &DebugService, cmake: &Arc<CmakeService>) {
    let service = debug.clone();
    let cmake = cmake.clone();
    registry.add(
        spec(
            "debug_launch",
            "Debug launch",
            "Debug a built executable (cmake_run_test rules) or a CTest `test` to its first stop or exit, or \
             inspect a `core`: reason, frames, source, locals, a crash's stack.",
        ),
        move |args: DebugLaunchArgs, call: Call| {
            let service = service.clone();
            let cmake = cmake.clone();
            async move {
                let (executable, arguments, cwd, env) = match (args.executable, args.test) {
                    (Some(executable), None) => {
                        if args.profile.is_some() {
                            return Err(ToolError::User("Invalid argument `profile`: it goes with `test`.".into()));
                        }
                        (
                            executable,
                            args.arguments.unwrap_or_default(),
                            args.cwd.unwrap_or_else(default_cwd),
                            Vec::new(),
                        )
                    }
                    (None, Some(test)) => {
                        if args.arguments.is_some() || args.cwd.is_some() {
                            return Err(ToolError::User(
                                "Invalid argument `test`: a test brings its own arguments and cwd (CTest's); omit \
                                 `arguments` and `cwd`."
                                    .into(),
                            ));
                        }
                        let profile = args.profile.as_deref();
                        let command =
                            cmake.test_command(profile, &test, &call).await.map_err(|err| ToolError::user(&err))?;
                        (command.executable.to_string(), command.arguments, command.cwd.to_string(), command.env)
                    }
                    _ => {
                        return Err(ToolError::User(
                            "Invalid argument `executable`: give `executable` or `test` (one of them).".into(),
                        ));
                    }
                };
                let request = LaunchRequest {
                    executable,
                    arguments,
                    cwd,
                    env,
                    core: args.core,
                    toolset: args.toolset,
                    debugger: debugger(args.debugger.as_deref())?,
                    breakpoints: args.breakpoints.unwrap_or_default(),
                    stop_on_entry: args.stop_on_entry,
                    lifetime: seconds("timeout", args.timeout, 600.0)?,
                    wait: seconds("wait", args.wait, 30.0)?,
                };
                let stop = service.launch(request, &call).await.map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::stop_text(&stop), stop))
            }
        },
    );
}

fn register_continue(registry: &mut Registry, debug: &DebugService) {
    let service = debug.clone();
    registry.add(
        spec("debug_continue", "Debug continue", "Continue, step or pause a session; waits for the next stop or exit."),
        move |args: DebugContinueArgs, call: Call| {
            let service = service.clone();
            async move {
                let action = action(args.action);
                let wait = seconds("wait", args.wait, 30.0)?;
                let stop = service
                    .resume(args.session_id, action, args.thread_id, wait, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::stop_text(&stop), stop))
            }
        },
    );
}

fn register_inspect(registry: &mut Registry, debug: &DebugService) {
    let service = debug.clone();
    registry.add(
        spec(
            "debug_inspect",
            "Debug inspect",
            "Threads, a thread's frames, a frame's variables or an expression's value.",
        ),
        move |args: DebugInspectArgs, call: Call| {
            let service = service.clone();
            async move {
                let depth = args.depth.unwrap_or(1);
                if depth > 5 {
                    return Err(ToolError::User("Invalid argument `depth`: it is at most 5.".to_owned()));
                }
                let limit = args.limit.unwrap_or(100);
                if !(1..=1000).contains(&limit) {
                    return Err(ToolError::User("Invalid argument `limit`: it is 1 to 1000.".to_owned()));
                }
                let request = InspectRequest {
                    thread_id: args.thread_id,
                    frame_id: args.frame_id,
                    expression: args.expression,
                    depth,
                    limit: limit as usize,
                };
                let found =
                    service.inspect(args.session_id, request, &call).await.map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::inspect_text(args.session_id, &found), found))
            }
        },
    );
}

fn register_breakpoints(registry: &mut Registry, debug: &DebugService) {
    let service = debug.clone();
    registry.add(
        spec("debug_breakpoints", "Debug breakpoints", "Set or clear breakpoints; lists where each bound."),
        move |args: DebugBreakpointsArgs, call: Call| {
            let service = service.clone();
            async move {
                let set = args.set.unwrap_or_default();
                let clear = args.clear.unwrap_or_default();
                let res = service
                    .breakpoints(args.session_id, &set, &clear, &call)
                    .await
                    .map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::breakpoints_text(&res), res))
            }
        },
    );
}

fn register_stop(registry: &mut Registry, debug: &DebugService) {
    let service = debug.clone();
    registry.add(
        spec("debug_stop", "Debug stop", "End a debug session and its process tree."),
        move |args: DebugStopArgs, _call: Call| {
            let service = service.clone();
            async move {
                let res = service.stop(args.session_id).await.map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::stopped_text(&res), res))
            }
        },
    );
}
