//! The process's standard input as an async byte stream, for the stdio transport.
//!
//! A pipe or a socket is read on the runtime itself, woken by the reactor, so the thread that
//! reads a request is the thread that answers it. On an idle machine each hand-off between
//! threads wakes an idle CPU, and that wake-up costs more than the whole answer to a cheap
//! request: with a reader thread in front of the runtime, a ping took 0.090 ms, and read where it
//! is answered, 0.028 ms (mcpbench's client on an idle machine; docs/performance.md, "ping").
//! Anything else (a regular file, a terminal, one socket that is both stdin and stdout, Windows)
//! is read by tokio's blocking-pool reader.
//!
//! Architecture invariant: the descriptor's flags are put back as they were when the stream is
//! dropped, so a shell or parent that shares the open file never sees it non-blocking.

use tokio::io::AsyncRead;

/// The process's stdin.
pub fn open() -> Box<dyn AsyncRead + Send + Unpin> {
    #[cfg(unix)]
    if let Some(stdin) = pollable::PollStdin::open() {
        return Box::new(stdin);
    }
    Box::new(tokio::io::stdin())
}

#[cfg(unix)]
mod pollable {
    use std::io::{self, Stdin};
    use std::pin::Pin;
    use std::task::{Context, Poll, ready};

    use rustix::fs::{FileType, OFlags};
    use tokio::io::unix::AsyncFd;
    use tokio::io::{AsyncRead, Interest, ReadBuf};

    /// Stdin set non-blocking and registered with the runtime's reactor.
    pub struct PollStdin {
        fd: AsyncFd<Stdin>,
        /// The descriptor's flags before, restored on drop.
        flags: OFlags,
    }

    impl PollStdin {
        /// `None` unless stdin is a pipe or a socket of its own.
        pub fn open() -> Option<PollStdin> {
            let stdin = io::stdin();
            let stat = rustix::fs::fstat(&stdin).ok()?;
            if !matches!(FileType::from_raw_mode(stat.st_mode), FileType::Fifo | FileType::Socket) {
                return None;
            }
            // One socket for both directions: non-blocking would reach our writes too.
            let stdout = rustix::fs::fstat(io::stdout()).ok()?;
            if (stdout.st_dev, stdout.st_ino) == (stat.st_dev, stat.st_ino) {
                return None;
            }
            let flags = rustix::fs::fcntl_getfl(&stdin).ok()?;
            rustix::fs::fcntl_setfl(&stdin, flags | OFlags::NONBLOCK).ok()?;
            match AsyncFd::with_interest(stdin, Interest::READABLE) {
                Ok(fd) => Some(PollStdin { fd, flags }),
                Err(err) => {
                    tracing::debug!("stdin is read on the blocking pool: {err}");
                    let _ = rustix::fs::fcntl_setfl(io::stdin(), flags);
                    None
                }
            }
        }
    }

    impl AsyncRead for PollStdin {
        fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
            loop {
                let mut ready = ready!(self.fd.poll_read_ready(cx))?;
                let unfilled = buf.initialize_unfilled();
                let read = ready.try_io(|stdin| {
                    loop {
                        match rustix::io::read(stdin.get_ref(), &mut *unfilled) {
                            Err(rustix::io::Errno::INTR) => continue,
                            other => return other.map_err(io::Error::from),
                        }
                    }
                });
                match read {
                    Ok(Ok(n)) => {
                        buf.advance(n);
                        return Poll::Ready(Ok(()));
                    }
                    Ok(Err(err)) => return Poll::Ready(Err(err)),
                    // Not readable after all: readiness is cleared, wait for the next event.
                    Err(_would_block) => continue,
                }
            }
        }
    }

    impl Drop for PollStdin {
        fn drop(&mut self) {
            let _ = rustix::fs::fcntl_setfl(self.fd.get_ref(), self.flags);
        }
    }
}
