#!/usr/bin/env bash
# Builds and runs benchmarks/max_pool_bench.cc (max pooling on each ISA path vs baseline x86-64)
# on one OpenMP thread, where ratios stay meaningful on a shared machine.
# Usage: benchmarks/max_pool.sh [rounds (30)] [calls per sample (20)]
# (BENCH_BUILD picks the build folder, default build/bench.)
set -euo pipefail
cd "$(dirname "$0")/.."
bin="$(benchmarks/build_target.sh max_pool_bench "${BENCH_BUILD:-build/bench}")"
echo "== uptime: $(uptime)"
OMP_NUM_THREADS=1 "$bin" "$@"
