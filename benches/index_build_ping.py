#!/usr/bin/env python3
"""Ping latency while the search index is built (issue 33: ping p99 <= 5 ms during the build).

Starts the server on a project with a new, empty storage root (so the index is built from scratch
in the background), sends `initialize`, then a `ping` every `--interval` ms and, every
`--probe-every` pings, a `workspace_text_search` of a literal no file holds inside the directory
with the fewest files (at most two levels down: the probe's own cost stays small) to read the index state from
its structured `index` field. Pings sent while the state is `building` are the build's; after the
state turns `ready`, the same number of pings (at least 200) give the idle figure of the same run.
Prints count, median, p99 and maximum of both, and the time from `initialize` to `ready`.

    python3 benches/index_build_ping.py target/release/forgemcp --workspace /path/to/duckdb

Stdlib only; Linux (the index is built on Linux only; elsewhere every search scans).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROBE_QUERY = "ForgeMCP_index_probe_no_such_token_5e1d"


class Server:
    def __init__(self, binary, workspace, storage):
        self.proc = subprocess.Popen(
            [binary, "--workspace", workspace, "--workspace-storage", storage, "--no-admin"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params=None):
        """Sends a request and returns (seconds to its reply line, the reply)."""
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        started = time.perf_counter()
        self.send(message)
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the server closed its output during {method}")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return time.perf_counter() - started, reply

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def smallest_directory(workspace):
    """The non-dot directory (at most two levels down) with the fewest files below it (at least one)."""
    best = None
    for top in sorted(os.scandir(workspace), key=lambda e: e.name):
        if top.name.startswith(".") or not top.is_dir(follow_symlinks=False):
            continue
        candidates = [top.name] + [
            f"{top.name}/{sub.name}"
            for sub in sorted(os.scandir(top.path), key=lambda e: e.name)
            if not sub.name.startswith(".") and sub.is_dir(follow_symlinks=False)
        ]
        for rel in candidates:
            count = sum(len(files) for _, _, files in os.walk(os.path.join(workspace, rel)))
            if count and (best is None or count < best[0]):
                best = (count, rel)
    if best is None:
        raise SystemExit(f"{workspace} has no directory with files to probe")
    return best[1]


def index_state(server, directory):
    _, reply = server.request(
        "tools/call",
        {
            "name": "workspace_text_search",
            "arguments": {"query": PROBE_QUERY, "path": f"project/{directory}", "max_matches": 1},
        },
    )
    result = reply.get("result") or {}
    structured = result.get("structuredContent") or {}
    if "index" not in structured:
        raise RuntimeError(f"the probe search gave no index state: {json.dumps(reply)[:400]}")
    return structured["index"]


def figures(label, seconds):
    ms = sorted(s * 1000 for s in seconds)
    if not ms:
        print(f"{label:<18} no pings")
        return
    p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
    print(f"{label:<18} {len(ms):>6} {statistics.median(ms):>9.3f} {p99:>9.3f} {ms[-1]:>9.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binary")
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--interval", type=float, default=10.0, help="milliseconds between pings (10)")
    parser.add_argument("--probe-every", type=int, default=10, help="pings between index probes (10)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for ready (600)")
    args = parser.parse_args()
    workspace = os.path.realpath(args.workspace)
    directory = smallest_directory(workspace)
    storage = tempfile.mkdtemp(prefix="forgemcp-ping-storage-")
    server = Server(args.binary, workspace, storage)
    try:
        server.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "index_build_ping", "version": "1"},
            },
        )
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        started = time.perf_counter()
        building, ready, states = [], [], []
        state = index_state(server, directory)
        states.append(state)
        ready_after = None
        n = 0
        while True:
            elapsed = time.perf_counter() - started
            if ready_after is None and elapsed > args.timeout:
                raise SystemExit(f"the index was not ready after {args.timeout:.0f} s (last state: {state})")
            seconds, _ = server.request("ping")
            (building if state == "building" else ready).append(seconds)
            n += 1
            if ready_after is None and n % args.probe_every == 0:
                state = index_state(server, directory)
                if state != states[-1]:
                    states.append(state)
                if state == "ready":
                    ready_after = time.perf_counter() - started
            if ready_after is not None and len(ready) >= max(200, len(building)):
                break
            time.sleep(args.interval / 1000)
        print(f"{workspace}: probe directory project/{directory}, a ping every {args.interval:g} ms")
        print(f"index states seen: {' -> '.join(states)}; ready {ready_after * 1000:.0f} ms after initialize")
        print(f"{'pings':<18} {'count':>6} {'median ms':>9} {'p99 ms':>9} {'max ms':>9}")
        figures("while building", building)
        figures("index ready", ready)
        return 0
    finally:
        server.close()
        shutil.rmtree(storage, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
