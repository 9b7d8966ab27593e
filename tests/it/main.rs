//! The one integration harness (one link step). Each module says what belongs in it.

mod support;

/// The admin Hub: IPC join and leave, election, the HTTP guard matrix over every route, panel calls,
/// reconnecting, other OS users, and the real binary's join (browser side: `frontend/tests/`).
#[cfg(unix)]
mod admin;

/// clangd tools and `resources.clangd` with the real clangd on a configured copy of the acceptance
/// project (CI or `FORGEMCP_HEAVY_TESTS=1`), and argument errors.
mod clangd;
/// The real binary's command line: help, version, and exit status 2 with one stderr line for every
/// invalid option value.
mod cli;
/// CMake tools: profiles, configure, build, CTest and direct test runs with the real cmake, ninja and
/// g++ on a copy of the acceptance project (CI or `FORGEMCP_HEAVY_TESTS=1`), and argument errors.
mod cmake;

/// Heavy calls cannot starve light ones: bounded slots for searches, listings and large reads.
mod fairness;

/// Workspace mutations through the MCP surface: every operation and refusal, the escape matrix,
/// the link-swapping race, SIGKILL atomicity on the real binary, diff snapshots, line endings.
mod mutation;
/// The process service with the `forgemcp-test-helper` fake tool (feature `test-tools`).
mod process;
/// The process service through the MCP surface (in-process server and the real binary): tools,
/// resources, completions, timeouts, cancellation, stdin EOF, the 1 GiB flood (feature `test-tools`).
mod process_mcp;
/// Text search through the MCP surface: rules, counts, skipped files, progress throttling.
mod search;
/// The MCP surface itself: initialize, capabilities, registry rules, protocol robustness, progress,
/// elicitation, the history hook.
mod server;
/// The real binary over stdio: startup, stdout purity, malformed input.
mod stdio;
/// Toolset discovery and version probes with fake tools on a temporary PATH, user toolsets, the
/// real binary's start-up discovery, and the real Debian tools (CI or `FORGEMCP_HEAVY_TESTS=1`).
mod toolchain;
/// MCP App widget resources, and the recorded tool results the browser tests render.
mod widgets;
/// Workspace read tools, resources and completions through the MCP surface.
mod workspace;
