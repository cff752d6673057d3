"""Times two builds of onednn_ops_bench against each other (e.g. gpuaccel on oneDNN 2.6 vs 3.2).

Why: switching the oneDNN release under the CPU backend must not make the course's work slower,
and on a shared machine two runs taken minutes apart are not comparable. So the two binaries
run alternately (A B A B ..., on 1 and on 2 OpenMP threads), each invocation reporting its
minimum over interleaved rounds, and the table holds the median over invocations of gpuaccel's
own calls ("ours" in onednn_ops_bench): 2048^3 matmul and the course CNN's convolutions forward
and backward, float32 and bfloat16. The CPU's ISA as oneDNN sees it and the load average are
printed, since both decide how far the numbers can be trusted.

    python3 benchmarks/compare_onednn_builds.py A_BINARY B_BINARY [--rounds 5] [--threads 1 2]
"""

import argparse
import os
import re
import statistics
import subprocess
import sys

# dnnl_cpu_isa_t values (the same in oneDNN 2.x and 3.x headers).
ISA_NAMES = {
    0x1: "sse41", 0x3: "avx", 0x7: "avx2", 0xF: "avx2_vnni", 0x1F: "avx2_vnni_2",
    0x27: "avx512_core", 0x67: "avx512_core_vnni", 0xE7: "avx512_core_bf16",
    0x1E7: "avx512_core_fp16", 0x3E7: "avx512_core_amx", 0x7E7: "avx512_core_amx_fp16",
}

MATMUL_RE = re.compile(r"^matmul (\d+)x\d+x\d+ (\w+)\s+ours\s+([\d.]+) ms")
HEADER_RE = re.compile(r"^oneDNN (\S+), effective ISA 0x([0-9a-f]+)")
CONV_LAYER_RE = re.compile(r"^\s+conv(\d) .*?(float32|bfloat16)\s+(.*)$")
CONV_OP_RE = re.compile(r"(fwd|bwd_data|bwd_weights) ([\d.]+)/[\d.]+ ms")
CNN_TOTAL_RE = re.compile(r"^course CNN convs fwd\+bwd, batch \d+, (\w+)\s+ours\s+([\d.]+) ms")


def parse(text):
    """Returns (version, isa, {row name: ms}) from one onednn_ops_bench output."""
    version, isa, rows = "?", "?", {}
    for line in text.splitlines():
        if m := HEADER_RE.match(line):
            version = m.group(1)
            code = int(m.group(2), 16)
            isa = ISA_NAMES.get(code, hex(code))
        elif m := MATMUL_RE.match(line):
            rows[f"matmul {m.group(1)}^3 {m.group(2)}"] = float(m.group(3))
        elif m := CONV_LAYER_RE.match(line):
            for op, ms in CONV_OP_RE.findall(m.group(3)):
                rows[f"conv{m.group(1)} {op} {m.group(2)}"] = float(ms)
        elif m := CNN_TOTAL_RE.match(line):
            rows[f"CNN convs fwd+bwd total {m.group(1)}"] = float(m.group(2))
    if not rows:
        raise RuntimeError("no timings in the benchmark's output:\n" + text)
    return version, isa, rows


def run(binary, threads, size, matmul_rounds, conv_rounds):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, str(size), str(matmul_rounds), str(conv_rounds)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return parse(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="onednn_ops_bench binary A (the baseline)")
    ap.add_argument("b", help="onednn_ops_bench binary B")
    ap.add_argument("--rounds", type=int, default=5, help="invocations of each binary")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--size", type=int, default=2048, help="matmul size")
    ap.add_argument("--matmul-rounds", type=int, default=3)
    ap.add_argument("--conv-rounds", type=int, default=20)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")

    loads = [os.getloadavg()[0]]
    times = {}  # (threads, label) -> row -> [ms]
    versions = {}
    for r in range(args.rounds):
        for threads in args.threads:
            for label, binary in (("A", args.a), ("B", args.b)):
                version, isa, rows = run(binary, threads, args.size, args.matmul_rounds,
                                         args.conv_rounds)
                versions[label] = (version, isa)
                for row, ms in rows.items():
                    times.setdefault((threads, label), {}).setdefault(row, []).append(ms)
                loads.append(os.getloadavg()[0])
        print(f"round {r + 1}/{args.rounds} done, load average {loads[-1]:.2f}", file=sys.stderr)

    (va, isa_a), (vb, isa_b) = versions["A"], versions["B"]
    print(f"A: oneDNN {va} ({args.a}), effective ISA {isa_a}")
    print(f"B: oneDNN {vb} ({args.b}), effective ISA {isa_b}")
    print(f"{os.cpu_count()} CPUs; 1-minute load average during the runs: min {min(loads):.2f}, "
          f"median {statistics.median(loads):.2f}, max {max(loads):.2f}")
    print(f"median over {args.rounds} alternating invocations of each invocation's minimum, ms")
    print()
    header = "| row |" + "".join(f" {t} thr: A {va} | B {vb} | B/A |" for t in args.threads)
    print(header)
    print("|---|" + "---|---|---|" * len(args.threads))
    for row in times[(args.threads[0], "A")]:
        cells = []
        for t in args.threads:
            a = statistics.median(times[(t, "A")][row])
            b = statistics.median(times[(t, "B")][row])
            ratio = f"{b / a:.2f}" if a > 0 else "n/a"
            cells.append(f" {a:.3f} | {b:.3f} | {ratio} |")
        print(f"| {row} |" + "".join(cells))


if __name__ == "__main__":
    main()
