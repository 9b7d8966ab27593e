//! Debug tools: `debug_launch`, `debug_continue`, `debug_inspect`, `debug_breakpoints`,
//! `debug_stop`. Arguments are decoded and bounded here; the results are `debug::model`'s types.
//!
//! Architecture invariant: no tool takes a debugger command, an adapter argument or a process id:
//! programs are launched from checked paths and expressions are evaluated, never run as commands.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;

use crate::call::Call;
use crate::debug::{Action, AdapterKind, DebugService, InspectRequest, LaunchRequest};
use crate::render;
use crate::server::registry::{Annotations, Registry, ToolError, ToolOutput, ToolSpec};
use crate::widgets::{Icon, Widget};

pub fn register(registry: &mut Registry, debug: &DebugService) {
    register_launch(registry, debug);
    register_continue(registry, debug);
    register_inspect(registry, debug);
    register_breakpoints(registry, debug);
    register_stop(registry, debug);
}

fn default_cwd() -> String {
    "project/".to_owned()
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DebuggerArg {
    LldbDap,
    Gdb,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugLaunchArgs {
    /// Built executable in project/ or storage/.
    pub executable: String,
    /// Literal arguments.
    #[serde(default)]
    pub arguments: Option<Vec<String>>,
    #[serde(default = "default_cwd")]
    pub cwd: String,
    /// Toolset id or name; default system.
    #[serde(default)]
    pub toolset: Option<String>,
    /// Default: lldb-dap, else gdb ≥ 14.
    #[serde(default)]
    pub debugger: Option<DebuggerArg>,
    /// "path:line" or function names.
    #[serde(default)]
    pub breakpoints: Option<Vec<String>>,
    #[serde(default)]
    pub stop_on_entry: bool,
    /// Session lifetime, s (default 600).
    #[serde(default)]
    pub timeout: Option<f64>,
    /// Max wait for a stop, s (default 30).
    #[serde(default)]
    pub wait: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActionArg {
    #[default]
    Continue,
    StepOver,
    StepIn,
    StepOut,
    Pause,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugContinueArgs {
    pub session_id: u64,
    #[serde(default)]
    pub action: ActionArg,
    /// Default: the stopped thread.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Max wait, s (default 30).
    #[serde(default)]
    pub wait: Option<f64>,
}

fn default_depth() -> u32 {
    1
}

fn default_limit() -> u32 {
    100
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugInspectArgs {
    /// Omit to list sessions.
    #[serde(default)]
    pub session_id: Option<u64>,
    /// Its frames.
    #[serde(default)]
    pub thread_id: Option<i64>,
    /// Its scopes and variables.
    #[serde(default)]
    pub frame_id: Option<i64>,
    /// Evaluated in the frame (default: top); expressions only.
    #[serde(default)]
    pub expression: Option<String>,
    /// Nesting levels shown.
    #[serde(default = "default_depth")]
    #[schemars(range(max = 5))]
    pub depth: u32,
    /// Max values.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: u32,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DebugBreakpointsArgs {
    pub session_id: u64,
    /// "path:line" or function names.
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

fn register_launch(registry: &mut Registry, debug: &DebugService) {
    let service = debug.clone();
    registry.add(
        spec(
            "debug_launch",
            "Debug launch",
            "Start a built executable under lldb-dap or gdb (cmake_run_test path rules); run to the first stop or exit. \
             Returns reason, frames, source, locals, session_id.",
        ),
        move |args: DebugLaunchArgs, call: Call| {
            let service = service.clone();
            async move {
                let request = LaunchRequest {
                    executable: args.executable,
                    arguments: args.arguments.unwrap_or_default(),
                    cwd: args.cwd,
                    toolset: args.toolset,
                    debugger: args.debugger.map(|d| match d {
                        DebuggerArg::LldbDap => AdapterKind::LldbDap,
                        DebuggerArg::Gdb => AdapterKind::Gdb,
                    }),
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
        spec(
            "debug_continue",
            "Debug continue",
            "Continue, step (over/in/out) or pause a session; wait for the next stop or exit.",
        ),
        move |args: DebugContinueArgs, call: Call| {
            let service = service.clone();
            async move {
                let action = match args.action {
                    ActionArg::Continue => Action::Continue,
                    ActionArg::StepOver => Action::StepOver,
                    ActionArg::StepIn => Action::StepIn,
                    ActionArg::StepOut => Action::StepOut,
                    ActionArg::Pause => Action::Pause,
                };
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
            "A stopped session's threads, a thread's frames, a frame's variables, or an expression's value.",
        ),
        move |args: DebugInspectArgs, call: Call| {
            let service = service.clone();
            async move {
                if args.depth > 5 || args.limit == 0 || args.limit > 1000 {
                    return Err(ToolError::User(
                        "Invalid argument `depth`/`limit`: depth is at most 5, limit 1 to 1000.".to_owned(),
                    ));
                }
                let request = InspectRequest {
                    thread_id: args.thread_id,
                    frame_id: args.frame_id,
                    expression: args.expression,
                    depth: args.depth,
                    limit: args.limit as usize,
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
        spec(
            "debug_breakpoints",
            "Debug breakpoints",
            "Set and clear breakpoints of a session; lists where each bound.",
        ),
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
        spec("debug_stop", "Debug stop", "End a debug session and its whole process tree."),
        move |args: DebugStopArgs, _call: Call| {
            let service = service.clone();
            async move {
                let res = service.stop(args.session_id).await.map_err(|err| ToolError::user(&err))?;
                Ok(ToolOutput::new(render::debug::stopped_text(&res), res))
            }
        },
    );
}
