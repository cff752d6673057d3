#!/usr/bin/env bash
# Builds and runs benchmarks/onednn_ops_bench.cc twice: on one OpenMP thread (the ratios that
# stay meaningful when other work shares the cores: no thread ever waits at a barrier for a
# descheduled sibling) and on all threads (absolute speed; noisy on a busy box).
# Usage: benchmarks/onednn_ops.sh [matmul size (4096)] [matmul rounds (3)] [conv rounds (30)]
# (BENCH_BUILD picks the build folder, default build/bench.)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(benchmarks/build_target.sh onednn_ops_bench "${BENCH_BUILD:-build/bench}")"
echo "== uptime: $(uptime)"
OMP_NUM_THREADS=1 "$bin" "$@"
echo "== uptime: $(uptime)"
"$bin" "$@"
