//! Spawning one child and supervising it until its tree is gone.
//!
//! The supervisor follows nextest's executor loop: one `select!` over the leader's exit, both pipes,
//! the stdin writer, the stop request, and the total and idle timers. Each chunk is recorded the
//! moment it is read, so the journal's order is the observed order by construction. After the leader
//! exits, whatever is left of its tree is killed and the pipes are drained to EOF (bounded by a short
//! grace period, in case something escaped and keeps a pipe open).
//!
//! Architecture invariant: this is the only file that constructs OS commands (on Linux it hands them
//! to `leader.rs`, the one place that starts a leader). Children get null or piped stdin and always
//! piped stdout/stderr: they never inherit the server's stdout (the MCP channel).
//! Architecture invariant: a supervisor that is dropped (task aborted, runtime shut down) kills its
//! tree and marks the record `stopped`.

#[cfg(not(target_os = "linux"))]
use std::any::Any;
use std::io;
use std::path::Path;
use std::pin::Pin;
use std::process::ExitStatus;
#[cfg(not(target_os = "linux"))]
use std::process::Stdio;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

#[cfg(not(target_os = "linux"))]
use process_wrap::tokio::ChildWrapper;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
#[cfg(not(target_os = "linux"))]
use tokio::process::Child;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use super::journal::Stream;
use super::registry::{Record, Status};
use super::spec::{CommandSpec, LineCallback, Stdin, Timeout};
use super::tree::{Leaders, TREE_MARKER, reap};

/// How long pipes may stay open after the leader exited or the tree was killed.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// Longest line handed to a line callback; the rest of the line is dropped.
const MAX_CALLBACK_LINE: usize = 64 * 1024;
const READ_BUFFER: usize = 64 * 1024;

/// A freshly spawned child with its pipes.
pub(crate) struct Launch {
    pub child: Leader,
    pub pid: u32,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Spawns `spec` in `cwd` (already checked) in a new process group as a child subreaper, without
/// copying the server's address space (`leader.rs`). The leader's pid is registered in `leaders`
/// before the lock is released, so no reaper can mistake it for an orphan.
#[cfg(target_os = "linux")]
pub(crate) fn spawn(spec: &CommandSpec, cwd: &Path, marker: &str, leaders: &Leaders) -> io::Result<Launch> {
    use std::collections::BTreeMap;
    use std::ffi::{OsStr, OsString};
    use std::os::fd::AsFd as _;

    use super::leader::{Plan, Program, spawn};

    let mut env: BTreeMap<OsString, OsString> =
        if spec.env_clear { BTreeMap::new() } else { std::env::vars_os().collect() };
    for (key, value) in &spec.env {
        match value {
            Some(value) => env.insert(key.clone(), value.clone()),
            None => env.remove(key),
        };
    }
    env.insert(TREE_MARKER.into(), marker.into());
    // As std: a bare program name is looked up in the child's `PATH` when the spec changed it, else
    // in the server's.
    let search_path = if spec.env_clear || spec.env.contains_key(OsStr::new("PATH")) {
        env.get(OsStr::new("PATH")).cloned()
    } else {
        std::env::var_os("PATH")
    };
    let (program, arg0) = match &spec.pinned {
        Some(pinned) => (Program::Pinned(pinned.file().as_fd()), pinned.path().as_os_str()),
        None => (Program::Named(spec.executable.as_os_str()), spec.executable.as_os_str()),
    };
    let plan = Plan {
        program,
        arg0,
        args: &spec.arguments,
        env: env.into_iter().collect(),
        search_path,
        cwd,
        null_stdin: matches!(spec.stdin, Stdin::Null),
        core_dumps: spec.core_dumps,
    };
    let mut leaders = leaders.lock();
    let started = spawn(plan)?;
    let pid = started.leader.id();
    leaders.insert(pid);
    drop(leaders);
    Ok(Launch { child: started.leader, pid, stdin: started.stdin, stdout: started.stdout, stderr: started.stderr })
}

/// Spawns `spec` in `cwd` (already checked) in a new process group / job object. The leader's pid is
/// registered in `leaders` before the lock is released, so no reaper can mistake it for an orphan.
#[cfg(not(target_os = "linux"))]
pub(crate) fn spawn(spec: &CommandSpec, cwd: &Path, marker: &str, leaders: &Leaders) -> io::Result<Launch> {
    use process_wrap::tokio::{CommandWrap, KillOnDrop};
    // Windows: the plain form of verbatim (`\\?\`) paths, so the program's `argv[0]` and current
    // directory look as usual; a path that needs the verbatim form (`verbatim::plain`) keeps it.
    #[cfg(windows)]
    let (executable, cwd) = (super::verbatim::plain_path(&spec.executable), super::verbatim::plain_path(cwd));
    #[cfg(not(windows))]
    let executable = &spec.executable;
    #[expect(clippy::disallowed_methods, reason = "the process service is the one place that builds OS commands")]
    let mut command = tokio::process::Command::new(executable.as_os_str());
    command.args(&spec.arguments).current_dir(cwd.as_os_str());
    if spec.env_clear {
        command.env_clear();
    }
    for (key, value) in &spec.env {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    command.env(TREE_MARKER, marker);
    command.stdin(match spec.stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) | Stdin::Piped => Stdio::piped(),
    });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut wrap = CommandWrap::from(command);
    #[cfg(unix)]
    wrap.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrap.wrap(process_wrap::tokio::JobObject);
    wrap.wrap(KillOnDrop);

    let mut leaders = leaders.lock();
    let mut child = wrap.spawn()?;
    let pid = child.id().ok_or_else(|| io::Error::other("the child exited before its pid was known"))?;
    leaders.insert(pid);
    drop(leaders);
    let stdin = child.stdin().take();
    let stdout = child.stdout().take().expect("stdout was configured as piped");
    let stderr = child.stderr().take().expect("stderr was configured as piped");
    Ok(Launch { child: Leader(child), pid, stdin, stdout, stderr })
}

#[cfg(target_os = "linux")]
use super::leader::Leader;

/// The wrapper stack around the leader's `tokio::process::Child` (group or job object, kill on drop).
#[cfg(not(target_os = "linux"))]
pub(crate) struct Leader(Box<dyn ChildWrapper>);

#[cfg(not(target_os = "linux"))]
impl Leader {
    /// Waits on the leader's `Child` inside the stack (rather than on the group wrapper), which
    /// returns when the leader exits, even while other group members still run.
    async fn wait(&mut self) -> io::Result<ExitStatus> {
        let mut wrapper: &mut dyn ChildWrapper = self.0.as_mut();
        for _ in 0..8 {
            if (&*wrapper as &dyn Any).is::<Child>() {
                let leader = (wrapper as &mut dyn Any).downcast_mut::<Child>().expect("checked above");
                return leader.wait().await;
            }
            wrapper = wrapper.inner_mut();
        }
        Err(io::Error::other("no leader child inside the wrapper stack"))
    }

    fn start_kill(&mut self) -> io::Result<()> {
        self.0.start_kill()
    }
}

/// Everything the per-child task owns.
pub(crate) struct Supervisor {
    pub record: Arc<Record>,
    pub child: Leader,
    pub leaders: Leaders,
    /// `None` in long-lived mode, where the caller reads stdout through [`RecordedStdout`].
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
    /// Bytes to feed and then close stdin with.
    pub stdin: Option<(ChildStdin, Vec<u8>)>,
    pub timeout: Timeout,
    pub on_line: Option<LineCallback>,
}

impl Supervisor {
    pub async fn run(self) {
        let Supervisor { record, mut child, leaders, mut stdout, mut stderr, mut stdin, timeout, on_line } = self;
        let guard = KillOnDropGuard { record: record.clone(), leaders: leaders.clone(), armed: true };
        let started = record.started;
        let journal = &record.journal;
        let mut out_lines = on_line.as_ref().map(|_| LineSplitter::default());
        let mut err_lines = on_line.as_ref().map(|_| LineSplitter::default());
        let mut out_buf = vec![0u8; READ_BUFFER];
        let mut err_buf = vec![0u8; READ_BUFFER];
        let mut stdin_pos = 0;
        let mut exit: Option<io::Result<ExitStatus>> = None;
        let mut verdict: Option<Status> = None;
        let mut ended_at: Option<Instant> = None;
        let mut drain_until: Option<tokio::time::Instant> = None;
        let mut killed: Vec<u32> = Vec::new();
        let total_deadline = timeout.total.map(|total| tokio::time::Instant::from_std(started) + total);

        let kill_tree = |child: &mut Leader, killed: &mut Vec<u32>| {
            // The tree walk first, while the leader (a subreaper) may still hold the orphans.
            killed.extend(record.tree.kill(&leaders));
            let _ = child.start_kill();
        };

        loop {
            if (exit.is_some() || verdict.is_some()) && stdout.is_none() && stderr.is_none() {
                break;
            }
            let active = exit.is_none() && verdict.is_none();
            let idle_deadline = match (active, timeout.idle) {
                (true, Some(idle)) => {
                    let last = journal.last_activity().unwrap_or_default();
                    Some(tokio::time::Instant::from_std(started) + last + idle)
                }
                _ => None,
            };
            tokio::select! {
                status = child.wait(), if exit.is_none() => {
                    exit = Some(status);
                    ended_at.get_or_insert_with(Instant::now);
                    leaders.lock().remove(&record.pid);
                    // The leader is gone: whatever is left of its tree is a leftover.
                    kill_tree(&mut child, &mut killed);
                    drain_until.get_or_insert_with(|| tokio::time::Instant::now() + DRAIN_GRACE);
                }
                () = record.stop.cancelled(), if active => {
                    verdict = Some(Status::Stopped);
                    ended_at = Some(Instant::now());
                    kill_tree(&mut child, &mut killed);
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                }
                () = sleep_until(total_deadline), if active && total_deadline.is_some() => {
                    verdict = Some(Status::Interrupted);
                    ended_at = Some(Instant::now());
                    kill_tree(&mut child, &mut killed);
                    drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                }
                () = sleep_until(idle_deadline), if idle_deadline.is_some() => {
                    // Recheck: stdin written by a long-lived caller also counts as activity.
                    let last = journal.last_activity().unwrap_or_default();
                    if timeout.idle.is_some_and(|idle| started.elapsed() >= last + idle) {
                        verdict = Some(Status::Interrupted);
                        ended_at = Some(Instant::now());
                        kill_tree(&mut child, &mut killed);
                        drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                    }
                }
                () = sleep_until(drain_until), if drain_until.is_some() => {
                    // Something outside our reach keeps a pipe open; stop waiting for it.
                    tracing::warn!("process {}: output pipes stayed open after the process ended", record.id);
                    stdout = None;
                    stderr = None;
                    journal.finish(Stream::Stdout);
                    journal.finish(Stream::Stderr);
                }
                read = read_some(&mut stdout, &mut out_buf), if stdout.is_some() => {
                    match read {
                        Ok(0) => {
                            stdout = None;
                            journal.finish(Stream::Stdout);
                            finish_lines(&mut out_lines, Stream::Stdout, on_line.as_ref());
                        }
                        Ok(n) => {
                            journal.record(Stream::Stdout, &out_buf[..n]);
                            feed_lines(&mut out_lines, Stream::Stdout, &out_buf[..n], on_line.as_ref());
                        }
                        Err(err) => {
                            tracing::warn!("process {}: reading stdout failed: {err}", record.id);
                            stdout = None;
                            journal.finish(Stream::Stdout);
                            if verdict.is_none() && exit.is_none() {
                                verdict = Some(Status::StreamFailure);
                                ended_at = Some(Instant::now());
                                kill_tree(&mut child, &mut killed);
                                drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                            }
                        }
                    }
                }
                read = read_some(&mut stderr, &mut err_buf), if stderr.is_some() => {
                    match read {
                        Ok(0) => {
                            stderr = None;
                            journal.finish(Stream::Stderr);
                            finish_lines(&mut err_lines, Stream::Stderr, on_line.as_ref());
                        }
                        Ok(n) => {
                            journal.record(Stream::Stderr, &err_buf[..n]);
                            feed_lines(&mut err_lines, Stream::Stderr, &err_buf[..n], on_line.as_ref());
                        }
                        Err(err) => {
                            tracing::warn!("process {}: reading stderr failed: {err}", record.id);
                            stderr = None;
                            journal.finish(Stream::Stderr);
                            if verdict.is_none() && exit.is_none() {
                                verdict = Some(Status::StreamFailure);
                                ended_at = Some(Instant::now());
                                kill_tree(&mut child, &mut killed);
                                drain_until = Some(tokio::time::Instant::now() + DRAIN_GRACE);
                            }
                        }
                    }
                }
                written = write_some(&mut stdin, stdin_pos), if stdin.is_some() => {
                    match written {
                        Ok(n) => {
                            let (_, data) = stdin.as_ref().expect("guarded by the branch condition");
                            journal.record(Stream::Stdin, &data[stdin_pos..stdin_pos + n]);
                            stdin_pos += n;
                            if stdin_pos == data.len() {
                                journal.finish(Stream::Stdin);
                                stdin = None;
                            }
                        }
                        Err(err) => {
                            // The child closed its stdin early; that is its business, not a failure.
                            tracing::debug!("process {}: writing stdin stopped: {err}", record.id);
                            journal.finish(Stream::Stdin);
                            stdin = None;
                        }
                    }
                }
            }
        }
        drop(stdin);

        // Reap the leader if the loop ended before it did (it was killed, so this is quick).
        if exit.is_none() {
            exit = tokio::time::timeout(DRAIN_GRACE, child.wait()).await.ok();
            leaders.lock().remove(&record.pid);
        }
        let status = verdict.unwrap_or_else(|| match &exit {
            Some(Ok(status)) => exit_status(*status),
            Some(Err(err)) => {
                tracing::warn!("process {}: waiting for the process failed: {err}", record.id);
                Status::StreamFailure
            }
            None => Status::StreamFailure,
        });
        let work_time = ended_at.unwrap_or_else(Instant::now).duration_since(started);
        record.finish(status, work_time);

        // Orphans re-parented to the server become zombies once killed; reap them.
        let mut pending = killed;
        for _ in 0..50 {
            pending = reap(&pending, &leaders);
            if pending.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        guard.disarm();
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn read_some<R: AsyncRead + Unpin>(reader: &mut Option<R>, buf: &mut [u8]) -> io::Result<usize> {
    match reader {
        Some(reader) => reader.read(buf).await,
        None => std::future::pending().await,
    }
}

async fn write_some(stdin: &mut Option<(ChildStdin, Vec<u8>)>, pos: usize) -> io::Result<usize> {
    match stdin {
        Some((pipe, data)) => {
            let n = pipe.write(&data[pos..]).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            Ok(n)
        }
        None => std::future::pending().await,
    }
}

fn exit_status(status: ExitStatus) -> Status {
    if let Some(code) = status.code() {
        return Status::Exited(code);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Status::Exited(-signal);
        }
    }
    Status::StreamFailure
}

/// Kills the tree and marks the record `stopped` if the supervisor is dropped before it finished.
struct KillOnDropGuard {
    record: Arc<Record>,
    leaders: Leaders,
    armed: bool,
}

impl KillOnDropGuard {
    fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for KillOnDropGuard {
    fn drop(&mut self) {
        if self.armed {
            self.record.tree.kill(&self.leaders);
            self.leaders.lock().remove(&self.record.pid);
            self.record.finish(Status::Stopped, self.record.started.elapsed());
        }
    }
}

/// Splits one stream's bytes into lines for a [`LineCallback`].
#[derive(Default)]
struct LineSplitter {
    partial: Vec<u8>,
    /// The current line outgrew [`MAX_CALLBACK_LINE`]; drop bytes until its LF.
    overflowed: bool,
}

impl LineSplitter {
    fn feed(&mut self, bytes: &[u8], emit: &mut dyn FnMut(&str)) {
        let mut start = 0;
        for pos in memchr::memchr_iter(b'\n', bytes) {
            let line = &bytes[start..pos];
            start = pos + 1;
            if self.partial.is_empty() && !self.overflowed {
                // The whole line is in this read: no copy.
                emit_line(&line[..line.len().min(MAX_CALLBACK_LINE)], emit);
            } else {
                self.push(line);
                self.emit(emit);
            }
        }
        self.push(&bytes[start..]);
    }

    fn push(&mut self, bytes: &[u8]) {
        let room = MAX_CALLBACK_LINE.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.overflowed = true;
        }
        self.partial.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn emit(&mut self, emit: &mut dyn FnMut(&str)) {
        emit_line(&self.partial, emit);
        self.partial.clear();
        self.overflowed = false;
    }

    fn finish(&mut self, emit: &mut dyn FnMut(&str)) {
        if !self.partial.is_empty() || self.overflowed {
            self.emit(emit);
        }
    }
}

/// Hands one line (without its LF) to `emit`, without a CR right before the LF.
fn emit_line(line: &[u8], emit: &mut dyn FnMut(&str)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match std::str::from_utf8(line) {
        Ok(text) => emit(text),
        Err(_) => emit(&String::from_utf8_lossy(line)),
    }
}

fn feed_lines(splitter: &mut Option<LineSplitter>, stream: Stream, bytes: &[u8], on_line: Option<&LineCallback>) {
    if let (Some(splitter), Some(callback)) = (splitter, on_line) {
        splitter.feed(bytes, &mut |line| callback(stream, line));
    }
}

fn finish_lines(splitter: &mut Option<LineSplitter>, stream: Stream, on_line: Option<&LineCallback>) {
    if let (Some(splitter), Some(callback)) = (splitter, on_line) {
        splitter.finish(&mut |line| callback(stream, line));
    }
}

/// A long-lived child's stdout: reads pass through to the caller and are recorded on the way.
pub struct RecordedStdout {
    /// `None` once the pipe was taken (`LongLived::take_stdout`): reads then see end of file.
    pub(crate) inner: Option<ChildStdout>,
    pub(crate) record: Arc<Record>,
}

impl AsyncRead for RecordedStdout {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let Some(inner) = self.inner.as_mut() else { return Poll::Ready(Ok(())) };
        let res = Pin::new(inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &res {
            let read = &buf.filled()[before..];
            if read.is_empty() {
                self.record.journal.finish(Stream::Stdout);
            } else {
                self.record.journal.record(Stream::Stdout, read);
            }
        }
        res
    }
}

/// A long-lived child's stdin: writes pass through and are recorded as `stdin`.
pub struct RecordedStdin {
    pub(crate) inner: ChildStdin,
    pub(crate) record: Arc<Record>,
}

impl AsyncWrite for RecordedStdin {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let res = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = &res {
            self.record.journal.record(Stream::Stdin, &buf[..*n]);
        }
        res
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let res = Pin::new(&mut self.inner).poll_shutdown(cx);
        if let Poll::Ready(Ok(())) = &res {
            self.record.journal.finish(Stream::Stdin);
        }
        res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<String> {
        let mut splitter = LineSplitter::default();
        let mut lines = Vec::new();
        for chunk in chunks {
            splitter.feed(chunk, &mut |line| lines.push(line.to_owned()));
        }
        splitter.finish(&mut |line| lines.push(line.to_owned()));
        lines
    }

    #[test]
    fn lines_are_split_on_lf_and_lose_a_trailing_cr() {
        assert_eq!(split(&[b"a\r\nb\n", b"c"]), ["a", "b", "c"]);
    }

    #[test]
    fn lines_split_across_reads_are_joined() {
        assert_eq!(split(&[b"[1/", b"3] cc\r", b"\n"]), ["[1/3] cc"]);
    }

    #[test]
    fn lone_cr_stays_inside_a_line() {
        assert_eq!(split(&[b"10%\r20%\n"]), ["10%\r20%"]);
    }

    #[test]
    fn overlong_lines_are_cut() {
        let long = vec![b'x'; MAX_CALLBACK_LINE + 10];
        let lines = split(&[&long, b"\nnext\n"]);
        assert_eq!(lines[0].len(), MAX_CALLBACK_LINE);
        assert_eq!(lines[1], "next");
    }

    #[test]
    fn signals_are_reported_as_negative_codes() {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(exit_status(ExitStatus::from_raw(9)), Status::Exited(-9));
            assert_eq!(exit_status(ExitStatus::from_raw(3 << 8)), Status::Exited(3));
        }
    }
}
