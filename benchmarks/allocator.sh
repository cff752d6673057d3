#!/usr/bin/env bash
# Builds and runs benchmarks/allocator_bench.cc (pool allocator vs malloc and a naive pool).
# Usage: benchmarks/allocator.sh [build dir (build/bench)]
set -euo pipefail
cd "$(dirname "$0")/.."
"$(benchmarks/build_target.sh allocator_bench "${1:-build/bench}")"
