#!/usr/bin/env bash
# The Windows smoke suite: ForgeMCP's MinGW-w64 build (x86_64-pc-windows-gnu) under Wine, driven
# over stdio by tests/windows/smoke.py (which lists the checks). `.ci/run` runs it; locally:
#   tests/windows/smoke.sh
# Needs the rustup target x86_64-pc-windows-gnu and Debian's wine64, gcc-mingw-w64-x86-64-posix and
# python3. The Windows target directory (target/x86_64-pc-windows-gnu) and a freshly booted Wine
# prefix (target/windows-smoke/prefix, the slow first wineboot) are kept for later local runs; CI
# builds them once. Every run uses its own private copy of that prefix in a temporary directory,
# with the stand-in bcryptprimitives.dll built from tests/windows/bcryptprimitives.c.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
target=x86_64-pc-windows-gnu
cache="$repo/target/windows-smoke"
cc=x86_64-w64-mingw32-gcc-posix
# Debian's wine64 package keeps its loader and server out of PATH.
wine=/usr/lib/wine/wine64
wineserver=/usr/lib/wine/wineserver
[[ -x $wine ]] || wine=$(command -v wine64)
[[ -x $wineserver ]] || wineserver=$(command -v wineserver)
export WINEDEBUG=-all WINEARCH=win64
# The stand-in DLL is a native one; Mono and Gecko are not needed (and would be offered at boot).
export WINEDLLOVERRIDES="bcryptprimitives=n;mscoree=;mshtml="

echo "windows smoke: building forgemcp.exe ($target) and the Linux forgemcp"
cargo build --quiet --target "$target" --all-features --bin forgemcp
cargo build --quiet --all-features --bin forgemcp

mkdir -p "$cache/bin"
build() { # <output> <source> <flags…>: compile when the source is newer
  local out="$cache/bin/$1" src="tests/windows/$2"
  shift 2
  if [[ ! -e $out || $src -nt $out ]]; then
    "$cc" -O2 -Wall -Wextra -Werror -s -o "$out.tmp" "$src" "$@"
    mv "$out.tmp" "$out"
  fi
}
build bcryptprimitives.dll bcryptprimitives.c -shared -ladvapi32
build echo_args.exe echo_args.c -lshell32
build tree.exe tree.c -municode
build link.exe link.c -municode

if [[ ! -e $cache/prefix/.forgemcp-booted ]]; then
  echo "windows smoke: creating the cached Wine prefix (once)"
  rm -rf "$cache/prefix"
  WINEPREFIX="$cache/prefix" "$wine" wineboot --init
  WINEPREFIX="$cache/prefix" "$wineserver" --wait
  touch "$cache/prefix/.forgemcp-booted"
fi

temp=$(mktemp -d "${TMPDIR:-/tmp}/forgemcp-windows-smoke.XXXXXX")
export WINEPREFIX="$temp/prefix"
cleanup() {
  "$wineserver" --kill 2>/dev/null || true
  rm -rf "$temp"
}
trap cleanup EXIT
# The private prefix: hard links to the cached system files (a full copy when the temporary
# directory is on another file system), real copies of what Wine rewrites (the registry), and the
# stand-in DLL.
if ! cp -al "$cache/prefix" "$WINEPREFIX" 2>/dev/null; then
  rm -rf "$WINEPREFIX"
  cp -a "$cache/prefix" "$WINEPREFIX"
fi
for reg in "$WINEPREFIX"/*.reg; do
  cp --remove-destination "$cache/prefix/$(basename "$reg")" "$reg"
done
cp --remove-destination "$cache/bin/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"

# The Windows-only unit tests and those with Windows behaviour (the pipe's access list, $BROWSER,
# verbatim paths, Visual Studio discovery, the reparse-point link rule), run as Windows programs.
echo "windows smoke: unit tests under Wine"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$wine" cargo test --target "$target" --all-features --lib -- \
  admin::ipc:: admin::open:: process::verbatim:: toolchain::visual_studio:: \
  workspace::path::tests::reparse_points_and_symbolic_links_are_links

mkdir "$temp/work"
python3 tests/windows/smoke.py --wine "$wine" --exe "$repo/target/$target/debug/forgemcp.exe" \
  --linux-exe "$repo/target/debug/forgemcp" --bin "$cache/bin" --temp "$temp/work"
