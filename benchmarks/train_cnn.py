"""Seconds per epoch of the course CNN on Fashion-MNIST (batch 64, Adam, float32, 2 threads):
gpuaccel vs Keras on TensorFlow (CPU) vs PyTorch (CPU), in one invocation, printing ratios.

    python benchmarks/train_cnn.py [--steps N] [--peers keras,torch] [--threads 2]

Each framework runs in its own subprocess (so thread pools and allocators do not interfere and
each is pinned to the same 2 threads); the epoch time is measured inside the process after one
warm-up step. PyTorch runs under the interpreter in $TORCH_PYTHON (default /usr/bin/python3,
where Debian's CPU-only python3-torch lives) when it is not importable here.
Also prints the per-step overhead of a tiny Dense model (gpuaccel's fit loop with nothing to
compute), the other target of the issue.

Beside the times it prints the CPU's instruction sets, the load average before and after, and the
raw oneDNN convolution floor of the step (`onednn_ops_bench --cnn-floor 64 f32 1`, the same three
convolutions' forward and backward run by oneDNN directly, min over rounds) with the ratio of our
step to it (issue 17's target: <= 1.3)."""
import argparse
import os
import sys
import textwrap

from _bench_context import COURSE_WORKLOAD, conv_floor_ms, cpu_line, floor_binary, load_line, run_workload

THREADS = "2"  # what a Colab student has; --threads changes it

COMMON = textwrap.dedent("""
    import json, sys, time, gzip, os
    import numpy as np
""") + COURSE_WORKLOAD + textwrap.dedent("""
    STEPS = int(sys.argv[1]); BATCH = 64
    x, y = fashion_mnist()
    if STEPS > 0:
        x, y = x[:STEPS * BATCH], y[:STEPS * BATCH]
    def report(seconds, steps):
        print("RESULT " + json.dumps({"seconds": seconds, "steps": steps}))
""")

GPUACCEL = COMMON + textwrap.dedent("""
    from gpuaccel import keras
    model = course_cnn(keras)
    model.fit(x[:BATCH], y[:BATCH], epochs=1, batch_size=BATCH, verbose=0)  # warm-up
    start = time.perf_counter()
    model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
    report(time.perf_counter() - start, (len(x) + BATCH - 1) // BATCH)
""")

KERAS = COMMON + textwrap.dedent("""
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(2)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    import keras
    model = course_cnn(keras)
    model.fit(x[:BATCH], y[:BATCH], epochs=1, batch_size=BATCH, verbose=0)  # warm-up (tracing)
    start = time.perf_counter()
    model.fit(x, y, epochs=1, batch_size=BATCH, verbose=0)
    report(time.perf_counter() - start, (len(x) + BATCH - 1) // BATCH)
""")

TORCH = COMMON + textwrap.dedent("""
    import torch
    torch.set_num_threads(2)
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3),
        nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.Flatten(),
        nn.Linear(576, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    xt = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    yt = torch.from_numpy(y)
    def epoch(limit=None):
        perm = torch.randperm(len(xt))
        correct = 0; steps = 0
        for start in range(0, len(xt), BATCH):
            idx = perm[start:start + BATCH]
            opt.zero_grad()
            out = model(xt[idx])
            loss = nn.functional.cross_entropy(out, yt[idx])
            loss.backward(); opt.step()
            correct += (out.argmax(1) == yt[idx]).sum().item(); steps += 1
            if limit and steps >= limit: break
        return steps
    epoch(1)  # warm-up
    start = time.perf_counter()
    steps = epoch()
    report(time.perf_counter() - start, steps)
""")

TINY = textwrap.dedent("""
    import json, time
    import numpy as np
    from gpuaccel import keras
    x = np.random.default_rng(0).normal(size=(64 * 2000, 8)).astype(np.float32)
    y = np.zeros((len(x), 1), np.float32)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x[:640], y[:640], batch_size=64, verbose=0)
    start = time.perf_counter()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    print("RESULT " + json.dumps({"seconds": time.perf_counter() - start, "steps": 2000}))
""")


def run(code, python, steps):
    env = dict(os.environ, OMP_NUM_THREADS=THREADS, TF_NUM_INTRAOP_THREADS=THREADS,
               TF_NUM_INTEROP_THREADS="1", TF_CPP_MIN_LOG_LEVEL="2")
    return run_workload([python, "-c", code, str(steps)], env)


def torch_python():
    try:
        import torch  # noqa: F401
        return sys.executable
    except ImportError:
        return os.environ.get("TORCH_PYTHON", "/usr/bin/python3")


def main():
    global THREADS
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=0, help="limit each epoch to N batches")
    parser.add_argument("--peers", default="keras,torch")
    parser.add_argument("--floor-bin", help="onednn_ops_bench binary (default: beside the build)")
    parser.add_argument("--floor-rounds", type=int, default=20)
    parser.add_argument("--threads", type=int, default=int(THREADS),
                        help="threads for every framework and the floor (one thread is steadier "
                             "on a 2-vCPU virtual machine)")
    args = parser.parse_args()
    THREADS = str(args.threads)
    print(cpu_line())
    print(f"before: {load_line()}")
    floor, why = conv_floor_ms(floor_binary(args.floor_bin), 64, "f32", 1, args.floor_rounds,
                               THREADS)
    results = {"gpuaccel": run(GPUACCEL, sys.executable, args.steps)}
    peers = [p for p in args.peers.split(",") if p]
    if "keras" in peers:
        results["keras"] = run(KERAS, sys.executable, args.steps)
    if "torch" in peers:
        results["torch"] = run(TORCH, torch_python(), args.steps)
    print(f"Course CNN, Fashion-MNIST, batch 64, float32, {THREADS} threads, one epoch:")
    ours = results["gpuaccel"].get("seconds")
    for name, r in results.items():
        if "error" in r:
            print(f"  {name:<9} failed: {r['error']}")
            continue
        per_step = 1000 * r["seconds"] / r["steps"]
        ratio = f"   ours/this = {ours / r['seconds']:.2f}" if ours and name != "gpuaccel" else ""
        print(f"  {name:<9} {r['seconds']:7.2f} s/epoch  {per_step:6.2f} ms/step "
              f"({r['steps']} steps){ratio}")
        if name == "gpuaccel":
            if floor is None:
                print(f"  raw oneDNN convolution floor: not measured: {why}")
            else:
                print(f"  raw oneDNN convolution floor {floor:6.2f} ms/step   ours/floor = "
                      f"{per_step / floor:.2f} (target <= 1.3)")
    tiny = run(TINY, sys.executable, 0)
    if "error" not in tiny:
        print(f"Tiny Dense(1) model, batch 64: {1e6 * tiny['seconds'] / tiny['steps']:.1f} us per "
              "fit step (target <= 50)")
    else:
        print(f"Tiny model failed: {tiny['error']}")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
