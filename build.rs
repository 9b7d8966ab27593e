//! Generates the table of embedded HTML assets (`OUT_DIR/embedded_assets.rs`).
//!
//! Every `assets/*.html` file present at build time is embedded with `include_bytes!`; a file that
//! is missing simply has no entry, and `widgets.rs` serves an explicit missing-assets page for it.
//! So a source checkout without built widgets still compiles and runs. `assets/` is build output of
//! `frontend/` (`npm run build --prefix frontend`) and is committed.

#![allow(clippy::print_stdout, reason = "cargo reads build-script instructions from stdout")]

use std::fmt::Write as _;
use std::path::Path;

fn main() {
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
