//! The built-in tool table: every tool name ForgeMCP knows, its kind, how to ask it for its version,
//! and which executable names it may be found under.
//!
//! This is pure data with a lookup function. Discovery (PATH scans, Visual Studio environments),
//! user toolsets (`--toolset NAME TOOL=PATH…`, validated in `config`) and version probes all read it;
//! nothing here touches the file system or starts a process.
//!
//! Architecture invariant: tool names are unique, lowercase, and never contain `=` (they are the
//! `TOOL` half of `TOOL=PATH` on the command line).

use std::fmt;

/// What a tool is for (INTERFACE.md §5.1). The wire spelling is [`ToolKind::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ToolKind {
    BuildSystem,
    BuildRunner,
    TestRunner,
    Compiler,
    Linker,
    LanguageServer,
    VersionControl,
    Debugger,
    Other,
}

impl ToolKind {
    /// Every kind, in the order of INTERFACE.md §5.1.
    pub const ALL: [ToolKind; 9] = [
        ToolKind::BuildSystem,
        ToolKind::BuildRunner,
        ToolKind::TestRunner,
        ToolKind::Compiler,
        ToolKind::Linker,
        ToolKind::LanguageServer,
        ToolKind::VersionControl,
        ToolKind::Debugger,
        ToolKind::Other,
    ];

    /// The snake_case name used in tool results (`build_system`, `language_server`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolKind::BuildSystem => "build_system",
            ToolKind::BuildRunner => "build_runner",
            ToolKind::TestRunner => "test_runner",
            ToolKind::Compiler => "compiler",
            ToolKind::Linker => "linker",
            ToolKind::LanguageServer => "language_server",
            ToolKind::VersionControl => "version_control",
            ToolKind::Debugger => "debugger",
            ToolKind::Other => "other",
        }
    }
}

impl fmt::Display for ToolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One built-in tool.
#[derive(Debug, PartialEq, Eq)]
pub struct ToolSpec {
    /// The logical name users write (`clang++`, `cppvsdbg`) and results report.
    pub name: &'static str,
    pub kind: ToolKind,
    /// Arguments that make the tool print its version banner, or `None` when no probe is implemented
    /// (the tool is then reported with a null version).
    pub version_args: Option<&'static [&'static str]>,
    /// Windows-only tools are never located on other platforms (POSIX `link` is not a linker).
    pub windows_only: bool,
    /// Executable file names to look for, without a platform suffix (`.exe` and other PATHEXT entries
    /// are added by discovery on Windows), in order of preference.
    pub executables: &'static [&'static str],
    /// Distributions may install the tool only under versioned names (Debian's `clang-tidy-14`):
    /// when no executable name is found, `<name>-<major>` is accepted too, the highest major first.
    pub versioned: bool,
}

impl ToolSpec {
    /// True when discovery may locate this tool on the platform the server was built for.
    pub fn is_supported_here(&self) -> bool {
        !self.windows_only || cfg!(windows)
    }

    pub fn is_compiler(&self) -> bool {
        self.kind == ToolKind::Compiler
    }

    /// A compiler launcher (`CMAKE_<LANG>_COMPILER_LAUNCHER`): a cache or a build farm client.
    pub fn is_launcher(&self) -> bool {
        LAUNCHERS.contains(&self.name)
    }
}

const VERSION: Option<&[&str]> = Some(&["--version"]);

/// The tools `compiler-launcher=` accepts.
pub const LAUNCHERS: [&str; 4] = ["ccache", "sccache", "distcc", "icecc"];

const fn tool(name: &'static str, kind: ToolKind, version_args: Option<&'static [&'static str]>) -> ToolSpec {
    ToolSpec { name, kind, version_args, windows_only: false, executables: &[], versioned: false }
}

/// lldb-dap under its plain, Debian-versioned (newest first) and older `lldb-vscode` names.
const LLDB_DAP_EXECUTABLES: &[&str] = &[
    "lldb-dap",
    "lldb-dap-24",
    "lldb-dap-23",
    "lldb-dap-22",
    "lldb-dap-21",
    "lldb-dap-20",
    "lldb-dap-19",
    "lldb-dap-18",
    "lldb-vscode",
    "lldb-vscode-17",
    "lldb-vscode-16",
    "lldb-vscode-15",
    "lldb-vscode-14",
];

/// Every built-in tool, in the order the specification lists them.
///
/// An empty `executables` list means "the executable is named like the tool"; use
/// [`executables`] rather than reading the field directly.
pub const BUILTIN_TOOLS: &[ToolSpec] = &[
    tool("cmake", ToolKind::BuildSystem, VERSION),
    tool("ctest", ToolKind::TestRunner, VERSION),
    tool("ninja", ToolKind::BuildRunner, VERSION),
    tool("make", ToolKind::BuildRunner, VERSION),
    ToolSpec { windows_only: true, ..tool("msbuild", ToolKind::BuildRunner, Some(&["-version", "-nologo"])) },
    ToolSpec { windows_only: true, ..tool("cl", ToolKind::Compiler, None) },
    ToolSpec { windows_only: true, ..tool("link", ToolKind::Linker, None) },
    tool("clang", ToolKind::Compiler, VERSION),
    tool("clang++", ToolKind::Compiler, VERSION),
    tool("clang-cl", ToolKind::Compiler, VERSION),
    tool("gcc", ToolKind::Compiler, VERSION),
    tool("g++", ToolKind::Compiler, VERSION),
    // Invoked as plain `lld`, LLD is a generic driver that refuses to run (even for `--version`)
    // and asks for a flavour; `ld.lld` is the Unix flavour every LLVM distribution ships.
    ToolSpec { executables: &["ld.lld", "lld"], ..tool("lld", ToolKind::Linker, VERSION) },
    tool("lld-link", ToolKind::Linker, VERSION),
    tool("clangd", ToolKind::LanguageServer, VERSION),
    // `Debian LLVM version 14.0.6`, `Debian clang-format version 14.0.6`.
    ToolSpec { versioned: true, ..tool("clang-tidy", ToolKind::Other, VERSION) },
    ToolSpec { versioned: true, ..tool("clang-format", ToolKind::Other, VERSION) },
    tool("git", ToolKind::VersionControl, VERSION),
    // LLVM 18 renamed lldb-vscode to lldb-dap; Debian and Ubuntu install versioned names only.
    ToolSpec { executables: LLDB_DAP_EXECUTABLES, ..tool("lldb-dap", ToolKind::Debugger, None) },
    tool("gdb", ToolKind::Debugger, VERSION),
    // The Microsoft C/C++ debug adapter: `OpenDebugAD7` from the C/C++ extension, or the `vsdbg`
    // VS Code bundles. It has no portable version probe.
    ToolSpec {
        windows_only: true,
        executables: &["OpenDebugAD7", "vsdbg"],
        ..tool("cppvsdbg", ToolKind::Debugger, None)
    },
    // Compiler launchers (`compiler-launcher=`): caches and build farms.
    tool("ccache", ToolKind::Other, VERSION),
    tool("sccache", ToolKind::Other, VERSION),
    tool("distcc", ToolKind::Other, VERSION),
    tool("icecc", ToolKind::Other, VERSION),
];

/// The built-in tool with exactly this name (names are case-sensitive).
pub fn lookup(name: &str) -> Option<&'static ToolSpec> {
    BUILTIN_TOOLS.iter().find(|spec| spec.name == name)
}

/// All built-in tool names, in table order.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN_TOOLS.iter().map(|spec| spec.name)
}

/// The executable names to look for, in order of preference.
pub fn executables(spec: &'static ToolSpec) -> &'static [&'static str] {
    if spec.executables.is_empty() { std::slice::from_ref(&spec.name) } else { spec.executables }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn names_are_unique_lowercase_and_assignable() {
        let mut seen = HashSet::new();
        for name in names() {
            assert!(seen.insert(name), "duplicate tool name {name}");
            assert!(!name.is_empty());
            assert!(!name.contains('='), "{name} cannot be written as TOOL=PATH");
            assert_eq!(name, name.to_ascii_lowercase());
        }
    }

    #[test]
    fn table_lists_every_tool_of_the_specification() {
        let expected = [
            "cmake",
            "ctest",
            "ninja",
            "make",
            "msbuild",
            "cl",
            "link",
            "clang",
            "clang++",
            "clang-cl",
            "gcc",
            "g++",
            "lld",
            "lld-link",
            "clangd",
            "clang-tidy",
            "clang-format",
            "git",
            "lldb-dap",
            "gdb",
            "cppvsdbg",
            "ccache",
            "sccache",
            "distcc",
            "icecc",
        ];
        assert_eq!(names().collect::<Vec<_>>(), expected);
    }

    #[test]
    fn lookup_is_exact() {
        assert_eq!(lookup("clang++").map(|s| s.kind), Some(ToolKind::Compiler));
        assert!(lookup("CMake").is_none());
        assert!(lookup("cmake ").is_none());
        assert!(lookup("").is_none());
        assert!(lookup("clang-tidy-14").is_none());
    }

    #[test]
    fn every_kind_is_listed_once() {
        let names: HashSet<&str> = ToolKind::ALL.iter().map(|kind| kind.as_str()).collect();
        assert_eq!(names.len(), ToolKind::ALL.len());
        assert!(BUILTIN_TOOLS.iter().all(|spec| ToolKind::ALL.contains(&spec.kind)));
    }

    #[test]
    fn kinds_follow_the_interface_table() {
        let kind = |name| lookup(name).map(|s| s.kind.as_str());
        assert_eq!(kind("cmake"), Some("build_system"));
        assert_eq!(kind("ctest"), Some("test_runner"));
        assert_eq!(kind("ninja"), Some("build_runner"));
        assert_eq!(kind("msbuild"), Some("build_runner"));
        assert_eq!(kind("cl"), Some("compiler"));
        assert_eq!(kind("link"), Some("linker"));
        assert_eq!(kind("lld-link"), Some("linker"));
        assert_eq!(kind("clangd"), Some("language_server"));
        assert_eq!(kind("git"), Some("version_control"));
        assert_eq!(kind("cppvsdbg"), Some("debugger"));
        assert_eq!(kind("clang-tidy"), Some("other"));
        assert_eq!(kind("clang-format"), Some("other"));
        assert_eq!(ToolKind::Other.to_string(), "other");
    }

    #[test]
    fn tools_without_a_version_probe() {
        let no_probe: Vec<_> = BUILTIN_TOOLS.iter().filter(|s| s.version_args.is_none()).map(|s| s.name).collect();
        assert_eq!(no_probe, ["cl", "link", "lldb-dap", "cppvsdbg"]);
        assert_eq!(lookup("msbuild").and_then(|s| s.version_args), Some(&["-version", "-nologo"][..]));
        assert_eq!(lookup("gcc").and_then(|s| s.version_args), Some(&["--version"][..]));
    }

    #[test]
    fn windows_only_tools() {
        let windows_only: Vec<_> = BUILTIN_TOOLS.iter().filter(|s| s.windows_only).map(|s| s.name).collect();
        assert_eq!(windows_only, ["msbuild", "cl", "link", "cppvsdbg"]);
        let link = lookup("link").expect("link is built in");
        assert_eq!(link.is_supported_here(), cfg!(windows));
        assert!(lookup("clang-cl").is_some_and(ToolSpec::is_supported_here));
    }

    #[test]
    fn alternative_executable_names() {
        let exe = |name| lookup(name).map(executables);
        assert_eq!(exe("cppvsdbg"), Some(&["OpenDebugAD7", "vsdbg"][..]));
        let lldb_dap = exe("lldb-dap").expect("lldb-dap");
        assert_eq!(lldb_dap.first(), Some(&"lldb-dap"));
        assert!(lldb_dap.contains(&"lldb-dap-19") && lldb_dap.contains(&"lldb-vscode"));
        assert_eq!(exe("lld"), Some(&["ld.lld", "lld"][..]));
        assert_eq!(exe("clang++"), Some(&["clang++"][..]));
    }

    #[test]
    fn compilers() {
        let compilers: Vec<_> = BUILTIN_TOOLS.iter().filter(|s| s.is_compiler()).map(|s| s.name).collect();
        assert_eq!(compilers, ["cl", "clang", "clang++", "clang-cl", "gcc", "g++"]);
    }
}
