//! A generic LSP client: Content-Length framing, JSON-RPC messages, a client with a pending map,
//! timeouts, cancellation and shutdown, and position-encoding conversion.
//!
//! It runs over any `AsyncRead`/`AsyncWrite` pair: the clangd sessions hand it the pipes of a
//! long-lived process from the process service, and the tests a fake server on an in-memory duplex.
//!
//! Architecture invariant: this module knows nothing about clangd, MCP, processes or the workspace;
//! it depends on nothing else in the crate but the shared `framing` module.
//! Architecture invariant: callers see positions as zero-based lines and zero-based Unicode code
//! points; the negotiated wire encoding is converted in `position.rs`.

pub mod client;
pub use crate::framing;
pub mod message;
pub mod position;

pub use client::{Client, DefaultHandler, Error, Handler, Initialized, default_reply};
pub use message::{RequestId, ResponseError};
pub use position::{LineIndex, PositionEncoding, TextPosition};
