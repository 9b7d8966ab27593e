#!/usr/bin/env python3
"""Compiler caches and build farms through forgemcp, with figures (issue 32 §4).

For each launcher (none, ccache, sccache, distcc, icecc where its daemons can run) the script makes
two copies of examples/cpp-acceptance-project in two different directories, starts the given
forgemcp binary on each copy with one `--cmake-profile` using that launcher, and times through MCP:
`cmake_configure`, then a clean `cmake_build` of everything in the first copy (a cold cache), then
the same in the second copy (another absolute path: what ccache's base directory makes hit). It
prints the wall times of both builds beside the plain build's and the `acceleration` line each
build returned. Every daemon listens on 127.0.0.1 only, on a free port, with its state in a
temporary directory, and is stopped at the end; caches are fresh, so the first build is cold.

    cargo build --release --bin forgemcp
    python3 benches/launchers.py target/release/forgemcp [--rounds 3] [--only ccache,distcc]

A benchmark prints figures for comparison; it asserts nothing about speed.
"""

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cpp-acceptance-project"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, limit=20.0):
    start = time.monotonic()
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc is not None and proc.poll() is not None:
                raise SystemExit(f"{what} exited with {proc.returncode}")
            if time.monotonic() - start > limit:
                raise SystemExit(f"nothing listens on 127.0.0.1:{port} ({what})")
            time.sleep(0.05)


def children(parent):
    """The pids whose parent is `parent` (`/proc/<pid>/stat`)."""
    res = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            res.append(int(entry))
    return res


class Server:
    """forgemcp over stdio on one copy of the example."""

    def __init__(self, binary, project, storage, profile):
        args = [binary, "--workspace", str(project), "--workspace-storage", str(storage), "--no-admin"]
        args += ["--cmake-profile", "bench", "configuration=Debug"] + profile
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "launchers", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        ident = self.next_id
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit("the server closed stdout")
            reply = json.loads(line)
            if reply.get("id") == ident:
                if "error" in reply:
                    raise SystemExit(f"{method}: {reply['error']}")
                return reply["result"]

    def tool(self, name, arguments):
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        text = "".join(item.get("text", "") for item in result.get("content", []))
        items = result.get("structuredContent", {}).get("result", [])
        if result.get("isError") or not items or items[0].get("error"):
            raise SystemExit(f"{name} failed:\n{text}")
        return items[0], text

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def copy_example(base):
    project = base / "proj"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("build", ".cache"))
    (project / "CMakePresets.json").unlink()
    return project, base / ".proj.forgemcp"


def timed_clean_build(binary, base, profile):
    """Configures a fresh copy under `base` and times one clean build of everything."""
    project, storage = copy_example(base)
    server = Server(binary, project, storage, profile)
    try:
        server.tool("cmake_configure", {})
        server.tool("cmake_build", {"targets": ["clean"]})
        start = time.monotonic()
        item, text = server.tool("cmake_build", {})
        elapsed = time.monotonic() - start
    finally:
        server.close()
    line = next((l.strip() for l in text.splitlines() if l.strip().split(":")[0] in ("ccache", "sccache", "distcc", "icecc")), "")
    return elapsed, item.get("acceleration"), line


class Launcher:
    """A launcher's profile entries and the daemons it needs, started and stopped."""

    def __init__(self, name, scratch):
        self.name, self.scratch, self.procs, self.stop = name, scratch, [], []

    def __enter__(self):
        s = self.scratch
        if self.name == "plain":
            self.profile = []
        elif self.name == "ccache":
            self.profile = ["compiler-launcher=ccache", f"env=CCACHE_DIR={s / 'ccache'}"]
        elif self.name == "sccache":
            port = free_port()
            env = dict(os.environ, SCCACHE_DIR=str(s / "sccache"), SCCACHE_SERVER_PORT=str(port))
            subprocess.run(["sccache", "--start-server"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.stop.append(lambda: subprocess.run(["sccache", "--stop-server"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            self.profile = ["compiler-launcher=sccache", f"env=SCCACHE_DIR={s / 'sccache'}", f"env=SCCACHE_SERVER_PORT={port}"]
        elif self.name == "distcc":
            port = free_port()
            log = open(s / "distccd.log", "w")
            proc = subprocess.Popen(
                ["distccd", "--daemon", "--no-detach", "--listen", "127.0.0.1", "--allow", "127.0.0.1", "--log-stderr",
                 "--port", str(port), "--jobs", "4"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
            self.procs.append(proc)
            wait_port(port, proc, "distccd")
            (s / "distcc").mkdir()
            self.profile = ["compiler-launcher=distcc", f"env=DISTCC_HOSTS=127.0.0.1:{port}/4", f"env=DISTCC_DIR={s / 'distcc'}"]
        else:
            raise SystemExit(f"unknown launcher {self.name}")
        return self

    def __exit__(self, *exc):
        for stop in self.stop:
            stop()
        for proc in self.procs:
            # distccd's workers hold the listening socket too and run in groups of their own.
            for child in children(proc.pid):
                try:
                    os.kill(child, 9)
                except ProcessLookupError:
                    pass
            proc.kill()
            proc.wait()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--rounds", type=int, default=1, help="fresh caches per launcher; medians are printed")
    parser.add_argument("--only", default="plain,ccache,sccache,distcc")
    args = parser.parse_args()
    binary = str(Path(args.binary).resolve())
    rows = []
    for name in args.only.split(","):
        if name != "plain" and shutil.which(name) is None:
            print(f"{name}: not installed, left out")
            continue
        first, second, lines = [], [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix=f"launchers-{name}-") as tmp:
                tmp = Path(tmp)
                for sub in ("a", "b"):
                    (tmp / sub).mkdir()
                with Launcher(name, tmp) as launcher:
                    t1, _, l1 = timed_clean_build(binary, tmp / "a", launcher.profile)
                    t2, _, l2 = timed_clean_build(binary, tmp / "b", launcher.profile)
                first.append(t1)
                second.append(t2)
                lines.append((l1, l2))
        rows.append((name, statistics.median(first), statistics.median(second), lines[-1]))
    plain = next((r[1] for r in rows if r[0] == "plain"), None)
    print(f"{'launcher':<9} {'clean build':>12} {'other copy':>11} {'vs plain':>9}  acceleration (first build | other copy)")
    for name, t1, t2, (l1, l2) in rows:
        ratio = f"{t2 / plain:.2f}x" if plain else "-"
        print(f"{name:<9} {t1:>10.2f} s {t2:>9.2f} s {ratio:>9}  {l1 or '-'} | {l2 or '-'}")


if __name__ == "__main__":
    main()
