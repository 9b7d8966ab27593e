//! The same-user local endpoint of one Hub group (`--admin-ipc NAME`): where it lives, binding it
//! exclusively (the Hub election), connecting to it, and checking who connected.
//!
//! Unix (`unix.rs`): a socket `<dir>/<name>.sock` in a private directory `<dir>` =
//! `$XDG_RUNTIME_DIR/forgemcp`, or `<temp>/forgemcp-<uid>` without a runtime directory. The directory
//! must be owned by this user with no group or other access (it is created 0700, and a directory
//! that someone else prepared is refused), the socket is created 0600, and the Hub checks each peer's
//! effective uid. The election is an exclusive `flock` on `<dir>/<name>.lock`, held for the Hub's
//! lifetime (released by the kernel when the Hub dies, so a crashed Hub never blocks a new one).
//!
//! Windows (`windows.rs`): a named pipe `\\.\pipe\forgemcp-<user>-<name>` created with
//! `FILE_FLAG_FIRST_PIPE_INSTANCE` (the election) and a security descriptor that grants access to the
//! pipe's owner and SYSTEM only; remote clients are rejected.
//!
//! Architecture invariant: nobody but this OS user reaches a Hub: the directory mode (Unix) or the
//! pipe ACL (Windows) keeps others out, and on Unix the peer uid check refuses anyone who gets through.

#[cfg(unix)]
mod unix;
#[cfg(windows)]
mod windows;

use std::io;
use std::path::{Path, PathBuf};

use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::traits::tokio::Stream as _;

use crate::admin::options::AdminEnv;

#[cfg(unix)]
use unix as imp;
#[cfg(windows)]
use windows as imp;

/// Errors of the local endpoint.
#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    #[error("cannot prepare the private admin directory `{dir}`")]
    Dir {
        dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("refusing the admin directory `{dir}`: {problem}")]
    UnsafeDir { dir: PathBuf, problem: String },
    #[error("cannot bind the admin endpoint `{endpoint}`")]
    Bind {
        endpoint: String,
        #[source]
        source: io::Error,
    },
}

/// Where a Hub group listens.
#[derive(Debug, Clone)]
pub struct Endpoint {
    name: String,
    /// Private per-user directory: the socket and lock (Unix), the Hub's log and the login redirect
    /// page of `--open-admin` (both platforms).
    dir: PathBuf,
    /// The socket path (Unix) or pipe name (Windows).
    address: String,
}

impl Endpoint {
    /// The endpoint of group `ipc_name` for this OS user; prepares (and checks) the private
    /// directory.
    pub fn resolve(ipc_name: &str, env: &AdminEnv) -> Result<Endpoint, IpcError> {
        let dir = imp::private_dir(env)?;
        let address = imp::address(&dir, ipc_name, env);
        Ok(Endpoint { name: ipc_name.to_owned(), dir, address })
    }

    /// An endpoint in an explicit, already private directory (tests).
    pub fn in_dir(dir: &Path, ipc_name: &str) -> Result<Endpoint, IpcError> {
        let dir = imp::check_private_dir(dir)?;
        let address = imp::address(&dir, ipc_name, &AdminEnv::default());
        Ok(Endpoint { name: ipc_name.to_owned(), dir, address })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The socket path or pipe name.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The private per-user directory of this endpoint.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where a Hub of this group writes its log.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join(format!("{}.log", self.name))
    }

    /// Connects to the group's Hub. `NotFound` / `ConnectionRefused` mean no Hub is listening.
    pub async fn connect(&self) -> io::Result<Stream> {
        let name = imp::socket_name(&self.address)?;
        Stream::connect(name).await
    }

    /// Binds the endpoint if no other Hub holds it: `Ok(None)` means another Hub won the election.
    pub fn bind_exclusive(&self) -> Result<Option<HubListener>, IpcError> {
        imp::bind_exclusive(self)
    }
}

/// The Hub's side of the endpoint; dropping it releases the election and removes the socket.
pub struct HubListener {
    inner: imp::Listener,
}

impl HubListener {
    /// The next connection from this OS user; connections from anyone else are closed unanswered
    /// (and logged) without being returned.
    pub async fn accept(&self) -> io::Result<Stream> {
        loop {
            let stream = self.inner.accept().await?;
            match imp::peer_allowed(&stream) {
                Ok(()) => return Ok(stream),
                Err(reason) => {
                    tracing::warn!("refused an admin connection: {reason}");
                    drop(stream);
                }
            }
        }
    }
}
