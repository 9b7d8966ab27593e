//! Linux: starting a tree's leader without copying the server's address space.
//!
//! A leader must be a child subreaper (`prctl(PR_SET_CHILD_SUBREAPER)`, see `tree.rs`), and only the
//! process itself can set that, between its creation and its exec. Any such step (`pre_exec`) makes
//! std and tokio `fork`, and `fork` copies the server's page tables and write-protects its memory:
//! the fork alone cost 0.3 ms at 20 MiB resident and 1.4 ms at 100 MiB, and the server then takes a
//! copy-on-write fault on every page it writes. [`spawn`] instead does what glibc's `posix_spawn`
//! does: `clone(CLONE_VM | CLONE_VFORK)`, a child on a stack of its own that shares the server's
//! memory and runs a few system calls (signal dispositions and mask as std leaves them, its own
//! process group, the subreaper attribute, the three pipes, the working directory, a pinned
//! descriptor kept open) and `execve`; the server's thread waits until the exec. Everything the
//! child touches is prepared beforehand: it allocates nothing, takes no lock, and reports a failed
//! step by its errno in shared memory, so spawn errors read as std's (`No such file or directory
//! (os error 2)` for a missing program or working directory).
//!
//! The child is then watched through a pidfd ([`Leader`]): its exit makes the descriptor readable
//! for tokio, the status is collected with `waitid(P_PIDFD)`, signals go through
//! `pidfd_send_signal`, so no pid is ever confused with a reused one. Dropping an unreaped leader
//! kills it (kill on drop) and reaps it. Needs Linux 5.3 (pidfd).
//!
//! Architecture invariant: this file holds the process service's one `unsafe` spawn; the child
//! side calls only async-signal-safe system calls on memory prepared before the clone.

use std::ffi::{CStr, CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};

use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
use rustix::process::{Pid, PidfdFlags, Signal, WaitId, WaitIdOptions, WaitIdStatus};
use tokio::io::unix::AsyncFd;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

/// What the leader is started with; the strings as the caller has them.
pub(crate) struct Plan<'a> {
    pub program: Program<'a>,
    /// `argv[0]`.
    pub arg0: &'a OsStr,
    pub args: &'a [OsString],
    /// The complete environment.
    pub env: Vec<(OsString, OsString)>,
    /// The `PATH` to look a bare program name up in.
    pub search_path: Option<OsString>,
    pub cwd: &'a Path,
    /// Null stdin instead of a pipe.
    pub null_stdin: bool,
    /// Raise the soft core-file size limit to the hard one.
    pub core_dumps: bool,
}

/// What the leader executes.
pub(crate) enum Program<'a> {
    /// A path (relative to the working directory if relative) or a bare name looked up in `PATH`.
    Named(&'a OsStr),
    /// The file an opened descriptor holds, through `/proc/self/fd/<n>`; the descriptor stays open
    /// across the exec in the child only, for `#!` scripts whose interpreter opens that path.
    Pinned(BorrowedFd<'a>),
}

/// A running (or exited, not yet waited for) leader.
#[derive(Debug)]
pub(crate) struct Leader {
    pid: u32,
    pidfd: Option<AsyncFd<OwnedFd>>,
    status: Option<ExitStatus>,
}

/// A started leader and the server's ends of its pipes.
pub(crate) struct Started {
    pub leader: Leader,
    pub stdin: Option<ChildStdin>,
    pub stdout: ChildStdout,
    pub stderr: ChildStderr,
}

/// Where glibc's `execvp` looks when `PATH` is unset.
const DEFAULT_PATH: &str = "/bin:/usr/bin";
/// The child's stack: it runs a handful of system calls and no Rust code of any depth.
const CHILD_STACK: usize = 64 * 1024;

/// Starts `plan` in a new process group as a child subreaper (see the module docs).
pub(crate) fn spawn(plan: Plan<'_>) -> io::Result<Started> {
    // A pinned descriptor must not sit on 0–2 either (see the pipes below): a duplicate then.
    let (candidates, pinned_copy, pinned) = match plan.program {
        Program::Pinned(fd) => {
            let copy = if fd.as_raw_fd() <= 2 { Some(rustix::io::fcntl_dupfd_cloexec(fd, 3)?) } else { None };
            let fd = copy.as_ref().map_or(fd.as_raw_fd(), AsRawFd::as_raw_fd);
            (vec![c_string(OsStr::new(&format!("/proc/self/fd/{fd}")))?], copy, Some(fd))
        }
        Program::Named(program) => (candidates(program, plan.search_path.as_deref())?, None, None),
    };
    let argv_strings: Vec<CString> = std::iter::once(plan.arg0)
        .chain(plan.args.iter().map(OsString::as_os_str))
        .map(c_string)
        .collect::<Result<_, _>>()?;
    let env_strings: Vec<CString> = plan
        .env
        .iter()
        .map(|(key, value)| {
            let mut pair = key.as_bytes().to_vec();
            pair.push(b'=');
            pair.extend_from_slice(value.as_bytes());
            CString::new(pair).map_err(|_| nul_error())
        })
        .collect::<Result<_, _>>()?;
    let cwd = c_string(plan.cwd.as_os_str())?;
    let argv = null_terminated(&argv_strings);
    let envp = null_terminated(&env_strings);

    // The child's ends must not sit on 0–2, where the dup2s would overwrite one with another.
    let stdin = if plan.null_stdin {
        let null = rustix::fs::open("/dev/null", rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC, 0.into())?;
        (above_stdio(null)?, None)
    } else {
        let (read, write) = pipe()?;
        (read, Some(write))
    };
    let (out_read, out_write) = pipe()?;
    let (err_read, err_write) = pipe()?;
    let child = Child {
        candidates: &candidates,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        cwd: &cwd,
        stdio: [stdin.0.as_raw_fd(), out_write.as_raw_fd(), err_write.as_raw_fd()],
        keep_open: pinned,
        core_limit: plan.core_dumps.then(|| rustix::process::getrlimit(rustix::process::Resource::Core)),
        error: AtomicI32::new(0),
    };
    let pid = clone_and_exec(&child)?;
    let failed = child.error.load(Ordering::SeqCst);
    if failed != 0 {
        // The child has already exited (`_exit`): collect it.
        let _ = rustix::process::waitpid(Pid::from_raw(pid), rustix::process::WaitOptions::empty());
        return Err(io::Error::from_raw_os_error(failed));
    }
    drop((stdin.0, out_write, err_write, pinned_copy));
    let pid = Pid::from_raw(pid).ok_or_else(|| io::Error::other("clone returned pid 0"))?;
    let leader = match rustix::process::pidfd_open(pid, PidfdFlags::empty()).map_err(io::Error::from).and_then(watch) {
        Ok(pidfd) => Leader { pid: pid.as_raw_nonzero().get() as u32, pidfd: Some(pidfd), status: None },
        Err(err) => {
            let _ = rustix::process::kill_process(pid, Signal::KILL);
            let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
            return Err(err);
        }
    };
    Ok(Started {
        leader,
        stdin: stdin.1.map(|fd| ChildStdin::from_std(std::process::ChildStdin::from(fd))).transpose()?,
        stdout: ChildStdout::from_std(std::process::ChildStdout::from(out_read))?,
        stderr: ChildStderr::from_std(std::process::ChildStderr::from(err_read))?,
    })
}

/// Registers a pidfd with tokio's reactor: it becomes readable when the process exits.
#[expect(unsafe_code, reason = "tokio's registration asks its caller to keep the descriptor open and unchanged")]
fn watch(pidfd: OwnedFd) -> io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: an `OwnedFd` is open until dropped and always returns the same descriptor.
    Ok(unsafe { AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }?)
}

impl Leader {
    pub fn id(&self) -> u32 {
        self.pid
    }

    /// Waits for the leader's exit (its group may live on).
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            let pidfd = self.pidfd.as_ref().expect("an unreaped leader keeps its pidfd");
            pidfd.readable().await?.clear_ready();
        }
    }

    fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let pidfd = self.pidfd.as_ref().expect("an unreaped leader keeps its pidfd");
        let Some(status) = rustix::process::waitid(WaitId::PidFd(pidfd.get_ref().as_fd()), wait_options(true))? else {
            return Ok(None);
        };
        let status = exit_status(&status);
        self.status = Some(status);
        self.pidfd = None;
        Ok(Some(status))
    }

    /// SIGKILL to the leader and its process group, unless it was already waited for.
    pub fn start_kill(&mut self) -> io::Result<()> {
        let Some(pidfd) = &self.pidfd else { return Ok(()) };
        if let Some(pid) = Pid::from_raw(self.pid as i32) {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
        rustix::process::pidfd_send_signal(pidfd.get_ref(), Signal::KILL).map_err(io::Error::from)
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        if self.try_wait().ok().flatten().is_some() {
            return;
        }
        let _ = self.start_kill();
        let Some(pidfd) = self.pidfd.take() else { return };
        let fd = pidfd.into_inner();
        // Killed: it exits at once unless stuck in the kernel; reap it off this thread.
        let reap = move || {
            let _ = rustix::process::waitid(WaitId::PidFd(fd.as_fd()), wait_options(false));
        };
        let _ = std::thread::Builder::new().name("forgemcp-reap".into()).spawn(reap);
    }
}

fn wait_options(nohang: bool) -> WaitIdOptions {
    if nohang { WaitIdOptions::EXITED | WaitIdOptions::NOHANG } else { WaitIdOptions::EXITED }
}

/// The wait status std reports for what `waitid` found.
fn exit_status(status: &WaitIdStatus) -> ExitStatus {
    if let Some(code) = status.exit_status() {
        return ExitStatus::from_raw((code & 0xff) << 8);
    }
    let signal = status.terminating_signal().unwrap_or(0);
    ExitStatus::from_raw(signal | if status.dumped() { 0x80 } else { 0 })
}

fn nul_error() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, "nul byte found in provided data")
}

fn c_string(text: &OsStr) -> io::Result<CString> {
    CString::new(text.as_bytes()).map_err(|_| nul_error())
}

fn null_terminated(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings.iter().map(|s| s.as_ptr()).chain(std::iter::once(std::ptr::null())).collect()
}

/// The paths to try `execve` on, in order: the program itself when it names a path, else each
/// `PATH` entry joined with it (an empty entry is the working directory), as `execvp` does.
fn candidates(program: &OsStr, search_path: Option<&OsStr>) -> io::Result<Vec<CString>> {
    if program.is_empty() {
        return Err(io::Error::from_raw_os_error(libc::ENOENT));
    }
    if program.as_bytes().contains(&b'/') {
        return Ok(vec![c_string(program)?]);
    }
    let search = search_path.unwrap_or(OsStr::new(DEFAULT_PATH));
    search
        .as_bytes()
        .split(|&b| b == b':')
        .map(|dir| {
            let dir = if dir.is_empty() { b".".as_slice() } else { dir };
            let mut path = dir.to_vec();
            if !path.ends_with(b"/") {
                path.push(b'/');
            }
            path.extend_from_slice(program.as_bytes());
            CString::new(path).map_err(|_| nul_error())
        })
        .collect()
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    Ok((above_stdio(read)?, above_stdio(write)?))
}

/// `fd` itself, or a close-on-exec duplicate numbered 3 or above when it is 0, 1 or 2.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 { Ok(fd) } else { Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?) }
}

/// Everything the child reads, prepared by the server before the clone.
struct Child<'a> {
    candidates: &'a [CString],
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    cwd: &'a CStr,
    /// The descriptors to become 0, 1 and 2 (all above 2, close-on-exec).
    stdio: [RawFd; 3],
    keep_open: Option<RawFd>,
    /// The core-file size limit to set (soft raised to hard), read before the clone.
    core_limit: Option<rustix::process::Rlimit>,
    /// The errno of the step that failed; 0 when the exec succeeded.
    error: AtomicI32,
}

/// Clones the calling thread into a child sharing its memory that runs [`child_main`]; returns the
/// child's pid once it exec'ed or exited.
#[expect(unsafe_code, reason = "a vfork-style clone sharing the server's memory, and the child's raw system calls")]
fn clone_and_exec(child: &Child<'_>) -> io::Result<i32> {
    extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` is the `Child` the suspended parent thread keeps alive until the exec.
        let child = unsafe { &*(arg as *const Child<'_>) };
        let errno = match child.prepare() {
            Ok(()) => child.exec(),
            Err(err) => err.raw_os_error(),
        };
        child.error.store(if errno == 0 { libc::EINVAL } else { errno }, Ordering::SeqCst);
        // SAFETY: `_exit` ends the child without running anything of the shared process.
        unsafe { libc::_exit(127) }
    }

    let mut stack = vec![0u8; CHILD_STACK];
    // Nothing may run a signal handler in the child before it reset the dispositions.
    let mut old_mask = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::all()), Some(&mut old_mask))?;
    // SAFETY: the child runs on its own stack (`stack`, alive and unused by anyone else until the
    // clone returns: CLONE_VFORK suspends this thread until the child exec'ed or exited) and only
    // reads `child`, which outlives that; it writes only the atomic `child.error`. The other
    // threads of the server keep running but never touch this data.
    let pid = unsafe {
        let top = stack.as_mut_ptr().add(CHILD_STACK);
        let top = top.sub(top as usize % 16);
        libc::clone(
            child_main,
            top.cast(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            child as *const Child<'_> as *mut libc::c_void,
        )
    };
    let clone_error = io::Error::last_os_error();
    let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old_mask), None);
    drop(stack);
    if pid < 0 { Err(clone_error) } else { Ok(pid) }
}

#[expect(unsafe_code, reason = "the child's signal dispositions and borrowed descriptors")]
impl Child<'_> {
    /// Signals as std leaves them for a child (default handlers, SIGPIPE default, nothing
    /// blocked), then the process group, the subreaper attribute, stdio, cwd, the core-file limit, the kept
    /// descriptor.
    fn prepare(&self) -> rustix::io::Result<()> {
        for signal in 1..=libc::SIGRTMAX() {
            let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
            // SAFETY: querying and resetting a disposition in the child's own copy of the table.
            unsafe {
                if libc::sigaction(signal, std::ptr::null(), old.as_mut_ptr()) != 0 {
                    continue;
                }
                let handler = old.assume_init().sa_sigaction;
                if signal == libc::SIGPIPE || (handler != libc::SIG_DFL && handler != libc::SIG_IGN) {
                    let mut action = std::mem::MaybeUninit::<libc::sigaction>::zeroed().assume_init();
                    action.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(signal, &action, std::ptr::null_mut());
                }
            }
        }
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
        rustix::process::setpgid(None, None)?;
        rustix::process::set_child_subreaper(Some(Pid::INIT))?;
        // SAFETY: the descriptors are open in the child (copied with the parent's table).
        let [stdin, stdout, stderr] = self.stdio.map(|fd| unsafe { BorrowedFd::borrow_raw(fd) });
        rustix::stdio::dup2_stdin(stdin)?;
        rustix::stdio::dup2_stdout(stdout)?;
        rustix::stdio::dup2_stderr(stderr)?;
        rustix::process::chdir(self.cwd)?;
        if let Some(limit) = &self.core_limit {
            // One `prlimit64` system call on the prepared value; a refusal leaves the limit as it was.
            let raised = rustix::process::Rlimit { current: limit.maximum, maximum: limit.maximum };
            let _ = rustix::process::setrlimit(rustix::process::Resource::Core, raised);
        }
        if let Some(fd) = self.keep_open {
            // SAFETY: as above.
            rustix::io::fcntl_setfd(unsafe { BorrowedFd::borrow_raw(fd) }, rustix::io::FdFlags::empty())?;
        }
        Ok(())
    }

    /// `execve` on each candidate as `execvp` does; returns the errno to report.
    fn exec(&self) -> i32 {
        let mut denied = false;
        let mut last = libc::ENOENT;
        for candidate in self.candidates {
            // SAFETY: NUL-terminated strings and NULL-terminated arrays, alive until the exec.
            unsafe { libc::execve(candidate.as_ptr(), self.argv, self.envp) };
            last = io::Error::last_os_error().raw_os_error().unwrap_or(libc::ENOENT);
            match last {
                libc::EACCES => denied = true,
                libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
                _ => return last,
            }
        }
        if denied { libc::EACCES } else { last }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tried(program: &str, path: Option<&str>) -> Vec<String> {
        let candidates = candidates(OsStr::new(program), path.map(OsStr::new)).unwrap();
        candidates.into_iter().map(|c| c.into_string().unwrap()).collect()
    }

    #[test]
    fn a_bare_name_is_tried_in_each_path_entry_as_execvp_does() {
        assert_eq!(tried("cmake", Some("/usr/local/bin:/usr/bin/")), ["/usr/local/bin/cmake", "/usr/bin/cmake"]);
        // An empty entry is the working directory.
        assert_eq!(tried("t", Some(":/bin:")), ["./t", "/bin/t", "./t"]);
        assert_eq!(tried("t", None), ["/bin/t", "/usr/bin/t"]);
    }

    #[test]
    fn a_path_is_run_as_given_and_an_empty_name_is_missing() {
        assert_eq!(tried("./build/t", Some("/bin")), ["./build/t"]);
        assert_eq!(tried("/usr/bin/cmake", None), ["/usr/bin/cmake"]);
        let err = candidates(OsStr::new(""), None).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
        let err = candidates(OsStr::new("a\0b"), None).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
    }
}
