"""Times builds of onednn_ops_bench against each other (e.g. gpuaccel on oneDNN 2.6 vs 3.2).

Why: switching the oneDNN release under the CPU backend must not make the course's work slower,
and on a shared machine two runs taken minutes apart are not comparable. So the binaries run
alternately (A B C A B C ..., on 1 and on 2 OpenMP threads), each invocation reporting its
minimum over interleaved rounds, and the table holds the median over invocations of gpuaccel's
own calls ("ours" in onednn_ops_bench): 2048^3 matmul and the course CNN's convolutions forward
and backward, float32 and bfloat16, with each build's ratio to A. The CPU's ISA as oneDNN sees
it and the load average are printed, since both decide how far the numbers can be trusted.

A build is a binary, optionally followed by environment settings for it, comma-separated: the
same 3.x binary twice, once with GPUACCEL_ONEDNN_CONV_BWD_DATA=default,
GPUACCEL_ONEDNN_CONV_BWD_WEIGHTS=default (oneDNN's own backward picks) and once without
(gpuaccel's measured choices), is two builds.

    python3 benchmarks/compare_onednn_builds.py A_BINARY B_BINARY[,VAR=VALUE...] ... \\
        [--rounds 5] [--threads 1 2]
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
HEADER_RE = re.compile(r"^oneDNN (\d+\.\d+\.\d+)(?:, effective ISA 0x([0-9a-f]+))?")
CONV_LAYER_RE = re.compile(r"^\s+conv(\d) .*?(float32|bfloat16)\s+(.*)$")
CONV_OP_RE = re.compile(r"(fwd|bwd_data|bwd_weights) ([\d.]+)/[\d.]+ ms")
CNN_TOTAL_RE = re.compile(r"^course CNN convs fwd\+bwd, batch \d+, (\w+)\s+ours\s+([\d.]+) ms")


def parse(text):
    """Returns (version, isa, {row name: ms}) from one onednn_ops_bench output."""
    version, isa, rows = "?", "?", {}
    for line in text.splitlines():
        if m := HEADER_RE.match(line):
            version = m.group(1)
            if m.group(2) is not None:  # builds older than the 3.x port do not print it
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


def parse_build(text):
    """'BINARY[,VAR=VALUE...]' -> (binary, {VAR: VALUE})."""
    binary, *settings = text.split(",")
    env = {}
    for setting in settings:
        name, sep, value = setting.partition("=")
        if not sep or not name:
            raise argparse.ArgumentTypeError(
                f"build {text!r}: {setting!r} is not VAR=VALUE (a build is BINARY[,VAR=VALUE...])")
        env[name] = value
    if not os.access(binary, os.X_OK):
        raise argparse.ArgumentTypeError(f"build {text!r}: {binary!r} is not an executable file")
    return binary, env


def run(build, threads, size, matmul_rounds, conv_rounds):
    binary, settings = build
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), **settings)
    out = subprocess.run([binary, str(size), str(matmul_rounds), str(conv_rounds)], env=env,
                         check=True, capture_output=True, text=True).stdout
    return parse(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("builds", nargs="+", type=parse_build, metavar="BINARY[,VAR=VALUE...]",
                    help="onednn_ops_bench builds; the first (A) is the baseline")
    ap.add_argument("--rounds", type=int, default=5, help="invocations of each binary")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--size", type=int, default=2048, help="matmul size")
    ap.add_argument("--matmul-rounds", type=int, default=3)
    ap.add_argument("--conv-rounds", type=int, default=20)
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds must be >= 1, got {args.rounds}")
    if len(args.builds) < 2:
        ap.error(f"give at least two builds to compare, got {len(args.builds)}")
    labels = [chr(ord("A") + i) for i in range(len(args.builds))]

    loads = [os.getloadavg()[0]]
    times = {}  # (threads, label) -> row -> [ms]
    versions = {}
    for r in range(args.rounds):
        for threads in args.threads:
            for label, build in zip(labels, args.builds):
                version, isa, rows = run(build, threads, args.size, args.matmul_rounds,
                                         args.conv_rounds)
                versions[label] = (version, isa)
                for row, ms in rows.items():
                    times.setdefault((threads, label), {}).setdefault(row, []).append(ms)
                loads.append(os.getloadavg()[0])
        print(f"round {r + 1}/{args.rounds} done, load average {loads[-1]:.2f}", file=sys.stderr)

    for label, (binary, settings) in zip(labels, args.builds):
        version, isa = versions[label]
        extra = "".join(f", {k}={v}" for k, v in settings.items())
        print(f"{label}: oneDNN {version} ({binary}{extra}), effective ISA {isa}")
    print(f"{os.cpu_count()} CPUs; 1-minute load average during the runs: min {min(loads):.2f}, "
          f"median {statistics.median(loads):.2f}, max {max(loads):.2f}")
    print(f"median over {args.rounds} alternating invocations of each invocation's minimum, ms")
    print()
    others = labels[1:]
    header = "| row |" + "".join(
        f" {t} thr: " + " | ".join(labels) + " | " + " | ".join(f"{o}/A" for o in others) + " |"
        for t in args.threads)
    print(header)
    print("|---|" + "---|" * ((len(labels) + len(others)) * len(args.threads)))
    for row in times[(args.threads[0], "A")]:
        cells = []
        for t in args.threads:
            medians = {lab: statistics.median(times[(t, lab)][row]) for lab in labels
                       if row in times[(t, lab)]}
            a = medians["A"]
            cells.append(" " + " | ".join(f"{medians[lab]:.3f}" if lab in medians else "—"
                                          for lab in labels) + " | " +
                         " | ".join(f"{medians[o] / a:.2f}" if o in medians and a > 0 else "n/a"
                                    for o in others) + " |")
        print(f"| {row} |" + "".join(cells))


if __name__ == "__main__":
    main()
