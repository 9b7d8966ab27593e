//! The one integration harness (one link step). Each module says what belongs in it.

mod support;

/// The admin Hub: IPC join and leave, election, the HTTP guard matrix over every route, panel calls,
/// reconnecting, other OS users, and the real binary's join (browser side: `frontend/tests/`).
#[cfg(unix)]
mod admin;

/// The source tree's rules: no service imports `config` or `cli`; no file over 600 lines.
mod architecture;
/// clangd tools and `resources.clangd` with the real clangd on a configured copy of the acceptance
/// project (CI or `FORGEMCP_HEAVY_TESTS=1`), and argument errors.
mod clangd;
/// Edit-delta diagnostics, withdrawn configurations, new files, line endings and read limits, with
/// the real clangd on a configured copy of the acceptance project (CI or `FORGEMCP_HEAVY_TESTS=1`).
mod clangd_edits;
/// clangd on projects shaped like real ones (issue 27): headers without an extension, declarations
/// without a definition, limits, and the way back after a restart (CI or `FORGEMCP_HEAVY_TESTS=1`).
mod clangd_truth;
/// The real binary's command line: help, version, and exit status 2 with one stderr line for every
/// invalid option value.
mod cli;
/// CMake tools: profiles, configure, build, CTest and direct test runs with the real cmake, ninja and
/// g++ on a copy of the acceptance project (CI or `FORGEMCP_HEAVY_TESTS=1`), and argument errors.
mod cmake;
/// `cmake_test` `select` (affected, failed) and `repeat_until_fail` with the real tools.
mod cmake_affected;
/// CMake failures that explain themselves (diagnostics, signals, sanitizers, paths) and compiler
/// launchers, with the real tools on an extended copy of the acceptance project.
mod cmake_failures;
/// Compiler caches and build farms with the real ccache, distccd and sccache on loopback (issue 32).
#[cfg(unix)]
mod cmake_farm;
/// Failing inner cases of GoogleTest, Catch2 and doctest programs built against Debian's packages.
mod cmake_frameworks;
/// CMake on small projects shaped like real ones (globs, `GLOBAL`, presets, no CMakeLists.txt).
mod cmake_shapes;
/// Confirmations: `inputResponses` only answer the round that asked; `root/` paths are escaped in
/// the question.
mod confirm;
/// Debug tools with the real lldb-dap and g++ on a copy of the acceptance project with a test program
/// (CI or `FORGEMCP_HEAVY_TESTS=1`); gdb by its version (DAP needs gdb 14).
mod debug;

/// Heavy calls cannot starve light ones: bounded slots for searches, listings and large reads.
mod fairness;

/// The undo journal: history, checkpoints, revert and redo, restarts, two servers, `kill -9`.
mod journal;

/// Workspace mutations through the MCP surface: every operation and refusal, the escape matrix,
/// the link-swapping race, SIGKILL atomicity on the real binary, diff snapshots, line endings.
mod mutation;
/// Post-mortem: crashed, asserting, deadlocked and intermittently crashing CTest tests, direct runs
/// and `debug_launch` with `test` and `core`, with the real lldb-dap (CI or `FORGEMCP_HEAVY_TESTS=1`).
mod postmortem;
/// The process service with the `forgemcp-test-helper` fake tool (feature `test-tools`).
mod process;
/// `process_get`'s selectors and `match` through the MCP surface (feature `test-tools`, Linux).
mod process_get;
/// The process service through the MCP surface (in-process server and the real binary): tools,
/// resources, completions, timeouts, cancellation, stdin EOF, the 1 GiB flood (feature `test-tools`).
mod process_mcp;
/// How leaders are started on Linux: subreaper adoption, group, marker, stdio, signals, `PATH`
/// lookup, spawn error texts, pinned executables and scripts (feature `test-tools`).
mod process_spawn;
/// The quality tools with the real clang-tidy and clang-format on a copy of the acceptance project
/// with files added by the test (CI or `FORGEMCP_HEAVY_TESTS=1`), and argument errors.
mod quality;
/// Concurrent actors: two servers writing into one folder, link swaps racing reads, mirrors,
/// search, listings, file info, `cmake_run_test` and `debug_launch` (with the real lldb-dap).
#[cfg(unix)]
mod races;
/// Schemas every client accepts: only JSON Schema 2020-12 formats in tools/list.
mod schemas;
/// Text search through the MCP surface: rules, counts, skipped files, progress throttling.
mod search;
/// The search index: every answer equals a scan's while building, ready, after writes through
/// ForgeMCP and by other processes, after lost notifications and after a restart.
mod search_index;
/// The MCP surface itself: initialize, capabilities, registry rules, protocol robustness, progress,
/// elicitation, the history hook.
mod server;
/// The real binary over stdio: startup, stdout purity, malformed input.
mod stdio;
/// MCP Tasks: long calls as tasks, tasks/get with progress and results, tasks/cancel killing trees.
mod tasks;
/// MCP Tasks of the 2025-11-25 protocol, raw JSON-RPC over the real binary: task-augmented calls,
/// tasks/get, tasks/result, tasks/list, tasks/cancel killing trees.
mod tasks_wire;
/// The real binary in a pseudo-terminal: the waiting-for-a-client line and the panel line at start-up.
#[cfg(unix)]
mod terminal;
/// Toolset discovery and version probes with fake tools on a temporary PATH, user toolsets, the
/// real binary's start-up discovery, and the real Debian tools (CI or `FORGEMCP_HEAVY_TESTS=1`).
mod toolchain;
/// MCP App widget resources, and the recorded tool results the browser tests render.
mod widgets;
/// Workspace read tools, resources and completions through the MCP surface.
mod workspace;
