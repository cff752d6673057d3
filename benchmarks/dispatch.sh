#!/usr/bin/env bash
# Builds and runs benchmarks/dispatch_bench.cc on one OpenMP thread, so the figures are the
# frontend's own overhead, not thread start-up.
# Usage: benchmarks/dispatch.sh [build dir (build/bench)] [rounds (15)] [calls per round (200000)]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/bench}"
shift || true
bin="$(benchmarks/build_target.sh dispatch_bench "$build")"
echo "== $(git log -1 --format='%h %s' | cut -c1-80); uptime: $(uptime)"
OMP_NUM_THREADS=1 "$bin" "$@"
