//! Named pipes with a current-user ACL (see `ipc/mod.rs`). Compiled on Windows only.

use std::io;
use std::path::{Path, PathBuf};

use interprocess::local_socket::tokio::{Listener as SocketListener, Stream};
use interprocess::local_socket::traits::tokio::Listener as _;
use interprocess::local_socket::{GenericNamespaced, ListenerOptions, Name, ToNsName as _};
use interprocess::os::windows::local_socket::ListenerOptionsExt as _;
use interprocess::os::windows::security_descriptor::SecurityDescriptor;
use widestring::U16CString;

use super::{Endpoint, HubListener, IpcError};
use crate::admin::options::AdminEnv;

/// Protected DACL: full access for the pipe's owner (the user who started the Hub) and SYSTEM,
/// nothing for anyone else.
const PIPE_SDDL: &str = "D:P(A;;GA;;;OW)(A;;GA;;;SY)";

pub(super) struct Listener {
    socket: SocketListener,
}

impl Listener {
    pub(super) async fn accept(&self) -> io::Result<Stream> {
        self.socket.accept().await
    }
}

/// The per-user temporary directory (`%TEMP%` lies in the user's profile).
pub(super) fn private_dir(_env: &AdminEnv) -> Result<PathBuf, IpcError> {
    let dir = std::env::temp_dir().join("forgemcp");
    std::fs::create_dir_all(&dir).map_err(|source| IpcError::Dir { dir: dir.clone(), source })?;
    Ok(dir)
}

pub(super) fn check_private_dir(dir: &Path) -> Result<PathBuf, IpcError> {
    Ok(dir.to_path_buf())
}

/// `forgemcp-<user>-<name>`: pipe names are machine-wide, so the user name keeps groups of
/// different users apart.
pub(super) fn address(_dir: &Path, name: &str, env: &AdminEnv) -> String {
    let user: String = env
        .user_name
        .as_deref()
        .map(|u| u.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect())
        .unwrap_or_else(|| "user".to_owned());
    format!("forgemcp-{user}-{name}")
}

pub(super) fn socket_name(address: &str) -> io::Result<Name<'_>> {
    address.to_ns_name::<GenericNamespaced>()
}

pub(super) fn bind_exclusive(endpoint: &Endpoint) -> Result<Option<HubListener>, IpcError> {
    let bind_error = |source: io::Error| IpcError::Bind { endpoint: endpoint.address.clone(), source };
    let sddl = U16CString::from_str(PIPE_SDDL).map_err(|err| bind_error(io::Error::other(err.to_string())))?;
    let descriptor = SecurityDescriptor::deserialize(&sddl).map_err(bind_error)?;
    let name = socket_name(&endpoint.address).map_err(bind_error)?;
    // The first pipe instance is created with FILE_FLAG_FIRST_PIPE_INSTANCE: if another Hub owns the
    // name, creation fails, which is the election.
    match ListenerOptions::new().name(name).security_descriptor(descriptor).create_tokio() {
        Ok(socket) => Ok(Some(HubListener { inner: Listener { socket } })),
        Err(err) if matches!(err.kind(), io::ErrorKind::PermissionDenied | io::ErrorKind::AddrInUse) => Ok(None),
        Err(err) => Err(bind_error(err)),
    }
}

/// The pipe's ACL admits only this user (and SYSTEM); remote clients are rejected by the pipe mode.
pub(super) fn peer_allowed(_stream: &Stream) -> Result<(), String> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use interprocess::os::windows::security_descriptor::{AsSecurityDescriptorExt as _, SecurityDescriptor};
    use widestring::U16CString;

    use super::PIPE_SDDL;

    /// `SECURITY_INFORMATION` bit selecting the DACL.
    const DACL_SECURITY_INFORMATION: u32 = 4;

    /// No test can let a second Windows user try the pipe (and Wine runs everything as one user), so
    /// this checks what Windows enforces: the descriptor the pipe is created with, as the system
    /// parses and serializes it again, is a protected DACL of exactly two entries, full access for
    /// the owner and for SYSTEM; every other user is denied.
    #[test]
    fn the_pipe_admits_only_its_owner_and_system() {
        let sddl = U16CString::from_str(PIPE_SDDL).expect("no NUL");
        let descriptor = SecurityDescriptor::deserialize(&sddl).expect("the system accepts the SDDL");
        let dacl = descriptor
            .serialize(DACL_SECURITY_INFORMATION, |text| text.to_string_lossy())
            .expect("the system serializes the DACL");
        assert_eq!(dacl, "D:P(A;;GA;;;OW)(A;;GA;;;SY)");
    }
}
