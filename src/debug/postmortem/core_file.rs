//! Which program a core file belongs to, read from its ELF notes: `NT_FILE` (the files the process
//! had mapped, the executable first) and `NT_PRPSINFO` (the first 15 bytes of its file name).
//!
//! lldb loads a core with any executable and shows a meaningless stack for a mismatched pair, so
//! `debug_launch` and the post-mortem check the pair here first.
//!
//! Architecture invariant: [`check`] reads the head of the core file; everything else is a pure
//! function of the bytes; 64-bit little-endian ELF cores only (other formats are reported as not
//! readable, never guessed).

use std::io::Read as _;
use std::path::Path;

/// Bytes of a core read for its notes (they come first).
const CORE_HEAD: u64 = 16 * 1024 * 1024;

/// Why a core file does not fit a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mismatch {
    /// Not a core this reads (in words: `is not an ELF core file`).
    Unreadable(String),
    /// Another program wrote it (its path as the core names it).
    Owner(String),
}

/// The owner of the core at `core`, checked against `program` (absolute).
pub fn check(core: &Path, program: &Path) -> Result<(), Mismatch> {
    let mut head = Vec::new();
    std::fs::File::open(core)
        .and_then(|f| f.take(CORE_HEAD).read_to_end(&mut head))
        .map_err(|err| Mismatch::Unreadable(format!("cannot be read: {err}")))?;
    let owner = owner(&head).map_err(Mismatch::Unreadable)?;
    let mut names = vec![program.to_string_lossy().into_owned()];
    if let Ok(canonical) = std::fs::canonicalize(program) {
        names.push(canonical.to_string_lossy().into_owned());
    }
    let file_name = program.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match owner.belongs_to(&names, &file_name) {
        true => Ok(()),
        false => Err(Mismatch::Owner(owner.shown())),
    }
}

/// What a core file says about its program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CoreOwner {
    /// The mapped files (`NT_FILE`), in order.
    pub files: Vec<String>,
    /// The program's name as the kernel kept it (`NT_PRPSINFO`'s `pr_fname`, at most 15 bytes).
    pub name: Option<String>,
}

impl CoreOwner {
    /// True when the core was written by a process running `executable` (an absolute path, and its
    /// canonical form): it is among the mapped files, or, with no file list, its name matches.
    pub fn belongs_to(&self, executable: &[String], file_name: &str) -> bool {
        if !self.files.is_empty() {
            return self.files.iter().any(|f| executable.contains(f));
        }
        let short: String = file_name.chars().take(15).collect();
        self.name.as_deref() == Some(short.as_str())
    }

    /// The program the core names, for error messages.
    pub fn shown(&self) -> String {
        self.files.first().cloned().or_else(|| self.name.clone()).unwrap_or_else(|| "an unknown program".to_owned())
    }
}

const PT_NOTE: u32 = 4;
const ET_CORE: u16 = 4;
const NT_PRPSINFO: u32 = 3;
const NT_FILE: u32 = 0x4649_4c45;
/// `pr_fname`'s offset in the 64-bit `elf_prpsinfo`.
const PRPSINFO_FNAME: usize = 40;

fn u16_at(data: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(data.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(data: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(data.get(at..at + 8)?.try_into().ok()?)).ok()
}

/// The owner of an ELF core; `Err` says why it is not one this reads.
pub fn owner(data: &[u8]) -> Result<CoreOwner, String> {
    if data.get(..4) != Some(b"\x7fELF".as_slice()) {
        return Err("is not an ELF core file".to_owned());
    }
    if data.get(4) != Some(&2) || data.get(5) != Some(&1) {
        return Err("is not a 64-bit little-endian ELF file".to_owned());
    }
    if u16_at(data, 16) != Some(ET_CORE) {
        return Err("is an ELF file but not a core file".to_owned());
    }
    let truncated = || "is truncated".to_owned();
    let phoff = u64_at(data, 32).ok_or_else(truncated)?;
    let phentsize = usize::from(u16_at(data, 54).ok_or_else(truncated)?);
    let phnum = usize::from(u16_at(data, 56).ok_or_else(truncated)?);
    let mut res = CoreOwner::default();
    for idx in 0..phnum {
        let header = phoff + idx * phentsize;
        if u32_at(data, header) != Some(PT_NOTE) {
            continue;
        }
        let offset = u64_at(data, header + 8).ok_or_else(truncated)?;
        let size = u64_at(data, header + 32).ok_or_else(truncated)?;
        let notes = data.get(offset..offset.saturating_add(size)).ok_or_else(truncated)?;
        read_notes(notes, &mut res);
    }
    Ok(res)
}

fn read_notes(notes: &[u8], res: &mut CoreOwner) {
    let align = |n: usize| n.div_ceil(4) * 4;
    let mut at = 0;
    while let (Some(namesz), Some(descsz), Some(kind)) =
        (u32_at(notes, at), u32_at(notes, at + 4), u32_at(notes, at + 8))
    {
        let desc_at = at + 12 + align(namesz as usize);
        let Some(desc) = notes.get(desc_at..desc_at + descsz as usize) else { return };
        match kind {
            NT_FILE => res.files = mapped_files(desc),
            NT_PRPSINFO => {
                let name = desc.get(PRPSINFO_FNAME..PRPSINFO_FNAME + 16).unwrap_or_default();
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                res.name = Some(String::from_utf8_lossy(&name[..end]).into_owned());
            }
            _ => {}
        }
        at = desc_at + align(descsz as usize);
    }
}

/// `NT_FILE`: count, page size, count × (start, end, offset), then the NUL-separated names.
fn mapped_files(desc: &[u8]) -> Vec<String> {
    let Some(count) = u64_at(desc, 0) else { return Vec::new() };
    let names = 16usize.saturating_add(count.saturating_mul(24));
    let mut files: Vec<String> = Vec::new();
    for name in desc.get(names..).unwrap_or_default().split(|&b| b == 0).take(count) {
        let name = String::from_utf8_lossy(name).into_owned();
        if !files.contains(&name) {
            files.push(name);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal core: the ELF header, one PT_NOTE header, an NT_PRPSINFO and an NT_FILE note.
    fn core(files: &[&str], fname: &str) -> Vec<u8> {
        let mut notes = Vec::new();
        let mut note = |kind: u32, desc: Vec<u8>| {
            notes.extend(5u32.to_le_bytes());
            notes.extend((desc.len() as u32).to_le_bytes());
            notes.extend(kind.to_le_bytes());
            notes.extend(b"CORE\0\0\0\0");
            let padded = desc.len().div_ceil(4) * 4;
            notes.extend(&desc);
            notes.resize(notes.len() + padded - desc.len(), 0);
        };
        let mut prpsinfo = vec![0u8; 136];
        prpsinfo[PRPSINFO_FNAME..PRPSINFO_FNAME + fname.len()].copy_from_slice(fname.as_bytes());
        note(NT_PRPSINFO, prpsinfo);
        let mut file = Vec::new();
        file.extend((files.len() as u64).to_le_bytes());
        file.extend(4096u64.to_le_bytes());
        for _ in files {
            file.extend([0u8; 24]);
        }
        for name in files {
            file.extend(name.as_bytes());
            file.push(0);
        }
        note(NT_FILE, file);
        let mut data = vec![0u8; 64];
        data[..6].copy_from_slice(b"\x7fELF\x02\x01");
        data[16..18].copy_from_slice(&ET_CORE.to_le_bytes());
        data[32..40].copy_from_slice(&64u64.to_le_bytes());
        data[54..56].copy_from_slice(&56u16.to_le_bytes());
        data[56..58].copy_from_slice(&1u16.to_le_bytes());
        let mut header = vec![0u8; 56];
        header[..4].copy_from_slice(&PT_NOTE.to_le_bytes());
        header[8..16].copy_from_slice(&120u64.to_le_bytes());
        header[32..40].copy_from_slice(&(notes.len() as u64).to_le_bytes());
        data.extend(header);
        data.extend(notes);
        data
    }

    #[test]
    fn the_owner_is_read_from_the_notes() {
        let data = core(&["/w/build/crash_test", "/usr/lib/libc.so.6", "/w/build/crash_test"], "crash_test");
        let owner = owner(&data).unwrap();
        assert_eq!(owner.files, ["/w/build/crash_test", "/usr/lib/libc.so.6"]);
        assert_eq!(owner.name.as_deref(), Some("crash_test"));
        assert!(owner.belongs_to(&["/w/build/crash_test".into()], "crash_test"));
        assert!(!owner.belongs_to(&["/w/build/other".into()], "other"));
        assert_eq!(owner.shown(), "/w/build/crash_test");
    }

    #[test]
    fn without_a_file_list_the_name_decides() {
        let owner = owner(&core(&[], "a_very_long_tes")).unwrap();
        assert!(owner.belongs_to(&[], "a_very_long_test_name"));
        assert!(!owner.belongs_to(&[], "short"));
    }

    #[test]
    fn other_files_are_refused() {
        assert_eq!(owner(b"#!/bin/sh\n").unwrap_err(), "is not an ELF core file");
        let mut exe = core(&[], "x");
        exe[16] = 2;
        assert_eq!(owner(&exe).unwrap_err(), "is an ELF file but not a core file");
    }
}
