//! `forgemcp --open-admin`: ask the group's Hub for a single-use login URL over the same-user
//! socket and open it in the system browser.
//!
//! The URL is never printed and never passed on a command line (other users can read command
//! lines): it goes into a private redirect page (`<private dir>/<group>-open.html`, 0600 on Unix)
//! and the browser is given that file. Exit status (INTERFACE.md §15): 0 when a browser was
//! started, 1 when no Hub answered, 3 when a Hub answered but no browser could be started.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::ipc::Endpoint;
use super::options::{AdminEnv, is_default_ipc};
use super::protocol::{FrameReader, Message, write_message};
use crate::process::detached::{DetachedSpec, spawn_detached};

/// Exit statuses of `--open-admin`.
pub const EXIT_OPENED: u8 = 0;
pub const EXIT_NO_HUB: u8 = 1;
pub const EXIT_NO_BROWSER: u8 = 3;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a browser launcher may take to report failure; one still running then counts as started.
const LAUNCH_GRACE: Duration = Duration::from_secs(5);

/// Runs `--open-admin` and returns the exit status. Messages go to stderr.
pub async fn open_admin(ipc_name: &str, env: &AdminEnv) -> u8 {
    let say = |line: &str| {
        let _ = writeln!(std::io::stderr().lock(), "forgemcp: {line}");
    };
    let group = if is_default_ipc(ipc_name) { String::new() } else { format!(" --admin-ipc {ipc_name}") };
    let no_hub = |detail: &str| {
        say(&format!(
            "no admin Hub is running for this user{group} ({detail}); start a ForgeMCP server first (it starts the Hub)"
        ));
        EXIT_NO_HUB
    };
    let endpoint = match Endpoint::resolve(ipc_name, env) {
        Ok(endpoint) => endpoint,
        Err(err) => return no_hub(&err.to_string()),
    };
    let url = match request_url(&endpoint).await {
        Ok(url) => url,
        Err(err) => return no_hub(&err),
    };
    let page = match write_redirect_page(&endpoint, &url) {
        Ok(page) => page,
        Err(err) => {
            say(&format!("cannot write the private login page in {}: {err}", endpoint.dir().display()));
            return EXIT_NO_BROWSER;
        }
    };
    match open_in_browser(&page, env).await {
        Ok(()) => {
            say("opened the admin panel in your browser");
            EXIT_OPENED
        }
        Err(err) => {
            say(&format!(
                "the admin Hub is running, but no browser could be started ({err}); run `forgemcp --open-admin{group}` \
                 from a desktop session of this user"
            ));
            EXIT_NO_BROWSER
        }
    }
}

/// Asks the Hub for a login URL.
pub async fn request_url(endpoint: &Endpoint) -> Result<String, String> {
    let stream = match tokio::time::timeout(CONNECT_TIMEOUT, endpoint.connect()).await {
        Ok(Ok(stream)) => stream,
        Ok(Err(err)) => return Err(err.to_string()),
        Err(_) => return Err("the connection timed out".into()),
    };
    let (reader, mut writer) = tokio::io::split(stream);
    let id = "open-admin".to_owned();
    write_message(&mut writer, &Message::OpenUrlRequest { id: id.clone() }).await.map_err(|e| e.to_string())?;
    let mut reader = FrameReader::new(reader);
    match tokio::time::timeout(ANSWER_TIMEOUT, reader.next()).await {
        Ok(Ok(Some(Message::OpenUrl { id: answered, url }))) if answered == id => Ok(url),
        Ok(Ok(_)) => Err("the Hub refused the request".into()),
        Ok(Err(err)) => Err(err.to_string()),
        Err(_) => Err("the Hub did not answer".into()),
    }
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Writes the private page that forwards the browser to `url`.
fn write_redirect_page(endpoint: &Endpoint, url: &str) -> std::io::Result<PathBuf> {
    let path = endpoint.dir().join(format!("{}-open.html", endpoint.name()));
    let shown = escape_html(url);
    let script = serde_json::to_string(url).unwrap_or_default().replace('<', "\\u003c");
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <meta http-equiv=\"refresh\" content=\"0;url={shown}\"><title>ForgeMCP admin</title></head>\n\
         <body><script>location.replace({script});</script>\
         <p><a href=\"{shown}\">Open the ForgeMCP admin panel</a></p></body></html>\n"
    );
    // Replace, never write through, whatever is there (the directory is private anyway).
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(err) => return Err(err),
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    options.open(&path)?.write_all(page.as_bytes())?;
    Ok(path)
}

/// Separates the commands of `$BROWSER`: the platform's list separator, like `PATH`'s (on Windows
/// `;`, since `:` follows every drive letter).
const BROWSER_SEPARATOR: char = if cfg!(windows) { ';' } else { ':' };

/// The launchers to try, in order: `$BROWSER` entries (commands separated by [`BROWSER_SEPARATOR`],
/// `%s` standing for the target), then the platform's opener.
fn launchers(target: &str, env: &AdminEnv) -> Vec<(PathBuf, Vec<OsString>)> {
    let mut res = Vec::new();
    if let Some(browser) = &env.browser {
        for entry in browser.to_string_lossy().split(BROWSER_SEPARATOR).filter(|e| !e.trim().is_empty()) {
            let mut words = entry.split_whitespace();
            let Some(program) = words.next() else { continue };
            let mut args: Vec<OsString> = words.map(|w| OsString::from(w.replace("%s", target))).collect();
            if !entry.contains("%s") {
                args.push(target.into());
            }
            res.push((PathBuf::from(program), args));
        }
    }
    if cfg!(target_os = "macos") {
        res.push(("open".into(), vec![target.into()]));
    } else if cfg!(windows) {
        res.push(("rundll32.exe".into(), vec!["url.dll,FileProtocolHandler".into(), target.into()]));
    } else {
        res.push(("xdg-open".into(), vec![target.into()]));
    }
    res
}

async fn open_in_browser(page: &Path, env: &AdminEnv) -> Result<(), String> {
    let target = file_url(page);
    let mut failures = Vec::new();
    for (program, args) in launchers(&target, env) {
        let mut spec = DetachedSpec::new(&program);
        spec.args = args;
        let mut child = match spawn_detached(spec) {
            Ok(child) => child,
            Err(err) => {
                failures.push(format!("{}: {err}", program.display()));
                continue;
            }
        };
        match child.wait_timeout(LAUNCH_GRACE).await {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => failures.push(format!("{} exited with {status}", program.display())),
            // Still running: a browser that stays in the foreground.
            Ok(None) => return Ok(()),
            Err(err) => failures.push(format!("{}: {err}", program.display())),
        }
    }
    Err(failures.join("; "))
}

/// `file://` URL of an absolute path (percent-encoding what a URL path cannot hold).
fn file_url(path: &Path) -> String {
    use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
    const PATH: &AsciiSet =
        &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'%').add(b'<').add(b'>').add(b'?').add(b'`').add(b'{').add(b'}');
    let text = path.to_string_lossy().replace('\\', "/");
    let text = if text.starts_with('/') { text } else { format!("/{text}") };
    format!("file://{}", utf8_percent_encode(&text, PATH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn browser_entries_come_first_with_the_target_substituted() {
        let (second, value) = if cfg!(windows) {
            (r"C:\Tools\browser.exe", r"firefox --new-window %s;C:\Tools\browser.exe")
        } else {
            ("/opt/b", "firefox --new-window %s:/opt/b")
        };
        let env = AdminEnv { browser: Some(value.into()), ..AdminEnv::default() };
        let list = launchers("file:///x.html", &env);
        assert_eq!(list[0], (PathBuf::from("firefox"), vec!["--new-window".into(), "file:///x.html".into()]));
        assert_eq!(list[1], (PathBuf::from(second), vec!["file:///x.html".into()]));
        assert_eq!(list.len(), 3, "then the platform opener");
    }

    #[test]
    fn browser_commands_are_split_at_the_platform_list_separator() {
        let env = AdminEnv { browser: Some(r"C:\Tools\browser.exe;/opt/b".into()), ..AdminEnv::default() };
        let programs: Vec<PathBuf> = launchers("t", &env).into_iter().map(|(program, _)| program).collect();
        let expected: &[&str] = if cfg!(windows) {
            &[r"C:\Tools\browser.exe", "/opt/b", "rundll32.exe"]
        } else {
            &["C", r"\Tools\browser.exe;/opt/b", if cfg!(target_os = "macos") { "open" } else { "xdg-open" }]
        };
        assert_eq!(programs, expected.iter().map(PathBuf::from).collect::<Vec<_>>());
    }

    #[test]
    fn file_urls_encode_what_paths_may_hold() {
        assert_eq!(file_url(Path::new("/tmp/a b/x#1.html")), "file:///tmp/a%20b/x%231.html");
    }

    #[test]
    fn the_redirect_page_escapes_the_url() {
        let temp = tempfile::tempdir().expect("temp dir");
        let endpoint = Endpoint::in_dir(temp.path(), "g").expect("endpoint");
        let path = write_redirect_page(&endpoint, "http://127.0.0.1:1/login?token=a\"<b").expect("written");
        let page = std::fs::read_to_string(path).expect("read");
        assert!(page.contains("token=a&quot;&lt;b"));
        assert!(page.contains(r#"location.replace("http://127.0.0.1:1/login?token=a\"\u003cb")"#));
    }
}
