"""The course CNN's training epoch (Fashion-MNIST, batch 64, Adam, float32) on the same two
cores, in one invocation: one replica on 2 threads; MirroredStrategy over two logical CPUs, one
thread each; and MultiWorkerMirroredStrategy as two worker processes (TF_CONFIG on 127.0.0.1),
one thread each; the two strategies with the gradient all-reduce overlapped with the backward
pass (the default) and blocking after it (GPUACCEL_ALL_REDUCE_OVERLAP=0). Prints seconds per
epoch, each against the first (target: two replicas <= 1.05x one replica on two threads), and
the all-reduce time gpuaccel's profiler recorded per replica: in total (the engine's calls) and
exposed (the time the replica's step waited for them; with the blocking all-reduce, all of it).

    python benchmarks/distribute.py [--steps N] [--repeats 3] [--all-reduce both|overlap|blocking]
                                    [--bucket-bytes N]

Each configuration runs in fresh processes (device configuration freezes at start-up) after a
one-step warm-up; the profiled epoch is a separate one, so profiling does not inflate times.
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_cnn import COMMON  # noqa: E402  (the same data loading and course CNN)

WORKLOAD = COMMON + textwrap.dedent("""
    import glob, tempfile
    import gpuaccel as tf
    from gpuaccel import keras, profiler
    from gpuaccel.profiler._events import EventKind
    from gpuaccel.profiler._xspace import read_xspace
    MODE = sys.argv[2]
    if MODE == "mirrored":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    tf.config.threading.set_intra_op_parallelism_threads(1 if MODE == "workers" else 2)
    strategy = {"one": None, "mirrored": tf.distribute.MirroredStrategy,
                "workers": tf.distribute.MultiWorkerMirroredStrategy}[MODE]
    strategy = strategy() if strategy else tf.distribute.get_strategy()
    with strategy.scope():
        model = course_cnn(keras)
    model.fit(x[:BATCH], y[:BATCH], epochs=1, batch_size=BATCH, verbose=0)  # warm-up
    REPEATS = int(sys.argv[3])
    seconds = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
        seconds.append(time.perf_counter() - start)
    logdir = tempfile.mkdtemp()
    profiler.start(logdir)
    model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
    profiler.stop()
    table = read_xspace(glob.glob(os.path.join(logdir, "plugins", "profile", "*", "*.xplane.pb"))[0])
    collective = table.kind == int(EventKind.COLLECTIVE)
    names = np.asarray(table.strings, dtype=object)[table.name]
    seconds_of = lambda rows: float((table.end_ns[rows] - table.start_ns[rows]).sum()) / 1e9
    # "AllReduce": the engine's calls (on the replica's thread when blocking, on its
    # communication thread when overlapped); "AllReduceWait": a step waiting for the overlapped
    # buckets still in flight after its backward pass.
    total = seconds_of(collective & (names == "AllReduce"))
    waits = collective & (names == "AllReduceWait")
    exposed = seconds_of(waits) if waits.any() else total
    try:
        replicas = len(strategy.extended.worker_devices)  # this process's replicas
    except RuntimeError:  # the default strategy has no device list (TF's answer): one replica
        replicas = 1
    report(min(seconds), (len(x) + BATCH - 1) // BATCH)
    print("EXTRA " + json.dumps({"all_reduce_s": total / replicas,
                                 "exposed_s": exposed / replicas,
                                 "replicas": strategy.num_replicas_in_sync}))
""")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse(out):
    result = {}
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result.update(json.loads(line[7:]))
        elif line.startswith("EXTRA "):
            result.update(json.loads(line[6:]))
    return result


def run(mode, steps, repeats, all_reduce_env=None):
    """{'seconds', 'steps', 'all_reduce_s', 'exposed_s', 'replicas'} for one configuration
    (workers: the slowest worker's epoch); `all_reduce_env`: the all-reduce's switches."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKLOAD)
    workers = 2 if mode == "workers" else 1
    ports = [free_port() for _ in range(workers)]
    procs = []
    for index in range(workers):
        env = dict(os.environ, OMP_NUM_THREADS="1" if mode == "workers" else "2",
                   **(all_reduce_env or {}))
        if mode == "workers":
            env["TF_CONFIG"] = json.dumps({
                "cluster": {"worker": [f"127.0.0.1:{p}" for p in ports]},
                "task": {"type": "worker", "index": index}})
        procs.append(subprocess.Popen([sys.executable, f.name, str(steps), mode, str(repeats)],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0:
            raise SystemExit(f"{mode} failed:\n{err[-3000:]}")
        results.append(parse(out))
    os.unlink(f.name)
    return max(results, key=lambda r: r["seconds"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=0,
                        help="batches per epoch (0: the whole 60000-image training set)")
    parser.add_argument("--repeats", type=int, default=3, help="timed epochs (the best counts)")
    parser.add_argument("--all-reduce", choices=["both", "overlap", "blocking"], default="both",
                        help="the strategies' gradient all-reduce: overlapped with the backward "
                             "pass, blocking after it, or each (default)")
    parser.add_argument("--bucket-bytes", type=int, default=0,
                        help="the overlapped all-reduce's bucket size (0: gpuaccel's default)")
    args = parser.parse_args()
    import gpuaccel
    info = gpuaccel._C.cpu_info()
    flags = [k for k, v in info["flags"].items() if v]
    print(f"CPU: {info['model_name']}, {os.cpu_count()} cores, ISA: {', '.join(flags)}")
    overlap = {"GPUACCEL_ALL_REDUCE_OVERLAP": "1"}
    if args.bucket_bytes > 0:
        overlap["GPUACCEL_ALL_REDUCE_BUCKET_BYTES"] = str(args.bucket_bytes)
    blocking = {"GPUACCEL_ALL_REDUCE_OVERLAP": "0"}
    modes = {"both": [("overlapped", overlap), ("blocking", blocking)],
             "overlap": [("overlapped", overlap)], "blocking": [("blocking", blocking)]}
    rows = [("one replica, 2 threads", "one", None)]
    for strategy_label, mode in (("MirroredStrategy, 2 logical CPUs x 1 thread", "mirrored"),
                                 ("MultiWorker, 2 processes x 1 thread", "workers")):
        for all_reduce_label, env in modes[args.all_reduce]:
            rows.append((f"{strategy_label}, {all_reduce_label}", mode, env))
    results = [run(mode, args.steps, args.repeats, env) for _, mode, env in rows]
    base = results[0]["seconds"]
    bucket = args.bucket_bytes or gpuaccel._C.DEFAULT_ALL_REDUCE_BUCKET_BYTES
    print(f"Course CNN epoch, batch 64 (global), Adam, float32, {results[0]['steps']} steps, "
          f"best of {args.repeats}; overlapped all-reduce in buckets of {bucket} bytes")
    print(f"  {'configuration':<70} {'s/epoch':>8}   {'vs one':>6}   all-reduce per replica: "
          "total / exposed")
    for (label, mode, _), r in zip(rows, results):
        all_reduce = ("" if mode == "one" else
                      f"{r['all_reduce_s']:6.3f} s / {r['exposed_s']:6.3f} s ({r['replicas']} replicas)")
        print(f"  {label:<70} {r['seconds']:8.2f}   {r['seconds'] / base:5.2f}x   {all_reduce}")
    print("target: two replicas <= 1.05x one replica on two threads")


if __name__ == "__main__":
    main()
