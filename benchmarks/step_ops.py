"""Per-op time of the course CNN's training step (batch 64, float32) from gpuaccel's profiler,
and the OpenMP parallel regions the step opens, for one or more builds at one or more thread
counts, alternated in fresh processes so that load drifts hit every column alike.

    python benchmarks/step_ops.py [--steps 40] [--rounds 3] [--threads 1,2]
                                  [--builds build/base/stage,build/dev/stage] [--regions]

Why: a step at two threads sits further from the convolution floor than at one (docs/
benchmarks.md, "Parallel regions per step"). An op whose time does not drop from one thread to
two, or rises, is the candidate; on a shared machine the minimum over rounds is what holds up.
With --regions (needs `perf` and root, for uprobes on libgomp) it also prints how many
parallel regions one step enters (GOMP_parallel: ours; GOMP_parallel_start: oneDNN's), from the
difference between a run of 2x and of 1x the steps, so start-up and warm-up cancel: a count that
does not depend on the load. Prints the CPU's ISA and the load average before and after.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import textwrap

from _bench_context import COURSE_WORKLOAD, cpu_line, load_line

# One process: warm up, then fit STEPS batches while the profiler records; prints per-op
# milliseconds per step, the step's wall time and the union of op intervals (the rest is Python,
# autograd bookkeeping and the fit loop).
WORKLOAD = textwrap.dedent("""
    import collections, gzip, json, os, sys, time
    import numpy as np
""") + COURSE_WORKLOAD + textwrap.dedent("""
    from gpuaccel import keras
    from gpuaccel.profiler import _intervals, _session
    from gpuaccel.profiler._events import EventKind, EventTable
    STEPS = int(sys.argv[1]); PROFILE = sys.argv[2] == "1"; BATCH = 64
    x, y = fashion_mnist()
    x, y = x[:STEPS * BATCH], y[:STEPS * BATCH]
    model = course_cnn(keras)
    model.fit(x[:3 * BATCH], y[:3 * BATCH], epochs=1, batch_size=BATCH, verbose=0)  # warm-up
    if PROFILE:
        _session._recorder.start(1 << 20)
    start = time.perf_counter()
    model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
    wall = time.perf_counter() - start
    result = {"step": 1000 * wall / STEPS}
    if PROFILE:
        t = EventTable(_session._recorder.stop())
        ops = t.kind == EventKind.OP
        per = collections.defaultdict(float)
        for i in np.nonzero(ops)[0]:
            per[t.strings[t.name[i]]] += (t.end_ns[i] - t.start_ns[i]) / 1e6 / STEPS
        result["ops"] = _intervals.total(_intervals.union(t.start_ns[ops], t.end_ns[ops])) / 1e6 / STEPS
        result["per"] = per
    print("RESULT " + json.dumps(result))
""")

PROBES = ("GOMP_parallel", "GOMP_parallel_start")
CURRENT = "(this environment)"


def run(build, threads, steps, profile=True, perf_events=None):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if build != CURRENT:
        env["PYTHONPATH"] = build
    command = [sys.executable, "-c", WORKLOAD, str(steps), "1" if profile else "0"]
    if perf_events:
        command = ["perf", "stat", "-x,", "-e", ",".join(perf_events), "--"] + command
    out = subprocess.run(command, env=env, capture_output=True, text=True, cwd="/tmp")
    lines = [line for line in out.stdout.splitlines() if line.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"workload failed ({build}, {threads} threads):\n{out.stderr[-3000:]}")
    result = json.loads(lines[0][len("RESULT "):])
    if perf_events:
        counts = {}
        for line in out.stderr.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[0].strip().isdigit():
                counts[fields[2]] = int(fields[0])
        result["counts"] = counts
    return result


def libgomp_path():
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    found = re.search(r"libgomp\.so\.1 .*=> (\S+)", out)
    return found.group(1) if found else None


def region_events(added):
    """perf events counting libgomp's region entries, or None; appends the uprobes it had to
    add to `added` (remove_probes takes them away again)."""
    lib = libgomp_path()
    if lib is None:
        return None
    present = subprocess.run(["perf", "probe", "-l"], capture_output=True, text=True).stdout
    events = []
    for symbol in PROBES:
        event = f"probe_libgomp:{symbol}"
        if event + " " not in present:
            made = subprocess.run(["perf", "probe", "-q", "-x", lib, symbol], capture_output=True)
            if made.returncode == 0:
                added.append(event)
        events.append(event)
    events += ["syscalls:sys_enter_futex", "context-switches"]
    check = subprocess.run(["perf", "stat", "-e", ",".join(events), "true"], capture_output=True)
    return events if check.returncode == 0 else None


def count_regions(args, columns, added):
    """OpenMP regions (and futex calls, context switches) per step of each column."""
    events = region_events(added)
    if events is None:
        print("regions: perf with uprobes on libgomp is not available here (root and perf "
              "needed)")
        return {}
    regions = {}
    for build, t in columns:
        short = run(build, t, args.steps, profile=False, perf_events=events)["counts"]
        long = run(build, t, 2 * args.steps, profile=False, perf_events=events)["counts"]
        regions[(build, t)] = {e: (long.get(e, 0) - short.get(e, 0)) / args.steps for e in events}
    return regions


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--builds", default="",
                        help="comma-separated stage folders, each a build's PYTHONPATH (default: "
                             "the gpuaccel this interpreter imports)")
    parser.add_argument("--regions", action="store_true",
                        help="also count OpenMP regions per step with perf uprobes")
    parser.add_argument("--top", type=int, default=14)
    args = parser.parse_args()
    builds = [os.path.abspath(b) for b in args.builds.split(",") if b] or [CURRENT]
    threads = [int(t) for t in args.threads.split(",") if t]
    columns = [(b, t) for b in builds for t in threads]
    print(cpu_line())
    print(f"before: {load_line()}")
    results = {c: [] for c in columns}
    for _ in range(args.rounds):
        for build, t in columns:
            results[(build, t)].append(run(build, t, args.steps))
    added = []
    try:
        regions = count_regions(args, columns, added) if args.regions else {}
    finally:
        for event in added:
            subprocess.run(["perf", "probe", "-q", "-d", event], capture_output=True)
    print(f"after: {load_line()}")
    for i, (build, t) in enumerate(columns):
        steps = " ".join(f"{r['step']:.2f}" for r in results[(build, t)])
        outside = " ".join(f"{r['step'] - r['ops']:.2f}" for r in results[(build, t)])
        print(f"[{i}] {build}, {t} thread(s): step ms {steps}; outside ops ms {outside}")
        if (build, t) in regions:
            print("    per step: " + ", ".join(f"{e.split(':')[-1]} {v:.1f}"
                                              for e, v in regions[(build, t)].items()))
    # Ops of every column (a build may run an op the others do not, e.g. a fused one),
    # largest first by their time in whichever column they take longest.
    largest = {}
    for c in columns:
        for name, ms in results[c][0]["per"].items():
            largest[name] = max(largest.get(name, 0.0), ms)
    names = sorted(largest, key=lambda n: -largest[n])[:args.top]
    print(f"{'op, ms per step (min / median of rounds)':42s}" +
          "".join(f"{'[' + str(i) + ']':>16s}" for i in range(len(columns))))
    for name in names:
        cells = []
        for c in columns:
            values = sorted(r["per"].get(name, 0.0) for r in results[c])
            cells.append(f"{values[0]:7.3f} /{values[len(values) // 2]:7.3f}")
        print(f"{name:42s}" + "".join(f"{cell:>16s}" for cell in cells))


if __name__ == "__main__":
    main()
