"""Op benchmarks, ours against peers in one run, printing ratios (issue: tensors and ops).

    python benchmarks/ops.py [--quick]

- matmul 4096^3 float32 and bfloat16: gpuaccel vs NumPy (float32) and PyTorch (if installed);
- matmul float64 (a quarter of the size: gpuaccel's own loop, oneDNN has no float64) vs NumPy's
  and PyTorch's BLAS DGEMM;
  gpuaccel vs raw oneDNN is measured in C++ by benchmarks/onednn_ops.sh (same primitives, no
  Python in the loop);
- dispatch overhead of a 1-element add from Python: gpuaccel vs PyTorch vs NumPy;
- the course CNN's three convolutions, forward + backward at batch 64: gpuaccel vs PyTorch;
- a graph network's max aggregation (tf.math.unsorted_segment_max of edge messages into nodes,
  Cora's size and a larger graph): gpuaccel vs TensorFlow (if installed) and NumPy's
  np.maximum.at;
- scatters on the row scatter: tf.tensor_scatter_nd_add / _max of 200,000 row updates into
  50,000 rows (vs TensorFlow and np.add.at / np.maximum.at), and PyTorch's element-wise
  scatter_reduce('amax') of 1,000,000 entries (vs PyTorch if installed, and np.maximum.at);
- the spatial-transformer tutorial's sampler: F.affine_grid + F.grid_sample, forward and
  backward, batch 64 of 28 x 28 and 64 x 64 images (vs PyTorch if installed).
Best of several runs each; the machine's other load shows up as noise, so compare ratios."""
import argparse
import time

import numpy as np

import gpuaccel
from _bench_context import cpu_line

try:
    import torch
except ImportError:  # the peer is optional
    torch = None


def best_of(fn, repeats):
    fn()  # warm-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def per_call(fn, calls, repeats=5):
    def loop():
        for _ in range(calls):
            fn()
    return best_of(loop, repeats) / calls


def row(name, seconds, reference=None, unit="s"):
    ratio = "" if reference is None else f"   ratio vs ours: {seconds / reference:6.2f}"
    value = f"{seconds * 1e6:9.3f} us" if unit == "us" else f"{seconds:9.4f} s "
    print(f"  {name:<34}{value}{ratio}")


def bench_matmul(n, repeats):
    print(f"matmul {n}x{n}x{n}")
    a32 = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    b32 = np.random.default_rng(1).standard_normal((n, n), dtype=np.float32)
    ga, gb = gpuaccel.tensor(a32), gpuaccel.tensor(b32)
    ours = best_of(lambda: ga @ gb, repeats)
    row("gpuaccel float32", ours)
    ga16, gb16 = ga.to("bfloat16"), gb.to("bfloat16")
    ours16 = best_of(lambda: ga16 @ gb16, repeats)
    row("gpuaccel bfloat16", ours16, ours)
    row("numpy float32", best_of(lambda: a32 @ b32, repeats), ours)
    if torch is not None:
        ta, tb = torch.from_numpy(a32), torch.from_numpy(b32)
        row("torch float32", best_of(lambda: ta @ tb, repeats), ours)
        ta16, tb16 = ta.to(torch.bfloat16), tb.to(torch.bfloat16)
        row("torch bfloat16", best_of(lambda: ta16 @ tb16, repeats), ours16)


def bench_float64_matmul(n, repeats):
    print(f"matmul {n}x{n}x{n} float64")
    a64 = np.random.default_rng(0).standard_normal((n, n))
    b64 = np.random.default_rng(1).standard_normal((n, n))
    ga, gb = gpuaccel.tensor(a64, dtype="float64"), gpuaccel.tensor(b64, dtype="float64")
    ours = best_of(lambda: ga @ gb, repeats)
    row("gpuaccel float64", ours)
    row("numpy float64 (BLAS)", best_of(lambda: a64 @ b64, repeats), ours)
    if torch is not None:
        ta, tb = torch.from_numpy(a64), torch.from_numpy(b64)
        row("torch float64", best_of(lambda: ta @ tb, repeats), ours)


def bench_segment_max(repeats):
    try:
        import tensorflow as tf
    except ImportError:  # the peer is optional
        tf = None
    for edges, nodes, width in ((10_556, 2_708, 32), (200_000, 50_000, 64)):
        print(f"unsorted_segment_max: {edges} edge messages of {width} into {nodes} nodes")
        rng = np.random.default_rng(3)
        messages = rng.standard_normal((edges, width)).astype(np.float32)
        targets = rng.integers(0, nodes, edges).astype(np.int32)
        gm, gt = gpuaccel.constant(messages), gpuaccel.constant(targets)
        ours = best_of(lambda: gpuaccel.math.unsorted_segment_max(gm, gt, nodes), repeats)
        row("gpuaccel", ours)
        if tf is not None:
            tm, tt = tf.constant(messages), tf.constant(targets)
            row("tensorflow", best_of(lambda: tf.math.unsorted_segment_max(tm, tt, nodes),
                                      repeats), ours)

        def numpy_max():
            out = np.full((nodes, width), np.finfo(np.float32).min, np.float32)
            np.maximum.at(out, targets, messages)
        row("numpy maximum.at", best_of(numpy_max, repeats), ours)


def bench_scatters(repeats):
    try:
        import tensorflow as tf
    except ImportError:  # the peer is optional
        tf = None
    rng = np.random.default_rng(4)
    rows, updates, width = 50_000, 200_000, 16
    base = rng.standard_normal((rows, width)).astype(np.float32)
    values = rng.standard_normal((updates, width)).astype(np.float32)
    where = rng.integers(0, rows, updates)
    for op, numpy_ufunc in (("tensor_scatter_nd_add", np.add), ("tensor_scatter_nd_max", np.maximum)):
        print(f"{op}: {updates} updates of {width} into {rows} rows")
        gb, gv = gpuaccel.constant(base), gpuaccel.constant(values)
        indices = where[:, None].astype(np.int32)
        ours = best_of(lambda: getattr(gpuaccel, op)(gb, indices, gv), repeats)
        row("gpuaccel", ours)
        if tf is not None:
            tb, tv, ti = tf.constant(base), tf.constant(values), tf.constant(indices)
            row("tensorflow", best_of(lambda: getattr(tf, op)(tb, ti, tv), repeats), ours)

        def numpy_at():
            out = base.copy()
            numpy_ufunc.at(out, where, values)
        row(f"numpy {numpy_ufunc.__name__}.at", best_of(numpy_at, repeats), ours)
    entries, size = 1_000_000, 100_000
    print(f"scatter_reduce('amax') along the last axis: {entries} entries into {size}")
    src = rng.standard_normal(entries).astype(np.float32)
    index = rng.integers(0, size, entries)
    import gpuaccel.torch as gtorch
    gself, gindex, gsrc = gtorch.zeros(size), gtorch.from_numpy(index), gtorch.from_numpy(src)
    ours = best_of(lambda: gself.scatter_reduce(0, gindex, gsrc, "amax"), repeats)
    row("gpuaccel", ours)
    if torch is not None:
        tself, tindex, tsrc = torch.zeros(size), torch.from_numpy(index), torch.from_numpy(src)
        row("torch", best_of(lambda: tself.scatter_reduce(0, tindex, tsrc, "amax"), repeats), ours)

    def numpy_max():
        out = np.zeros(size, np.float32)
        np.maximum.at(out, index, src)
    row("numpy maximum.at", best_of(numpy_max, repeats), ours)


def bench_grid_sample(repeats):
    import gpuaccel.torch as gtorch
    import gpuaccel.torch.nn.functional as gF
    rng = np.random.default_rng(5)
    affine = np.tile(np.array([[[0.9, 0.1, 0.05], [-0.1, 0.95, 0.0]]], np.float32), (64, 1, 1))
    for size in (28, 64):
        print(f"affine_grid + grid_sample, forward + backward, 64 x 1 x {size} x {size}")
        images = rng.standard_normal((64, 1, size, size)).astype(np.float32)

        def step(lib, functional):
            x = lib.tensor(images, requires_grad=True)
            theta = lib.tensor(affine, requires_grad=True)
            grid = functional.affine_grid(theta, list(x.shape), align_corners=False)
            functional.grid_sample(x, grid, align_corners=False).sum().backward()
        ours = best_of(lambda: step(gtorch, gF), repeats)
        row("gpuaccel", ours)
        if torch is not None:
            import torch.nn.functional as tF
            row("torch", best_of(lambda: step(torch, tF), repeats), ours)


def bench_dispatch(calls):
    print("dispatch: a + b on 1-element tensors, per call")
    ga, gb = gpuaccel.tensor([1.0]), gpuaccel.tensor([2.0])
    ours = per_call(lambda: ga + gb, calls)
    row("gpuaccel", ours, unit="us")
    na, nb = np.ones(1, np.float32), np.ones(1, np.float32)
    row("numpy", per_call(lambda: na + nb, calls), ours, unit="us")
    if torch is not None:
        ta, tb = torch.ones(1), torch.ones(1)
        row("torch", per_call(lambda: ta + tb, calls), ours, unit="us")


def bench_cnn_convs(batch, repeats):
    print(f"course CNN convolutions, forward + backward, batch {batch}")
    # (input H, W, C_in) -> filters, 3x3, valid: Conv2D(32) on 28x28x1, Conv2D(64) on 13x13x32,
    # Conv2D(64) on 5x5x64 (after the 2x2 max pools).
    layers = [((28, 28, 1), 32), ((13, 13, 32), 64), ((5, 5, 64), 64)]
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((batch,) + shape, dtype=np.float32) for shape, _ in layers]
    ws = [rng.standard_normal((3, 3, shape[2], f), dtype=np.float32) * 0.1 for shape, f in layers]

    gx = [gpuaccel.tensor(x) for x in xs]
    gw = [gpuaccel.tensor(w, requires_grad=True) for w in ws]

    def ours():
        for x, w in zip(gx, gw):
            gpuaccel.nn.conv2d(x, w, padding="VALID").sum().backward()
    t_ours = best_of(ours, repeats)
    row("gpuaccel", t_ours)
    if torch is not None:
        tx = [torch.from_numpy(x).permute(0, 3, 1, 2).contiguous().requires_grad_(True) for x in xs]
        tw = [torch.from_numpy(w).permute(3, 2, 0, 1).contiguous().requires_grad_(True) for w in ws]

        def theirs():
            for x, w in zip(tx, tw):
                torch.nn.functional.conv2d(x, w).sum().backward()
        row("torch (NCHW, its preferred layout)", best_of(theirs, repeats), t_ours)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    args = parser.parse_args()
    n, repeats, calls = (1024, 2, 2000) if args.quick else (4096, 3, 20000)
    print(f"gpuaccel {gpuaccel.__version__}; peer torch: {torch.__version__ if torch else 'not installed'}")
    print(cpu_line())
    bench_matmul(n, repeats)
    bench_float64_matmul(n // 4, repeats)
    bench_dispatch(calls)
    bench_cnn_convs(64, repeats)
    bench_segment_max(repeats)
    bench_scatters(repeats)
    bench_grid_sample(repeats)


if __name__ == "__main__":
    main()
