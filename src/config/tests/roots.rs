//! `--workspace`, `--workspace-storage`, `--progress-interval` and `--journal-limit`.

use super::*;

// Workspace root.

#[test]
fn relative_workspace_resolves_against_cwd() {
    let fx = Fixture::new();
    fs::create_dir_all(fx.root.join("proj/sub dir")).expect("sub directory");
    let serve = fx.serve(&["--workspace", "./sub dir/."]);
    assert_eq!(serve.workspace_root(), fx.root.join("proj/sub dir"));
    assert_eq!(serve.storage_root(), fx.root.join("proj/.sub dir.forgemcp"));
}

#[test]
fn workspace_is_canonical() {
    let fx = Fixture::new();
    fs::create_dir(fx.root.join("other")).expect("other directory");
    let serve = fx.serve(&["--workspace", "../other/../proj"]);
    assert_eq!(serve.workspace_root(), fx.project());
}

#[cfg(unix)]
#[test]
fn workspace_link_is_resolved() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(fx.project(), fx.root.join("link")).expect("symlink");
    let serve = fx.serve(&["--workspace", s(&fx.root.join("link"))]);
    assert_eq!(serve.workspace_root(), fx.project());
    assert_eq!(serve.storage_root(), fx.root.join(".proj.forgemcp"));
}

#[test]
fn missing_workspace() {
    let fx = Fixture::new();
    assert_eq!(fx.error(&["--workspace", "nope"]), "--workspace nope: no such directory");
    assert_eq!(fx.error(&["--workspace", "no pe"]), "--workspace `no pe`: no such directory");
}

#[test]
fn workspace_must_be_a_directory() {
    let fx = Fixture::new();
    fx.file("proj/file.txt");
    assert_eq!(fx.error(&["--workspace", "file.txt"]), "--workspace file.txt: not a directory");
}

#[test]
fn empty_workspace() {
    // clap already refuses `--workspace ""`; this covers `Args` built by other code.
    let fx = Fixture::new();
    let mut args = cli::Args::try_parse_from(["forgemcp"]).expect("no options");
    args.workspace = Some(PathBuf::new());
    let err = build(args, &fx.project()).expect_err("empty workspace");
    assert_eq!(err.to_string(), "--workspace: the path is empty");
}

#[cfg(unix)]
#[test]
fn filesystem_root_has_no_default_storage() {
    let fx = Fixture::new();
    assert_starts(&fx.error(&["--workspace", "/"]), "--workspace /: the project has no parent directory");
}

// Storage root.

#[test]
fn default_storage_is_not_created() {
    let fx = Fixture::new();
    let serve = fx.serve(&[]);
    assert!(!serve.storage_root().exists());
}

#[test]
fn explicit_storage_resolves_against_cwd() {
    let fx = Fixture::new();
    let serve = fx.serve(&["--workspace-storage", "../store/./a/../b"]);
    assert_eq!(serve.storage_root(), fx.root.join("store/b"));
    assert!(!fx.root.join("store").exists());
}

#[test]
fn explicit_storage_may_exist() {
    let fx = Fixture::new();
    fs::create_dir(fx.root.join("store")).expect("store");
    let serve = fx.serve(&["--workspace-storage", s(&fx.root.join("store"))]);
    assert_eq!(serve.storage_root(), fx.root.join("store"));
}

#[cfg(unix)]
#[test]
fn storage_links_are_resolved_up_to_the_first_missing_component() {
    let fx = Fixture::new();
    fs::create_dir(fx.root.join("real")).expect("real");
    std::os::unix::fs::symlink(fx.root.join("real"), fx.root.join("alias")).expect("symlink");
    let serve = fx.serve(&["--workspace-storage", "../alias/new/store"]);
    assert_eq!(serve.storage_root(), fx.root.join("real/new/store"));
}

#[cfg(unix)]
#[test]
fn storage_through_a_link_into_the_project_is_refused() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(fx.project(), fx.root.join("alias")).expect("symlink");
    assert_starts(
        &fx.error(&["--workspace-storage", "../alias/store"]),
        "--workspace-storage ../alias/store: the storage root must not lie inside the project",
    );
}

#[cfg(unix)]
#[test]
fn storage_broken_link_is_refused() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(fx.root.join("missing"), fx.root.join("dangling")).expect("symlink");
    let message = fx.error(&["--workspace-storage", "../dangling"]);
    assert_eq!(message, format!("--workspace-storage ../dangling: {} is a broken link", s(&fx.root.join("dangling"))));
}

#[test]
fn storage_must_not_be_the_project() {
    let fx = Fixture::new();
    assert_eq!(
        fx.error(&["--workspace-storage", "."]),
        "--workspace-storage .: the storage root must not be the project root"
    );
}

#[test]
fn storage_must_not_contain_the_project() {
    let fx = Fixture::new();
    let message = fx.error(&["--workspace-storage", ".."]);
    assert_eq!(
        message,
        format!("--workspace-storage ..: the storage root must not contain the project {}", s(&fx.project()))
    );
}

#[test]
fn storage_must_not_lie_inside_the_project() {
    let fx = Fixture::new();
    assert_starts(
        &fx.error(&["--workspace-storage", ".forgemcp"]),
        "--workspace-storage .forgemcp: the storage root must not lie inside the project",
    );
}

#[test]
fn storage_must_be_a_directory() {
    let fx = Fixture::new();
    fx.file("store");
    assert_eq!(
        fx.error(&["--workspace-storage", "../store"]),
        "--workspace-storage ../store: exists and is not a directory"
    );
}

#[test]
fn default_storage_must_be_a_directory() {
    let fx = Fixture::new();
    fx.file(".proj.forgemcp");
    assert_starts(&fx.error(&[]), "default storage ");
    assert!(fx.error(&[]).ends_with(".proj.forgemcp: exists and is not a directory"));
}

#[test]
fn empty_storage() {
    let fx = Fixture::new();
    let mut args = cli::Args::try_parse_from(["forgemcp"]).expect("no options");
    args.workspace_storage = Some(PathBuf::new());
    let err = build(args, &fx.project()).expect_err("empty storage");
    assert_eq!(err.to_string(), "--workspace-storage: the path is empty");
}

// Progress interval.

#[test]
fn progress_interval_values() {
    let fx = Fixture::new();
    for (raw, expected) in [
        ("2.5", Duration::from_millis(2500)),
        ("0", Duration::ZERO),
        ("-0", Duration::ZERO),
        ("0.2", Duration::from_millis(200)),
        ("1e2", Duration::from_secs(100)),
        ("3", Duration::from_secs(3)),
    ] {
        assert_eq!(fx.serve(&["--progress-interval", raw]).progress_interval(), expected, "{raw}");
    }
}

#[test]
fn progress_interval_rejects_bad_values() {
    let fx = Fixture::new();
    for (raw, message) in [
        ("-1", "--progress-interval `-1`: must not be negative"),
        ("-0.5", "--progress-interval `-0.5`: must not be negative"),
        ("nan", "--progress-interval `nan`: must be a finite number of seconds"),
        ("inf", "--progress-interval `inf`: must be a finite number of seconds"),
        ("-inf", "--progress-interval `-inf`: must be a finite number of seconds"),
        ("1e400", "--progress-interval `1e400`: must be a finite number of seconds"),
        ("1e300", "--progress-interval `1e300`: is too large"),
        ("abc", "--progress-interval `abc`: not a number of seconds"),
        ("1s", "--progress-interval `1s`: not a number of seconds"),
        ("", "--progress-interval ``: not a number of seconds"),
    ] {
        assert_eq!(fx.error(&["--progress-interval", raw]), message);
    }
}

// Excluded directories.

#[test]
fn excluded_dirs_are_project_directories() {
    let fx = Fixture::new();
    let serve = fx.serve(&["--exclude-dir", "build/", "--exclude-dir", "third_party/googletest"]);
    assert_eq!(serve.excluded_dirs(), [fx.project().join("build"), fx.project().join("third_party/googletest")]);
    assert_eq!(
        fx.error(&["--exclude-dir", "../x"]),
        "--exclude-dir ../x: must not contain empty, `.` or `..` segments"
    );
    assert_eq!(fx.error(&["--exclude-dir", "/abs"]), "--exclude-dir /abs: must be a path relative to the project root");
    assert_eq!(fx.error(&["--exclude-dir", ""]), "--exclude-dir ``: the path is empty");
}

#[test]
fn journal_limit_is_whole_mib() {
    let fx = Fixture::new();
    assert_eq!(fx.serve(&[]).journal_limit(), 512 * 1024 * 1024);
    assert_eq!(fx.serve(&["--journal-limit", "3"]).journal_limit(), 3 * 1024 * 1024);
    for raw in ["0", "-1", "1.5", "abc", "", "1048577"] {
        let message = format!("--journal-limit `{raw}`: must be a whole number of MiB from 1 to 1048576");
        assert_eq!(fx.error(&["--journal-limit", raw]), message, "{raw}");
    }
}
