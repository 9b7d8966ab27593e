#!/usr/bin/env python3
"""ForgeMCP's Windows smoke suite: the MinGW-w64 build of forgemcp.exe under Wine, over stdio.

Run through tests/windows/smoke.sh, which builds forgemcp.exe, the test programs (echo_args.exe,
tree.exe) and the stand-in bcryptprimitives.dll, prepares the private Wine prefix and passes their
locations here. The server is started exactly as the client configurations in
examples/mcp-clients/ describe (forgemcp.exe, --workspace, forward-slash Windows paths). Every check
prints one `ok <name>` line; the first failure stops the suite with exit status 1. Windows features
that Wine does not provide are listed by name together with the unit tests that cover them.
"""

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PLACEHOLDER_EXE = "C:/Users/you/.cargo/bin/forgemcp.exe"
PLACEHOLDER_WORKSPACE = "C:/Projects/example"
ODD_ARGUMENTS = ["a b", "", 'q"uote', "back\\slash"]

# What the suite reports instead of checking when Wine lacks the Windows feature, with the tests
# that cover it elsewhere.
PIPE_ACL = (
    "the named pipe refusing a second Windows user (Wine runs everything as one user)",
    "the unit test admin::ipc::windows::tests::the_pipe_admits_only_its_owner_and_system (run under Wine above)",
)
LINKS = (
    "workspace_move and workspace_delete refusing a Windows link (Wine 8 has no reparse points)",
    "the unit test workspace::path::tests::reparse_points_and_symbolic_links_are_links (run under Wine above: "
    "the attribute rule the Windows walk applies) and the Unix tests "
    "mutation::move_refuses_roots_links_and_trees_containing_links and "
    "mutation::delete_refuses_a_tree_containing_a_link_before_removing_anything (the same link-safe walk)",
)
BREAKAWAY = (
    "a job child refused CREATE_BREAKAWAY_FROM_JOB (Wine 8 ignores the flag: the child stays in the job)",
    "this suite's timeout check (the child was killed with the job)",
)


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def windows(path: Path) -> str:
    """The Wine path of a Linux path (drive Z: is the Linux root), with backslashes."""
    return "Z:" + str(path).replace("/", "\\")


def linux_path(path: str) -> Path:
    """The Linux path of a Wine path: Z: is the Linux root, C: the prefix's drive_c."""
    drive, rest = path[0].upper(), path[2:].replace("\\", "/").lstrip("/")
    check(drive in "CZ" and path[1] == ":", f"not a Wine drive path: {path}")
    return Path("/" + rest) if drive == "Z" else Path(os.environ["WINEPREFIX"]) / "drive_c" / rest


def forward(path: Path) -> str:
    """The same path with forward slashes, as the client configurations write it."""
    return "Z:" + str(path)


class Server:
    """One forgemcp.exe over stdio: JSON-RPC lines in, every stdout line must be JSON-RPC."""

    def __init__(self, argv, env, stderr):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
        self.messages = queue.Queue()
        self.next_id = 0
        self.bad_lines = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.messages.put(json.loads(line))
            except ValueError:
                self.bad_lines.append(line)
        self.messages.put(None)

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def start(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.next_id

    def wait(self, request_id, timeout=60):
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            check(remaining > 0, f"no answer to request {request_id} within {timeout} s")
            try:
                message = self.messages.get(timeout=remaining)
            except queue.Empty:
                continue
            check(message is not None, f"the server closed stdout before answering request {request_id}")
            if message.get("id") == request_id and "method" not in message:
                check("error" not in message, f"request {request_id} failed: {message.get('error')}")
                return message["result"]
            if "method" in message and "id" in message:
                # A request from the server (none is expected): answer so it never waits.
                self.send({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}})

    def request(self, method, params, timeout=60):
        return self.wait(self.start(method, params), timeout)

    def call(self, tool, arguments, timeout=60):
        return self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)

    def read(self, uri):
        return self.request("resources/read", {"uri": uri})["contents"][0]["text"]


def client_config(exe: Path, workspace: Path):
    """The server command from both client configurations, with their placeholders filled in."""
    codex = tomllib.loads((REPO / "examples/mcp-clients/codex/config.toml").read_text())["mcp_servers"]["forgemcp"]
    claude = json.loads((REPO / "examples/mcp-clients/claude-code/.mcp.json").read_text())["mcpServers"]["forgemcp"]
    check(codex["command"] == claude["command"] == PLACEHOLDER_EXE, "both client examples name forgemcp.exe")
    check(codex["args"] == claude["args"] == ["--workspace", PLACEHOLDER_WORKSPACE], "both pass --workspace")
    filled = {PLACEHOLDER_EXE: forward(exe), PLACEHOLDER_WORKSPACE: forward(workspace)}
    return [filled[claude["command"]]] + [filled.get(arg, arg) for arg in claude["args"]]


def make_project(root: Path, bin_dir: Path):
    project = root / "project"
    (project / "bin").mkdir(parents=True)
    (project / "search").mkdir()
    for program in ["echo_args.exe", "tree.exe"]:
        shutil.copy(bin_dir / program, project / "bin" / program)
    (project / "bin/run.bat").write_bytes(b"@echo off\r\necho batch\r\n")
    (project / "bin/run.CMD").write_bytes(b"@echo off\r\necho batch\r\n")
    (project / "crlf-existing.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (project / "search/a.cpp").write_bytes(b"// needle one\r\nint needle = 2; // needle again\r\nint other;\r\n")
    (project / "search/b.hpp").write_bytes(b"#pragma once\nextern int needle;\n")
    (project / "search/c.txt").write_bytes(b"no match here\n")
    (project / "links/tree").mkdir(parents=True)
    (project / "links/tree/inner.txt").write_bytes(b"inner\n")
    (project / "links/target").mkdir()
    return project


def stdout_of(server, process_id):
    res = server.call("process_get", {"process_id": process_id, "lines": {"first": 100}})
    entries = res["structuredContent"]["transcript"]
    return "".join(e["text"] for e in entries if e["stream"] == "stdout")


def run_test(server, executable, arguments, **extra):
    res = server.call("cmake_run_test", {"executable": executable, "arguments": arguments, **extra})
    return res, res.get("structuredContent", {})


def error_text(res):
    check(res.get("isError") is True, f"expected a tool error, got {json.dumps(res)[:400]}")
    return res["content"][0]["text"]


def beats(path: Path):
    """How often tree.exe's `beat` ran: it appends one byte per beat."""
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def still_beating(path: Path):
    first = beats(path)
    time.sleep(0.6)
    return beats(path) != first


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--wine", required=True)
    parser.add_argument("--exe", required=True, type=Path)
    parser.add_argument("--linux-exe", required=True, type=Path)
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--temp", required=True, type=Path)
    opts = parser.parse_args()
    started = time.monotonic()
    root = opts.temp.resolve()
    project = make_project(root, opts.bin)
    env = dict(os.environ, FORGEMCP_LOG="warn")
    log = open(root / "server.stderr", "wb")
    passed = []
    not_checked = [PIPE_ACL]

    def ok(name):
        passed.append(name)
        print(f"ok {name} ({time.monotonic() - started:.1f} s)", flush=True)

    try:
        argv = [opts.wine] + client_config(opts.exe, project)
        server = Server(argv, env, log)
        init = server.request("initialize", init_params(), timeout=120)
        check(init["serverInfo"]["name"] == "forgemcp", f"serverInfo: {init['serverInfo']}")
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ok("initialize from the client configuration (forgemcp.exe, forward-slash paths)")

        tools = sorted(t["name"] for t in server.request("tools/list", {})["tools"])
        linux = subprocess.run(
            [str(opts.linux_exe), "--workspace", str(project), "--no-admin"],
            input=(
                json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init_params()})
                + "\n"
                + json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
                + "\n"
                + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                + "\n"
            ).encode(),
            capture_output=True,
            timeout=60,
        )
        linux_tools = sorted(
            t["name"] for line in linux.stdout.splitlines() for t in json.loads(line).get("result", {}).get("tools", [])
        )
        check(len(tools) >= 26 and tools == linux_tools, f"Windows tools {tools} vs Linux tools {linux_tools}")
        ok(f"tools/list: the same {len(tools)} tools as the Linux build")

        # CRLF: write, read and edit keep every byte.
        text = "first\r\nsecond\r\n\r\nlast"
        res = server.call("workspace_write_file", {"path": "crlf-new.txt", "text": text})
        check(not res.get("isError"), f"write: {res}")
        check((project / "crlf-new.txt").read_bytes() == text.encode(), "written bytes")
        check(server.read("forgemcp://workspace/file/project/crlf-new.txt") == text, "read back through the mirror")
        res = server.call("workspace_edit_file", {"path": "crlf-new.txt", "old_text": "second", "new_text": "2nd"})
        check(res["structuredContent"]["replacements"] == 1, f"edit: {res}")
        check((project / "crlf-new.txt").read_bytes() == b"first\r\n2nd\r\n\r\nlast", "edited bytes")
        check(server.read("forgemcp://workspace/file/project/crlf-new.txt") == "first\r\n2nd\r\n\r\nlast", "re-read")
        ok("CRLF write, read and edit kept byte for byte")

        res = server.call("workspace_edit_file", {"path": "crlf-existing.txt", "old_text": "two", "new_text": "2"})
        check(res["structuredContent"]["replacements"] == 1, f"edit: {res}")
        check((project / "crlf-existing.txt").read_bytes() == b"one\r\n2\r\nthree\r\n", "edited file on disk")
        ok("CRLF edit of a file that was already on disk")

        res = server.call("workspace_text_search", {"query": "needle", "path": "project/search"})
        found = res["structuredContent"]
        lines = [(m["path"], m["line"], m["text"], m["spans"]) for m in found["matches"]]
        check(found["matches_count"] == 3 and not found["matches_truncated"], f"counts: {found}")
        check(
            lines
            == [
                ("project/search/a.cpp", 1, "// needle one", [[3, 9]]),
                ("project/search/a.cpp", 2, "int needle = 2; // needle again", [[4, 10], [19, 25]]),
                ("project/search/b.hpp", 2, "extern int needle;", [[11, 17]]),
            ],
            f"matches: {lines}",
        )
        ok("text search: counts, lines and spans (CRLF lines without their CR)")

        res, run = run_test(server, "project/bin/echo_args.exe", ODD_ARGUMENTS)
        check(run.get("error") is None, f"run: {res}")
        echoed = json.loads(stdout_of(server, run["process_id"]))
        check(echoed["args"] == ODD_ARGUMENTS, f"arguments arrived as {echoed['args']}")
        ok('cmake_run_test: ["a b", "", "q\\"uote", "back\\\\slash"] arrived exactly')
        exe = windows(project / "bin/echo_args.exe")
        check(echoed["argv0"] == exe, f"argv[0] is {echoed['argv0']!r}, expected {exe!r}")
        check(echoed["cwd"].rstrip("\\") == windows(project), f"the working directory is {echoed['cwd']!r}")
        ok("argv[0] and the working directory are plain absolute paths (no \\\\?\\ prefix)")

        for batch in ["project/bin/run.bat", "project/bin/run.CMD"]:
            message = error_text(server.call("cmake_run_test", {"executable": batch}))
            check("batch files are not supported" in message and "`executable`" in message, message)
        ok(".bat and .cmd executables refused")

        beat = root / "beat.txt"
        begin = time.monotonic()
        # 4 s: a loaded CI machine's Wine has taken over 2 s to start the leader and its child.
        res, run = run_test(server, "project/bin/tree.exe", ["spawn", windows(beat)], timeout={"total": 4})
        took = time.monotonic() - begin
        check("interrupted by the timeout (total 4 s)" in (run.get("error") or ""), f"timeout: {res}")
        said = stdout_of(server, run["process_id"])
        check(beats(beat) > 0, f"the child of the test ran (the test printed {said!r})")
        check(not still_beating(beat), "the test's child still runs after the timeout")
        check(took < 12, f"the timed-out call took {took:.1f} s")
        ok(f'{{"total": 4}} timeout killed the test and its child through the job object ({took:.1f} s)')

        # Links: directory junctions made by link.exe (Wine 8 cannot make any; then this is reported).
        made = [
            subprocess.run(
                [opts.wine, windows(opts.bin / "link.exe"), windows(project / link), windows(project / "links/target")],
                capture_output=True,
            )
            for link in ["links/junction", "links/tree/inner-junction"]
        ]
        if all(m.returncode == 3 for m in made):
            # link.exe says which call failed (FSCTL_SET_REPARSE_POINT: 50, ERROR_NOT_SUPPORTED).
            reason = made[0].stderr.decode(errors="replace").strip()
            not_checked.append((f"{LINKS[0]} [{reason}]", LINKS[1]))
        else:
            check(all(m.returncode == 0 for m in made), f"link.exe: {[m.returncode for m in made]}")
            for tool, arguments, shown in [
                ("workspace_move", {"source": "links/junction", "destination": "moved"}, "`project/links/junction`"),
                ("workspace_delete", {"path": "links/junction"}, "`project/links/junction`"),
                ("workspace_move", {"source": "links/tree", "destination": "moved"}, "`project/links/tree/inner-junction`"),
                ("workspace_delete", {"path": "links/tree", "recursive": True}, "`project/links/tree/inner-junction`"),
            ]:
                message = error_text(server.call(tool, arguments))
                check("link" in message and shown in message, f"{tool} {arguments}: {message}")
            check((project / "links/tree/inner.txt").exists() and not (project / "moved").exists(), "unchanged")
            ok("workspace_move and workspace_delete refuse a link and a tree containing one")

        escaped = root / "breakaway.txt"
        res, run = run_test(server, "project/bin/tree.exe", ["breakaway", windows(escaped)], timeout={"total": 2})
        check("interrupted by the timeout" in (run.get("error") or ""), f"breakaway: {res}")
        said = stdout_of(server, run["process_id"])
        if said.startswith("refused"):
            ok(f"a test's child asking to break away from the job is refused ({said.strip()})")
        else:
            check(said.startswith("spawned") and beats(escaped) > 0, f"breakaway: {said!r}")
            check(not still_beating(escaped), "a child that asked to break away outlived the job")
            not_checked.append(BREAKAWAY)

        open_admin(opts, root, env)
        ok("the Hub over its named pipe: --open-admin started $BROWSER's first entry (split at ';') and the login works")

        # A test that would run for ever, then stdin EOF: the server exits at once and kills the tree.
        forever = root / "forever.txt"
        server.start(
            "tools/call",
            {"name": "cmake_run_test", "arguments": {"executable": "project/bin/tree.exe", "arguments": ["spawn", windows(forever)]}},
        )
        for _ in range(100):
            if beats(forever) > 0:
                break
            time.sleep(0.1)
        check(beats(forever) > 0, "the long test started")
        begin = time.monotonic()
        server.proc.stdin.close()
        try:
            status = server.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            raise Failure("the server still runs 10 s after stdin EOF")
        took = time.monotonic() - begin
        check(status == 0, f"exit status {status}")
        check(took < 1.5, f"the server took {took:.2f} s to exit after stdin EOF")
        check(not still_beating(forever), "the running test's child outlived the server")
        check(not server.bad_lines, f"stdout carried non-JSON lines: {server.bad_lines[:3]}")
        ok(f"exit {took:.2f} s after stdin EOF, status 0, the running test's tree killed, stdout pure")

        for feature, covered in not_checked:
            print(f"not under Wine: {feature}; covered by {covered}")
        print(f"windows smoke suite: {len(passed)} checks passed in {time.monotonic() - started:.1f} s")
        return 0
    except Failure as failure:
        log.flush()
        print(f"FAILED: {failure}", file=sys.stderr)
        tail = (root / "server.stderr").read_text(errors="replace")[-4000:]
        if tail:
            print(f"--- server stderr (end) ---\n{tail}", file=sys.stderr)
        return 1


def init_params():
    return {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "smoke", "version": "1"}}


def open_admin(opts, root: Path, env):
    """`forgemcp.exe --open-admin` with a $BROWSER list whose first entry records its invocation."""
    record = root / "browser.json"
    echo = windows(opts.bin / "echo_args.exe")
    browser_env = dict(
        env,
        BROWSER=f"{echo} --smoke-browser %s;C:\\no\\such\\browser.exe",
        FORGEMCP_SMOKE_RECORD=windows(record),
    )
    deadline = time.monotonic() + 30
    while True:
        done = subprocess.run([opts.wine, str(opts.exe), "--open-admin"], env=browser_env, capture_output=True, timeout=60)
        if done.returncode != 1 or time.monotonic() > deadline:
            break
        time.sleep(0.5)  # the Hub the server started is not listening yet
    stderr = done.stderr.decode(errors="replace")
    opened = "opened the admin panel in your browser" in stderr
    if done.returncode == -9 and opened:
        # wineserver SIGKILLs a process that takes over a second to finish exiting (DLL detach on a
        # loaded machine); the program had already reported its outcome.
        print("note: Wine killed --open-admin while it exited, after it reported the browser started")
    else:
        check(done.returncode == 0 and opened, f"--open-admin exited with {done.returncode}: {stderr}")
    check(done.stdout == b"", f"--open-admin printed on stdout: {done.stdout[:200]!r}")
    launched = json.loads(record.read_text().splitlines()[0])
    check(launched["argv0"] == echo, f"the browser started was {launched['argv0']!r}")
    check(len(launched["args"]) == 2 and launched["args"][0] == "--smoke-browser", f"browser arguments {launched}")
    url = launched["args"][1]
    check(url.startswith("file:///") and url.endswith("-open.html"), f"browser target {url}")
    page = linux_path(urllib.parse.unquote(url[len("file:///") :])).read_text()
    login = re.search(r'location\.replace\("([^"]+)"\)', page)
    check(login is not None, f"no login URL in the page: {page[:300]}")
    login_url = login.group(1).encode().decode("unicode_escape")
    check(login_url.startswith("http://127.0.0.1:"), f"login URL {login_url}")

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        answer = opener.open(login_url, timeout=10)
        status, headers = answer.status, answer.headers
    except urllib.error.HTTPError as redirect:
        status, headers = redirect.code, redirect.headers
    check(status in (200, 302, 303), f"the login answered {status}")
    check("forgemcp" in (headers.get("Set-Cookie") or "").lower(), f"the login set no session cookie: {headers}")


if __name__ == "__main__":
    sys.exit(main())
