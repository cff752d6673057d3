#!/usr/bin/env bash
# Builds benchmarks/dispatch_bench.cc with g++ against a CMake build's static core library
# (no CMake target; build the library first) and runs it on one OpenMP thread, so the figures
# are the frontend's own overhead, not thread start-up. Re-run after rebuilding the library.
# Usage: benchmarks/dispatch.sh [build dir (build/dev)] [rounds (15)] [calls per round (200000)]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
shift || true
lib="$build/libgpuaccel_core.a"
[ -f "$lib" ] || { echo "no $lib: cmake --build $build --target gpuaccel_core first" >&2; exit 1; }
out="${TMPDIR:-/tmp}/gpuaccel_dispatch_bench"
g++ -std=c++17 -O2 -DNDEBUG -fopenmp -Icpp -o "$out" benchmarks/dispatch_bench.cc "$lib" \
  -ldnnl -lpthread -ldl
echo "== $(git log -1 --format='%h %s' | cut -c1-80); uptime: $(uptime)"
OMP_NUM_THREADS=1 "$out" "$@"
