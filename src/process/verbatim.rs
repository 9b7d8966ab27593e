//! Windows verbatim paths (`\\?\C:\…`, `\\?\UNC\server\share\…`) turned back into the plain form
//! (`C:\…`, `\\server\share\…`) wherever that form names the same file.
//!
//! Canonical paths on Windows are verbatim, and a program started through one sees the prefix in its
//! `argv[0]` (and in its current directory); test frameworks that locate their data from `argv[0]`
//! trip over it. The plain form is used unless the path needs the verbatim one: it is longer than
//! `MAX_PATH`, or a component would be changed by Win32 path normalization (`.`, `..`, trailing dots
//! or spaces, characters Win32 reserves, DOS device names such as `NUL` or `com1.txt`).
//!
//! Pure string logic, compiled and tested on every platform; only the Windows spawn code uses it.
//!
//! Architecture invariant: a path is only ever shortened to a plain path naming the same file; when
//! in doubt it stays verbatim.

#[cfg(windows)]
use std::{borrow::Cow, path::Path};

/// [`plain`] on a path; `path` itself when it has no plain form (or is not Unicode).
#[cfg(windows)]
pub(crate) fn plain_path(path: &Path) -> Cow<'_, Path> {
    match path.to_str().and_then(plain) {
        Some(plain) => Cow::Owned(plain.into()),
        None => Cow::Borrowed(path),
    }
}

/// Longest plain path the Win32 API accepts without the verbatim prefix (`MAX_PATH` less the NUL).
const MAX_PLAIN: usize = 259;

/// The plain form of `path` when it is verbatim and the plain form names the same file; `None`
/// when `path` is not verbatim or needs to stay so.
pub(crate) fn plain(path: &str) -> Option<String> {
    let rest = path.strip_prefix(r"\\?\")?;
    let (plain, components) = if let Some(unc) = rest.strip_prefix(r"UNC\") {
        (format!(r"\\{unc}"), unc)
    } else {
        let bytes = rest.as_bytes();
        if bytes.len() < 3 || !bytes[0].is_ascii_alphabetic() || bytes[1] != b':' || bytes[2] != b'\\' {
            return None;
        }
        (rest.to_owned(), &rest[3..])
    };
    let components = components.strip_suffix('\\').unwrap_or(components);
    let fine =
        plain.chars().count() <= MAX_PLAIN && (components.is_empty() || components.split('\\').all(plain_component));
    fine.then_some(plain)
}

/// Whether Win32 normalization leaves `name` as it is.
fn plain_component(name: &str) -> bool {
    const RESERVED: &[char] = &['<', '>', ':', '"', '/', '|', '?', '*'];
    !name.is_empty()
        && !name.ends_with(['.', ' '])
        && !name.chars().any(|c| c < ' ' || RESERVED.contains(&c))
        && !is_device_name(name)
}

/// `CON`, `nul.txt`, `COM1 .log`, `LPT²`, …: names Win32 maps to devices, with or without extension.
fn is_device_name(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ').to_ascii_uppercase();
    match stem.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => {
            let Some(digit) = stem.strip_prefix("COM").or_else(|| stem.strip_prefix("LPT")) else { return false };
            matches!(digit, "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "¹" | "²" | "³")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn drive_and_unc_paths_lose_the_prefix() {
        assert_eq!(plain(r"\\?\C:\work\build\tests.exe").as_deref(), Some(r"C:\work\build\tests.exe"));
        assert_eq!(plain(r"\\?\C:\").as_deref(), Some(r"C:\"));
        assert_eq!(plain(r"\\?\z:\a b\c.d\").as_deref(), Some(r"z:\a b\c.d\"));
        assert_eq!(plain(r"\\?\UNC\server\share\t.exe").as_deref(), Some(r"\\server\share\t.exe"));
    }

    #[test]
    fn plain_paths_and_other_verbatim_forms_are_left_alone() {
        assert_eq!(plain(r"C:\work\tests.exe"), None);
        assert_eq!(plain(r"\\server\share\t.exe"), None);
        assert_eq!(plain(r"\\?\Volume{0b1f}\t.exe"), None);
        assert_eq!(plain(r"\\?\GLOBALROOT\Device\HarddiskVolume1\t.exe"), None);
        assert_eq!(plain(r"\\?\C:"), None);
        assert_eq!(plain("/usr/bin/true"), None);
    }

    #[test]
    fn paths_that_need_the_verbatim_form_keep_it() {
        let long = format!(r"\\?\C:\{}\t.exe", "d".repeat(260));
        assert_eq!(plain(&long), None, "longer than MAX_PATH");
        let limit = format!(r"\\?\C:\{}", "d".repeat(256));
        assert_eq!(plain(&limit).map(|p| p.len()), Some(259), "exactly MAX_PATH with its NUL");
        for path in [
            r"\\?\C:\work\trailing.\t.exe",
            r"\\?\C:\work\trailing \t.exe",
            r"\\?\C:\work\.\t.exe",
            r"\\?\C:\work\..\t.exe",
            r"\\?\C:\work\\t.exe",
            r"\\?\C:\work\a*b\t.exe",
            r"\\?\C:\work\a/b\t.exe",
            r"\\?\C:\work\NUL",
            r"\\?\C:\work\con.txt\t.exe",
            r"\\?\C:\work\Com1 .log",
            r"\\?\C:\work\lpt²",
            r"\\?\UNC\server\share\aux",
        ] {
            assert_eq!(plain(path), None, "{path}");
        }
        for path in [r"\\?\C:\work\console", r"\\?\C:\work\com10", r"\\?\C:\work\nul_x", r"\\?\C:\work\.git\t"] {
            assert!(plain(path).is_some(), "{path}");
        }
    }
}
