#!/usr/bin/env python3
"""Idle memory of the forgemcp binary, by mapping and by the code it keeps resident; and the list
of the functions start-up runs, which release builds lay out together (`linker/startup-symbols.txt`).

`measure` starts the server (`--workspace DIR --no-admin`), sends `initialize` (+ `initialized`)
and `tools/list` (or less: `--stage exec|init`), waits until it used no CPU for 0.3 s (or not:
`--no-settle`, as mcpbench.py measures), then reads `/proc/<pid>/smaps` (Rss per mapping, summed
by file) and the present bits of `/proc/<pid>/pagemap` for the binary's code, which it maps to
symbols (`nm -n --demangle`) and sums by crate. Prints medians over several starts.

    python3 benches/idle_rss.py measure target/release/forgemcp --workspace /path/to/corpus
    python3 benches/idle_rss.py measure BIN --workspace DIR --stage init --runs 5 --crates 25

`--admin` runs the server with its admin panel instead, in a runtime directory of its own, so that it
starts its own Hub, and measures that Hub's VmRSS too.

`order` runs the same session under valgrind's callgrind and prints, one per line, the (mangled)
names of the binary's functions that ran, for lld's `--symbol-ordering-file`: first those of the
`--no-admin` session, then those a session with the admin panel adds (its link, and a Hub started
before it, traced until it exits):

    python3 benches/idle_rss.py order target/release/forgemcp --workspace DIR > linker/startup-symbols.txt

Its first line records what the list was made with (rustc's version and commit, a digest of
`Cargo.lock`); `build.rs` warns when a release build differs. `check` says how many of the listed
functions a binary has, and fails when fewer than `--min-share` (0.9) of those without an `.llvm.`
suffix are there (renamed or removed functions; the suffixes themselves change with any change to
their codegen unit and with the checkout's path); `measure` prints the same line first.

    python3 benches/idle_rss.py check target/release/forgemcp

The present pages include those the kernel maps around each fault: the page cache holds a binary in
folios of up to several hundred KiB, and a fault maps the whole folio around it, so code near
start-up code counts too. Stdlib only (and valgrind for `order`); Linux only.
"""

import argparse
import bisect
import json
import os
import re
import signal
import statistics
import struct
import subprocess
import tempfile
import time
from collections import defaultdict

PAGE = os.sysconf("SC_PAGE_SIZE")
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "idle", "version": "1"}},
}


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def request(proc, message):
    send(proc, message)
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("the server closed stdout")
        reply = json.loads(line)
        if reply.get("id") == message["id"]:
            return reply


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def settle(pid, quiet=0.3, limit=10.0):
    """Waits until the process used no CPU for `quiet` seconds (its start-up threads are done)."""
    end = time.time() + limit
    last = cpu_ticks(pid)
    while time.time() < end:
        time.sleep(quiet)
        now = cpu_ticks(pid)
        if now == last:
            return
        last = now


def smaps(pid):
    """[(start, end, perms, offset, path, rss_kib)] for every mapping."""
    maps = []
    head = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)$")
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = head.match(line)
            if m:
                maps.append([int(m[1], 16), int(m[2], 16), m[3], int(m[4], 16), m[5].strip(), 0])
            elif line.startswith("Rss:"):
                maps[-1][5] = int(line.split()[1])
    return maps


def present_pages(pid, start, end):
    """Addresses of the pages of [start, end) that are present (pagemap bit 63)."""
    with open(f"/proc/{pid}/pagemap", "rb") as f:
        f.seek(start // PAGE * 8)
        data = f.read((end - start) // PAGE * 8)
    return [start + i * PAGE for i, (entry,) in enumerate(struct.iter_unpack("<Q", data)) if entry >> 63]


def group(path, binary):
    if path == binary:
        return "binary"
    if path.startswith("/"):
        return "libs"
    if path == "[heap]":
        return "heap"
    if path.startswith("[stack"):
        return "stack"
    return "anon" if not path else path


def load_segments(binary):
    """[(p_offset, p_vaddr, p_filesz)] of the binary's LOAD segments."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout
    segs = []
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "LOAD":
            segs.append((int(parts[1], 16), int(parts[2], 16), int(parts[4], 16)))
    return segs


def symbols(binary):
    """Sorted [(vaddr, size, name)] of the binary's code symbols."""
    out = subprocess.run(["nm", "-n", "-S", "--demangle", binary], capture_output=True, text=True, check=True).stdout
    syms = []
    sized = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) [tTwW] (.*)$")
    for line in out.splitlines():
        m = sized.match(line)
        if m:
            syms.append((int(m[1], 16), int(m[2], 16), m[3]))
    return syms


def crate_of(name):
    name = name.lstrip("<&*")
    for prefix in ("dyn ", "mut ", "const "):
        if name.startswith(prefix):
            name = name[len(prefix):]
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", name)
    return m[0] if m else "?"


def code_by_crate(pages, binary, maps):
    """Resident code bytes per crate: each present 4 KiB page split over the symbols it holds."""
    syms = symbols(binary)
    segs = load_segments(binary)
    starts = [s[0] for s in syms]
    by_crate = defaultdict(int)
    by_symbol = defaultdict(int)
    for page, (start, _end, _perms, offset, _path, _rss) in pages:
        file_off = page - start + offset
        vaddr = next((v + file_off - o for o, v, n in segs if o <= file_off < o + n), None)
        if vaddr is None:
            continue
        lo, hi = vaddr, vaddr + PAGE
        i = max(bisect.bisect_right(starts, lo) - 1, 0)
        covered = 0
        while i < len(syms) and syms[i][0] < hi:
            a, size, name = syms[i]
            overlap = min(hi, a + size) - max(lo, a)
            if overlap > 0:
                by_crate[crate_of(name)] += overlap
                by_symbol[name] += overlap
                covered += overlap
            i += 1
        by_crate["(no symbol)"] += PAGE - covered
    return by_crate, by_symbol


def session(proc, stage):
    if stage in ("init", "list"):
        request(proc, INIT)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    if stage == "list":
        request(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})


def server_command(args):
    admin = [] if args.admin else ["--no-admin"]
    return [args.binary, "--workspace", args.workspace, *admin, *args.extra]


def vm_rss(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def one_start(args):
    """One start: (VmRSS, Rss by mapping group, resident code KiB, (code windows resident, all),
    code by crate and symbol or None, the Hub's VmRSS or None); KiB."""
    with tempfile.TemporaryDirectory() as runtime:
        # With the admin panel: a runtime directory of its own, so the server starts its own Hub.
        marker = f"FORGEMCP_IDLE_RSS_RUNTIME={runtime}"
        env = dict(os.environ, XDG_RUNTIME_DIR=runtime, FORGEMCP_IDLE_RSS_RUNTIME=runtime) if args.admin else None
        proc = subprocess.Popen(
            server_command(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        hubs = []
        try:
            session(proc, args.stage)
            if args.stage == "exec":
                time.sleep(0.2)
            if not args.no_settle:
                settle(proc.pid)
            vmrss = vm_rss(proc.pid)
            maps = smaps(proc.pid)
            binary = os.path.realpath(args.binary)
            totals = defaultdict(int)
            for m in maps:
                totals[group(m[4], binary)] += m[5]
            code = [m for m in maps if m[4] == binary and "x" in m[2]]
            pages = [(p, m) for m in code for p in present_pages(proc.pid, m[0], m[1])]
            windows = {p // 65536 for p, _ in pages}
            text_windows = sum((m[1] - m[0] + 65535) // 65536 for m in code)
            detail = code_by_crate(pages, binary, maps) if args.crates else None
            hubs = [pid for pid in processes_with(marker) if pid != proc.pid] if args.admin else []
            for hub in hubs:
                settle(hub)
            hub_rss = sum(vm_rss(hub) for hub in hubs) if hubs else None
        finally:
            proc.stdin.close()
            proc.wait(timeout=10)
            for hub in hubs:
                os.kill(hub, signal.SIGTERM)
        return vmrss, dict(totals), len(pages) * PAGE // 1024, (len(windows), text_windows), detail, hub_rss


def executed_functions(profile, binary):
    """The functions of `binary` with a cost in a callgrind profile, in the profile's order."""
    tables = {"fn": {}, "ob": {}}
    kinds = {"fn": "fn", "cfn": "fn", "ob": "ob", "cob": "ob"}
    pattern = re.compile(r"^(c?fn|c?ob)=\((\d+)\)(?: (.*))?$")
    ob = fn = None
    seen = {}
    expect_call_cost = False
    with open(profile) as f:
        for line in f:
            m = pattern.match(line)
            if m:
                table = tables[kinds[m[1]]]
                if m[3] is not None:
                    table[m[2]] = m[3]
                if m[1] == "ob":
                    ob = table[m[2]]
                elif m[1] == "fn":
                    fn = table[m[2]]
                continue
            if line.startswith("calls="):
                expect_call_cost = True  # the next cost line is the callee's, not this function's
                continue
            if line[:1].isdigit() or line[:1] in "+-*":
                if not expect_call_cost and ob == binary and fn:
                    seen.setdefault(fn, None)
                expect_call_cost = False
    # callgrind names a second function of the same name `name'2`; addresses are functions
    # without a symbol.
    names = (re.sub(r"'\d+$", "", name) for name in seen)
    return list(dict.fromkeys(name for name in names if not name.startswith("0x")))


def processes_with(env_entry):
    """Pids of the processes whose environment holds `env_entry` (`NAME=value`)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if env_entry.encode() in f.read().split(b"\0"):
                    pids.append(int(pid))
        except OSError:
            pass
    return pids


def profiled_session(args, tmp, admin):
    """The binary's functions that one session ran under callgrind: `--no-admin`, or with the admin
    panel, in a runtime directory of its own, where it starts a Hub (traced too, until it exits 10 s
    after the session); the session lasts 15 s more, for the Hub to start and the server to join."""
    runtime = os.path.join(tmp, f"runtime-{admin}")
    os.mkdir(runtime, 0o700)
    marker = f"FORGEMCP_IDLE_RSS_RUNTIME={runtime}"
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime, FORGEMCP_IDLE_RSS_RUNTIME=runtime)
    valgrind = ["valgrind", "--tool=callgrind", "--demangle=no", "--trace-children=yes"]
    valgrind.append(f"--callgrind-out-file={runtime}/callgrind.%p")
    args.admin = admin
    proc = subprocess.Popen(
        valgrind + server_command(args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    try:
        session(proc, "list")
        if admin:
            time.sleep(15)
        settle(proc.pid, quiet=1.0, limit=60.0)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    end = time.time() + 90
    while processes_with(marker) and time.time() < end:
        time.sleep(0.5)
    binary = os.path.realpath(args.binary)
    names = []
    for profile in sorted(f for f in os.listdir(runtime) if f.startswith("callgrind.")):
        names += executed_functions(os.path.join(runtime, profile), binary)
    return names


LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "linker", "startup-symbols.txt")
REGENERATE = (
    "cargo build --release && python3 benches/idle_rss.py order target/release/forgemcp --workspace <a C/C++ tree> "
    "> linker/startup-symbols.txt && cargo build --release"
)


def defined_names(binary):
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def fingerprint():
    """What the list's names depend on besides the code: the `# made with` line `build.rs` compares
    (rustc's release and commit, FNV-1a 64 of Cargo.lock; build.rs computes the same)."""
    rustc = subprocess.run([os.environ.get("RUSTC", "rustc"), "-vV"], capture_output=True, text=True, check=True).stdout
    info = dict(line.split(": ", 1) for line in rustc.splitlines() if ": " in line)
    digest = 0xCBF29CE484222325
    with open(os.path.join(os.path.dirname(LIST), "..", "Cargo.lock"), "rb") as f:
        for byte in f.read():
            digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"# made with: rustc {info.get('release', '?')} {info.get('commit-hash', '?')}; Cargo.lock {digest:016x}"


def order(args):
    """Start-up functions first (`--no-admin`, as idle RSS is measured), then what the admin panel's
    start (the instance's link and the Hub it starts) adds."""
    binary = os.path.realpath(args.binary)
    with tempfile.TemporaryDirectory() as tmp:
        names = profiled_session(args, tmp, admin=False) + profiled_session(args, tmp, admin=True)
    defined = defined_names(binary)
    print(fingerprint())
    for name in dict.fromkeys(names):
        if name in defined:
            print(name)


def coverage(binary):
    """(share of the listed names without an `.llvm.` suffix that the binary has, the line that
    says so). The `.llvm.` suffix of a promoted local function hashes its codegen unit, whose debug
    information holds the checkout's path: the same code built in another directory renames those
    (about 10% of the list), so only the other names tell whether the list is stale."""
    with open(LIST) as f:
        listed = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    defined = defined_names(binary)
    stable = [name for name in listed if ".llvm." not in name]
    found = sum(name in defined for name in listed)
    found_stable = sum(name in defined for name in stable)
    share = found_stable / len(stable) if stable else 0.0
    line = (
        f"start-up list: {found:,} of {len(listed):,} functions are in {binary}; "
        f"{found_stable:,} of the {len(stable):,} without an `.llvm.` suffix ({share:.0%}), "
        f"{found - found_stable:,} of the {len(listed) - len(stable):,} with one"
    )
    return share, line


def check(args):
    share, line = coverage(args.binary)
    print(line)
    if share < args.min_share:
        raise SystemExit(
            f"linker/startup-symbols.txt is stale (below {args.min_share:.0%}): release builds lay out start-up code "
            f"from it, and idle RSS rises as names go missing. Regenerate it (needs valgrind):\n  {REGENERATE}"
        )


def measure(args):
    args.crates = args.crates or args.symbols
    print(coverage(args.binary)[1])
    runs = [one_start(args) for _ in range(args.runs)]
    mib = lambda kib: f"{kib / 1024:.2f}"
    med = lambda xs: statistics.median(xs)
    print(f"{args.binary} stage={args.stage} runs={args.runs}")
    print(f"VmRSS MiB: median {mib(med([r[0] for r in runs]))}  (each: {', '.join(mib(r[0]) for r in runs)})")
    keys = sorted({k for r in runs for k in r[1]}, key=lambda k: -med([r[1].get(k, 0) for r in runs]))
    print("by mapping, MiB: " + ", ".join(f"{k} {mib(med([r[1].get(k, 0) for r in runs]))}" for k in keys))
    print(
        f"resident code: {mib(med([r[2] for r in runs]))} MiB in {med([r[3][0] for r in runs])} "
        f"of {runs[0][3][1]} 64 KiB windows"
    )
    if args.admin:
        hubs = [r[5] for r in runs if r[5] is not None]
        print(f"Hub VmRSS MiB: median {mib(med(hubs))}" if hubs else "no Hub found")
    if args.crates:
        by_crate, by_symbol = runs[-1][4]
        print("resident code by crate (last run), KiB:")
        for name, size in sorted(by_crate.items(), key=lambda kv: -kv[1])[: args.crates]:
            print(f"  {size / 1024:8.1f}  {name}")
        if args.symbols:
            print("resident code by symbol (last run), KiB:")
            for name, size in sorted(by_symbol.items(), key=lambda kv: -kv[1])[: args.symbols]:
                print(f"  {size / 1024:8.1f}  {name[:160]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sub = commands.add_parser("check")
    sub.add_argument("binary")
    sub.add_argument(
        "--min-share", type=float, default=0.9, help="fail below this share of the listed names without `.llvm.`"
    )
    for name in ("measure", "order"):
        sub = commands.add_parser(name)
        sub.add_argument("binary")
        sub.add_argument("--workspace", required=True)
        sub.add_argument("extra", nargs="*", help="more server arguments (after --)")
        if name == "measure":
            sub.add_argument(
                "--admin", action="store_true", help="with the admin panel: it starts a Hub of its own, measured too"
            )
            sub.add_argument("--stage", choices=["exec", "init", "list"], default="list")
            sub.add_argument("--runs", type=int, default=5)
            sub.add_argument("--no-settle", action="store_true", help="measure right after the last reply")
            sub.add_argument("--crates", type=int, default=0, help="print the N crates with the most resident code")
            sub.add_argument("--symbols", type=int, default=0, help="print the N symbols with the most resident code")
    args = parser.parse_args()
    {"check": check, "measure": measure, "order": order}[args.command](args)


if __name__ == "__main__":
    main()
