//! Generates the table of embedded HTML assets (`OUT_DIR/embedded_assets.rs`), and lays out the
//! release binary's start-up code together ([`link_layout`]).
//!
//! Every `assets/*.html` file present at build time is embedded with `include_bytes!`; a file that
//! is missing simply has no entry, and `widgets.rs` serves an explicit missing-assets page for it.
//! So a source checkout without built widgets still compiles and runs. `assets/` is build output of
//! `frontend/` (`npm run build --prefix frontend`) and is committed.

#![allow(clippy::print_stdout, reason = "cargo reads build-script instructions from stdout")]

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    link_layout();
    let manifest_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let assets = Path::new(&manifest_dir).join("assets");
    // A directory makes cargo rerun this script when any file below it is added, removed or changed.
    println!("cargo:rerun-if-changed=assets");
    println!("cargo:rerun-if-changed=build.rs");

    let mut files: Vec<(String, String)> = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&assets) {
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_file() && name.ends_with(".html") {
                files.push((name, path.to_string_lossy().into_owned()));
            }
        }
    }
    files.sort();

    let mut code = String::from(
        "/// The built HTML asset called `name` (`workspace-tree.html`, …), if it existed at build time.\n\
         pub fn embedded_asset(name: &str) -> Option<&'static [u8]> {\n    match name {\n",
    );
    for (name, path) in &files {
        writeln!(code, "        {name:?} => Some(include_bytes!({path:?})),").expect("writing to a String");
    }
    code.push_str("        _ => None,\n    }\n}\n");
    std::fs::write(Path::new(&out_dir).join("embedded_assets.rs"), code).expect("write embedded_assets.rs");
}

/// Release builds for x86-64 Linux with glibc, linked by rustc's default linker there (rust-lld,
/// since Rust 1.90): the functions start-up runs (`linker/startup-symbols.txt`, written by
/// `benches/idle_rss.py order`) are placed first and together in `.text`. The page cache maps a
/// binary in folios of up to several hundred KiB and a fault maps the whole folio, so start-up
/// code scattered over the 12 MiB of code kept 11 MiB of it resident; together it is under 2 MiB
/// (docs/performance.md). A name the build no longer has is skipped, so a list made with another
/// rustc or `Cargo.lock` (whose symbol hashes differ) is said in a warning; code changes rename
/// some names too, which `benches/idle_rss.py check` counts. Builds with a linker of
/// their own (`-C linker…`, `-fuse-ld` in RUSTFLAGS, `CARGO_TARGET_…_LINKER`) are left alone,
/// and so is every other target and profile.
fn link_layout() {
    const SYMBOLS: &str = "linker/startup-symbols.txt";
    println!("cargo:rerun-if-changed={SYMBOLS}");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-env-changed=CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("TARGET") != "x86_64-unknown-linux-gnu" || var("PROFILE") != "release" {
        return;
    }
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if flags.contains("linker")
        || flags.contains("fuse-ld")
        || !var("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_empty()
    {
        return;
    }
    let Some(rustc) = rustc_version() else { return };
    if !rustc.links_with_lld() {
        return;
    }
    let root = Path::new(&var("CARGO_MANIFEST_DIR")).to_path_buf();
    let path = root.join(SYMBOLS);
    let list = std::fs::read_to_string(&path).unwrap_or_default();
    let made_with =
        list.lines().next().and_then(|line| line.strip_prefix("# made with: ")).unwrap_or("nothing recorded");
    let lock = std::fs::read(root.join("Cargo.lock")).unwrap_or_default();
    let now = format!("rustc {} {}; Cargo.lock {:016x}", rustc.release, rustc.commit, fnv1a(&lock));
    if made_with != now {
        println!(
            "cargo:warning={SYMBOLS} was made with {made_with}, this build has {now}: its names no longer match, so \
             start-up code is scattered and idle RSS rises. Regenerate it: python3 benches/idle_rss.py order \
             target/release/forgemcp --workspace <a C/C++ tree> > {SYMBOLS}, then build again."
        );
    }
    println!("cargo:rustc-link-arg-bin=forgemcp=-Wl,--symbol-ordering-file={}", path.display());
    println!("cargo:rustc-link-arg-bin=forgemcp=-Wl,--no-warn-symbol-ordering");
    // Relative relocations packed (DT_RELR, glibc 2.36 and later): 9 KiB instead of the 0.7 MiB of
    // `.rela.dyn` that the dynamic loader reads at every start.
    if glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=forgemcp=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether this machine's glibc (`getconf GNU_LIBC_VERSION`: `glibc 2.36`) is at least `major.minor`.
#[expect(clippy::disallowed_methods, reason = "a build script asks getconf; no process service here")]
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let Some(version) = text.trim().strip_prefix("glibc ") else {
        return false;
    };
    let mut parts = version.split('.').map(|part| part.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0)) >= (major, minor)
}

/// FNV-1a, 64 bits (`benches/idle_rss.py` computes the same for the list's first line).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3))
}

/// The rustc building this crate: `release: 1.91.0` and `commit-hash: …` of `rustc -vV`.
struct Rustc {
    release: String,
    commit: String,
}

impl Rustc {
    /// Whether it (1.90 or later) links x86-64 Linux binaries with its rust-lld by default.
    fn links_with_lld(&self) -> bool {
        let mut parts = self.release.split(['.', '-']).map(|part| part.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (major, minor) >= (1, 90)
    }
}

#[expect(clippy::disallowed_methods, reason = "a build script asks rustc its version; no process service here")]
fn rustc_version() -> Option<Rustc> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let output = std::process::Command::new(rustc).arg("-vV").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| text.lines().find_map(|line| line.strip_prefix(name)).map(str::to_owned);
    Some(Rustc { release: field("release: ")?, commit: field("commit-hash: ").unwrap_or_else(|| "?".to_owned()) })
}
