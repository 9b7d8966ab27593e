//! The one integration harness (one link step). Each module says what belongs in it.

mod support;

/// The MCP surface itself: initialize, capabilities, registry rules, protocol robustness, progress,
/// elicitation, the history hook.
mod server;
/// Workspace read tools, resources and completions through the MCP surface.
mod workspace;
