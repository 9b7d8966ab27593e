//! A generic Debug Adapter Protocol client: the typed messages ForgeMCP uses (`protocol.rs`) and a
//! client with a pending-request map, per-request timeouts, events handed to the owner, and answers
//! to the adapter's reverse requests (`client.rs`).
//!
//! It runs over any `AsyncRead`/`AsyncWrite` pair: debug sessions hand it the pipes of a long-lived
//! adapter process from the process service, and the unit tests a scripted fake adapter on a duplex.
//! The wire framing is the same `Content-Length` framing as LSP's (`crate::framing`).
//!
//! Architecture invariant: this module knows nothing about lldb, gdb, MCP, processes or the
//! workspace; it depends on nothing in the crate but `framing`.
//! Architecture invariant: reverse requests are refused (`runInTerminal`, `startDebugging`): the
//! adapter never makes this client start a program.

pub mod client;
pub mod protocol;

pub use client::{Client, Error};
