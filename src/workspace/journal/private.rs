//! The journal's directory, private to the user: it holds file contents, so, like the admin
//! socket's directory, nobody else may read it. Unix: mode 0700 (group and other access removed
//! from an existing one). Windows: a protected DACL granting full access to the current user (the
//! process token's user SID) and SYSTEM only, inherited by everything created inside, set on a new
//! directory and on an existing one alike (nothing of the parent's ACL is inherited).
//!
//! Architecture invariant: the directory is made private before the journal writes anything into
//! it; a directory that cannot be made private is an error, never silently left readable.

use std::path::Path;

/// Creates `dir` (and its parents) if needed and makes it private to the current user.
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    imp::create(dir)
}

#[cfg(unix)]
mod imp {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    use std::path::Path;

    pub fn create(dir: &Path) -> std::io::Result<()> {
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => Ok(()),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let meta = std::fs::metadata(dir)?;
                if meta.permissions().mode() & 0o077 != 0 {
                    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
                }
                Ok(())
            }
            Err(err) => Err(err),
        }
    }
}

#[cfg(windows)]
#[expect(unsafe_code, reason = "the Win32 security calls (token, SID, security descriptor, DACL) are FFI")]
mod imp {
    use std::ffi::c_void;
    use std::io;
    use std::os::windows::ffi::OsStrExt;
    use std::path::Path;

    use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
    use windows_sys::Win32::Security::Authorization::{
        ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1, SE_FILE_OBJECT,
        SetNamedSecurityInfoW,
    };
    use windows_sys::Win32::Security::{
        ACL, DACL_SECURITY_INFORMATION, GetSecurityDescriptorDacl, GetTokenInformation,
        PROTECTED_DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR, TOKEN_QUERY, TOKEN_USER, TokenUser,
    };
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

    pub fn create(dir: &Path) -> io::Result<()> {
        match std::fs::create_dir(dir) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
        restrict(dir, &sddl(&current_user_sid()?))
    }

    /// Full access (`FA`) for `sid` and SYSTEM, inherited by files and directories inside
    /// (`OICI`); `P`: the parent's ACL is not inherited.
    pub fn sddl(sid: &str) -> String {
        format!("D:P(A;OICI;FA;;;{sid})(A;OICI;FA;;;SY)")
    }

    fn wide(text: &std::ffi::OsStr) -> Vec<u16> {
        text.encode_wide().chain(std::iter::once(0)).collect()
    }

    fn check(ok: i32) -> io::Result<()> {
        if ok == 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
    }

    /// The string form (`S-1-5-21-…`) of the SID of the user this process runs as.
    pub fn current_user_sid() -> io::Result<String> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: GetCurrentProcess returns a pseudo-handle; `token` receives a handle we close.
        check(unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) })?;
        let res = token_user_sid(token);
        // SAFETY: `token` was opened above and is closed once.
        unsafe { CloseHandle(token) };
        res
    }

    fn token_user_sid(token: HANDLE) -> io::Result<String> {
        let mut len = 0u32;
        // SAFETY: a size query (null buffer, zero length); it fails and sets `len`.
        unsafe { GetTokenInformation(token, TokenUser, std::ptr::null_mut(), 0, &mut len) };
        if len == 0 {
            return Err(io::Error::last_os_error());
        }
        // u64 words keep the TOKEN_USER aligned.
        let mut buffer = vec![0u64; (len as usize).div_ceil(8)];
        // SAFETY: `buffer` holds at least `len` bytes.
        check(unsafe { GetTokenInformation(token, TokenUser, buffer.as_mut_ptr().cast::<c_void>(), len, &mut len) })?;
        // SAFETY: the call filled the buffer with a TOKEN_USER whose SID points into the buffer.
        let user = unsafe { &*buffer.as_ptr().cast::<TOKEN_USER>() };
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid SID in; `text` receives a LocalAlloc'ed NUL-terminated string.
        check(unsafe { ConvertSidToStringSidW(user.User.Sid, &mut text) })?;
        // SAFETY: `text` is NUL-terminated; it is freed once, after it was copied.
        let res = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let sid = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast::<c_void>());
            sid
        };
        Ok(res)
    }

    /// Replaces the DACL of `dir` with the one `sddl` describes, protected from inheritance.
    pub fn restrict(dir: &Path, sddl: &str) -> io::Result<()> {
        let sddl = wide(std::ffi::OsStr::new(sddl));
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `descriptor` receives a LocalAlloc'ed descriptor.
        check(unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                std::ptr::null_mut(),
            )
        })?;
        let res = apply(dir, descriptor);
        // SAFETY: allocated by the conversion above, freed once.
        unsafe { LocalFree(descriptor) };
        res
    }

    fn apply(dir: &Path, descriptor: PSECURITY_DESCRIPTOR) -> io::Result<()> {
        let (mut present, mut defaulted) = (0i32, 0i32);
        let mut dacl: *mut ACL = std::ptr::null_mut();
        // SAFETY: a valid descriptor; `dacl` points into it and is used while it lives.
        check(unsafe { GetSecurityDescriptorDacl(descriptor, &mut present, &mut dacl, &mut defaulted) })?;
        let path = wide(dir.as_os_str());
        // SAFETY: a NUL-terminated path and a DACL from a valid descriptor; owner, group and SACL
        // are left as they are (null).
        let status = unsafe {
            SetNamedSecurityInfoW(
                path.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                dacl,
                std::ptr::null(),
            )
        };
        if status == 0 { Ok(()) } else { Err(io::Error::from_raw_os_error(status as i32)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_existing_directory_loses_group_and_other_access() {
        use std::os::unix::fs::PermissionsExt;
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("storage").join(".journal");
        create_private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_dir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    }

    /// No test can let a second Windows user try the directory (and Wine runs everything as one
    /// user), so this checks what Windows enforces: the directory's DACL, as the system reads it
    /// back, is protected and has exactly the current user's and SYSTEM's full-access entries.
    #[cfg(windows)]
    #[test]
    #[expect(unsafe_code, reason = "reading the DACL back is FFI")]
    fn the_directory_admits_only_the_current_user_and_system() {
        use std::os::windows::ffi::OsStrExt;
        use windows_sys::Win32::Foundation::LocalFree;
        use windows_sys::Win32::Security::Authorization::{
            ConvertSecurityDescriptorToStringSecurityDescriptorW, GetNamedSecurityInfoW, SDDL_REVISION_1,
            SE_FILE_OBJECT,
        };
        use windows_sys::Win32::Security::{DACL_SECURITY_INFORMATION, PSECURITY_DESCRIPTOR};

        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join(".journal");
        create_private_dir(&dir).unwrap();
        let path: Vec<u16> = dir.as_os_str().encode_wide().chain(std::iter::once(0)).collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: a NUL-terminated path; only the descriptor is asked for, freed below.
        let status = unsafe {
            GetNamedSecurityInfoW(
                path.as_ptr(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut descriptor,
            )
        };
        assert_eq!(status, 0);
        let mut text: *mut u16 = std::ptr::null_mut();
        // SAFETY: a valid descriptor; `text` receives a LocalAlloc'ed string, freed below.
        let ok = unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                descriptor,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(ok, 0);
        // SAFETY: NUL-terminated; both are freed once.
        let dacl = unsafe {
            let len = (0..).take_while(|&i| *text.add(i) != 0).count();
            let dacl = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
            LocalFree(text.cast());
            LocalFree(descriptor);
            dacl
        };
        let sid = imp::current_user_sid().unwrap();
        assert_eq!(dacl, format!("D:P(A;OICI;FA;;;{sid})(A;OICI;FA;;;SY)"));
    }
}
