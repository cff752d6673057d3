"""What profiling costs: the course CNN's epoch (Fashion-MNIST subset, batch 64, Adam) with the
profiler off and on, gpuaccel beside Keras on TensorFlow (its profiler is the peer), in one
invocation, printing ratios.

    python benchmarks/profiler_overhead.py [--steps 100] [--repeats 3] [--peers keras]
                                           [--data fashion_mnist|random]

Each framework runs in its own subprocess pinned to the same threads. Per framework, epochs
alternate off/on ``--repeats`` times after a warm-up, and the medians are compared:

- on: the recorder runs during ``fit`` (every op, layer, backward node, allocation and step),
  started right before and stopped right after; the export (``stop()``: XSpace, Chrome trace)
  is timed separately, as it happens once per profile, not per step;
- off: nothing can be measured by toggling, because "off" is the normal build. It is
  estimated from its parts: the trace points one epoch passes (the events of an "on" epoch)
  times the measured cost of a disabled C++ trace scope, plus the Python step marker and
  input-wait scope the fit loop opens per batch, timed with the profiler idle.
"""
import argparse
import json
import os
import subprocess
import sys
import textwrap

from _bench_context import COURSE_WORKLOAD

THREADS = "2"

COMMON = textwrap.dedent("""
    import json, os, statistics, sys, tempfile, time, gzip
    import numpy as np
""") + COURSE_WORKLOAD + textwrap.dedent("""
    STEPS, REPEATS, BATCH = int(sys.argv[1]), int(sys.argv[2]), 64
    if sys.argv[3] == "random":  # machines without the Debian dataset (a GPU box)
        rng = np.random.default_rng(0)
        x = rng.random((STEPS * BATCH, 28, 28, 1), dtype=np.float32)
        y = rng.integers(0, 10, STEPS * BATCH)
    else:
        x, y = fashion_mnist()
    x, y = x[:STEPS * BATCH], y[:STEPS * BATCH]
    def measure(keras, start, stop):
        model = course_cnn(keras)
        model.fit(x[:BATCH], y[:BATCH], epochs=1, batch_size=BATCH, verbose=0)  # warm-up
        off, on, export = [], [], []
        for r in range(REPEATS):
            t = time.perf_counter()
            model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
            off.append(time.perf_counter() - t)
            logdir = tempfile.mkdtemp(prefix="profile_overhead_")
            start(logdir)
            t = time.perf_counter()
            model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
            on.append(time.perf_counter() - t)
            t = time.perf_counter()
            stop()
            export.append(time.perf_counter() - t)
        return {"off_s": statistics.median(off), "on_s": statistics.median(on),
                "export_s": statistics.median(export), "logdir": logdir}
""")

GPUACCEL = COMMON + textwrap.dedent("""
    import glob, timeit
    import gpuaccel
    from gpuaccel import keras, profiler
    from gpuaccel.profiler import _session
    from gpuaccel.profiler._xspace import read_xspace
    result = measure(keras, profiler.start, profiler.stop)
    table = read_xspace(glob.glob(os.path.join(result["logdir"], "plugins", "profile", "*",
                                               "*.xplane.pb"))[0])
    result["events_per_epoch"] = len(table)
    result["device"] = table.devices[0].get("model", "GPU") if table.devices else "the CPU"
    off_ns, on_ns = gpuaccel._C.profiler.scope_cost_ns(1000000)
    def per_batch_markers():  # what fit opens per batch, profiler idle
        marker = _session.step_marker("train", 1)
        with _session.input_wait():
            pass
        marker.commit()
    n = 200000
    result["scope_off_ns"], result["scope_on_ns"] = off_ns, on_ns
    result["python_markers_off_ns"] = timeit.timeit(per_batch_markers, number=n) / n * 1e9
    print("RESULT " + json.dumps(result))
""")

KERAS = COMMON + textwrap.dedent("""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf
    tf.config.threading.set_inter_op_parallelism_threads(int(os.environ["OMP_NUM_THREADS"]))
    tf.config.threading.set_intra_op_parallelism_threads(int(os.environ["OMP_NUM_THREADS"]))
    import keras
    result = measure(keras, tf.profiler.experimental.start, tf.profiler.experimental.stop)
    print("RESULT " + json.dumps(result))
""")


def run(script, steps, repeats, data):
    env = dict(os.environ, OMP_NUM_THREADS=THREADS, TF_NUM_INTRAOP_THREADS=THREADS,
               TF_NUM_INTEROP_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2")
    proc = subprocess.run([sys.executable, "-c", script, str(steps), str(repeats), data], env=env,
                          capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"benchmark subprocess failed:\n{proc.stdout[-2000:]}\n"
                       f"{proc.stderr[-4000:]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="batches per epoch")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--peers", default="keras", help="comma list: keras, or empty")
    parser.add_argument("--data", default="fashion_mnist", choices=["fashion_mnist", "random"])
    args = parser.parse_args()

    ours = run(GPUACCEL, args.steps, args.repeats, args.data)
    print(f"course CNN, {args.steps} batches of 64 ({args.data}), {THREADS} threads, "
          f"medians of {args.repeats}, on {ours['device']}")
    print(f"{'':24}{'off (s)':>10}{'on (s)':>10}{'on/off':>9}{'export (s)':>12}")

    def row(name, r):
        print(f"{name:24}{r['off_s']:10.3f}{r['on_s']:10.3f}{r['on_s'] / r['off_s']:9.3f}"
              f"{r['export_s']:12.3f}")

    row("gpuaccel", ours)
    if "keras" in args.peers.split(","):
        row("Keras/TF (tf.profiler)", run(KERAS, args.steps, args.repeats, args.data))

    events = ours["events_per_epoch"]
    off_cpp = events * ours["scope_off_ns"] * 1e-9
    off_py = args.steps * ours["python_markers_off_ns"] * 1e-9
    print(f"\ngpuaccel recording: {events} events per epoch "
          f"({events / args.steps:.0f} per step); one C++ scope costs "
          f"{ours['scope_off_ns']:.2f} ns off, {ours['scope_on_ns']:.1f} ns on")
    print(f"gpuaccel profiler off, estimated: {events} trace points x "
          f"{ours['scope_off_ns']:.2f} ns + {args.steps} batches x "
          f"{ours['python_markers_off_ns']:.0f} ns of Python markers = "
          f"{(off_cpp + off_py) * 1e3:.3f} ms = "
          f"{100 * (off_cpp + off_py) / ours['off_s']:.4f} % of the epoch (target < 1 %)")
    print(f"gpuaccel profiler on: {100 * (ours['on_s'] / ours['off_s'] - 1):+.1f} % "
          f"(target < 10 %), plus {ours['export_s']:.2f} s to write the profile once")


if __name__ == "__main__":
    main()
