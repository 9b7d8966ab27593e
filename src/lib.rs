//! ForgeMCP: structured C/C++ development tools for one local workspace, served over MCP.
//!
//! See `docs/architecture.md` for the code map and its invariants.

pub mod admin;
pub mod allocator;
pub mod app;
pub mod call;
pub mod clangd;
pub mod cli;
pub mod cmake;
pub mod compile_db;
pub mod config;
pub mod cpp_file;
pub mod dap;
pub mod debug;
pub mod framing;
pub mod include_graph;
pub mod lsp;
pub mod process;
pub mod quality;
pub mod render;
pub mod server;
pub mod text;
pub mod toolchain;
pub mod widgets;
pub mod workspace;
