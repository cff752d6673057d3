"""float32 vs mixed_bfloat16 training on this CPU, in one invocation, printing epoch times, the
speedup and each run's peak pool memory (issue: mixed precision), and PyTorch's CPU autocast
bf16 on the same model for reference.

    python benchmarks/mixed_precision.py [--steps 100] [--batch 256] [--models cnn,wide_cnn,mlp]

Each configuration runs in its own subprocess on 2 threads (so peak-memory counters and thread
pools start fresh); one warm-up step, then --steps timed steps on Fashion-MNIST-shaped data.
Models: the course CNN, the CNN with 4x the filters, and an MLP with 2048-wide layers. On a CPU
without AVX512-BF16/AMX, bfloat16 is computed by staging through float32 (oneDNN 2.x has no
bf16 kernels below AVX-512), so expect a slowdown there, not a speedup: the script prints the
CPU's flags so a result is never read without them.

float32 and mixed_bfloat16 runs alternate (--repeats rounds; the fastest of each is kept) so a
load change on a shared machine hits both. For the CNNs it also prints the raw oneDNN
convolution floor of each step (`onednn_ops_bench --cnn-floor BATCH f32|bf16 FILTERS`, the same
convolutions run by oneDNN directly), so "how far from the convolutions" and "how much bf16
gains where it can" are read from one invocation, with the load average before and after."""
import argparse
import os
import sys
import textwrap

from _bench_context import conv_floor_ms, cpu_line, floor_binary, load_line, run_workload

BODY = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    import gpuaccel
    from gpuaccel import keras
    model_name, policy, steps, batch = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    keras.mixed_precision.set_global_policy(policy)
    L = keras.layers
    if model_name == "mlp":
        model = keras.Sequential([keras.Input((28, 28, 1)), L.Flatten(),
            L.Dense(2048, activation="relu"), L.Dense(2048, activation="relu"),
            L.Dense(10), L.Activation("linear", dtype="float32")])
    else:
        k = 4 if model_name == "wide_cnn" else 1
        model = keras.Sequential([keras.Input((28, 28, 1)),
            L.Conv2D(32 * k, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64 * k, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64 * k, 3, activation="relu"), L.Flatten(),
            L.Dense(64, activation="relu"), L.Dense(10), L.Activation("linear", dtype="float32")])
    model.compile(optimizer="adam", metrics=["accuracy"],
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(batch * (steps + 1), 28, 28, 1)).astype(np.float32)
    y = rng.integers(0, 10, size=len(x))
    model.fit(x[:batch], y[:batch], batch_size=batch, verbose=0)  # warm-up
    gpuaccel.memory.reset_peak_memory_stats("cpu")
    start = time.perf_counter()
    model.fit(x[batch:], y[batch:], batch_size=batch, verbose=0, shuffle=False)
    seconds = time.perf_counter() - start
    print("RESULT " + json.dumps({"ms_per_step": 1000 * seconds / steps,
                                  "peak_bytes": gpuaccel.memory.max_memory_allocated("cpu")}))
""")

TORCH = textwrap.dedent("""
    import json, sys, time
    import torch
    torch.set_num_threads(2)
    model_name, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    nn = torch.nn
    if model_name == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048),
                              nn.ReLU(), nn.Linear(2048, 10))
    else:
        k = 4 if model_name == "wide_cnn" else 1
        model = nn.Sequential(nn.Conv2d(1, 32 * k, 3), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32 * k, 64 * k, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(64 * k, 64 * k, 3),
            nn.ReLU(), nn.Flatten(), nn.Linear(576 * k, 64), nn.ReLU(), nn.Linear(64, 10))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.rand(batch, 1, 28, 28); y = torch.randint(0, 10, (batch,))
    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(x).float(), y)
        loss.backward(); opt.step()
    step()
    start = time.perf_counter()
    for _ in range(steps): step()
    print("RESULT " + json.dumps({"ms_per_step": 1000 * (time.perf_counter() - start) / steps}))
""")


def run(args, python, code):
    env = dict(os.environ, OMP_NUM_THREADS="2", TF_CPP_MIN_LOG_LEVEL="2")
    return run_workload([python, "-c", code] + [str(a) for a in args], env)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--models", default="cnn,wide_cnn,mlp")
    parser.add_argument("--torch-python", default=os.environ.get("TORCH_PYTHON", "/usr/bin/python3"))
    parser.add_argument("--repeats", type=int, default=2,
                        help="alternating float32/bf16 runs per model; the fastest is kept")
    parser.add_argument("--floor-bin", help="onednn_ops_bench binary (default: beside the build)")
    parser.add_argument("--floor-rounds", type=int, default=10)
    parser.add_argument("--peers", default="torch", help="'torch' or '' (no PyTorch column)")
    args = parser.parse_args()
    print(cpu_line())
    print(f"before: {load_line()}")
    print(f"batch {args.batch}, {args.steps} timed steps, 2 threads, best of {args.repeats} "
          "alternating runs")
    binary = floor_binary(args.floor_bin)
    for model in args.models.split(","):
        runs = {"float32": [], "mixed_bfloat16": []}
        for _ in range(max(1, args.repeats)):
            for policy in runs:
                runs[policy].append(run([model, policy, args.steps, args.batch], sys.executable,
                                        BODY))
        errors = [r["error"] for rs in runs.values() for r in rs if "error" in r]
        if errors:
            print(f"  {model}: failed: {errors[0]}")
            continue
        f32, bf16 = (min(rs, key=lambda r: r["ms_per_step"]) for rs in runs.values())
        line = (f"  {model:<9} float32 {f32['ms_per_step']:8.1f} ms/step "
                f"(peak {f32['peak_bytes'] / 2**20:7.1f} MiB)   mixed_bfloat16 "
                f"{bf16['ms_per_step']:8.1f} ms/step (peak {bf16['peak_bytes'] / 2**20:7.1f} MiB)"
                f"   speedup {f32['ms_per_step'] / bf16['ms_per_step']:.2f}x")
        if model != "mlp":
            filters = 4 if model == "wide_cnn" else 1
            floors = {}
            for name, dtype in (("f32", "f32"), ("bf16", "bf16")):
                floors[name], why = conv_floor_ms(binary, args.batch, dtype, filters,
                                                  args.floor_rounds)
            if floors["f32"] is None or floors["bf16"] is None:
                line += f"\n            conv floor: not measured: {why}"
            else:
                line += (f"\n            raw oneDNN conv floor f32 {floors['f32']:.1f} ms, bf16 "
                         f"{floors['bf16']:.1f} ms (floor speedup "
                         f"{floors['f32'] / floors['bf16']:.2f}x); ours/floor f32 "
                         f"{f32['ms_per_step'] / floors['f32']:.2f}, bf16 "
                         f"{bf16['ms_per_step'] / floors['bf16']:.2f}")
        if "torch" in args.peers.split(","):
            torch_bf16 = run([model, args.steps, args.batch], args.torch_python, TORCH)
            if "error" not in torch_bf16:
                line += (f"\n            torch autocast bf16 {torch_bf16['ms_per_step']:.1f} "
                         f"ms/step (ours/torch {bf16['ms_per_step'] / torch_bf16['ms_per_step']:.2f})")
        print(line)
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
