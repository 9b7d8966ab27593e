//! One short lldb-dap session per post-mortem: on a core file, a re-run until it crashes, or a re-run
//! paused when the timeout passes; then the frames, the innermost project frame's line and locals,
//! or every thread's innermost project frames. The session always ends here.
//!
//! Architecture invariant: sessions here live only inside one call of these functions; every exit
//! path shuts the session down, and a dropped future drops the session, which kills its tree.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Map;

use super::{Crash, CrashFrame, CrashSource, RERUN_WAIT, SourceLine, Target, ThreadStack, core_file, render};
use crate::call::Call;
use crate::dap::protocol as dap;
use crate::debug::model::{self, RunState, Stop};
use crate::debug::session::{Action, AdapterKind, REQUEST_TIMEOUT, Session, SessionSpec};
use crate::debug::{DebugService, Error};
use crate::process::core_dumps::Core;
use crate::toolchain::Environment;

/// The debug adapter a post-mortem uses.
pub(super) struct Adapter {
    pub path: PathBuf,
    pub environment: Option<Arc<Environment>>,
}

/// Frames read from the crashing thread.
const STACK_LEVELS: u32 = 64;
/// Locals of the innermost project frame.
const LOCALS: usize = 24;
/// How long a core file takes to load and show its stop.
const CORE_WAIT: Duration = Duration::from_secs(30);
/// How long pausing a hung program may take.
const PAUSE_WAIT: Duration = Duration::from_secs(5);
/// Project frames listed per thread of a hung program.
const THREAD_PROJECT_FRAMES: usize = 2;

impl DebugService {
    /// `work` on a started session for `target` (on `core` when given) with the session's time
    /// limit; the session is shut down whatever `work` returns, and the call's cancellation ends it.
    async fn in_session<T>(
        &self,
        adapter: &Adapter,
        target: &Target,
        core: Option<PathBuf>,
        lifetime: Duration,
        call: &Call,
        work: impl AsyncFnOnce(&Session, &SessionSpec) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let spec = SessionSpec {
            kind: AdapterKind::LldbDap,
            adapter: adapter.path.clone(),
            environment: adapter.environment.clone(),
            checked: target.checked.clone(),
            executable: target.executable.clone(),
            arguments: target.arguments.clone(),
            cwd: target.cwd.clone(),
            env: target.env.clone(),
            core,
            stop_on_entry: false,
        };
        let key = target.checked.path().to_path_buf();
        let roots = self.inner.workspace.roots();
        let session = Session::start(&self.inner.processes, roots, 0, &spec, key, lifetime).await?;
        let res = tokio::select! {
            res = work(&session, &spec) => res,
            () = call.cancel.cancelled() => Err(Error::Launch("the call was cancelled".to_owned())),
        };
        session.shutdown().await;
        res
    }

    /// The crash as the core file shows it; `None` when the core is not the program's (it is then
    /// left alone) or cannot be read.
    pub(super) async fn stack_from_core(
        &self,
        adapter: &Adapter,
        target: &Target,
        core: &Core,
        signal: &str,
        call: &Call,
    ) -> Option<Crash> {
        core_file::check(&core.path, target.checked.path()).ok()?;
        let res = self
            .in_session(adapter, target, Some(core.path.clone()), CORE_WAIT * 2, call, async |session, spec| {
                let stop = session.launch(spec, &[], CORE_WAIT).await?;
                match stop.signal {
                    Some(_) => crash_at(session, &stop, CrashSource::CoreFile, signal, &target.output).await,
                    None => Err(Error::Launch(format!("the core file shows no signal ({})", stop.summary))),
                }
            })
            .await;
        core.remove();
        res.ok()
    }

    /// The program run once more under the debugger: its crash, or that it did not crash again.
    pub(super) async fn rerun(&self, adapter: &Adapter, target: &Target, signal: &str, call: &Call) -> Crash {
        let res = self
            .in_session(adapter, target, None, RERUN_WAIT * 2, call, async |session, spec| {
                let stop = session.launch(spec, &[], RERUN_WAIT).await?;
                if stop.signal.is_some() {
                    return crash_at(session, &stop, CrashSource::Reproduced, signal, &target.output).await;
                }
                let what = match (stop.state, stop.exit_code) {
                    (RunState::Exited, Some(code)) => format!("it exited with code {code}"),
                    (RunState::Exited, None) => "it ended".to_owned(),
                    (RunState::Running, _) => format!("it was still running after {} s", RERUN_WAIT.as_secs()),
                    (RunState::Stopped, _) => stop.summary.clone(),
                };
                let mut crash = Crash::unavailable(Some(signal.to_owned()), format!("{what} under lldb-dap"));
                crash.source = CrashSource::Intermittent;
                Ok(crash)
            })
            .await;
        res.unwrap_or_else(|err| {
            Crash::unavailable(Some(signal.to_owned()), format!("running it under lldb-dap failed: {err}"))
        })
    }

    /// A hung program run again under the debugger and paused after `after`: every thread's stack.
    pub(super) async fn paused(&self, adapter: &Adapter, target: &Target, after: Duration, call: &Call) -> Crash {
        let res = self
            .in_session(adapter, target, None, after + RERUN_WAIT, call, async |session, spec| {
                let mut stop = session.launch(spec, &[], after).await?;
                if stop.state == RunState::Running {
                    stop = session.resume(Action::Pause, None, PAUSE_WAIT).await?;
                }
                // The pause itself stops the program with SIGSTOP (lldb-dap reports it as a signal
                // stop, not a "pause"): only a crash signal means it crashed before the timeout.
                if let Some(signal) = stop.signal.clone().filter(|s| super::CRASH_SIGNALS.contains(&s.as_str())) {
                    return crash_at(session, &stop, CrashSource::Reproduced, &signal, &target.output).await;
                }
                if stop.state != RunState::Stopped {
                    let note = format!(
                        "it ended within {} s under lldb-dap{}: the hang is intermittent",
                        after.as_secs_f64(),
                        stop.exit_code.map(|c| format!(" (exit code {c})")).unwrap_or_default()
                    );
                    let mut crash = Crash::unavailable(None, note);
                    crash.source = CrashSource::Intermittent;
                    return Ok(crash);
                }
                let mut threads = Vec::new();
                for thread in session.threads().await? {
                    let frames = stack(session, thread.id).await?;
                    threads.push(thread_stack(session, thread, frames));
                }
                let mut crash =
                    Crash::unavailable(None, format!("paused under lldb-dap after {} s", after.as_secs_f64()));
                crash.source = CrashSource::Paused;
                crash.note = None;
                crash.threads = threads;
                Ok(crash)
            })
            .await;
        res.unwrap_or_else(|err| Crash::unavailable(None, format!("running it under lldb-dap failed: {err}")))
    }
}

/// A frame with its id (valid while the program stays stopped).
struct Raw {
    id: i64,
    frame: CrashFrame,
}

/// The frames of a thread, innermost first, each with its library.
async fn stack(session: &Session, thread_id: i64) -> Result<Vec<Raw>, Error> {
    let args = dap::StackTraceArguments { thread_id, start_frame: 0, levels: STACK_LEVELS };
    let frames = session.client.request::<dap::StackTrace>(&args, REQUEST_TIMEOUT).await?.stack_frames;
    let modules = match session.client.request::<dap::Modules>(&Map::new(), REQUEST_TIMEOUT).await {
        Ok(body) => body.modules,
        Err(_) => Vec::new(),
    };
    let mut starts: Vec<(u64, String)> = modules
        .into_iter()
        .filter_map(|m| Some((hex(m.address_range.as_deref()?)?, m.name)))
        .filter(|(_, name)| !name.starts_with('['))
        .collect();
    starts.sort();
    Ok(frames
        .into_iter()
        .map(|f| {
            let path = f.source.and_then(|s| s.path).and_then(|p| session.qualify(&p));
            let project = path.as_deref().is_some_and(|p| p.starts_with("project/") || p.starts_with("storage/"));
            let library = f
                .instruction_pointer_reference
                .as_deref()
                .and_then(hex)
                .and_then(|ip| starts.iter().rev().find(|(start, _)| *start <= ip))
                .map(|(_, name)| name.clone());
            Raw {
                id: f.id,
                frame: CrashFrame {
                    function: f.name.strip_prefix("::").map_or_else(|| f.name.clone(), str::to_owned),
                    path,
                    line: f.line,
                    library,
                    project,
                },
            }
        })
        .collect())
}

fn hex(text: &str) -> Option<u64> {
    let digits = text.trim().trim_start_matches("0x").trim_start_matches("0X");
    u64::from_str_radix(digits, 16).ok()
}

/// The crash a signal stop shows: the stopped thread's frames, the innermost project frame's line
/// and locals, a failed assertion's text.
async fn crash_at(
    session: &Session,
    stop: &Stop,
    source: CrashSource,
    signal: &str,
    output: &str,
) -> Result<Crash, Error> {
    let thread_id = stop.thread_id.ok_or(Error::NoThreads { session_id: 0 })?;
    let raw = stack(session, thread_id).await?;
    let innermost = raw.iter().find(|r| r.frame.project);
    let (line, locals) = match innermost {
        Some(r) => (source_line(session, &r.frame), session.locals(r.id, 1, LOCALS).await?),
        None => (None, Vec::new()),
    };
    let description = session.stopped_event().and_then(|event| {
        let detail = event.description.or(event.text)?;
        let rest = detail.split_once(stop.signal.as_deref()?)?.1.trim_start_matches(':').trim().to_owned();
        (!rest.is_empty()).then_some(rest)
    });
    let seen = format!("{output}\n{}", stop.output);
    Ok(Crash {
        source,
        signal: Some(stop.signal.clone().unwrap_or_else(|| signal.to_owned())),
        description,
        assertion: render::assertion(&seen),
        frames: raw.into_iter().map(|r| r.frame).collect(),
        line,
        locals,
        threads: Vec::new(),
        note: None,
    })
}

/// The source line of a frame in the project.
fn source_line(session: &Session, frame: &CrashFrame) -> Option<SourceLine> {
    let path = frame.path.clone()?;
    let shown = model::Frame { id: 0, function: frame.function.clone(), path: Some(path.clone()), line: frame.line };
    let excerpt = session.excerpt(&shown)?;
    let text = excerpt.lines.get(frame.line.checked_sub(excerpt.start_line)? as usize)?.trim().to_owned();
    Some(SourceLine { path, line: frame.line, text })
}

/// A thread's innermost frame and its innermost project frames.
fn thread_stack(session: &Session, thread: model::Thread, raw: Vec<Raw>) -> ThreadStack {
    let mut frames: Vec<CrashFrame> = Vec::new();
    let mut line = None;
    for (idx, r) in raw.into_iter().enumerate() {
        if r.frame.project && line.is_none() {
            line = source_line(session, &r.frame);
        }
        let projects = frames.iter().filter(|f| f.project).count();
        if idx == 0 || (r.frame.project && projects < THREAD_PROJECT_FRAMES) {
            frames.push(r.frame);
        }
    }
    // A program the debugger runs through `/proc/<pid>/fd/<n>` (the checked executable) has threads
    // named after that descriptor's number: no name at all.
    let name = if thread.name.bytes().all(|b| b.is_ascii_digit()) { String::new() } else { thread.name };
    ThreadStack { thread_id: thread.id, name, frames, line }
}

/// Adds the crash to a stop at a crash signal in a `debug_launch` session (its whole stack, the
/// line, the locals); a stack that cannot be read leaves the stop as it is.
pub async fn explain_stop(session: &Session, stop: &mut Stop) {
    let Some(signal) = stop.signal.clone().filter(|s| super::CRASH_SIGNALS.contains(&s.as_str())) else { return };
    if stop.state != RunState::Stopped {
        return;
    }
    let source = if session.core { CrashSource::CoreFile } else { CrashSource::Session };
    stop.crash = crash_at(session, stop, source, &signal, "").await.ok();
}
