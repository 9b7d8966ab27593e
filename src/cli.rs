//! Command-line definitions: the raw operator input, exactly as typed.
//!
//! This is the low half of ripgrep's two-stage argument handling (`LowArgs`): clap parses the
//! command line into [`Args`], and `config` turns that into a validated `Config`.
//!
//! Architecture invariant: nothing here touches the file system, the environment or the current
//! directory, and nothing here interprets values beyond what clap needs to split them. Group options
//! (`--toolset`, `--cmake-profile`) keep one `Vec<String>` per occurrence, with every value verbatim
//! (values may contain spaces and `=`).

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser};

use crate::admin::options::DEFAULT_ADMIN_IPC;

/// The default preferred port of a newly started admin Hub.
pub const DEFAULT_ADMIN_PORT: u16 = 8765;

/// Raw operator input. Build it with [`Args::parse`] (the real command line) or
/// [`Args::try_parse_from`] (tests).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// `--workspace DIR`.
    pub workspace: Option<PathBuf>,
    /// `--workspace-storage DIR`.
    pub workspace_storage: Option<PathBuf>,
    /// `--progress-interval SECONDS`, unparsed so the error message is ours.
    pub progress_interval: Option<String>,
    /// One entry per `--exclude-dir DIR`.
    pub exclude_dirs: Vec<String>,
    /// `--journal-limit MIB`, unparsed so the error message is ours.
    pub journal_limit: Option<String>,
    /// One entry per `--toolset` occurrence: `[NAME, TOOL=PATH, …]` (at least two values).
    pub toolsets: Vec<Vec<String>>,
    /// `--cmake-toolset ID_OR_NAME`.
    pub cmake_toolset: Option<String>,
    /// One entry per `--cmake-profile` occurrence: `[NAME, KEY=VALUE, …]` (at least one value).
    pub cmake_profiles: Vec<Vec<String>>,
    /// `--compile-commands DIR`, unparsed.
    pub compile_commands: Option<String>,
    pub no_admin: bool,
    pub admin_port: u16,
    pub admin_ipc: String,
    pub open_admin: bool,
    /// Hidden `--admin-hub`: run as the admin Hub process (started by a server, not by people).
    pub admin_hub: bool,
}

impl Args {
    /// Parses the process's command line. Help and version requests print to stdout and exit 0
    /// (clap's conventions); every other clap error is returned, for [`usage_line`] and exit 2.
    /// Neither starts an MCP session.
    pub fn parse() -> Result<Args, clap::Error> {
        Args::try_parse_from(std::env::args_os()).map_err(|err| match err.kind() {
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => err.exit(),
            _ => err,
        })
    }

    /// Parses an explicit command line; the first item is the program name.
    pub fn try_parse_from<I, T>(args: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let matches = Cli::command().try_get_matches_from(args)?;
        let cli = Cli::from_arg_matches(&matches)?;
        Ok(Args {
            workspace: cli.workspace,
            workspace_storage: cli.workspace_storage,
            progress_interval: cli.progress_interval,
            exclude_dirs: cli.exclude_dir,
            journal_limit: cli.journal_limit,
            toolsets: occurrences(&matches, "toolset"),
            cmake_toolset: cli.cmake_toolset,
            cmake_profiles: occurrences(&matches, "cmake_profile"),
            compile_commands: cli.compile_commands,
            no_admin: cli.no_admin,
            admin_port: cli.admin_port,
            admin_ipc: cli.admin_ipc,
            open_admin: cli.open_admin,
            admin_hub: cli.admin_hub,
        })
    }

    /// The clap command, for rendering help or checking the definition in tests.
    pub fn command() -> clap::Command {
        Cli::command()
    }
}

/// A clap error as one line without the `error: ` prefix: clap's first line, then each `tip:` line,
/// joined by `; `, and a pointer to `--help` (clap's usage block and blank lines are dropped).
pub fn usage_line(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|line| !line.is_empty());
    let first = lines.next().unwrap_or("invalid command line");
    let mut res = first.strip_prefix("error: ").unwrap_or(first).to_owned();
    for tip in lines.filter(|line| line.starts_with("tip:")) {
        res.push_str("; ");
        res.push_str(tip);
    }
    res.push_str(" (see forgemcp --help)");
    res
}

/// The values of a group option, one `Vec` per occurrence.
fn occurrences(matches: &ArgMatches, id: &str) -> Vec<Vec<String>> {
    match matches.get_occurrences::<String>(id) {
        Some(groups) => groups.map(|group| group.cloned().collect()).collect(),
        None => Vec::new(),
    }
}

const ABOUT: &str = "Structured C/C++ development tools for one local workspace, served over MCP on stdio.";

const LONG_ABOUT: &str = "\
Structured C/C++ development tools for one local workspace, served over MCP on stdio.

An MCP client starts this command and talks to it over stdin/stdout; operational logs go
to stderr. Without options the server works on the current directory.";

const AFTER_HELP: &str = "\
Examples:
  forgemcp --workspace ~/src/example
  forgemcp --workspace ~/src/example --workspace-storage /var/tmp/example.forgemcp
  forgemcp --toolset \"LLVM 20\" clang=/opt/llvm20/bin/clang clang++=/opt/llvm20/bin/clang++
  forgemcp --cmake-profile debug configuration=Debug generator=Ninja \\
           --cmake-profile release configuration=Release generator=Ninja
  forgemcp --cmake-profile native configure-preset=ninja-debug build-preset=build-ninja-debug
  forgemcp --open-admin

Invalid option values are reported as one line on stderr with exit status 2, before anything starts.";

/// The clap definition. Group options are declared flat here and regrouped per occurrence from the
/// matches in [`Args::try_parse_from`] (derive support for `Vec<Vec<String>>` is still unstable).
#[derive(Debug, Parser)]
#[command(
    name = "forgemcp",
    version,
    about = ABOUT,
    long_about = LONG_ABOUT,
    after_help = AFTER_HELP
)]
struct Cli {
    /// C/C++ project root [default: the current directory].
    ///
    /// Must be an existing directory; relative paths resolve against the current directory.
    #[arg(long, value_name = "DIR", help_heading = "Workspace")]
    workspace: Option<PathBuf>,

    /// Service storage root [default: .<project-name>.forgemcp beside the project].
    ///
    /// Holds build trees and other server files; created on first use. Relative paths resolve
    /// against the current directory. It must not be, contain, or lie inside the project.
    #[arg(long, value_name = "DIR", help_heading = "Workspace")]
    workspace_storage: Option<PathBuf>,

    /// Minimum seconds between progress notifications of one tool call [default: 1].
    ///
    /// A finite, non-negative number such as 2.5; 0 disables throttling. The first notification
    /// is always sent at once; later ones inside the interval are dropped, not queued.
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true, help_heading = "Workspace")]
    progress_interval: Option<String>,

    /// Leave a project directory out of every text search and file find (repeatable).
    ///
    /// A path relative to the project root, such as build or third_party/googletest (vendored trees,
    /// in-project build directories). A search or find that starts inside it still covers it.
    #[arg(long, value_name = "DIR", action = clap::ArgAction::Append, help_heading = "Workspace")]
    exclude_dir: Vec<String>,
    /// Size limit of the undo journal in MiB [default: 512].
    ///
    /// The journal (storage/.journal) keeps every change ForgeMCP makes for workspace_revert; past
    /// the limit the oldest changes are dropped. A whole number from 1 to 1048576.
    #[arg(long, value_name = "MIB", allow_hyphen_values = true, help_heading = "Workspace")]
    journal_limit: Option<String>,

    /// Add a user toolset with explicit tool paths (repeatable).
    ///
    /// NAME must be unique and not contain '='. TOOL is a built-in tool name: cmake, ctest, ninja,
    /// make, msbuild, cl, link, clang, clang++, clang-cl, gcc, g++, lld, lld-link, clangd,
    /// clang-tidy, clang-format, git, lldb-dap, gdb, cppvsdbg, ccache, sccache, distcc or icecc
    /// (msbuild, cl, link and cppvsdbg on Windows only), each at most once. PATH must be an existing executable file; relative paths resolve against the current
    /// directory. An invalid path is an error, never replaced by a discovered tool.
    #[arg(
        long,
        value_names = ["NAME", "TOOL=PATH"],
        num_args = 2..,
        action = clap::ArgAction::Append,
        help_heading = "Toolsets"
    )]
    toolset: Vec<String>,

    /// Toolset for CMake profiles without toolset= [default: system].
    ///
    /// An id (system, user-…, visual-studio-…) or a toolset name; it must match exactly one
    /// discovered or user toolset. Also used by the automatic profiles.
    #[arg(long, value_name = "ID_OR_NAME", help_heading = "CMake")]
    cmake_toolset: Option<String>,

    /// Define a CMake profile (repeatable); replaces the automatic profiles.
    ///
    /// NAME must be unique and not contain '='. Keys, each at most once unless noted: toolset,
    /// configuration, generator (default Ninja), build-directory (project/... or storage/...;
    /// default storage/build/cmake-NAME), c-compiler and cxx-compiler (built-in compiler names),
    /// toolchain-file (an existing project/... or storage/... file), define=VAR=value (repeatable),
    /// compiler-launcher (ccache, sccache, distcc or icecc: a tool of the profile's toolset),
    /// sanitizers (a comma list of address, undefined, thread, leak and memory), env=NAME=VALUE
    /// (repeatable: a variable of this profile's configure, build and test runs only). A preset
    /// profile instead lists configure-preset, build-preset and test-preset (each repeatable) and
    /// may add only toolset, configuration, build-directory and env.
    #[arg(
        long,
        value_names = ["NAME", "KEY=VALUE"],
        num_args = 1..,
        action = clap::ArgAction::Append,
        help_heading = "CMake"
    )]
    cmake_profile: Vec<String>,

    /// A directory whose compile_commands.json clangd and the quality tools use as the
    /// configuration "external" (beside CMake's); a project without CMakeLists.txt uses its root's.
    ///
    /// A workspace path (project/... or storage/...); the file may appear later (bear -- make
    /// writes one) and is read again when it changes.
    #[arg(long, value_name = "DIR", help_heading = "CMake")]
    compile_commands: Option<String>,

    /// Do not join the local admin panel.
    #[arg(long, help_heading = "Admin panel")]
    no_admin: bool,

    /// Preferred HTTP port when this instance starts a new admin Hub.
    ///
    /// A running Hub keeps its port; a free port is chosen when this one is taken. 0 means any
    /// free port.
    #[arg(
        long,
        value_name = "PORT",
        default_value_t = DEFAULT_ADMIN_PORT,
        value_parser = clap::value_parser!(u16),
        help_heading = "Admin panel"
    )]
    admin_port: u16,

    /// Admin Hub group; instances with the same name share one Hub.
    ///
    /// Groups are per OS user. ASCII letters, digits, '-', '_' and '.', not starting with '.'.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_ADMIN_IPC, help_heading = "Admin panel")]
    admin_ipc: String,

    /// Open the admin panel of the running Hub in the system browser, then exit.
    ///
    /// Combine with --admin-ipc to reach a Hub of another group.
    #[arg(
        long,
        conflicts_with_all = [
            "workspace", "workspace_storage", "progress_interval", "exclude_dir", "toolset", "cmake_toolset",
            "cmake_profile", "no_admin", "admin_port", "admin_hub",
        ],
        help_heading = "Admin panel"
    )]
    open_admin: bool,

    /// Run as the admin Hub process (started by servers, not by people).
    #[arg(
        long,
        hide = true,
        conflicts_with_all = [
            "workspace", "workspace_storage", "progress_interval", "exclude_dir", "toolset", "cmake_toolset",
            "cmake_profile", "no_admin",
        ]
    )]
    admin_hub: bool,
}

#[cfg(test)]
mod tests {
    use clap::error::ErrorKind;

    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("forgemcp").chain(args.iter().copied()))
    }

    #[track_caller]
    fn parse_ok(args: &[&str]) -> Args {
        parse(args).unwrap_or_else(|err| panic!("{args:?} should parse: {err}"))
    }

    #[track_caller]
    fn parse_err(args: &[&str]) -> ErrorKind {
        match parse(args) {
            Ok(parsed) => panic!("{args:?} should be rejected, got {parsed:?}"),
            Err(err) => err.kind(),
        }
    }

    #[test]
    fn definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let args = parse_ok(&[]);
        assert_eq!(
            args,
            Args {
                workspace: None,
                workspace_storage: None,
                progress_interval: None,
                exclude_dirs: vec![],
                journal_limit: None,
                toolsets: vec![],
                cmake_toolset: None,
                cmake_profiles: vec![],
                compile_commands: None,
                no_admin: false,
                admin_port: 8765,
                admin_ipc: "forgemcp".to_owned(),
                open_admin: false,
                admin_hub: false,
            }
        );
    }

    #[test]
    fn plain_options() {
        let args = parse_ok(&[
            "--workspace",
            "some dir",
            "--workspace-storage=../store",
            "--progress-interval",
            "2.5",
            "--cmake-toolset",
            "LLVM 20",
            "--no-admin",
            "--admin-port",
            "9000",
            "--admin-ipc",
            "forgemcp-other",
        ]);
        assert_eq!(args.workspace, Some(PathBuf::from("some dir")));
        assert_eq!(args.workspace_storage, Some(PathBuf::from("../store")));
        assert_eq!(args.progress_interval.as_deref(), Some("2.5"));
        assert_eq!(args.cmake_toolset.as_deref(), Some("LLVM 20"));
        assert!(args.no_admin);
        assert_eq!(args.admin_port, 9000);
        assert_eq!(args.admin_ipc, "forgemcp-other");
    }

    #[test]
    fn negative_progress_interval_reaches_validation() {
        assert_eq!(parse_ok(&["--progress-interval", "-1"]).progress_interval.as_deref(), Some("-1"));
        assert_eq!(parse_ok(&["--progress-interval", "nan"]).progress_interval.as_deref(), Some("nan"));
    }

    #[test]
    fn toolset_groups_stay_separate() {
        let args = parse_ok(&[
            "--toolset",
            "LLVM 20",
            "cmake=C:\\Tools\\CMake\\bin\\cmake.exe",
            "clang=/opt/llvm 20/bin/clang",
            "--no-admin",
            "--toolset",
            "LLVM 22",
            "clang++=/opt/a=b/clang++",
        ]);
        assert_eq!(
            args.toolsets,
            vec![
                vec!["LLVM 20", "cmake=C:\\Tools\\CMake\\bin\\cmake.exe", "clang=/opt/llvm 20/bin/clang"],
                vec!["LLVM 22", "clang++=/opt/a=b/clang++"],
            ]
        );
        assert!(args.no_admin);
    }

    #[test]
    fn toolset_needs_a_name_and_a_tool() {
        assert_eq!(parse_err(&["--toolset", "LLVM"]), ErrorKind::TooFewValues);
        assert_eq!(parse_err(&["--toolset"]), ErrorKind::InvalidValue);
    }

    #[test]
    fn cmake_profile_groups_stay_separate() {
        let args = parse_ok(&[
            "--cmake-profile",
            "debug",
            "toolset=system",
            "define=CMAKE_CXX_FLAGS=-O0 -g",
            "--cmake-profile",
            "bare",
            "--cmake-profile",
            "release",
            "configuration=Release",
        ]);
        assert_eq!(
            args.cmake_profiles,
            vec![
                vec!["debug", "toolset=system", "define=CMAKE_CXX_FLAGS=-O0 -g"],
                vec!["bare"],
                vec!["release", "configuration=Release"],
            ]
        );
    }

    #[test]
    fn cmake_profile_needs_a_name() {
        assert_eq!(parse_err(&["--cmake-profile"]), ErrorKind::InvalidValue);
    }

    #[test]
    fn admin_port_is_a_u16_and_zero_means_any_free_port() {
        assert_eq!(parse_ok(&["--admin-port", "0"]).admin_port, 0);
        assert_eq!(parse_err(&["--admin-port", "65536"]), ErrorKind::ValueValidation);
        assert_eq!(parse_err(&["--admin-port", "http"]), ErrorKind::ValueValidation);
        assert_eq!(parse_ok(&["--admin-port", "65535"]).admin_port, 65535);
    }

    #[test]
    fn open_admin_combines_only_with_admin_ipc() {
        let args = parse_ok(&["--open-admin", "--admin-ipc", "other"]);
        assert!(args.open_admin);
        assert_eq!(args.admin_ipc, "other");
        assert_eq!(parse_err(&["--open-admin", "--workspace", "x"]), ErrorKind::ArgumentConflict);
        assert_eq!(parse_err(&["--open-admin", "--no-admin"]), ErrorKind::ArgumentConflict);
        assert_eq!(parse_err(&["--open-admin", "--admin-hub"]), ErrorKind::ArgumentConflict);
    }

    #[test]
    fn admin_hub_is_hidden_and_takes_admin_options() {
        let args = parse_ok(&["--admin-hub", "--admin-ipc", "g", "--admin-port", "9000"]);
        assert!(args.admin_hub);
        assert_eq!(parse_err(&["--admin-hub", "--no-admin"]), ErrorKind::ArgumentConflict);
        let help = Args::command().render_long_help().to_string();
        assert!(!help.contains("--admin-hub"), "{help}");
    }

    #[test]
    fn help_and_version_are_display_requests() {
        assert_eq!(parse_err(&["--help"]), ErrorKind::DisplayHelp);
        assert_eq!(parse_err(&["-h"]), ErrorKind::DisplayHelp);
        assert_eq!(parse_err(&["--version"]), ErrorKind::DisplayVersion);
    }

    #[test]
    fn help_lists_every_option() {
        let help = Args::command().render_long_help().to_string();
        for option in [
            "--workspace <DIR>",
            "--workspace-storage <DIR>",
            "--progress-interval <SECONDS>",
            "--toolset <NAME> <TOOL=PATH>...",
            "--cmake-toolset <ID_OR_NAME>",
            "--cmake-profile <NAME> [KEY=VALUE]...",
            "--no-admin",
            "--admin-port <PORT>",
            "--admin-ipc <NAME>",
            "--open-admin",
            "--help",
            "--version",
        ] {
            assert!(help.contains(option), "help lacks {option}:\n{help}");
        }
    }

    #[test]
    fn unknown_option_is_a_usage_error() {
        assert_eq!(parse_err(&["--workspaces", "x"]), ErrorKind::UnknownArgument);
        assert_eq!(parse_err(&["positional"]), ErrorKind::UnknownArgument);
    }
}
