//! The local admin panel: one loopback browser panel for every ForgeMCP server of this OS user.
//!
//! - `protocol.rs` — the NDJSON messages between instances, `--open-admin` and the Hub, and framing.
//! - `ipc/` — the same-user endpoint of a Hub group: private directory, exclusive bind (the
//!   election), connect, peer checks (`unix.rs`, `windows.rs`).
//! - `history.rs` — the instance's in-memory call history (the server's `CallObserver`).
//! - `session.rs` — the panel's in-process MCP session on the server's own state.
//! - `instance/` — the instance's link: join in the background, serve the Hub's requests,
//!   reconnect.
//! - `settings.rs` — the startup settings as the panel shows them.
//! - `hub/` — the hidden `--admin-hub` process: HTTP panel, JSON API, event stream, widget sandbox,
//!   tokens and sessions.
//! - `open.rs` — `forgemcp --open-admin`.
//! - `options.rs` — what the admin modes are given (`AdminConfig`, `AdminEnv`), built by `config`.
//!
//! Architecture invariant: the Hub owns no workspace state and never touches a service; everything
//! it shows comes from an instance over the socket, and instances answer through MCP only.
//! Architecture invariant: nothing here writes to stdout.

pub mod history;
pub mod hub;
pub mod instance;
pub mod ipc;
pub mod open;
pub mod options;
pub mod protocol;
pub mod session;
pub mod settings;
