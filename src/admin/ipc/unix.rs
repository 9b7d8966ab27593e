//! Unix domain sockets in a private per-user directory (see `ipc/mod.rs`).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use interprocess::local_socket::tokio::{Listener as SocketListener, Stream};
use interprocess::local_socket::traits::StreamCommon as _;
use interprocess::local_socket::traits::tokio::Listener as _;
use interprocess::local_socket::{GenericFilePath, ListenerOptions, Name, ToFsName as _};
use interprocess::os::unix::local_socket::ListenerOptionsExt as _;
use nix::fcntl::{Flock, FlockArg};
use nix::unistd::geteuid;

use super::{Endpoint, HubListener, IpcError};
use crate::admin::options::AdminEnv;

pub(super) struct Listener {
    socket: SocketListener,
    /// Held for the Hub's lifetime: the election.
    _lock: Flock<File>,
}

impl Listener {
    pub(super) async fn accept(&self) -> io::Result<Stream> {
        self.socket.accept().await
    }
}

/// `$XDG_RUNTIME_DIR/forgemcp`, else `<temp>/forgemcp-<uid>`; created 0700 and checked.
pub(super) fn private_dir(env: &AdminEnv) -> Result<PathBuf, IpcError> {
    let dir = match &env.runtime_dir {
        Some(runtime) if runtime.is_absolute() && runtime.is_dir() => runtime.join("forgemcp"),
        _ => std::env::temp_dir().join(format!("forgemcp-{}", geteuid())),
    };
    match fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
        Err(source) => return Err(IpcError::Dir { dir, source }),
    }
    check_private_dir(&dir)
}

/// Accepts `dir` only as a real directory (not a link) owned by this user; removes group and other
/// access if it has any.
pub(super) fn check_private_dir(dir: &Path) -> Result<PathBuf, IpcError> {
    let unsafe_dir = |problem: String| IpcError::UnsafeDir { dir: dir.to_path_buf(), problem };
    let meta = fs::symlink_metadata(dir).map_err(|source| IpcError::Dir { dir: dir.to_path_buf(), source })?;
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    let me = geteuid().as_raw();
    if meta.uid() != me {
        return Err(unsafe_dir(format!("it belongs to uid {}, not to this user (uid {me})", meta.uid())));
    }
    if meta.mode() & 0o077 != 0 {
        fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
            .map_err(|source| IpcError::Dir { dir: dir.to_path_buf(), source })?;
    }
    Ok(dir.to_path_buf())
}

pub(super) fn address(dir: &Path, name: &str, _env: &AdminEnv) -> String {
    dir.join(format!("{name}.sock")).to_string_lossy().into_owned()
}

pub(super) fn socket_name(address: &str) -> io::Result<Name<'_>> {
    address.to_fs_name::<GenericFilePath>()
}

pub(super) fn bind_exclusive(endpoint: &Endpoint) -> Result<Option<HubListener>, IpcError> {
    let bind_error = |source: io::Error| IpcError::Bind { endpoint: endpoint.address.clone(), source };
    let lock_path = endpoint.dir.join(format!("{}.lock", endpoint.name));
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .map_err(bind_error)?;
    let lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => return Ok(None),
        Err((_, errno)) => return Err(bind_error(io::Error::from(errno))),
    };
    // We hold the election: a socket file left here belongs to a Hub that died.
    match fs::remove_file(&endpoint.address) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(bind_error(err)),
    }
    let name = socket_name(&endpoint.address).map_err(bind_error)?;
    let socket = ListenerOptions::new().name(name).mode(0o600).create_tokio().map_err(bind_error)?;
    // The lock file names the Hub's pid, for people (and tests) looking for it.
    let _ = lock.set_len(0).and_then(|()| writeln!(&*lock, "{}", std::process::id()));
    Ok(Some(HubListener { inner: Listener { socket, _lock: lock } }))
}

/// The peer must run as this user (its effective uid, as the kernel recorded it at connect time).
pub(super) fn peer_allowed(stream: &Stream) -> Result<(), String> {
    let creds = stream.peer_creds().map_err(|err| format!("cannot read the peer's credentials: {err}"))?;
    let me = geteuid().as_raw();
    match creds.euid() {
        Some(uid) if uid == me => Ok(()),
        Some(uid) => Err(format!("the peer runs as uid {uid}, not as this user (uid {me})")),
        None => Err("the peer's uid is unknown".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_dir_loses_group_and_other_access() {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().join("admin");
        fs::DirBuilder::new().mode(0o755).create(&dir).expect("mkdir");
        check_private_dir(&dir).expect("our own directory is accepted");
        assert_eq!(fs::metadata(&dir).expect("stat").mode() & 0o777, 0o700);
    }

    #[test]
    fn a_link_is_not_a_private_dir() {
        let temp = tempfile::tempdir().expect("temp dir");
        let target = temp.path().join("target");
        fs::create_dir(&target).expect("mkdir");
        let link = temp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = check_private_dir(&link).expect_err("a link is refused");
        assert!(err.to_string().contains("it is not a directory"), "{err}");
    }

    #[test]
    fn runtime_dir_holds_the_endpoint() {
        let temp = tempfile::tempdir().expect("temp dir");
        let env = AdminEnv { runtime_dir: Some(temp.path().to_path_buf()), ..AdminEnv::default() };
        let endpoint = Endpoint::resolve("group-1", &env).expect("endpoint");
        assert_eq!(endpoint.dir(), temp.path().join("forgemcp"));
        assert!(endpoint.address().ends_with("/forgemcp/group-1.sock"));
        assert_eq!(fs::metadata(endpoint.dir()).expect("stat").mode() & 0o777, 0o700);
    }

    #[tokio::test]
    async fn the_second_bind_loses_the_election_and_the_first_drop_frees_it() {
        let temp = tempfile::tempdir().expect("temp dir");
        let env = AdminEnv { runtime_dir: Some(temp.path().to_path_buf()), ..AdminEnv::default() };
        let endpoint = Endpoint::resolve("election", &env).expect("endpoint");
        let first = endpoint.bind_exclusive().expect("bind").expect("first bind wins");
        assert!(endpoint.bind_exclusive().expect("bind").is_none(), "second bind loses");
        let mode = fs::metadata(endpoint.address()).expect("socket exists").mode();
        assert_eq!(mode & 0o777, 0o600);
        let pid = fs::read_to_string(endpoint.dir().join("election.lock")).expect("lock file");
        assert_eq!(pid.trim(), std::process::id().to_string());
        drop(first);
        let again = endpoint.bind_exclusive().expect("bind").expect("free again");
        let client = endpoint.connect();
        let (accepted, connected) = tokio::join!(again.accept(), client);
        accepted.expect("same-user peer accepted");
        connected.expect("connected");
    }
}
