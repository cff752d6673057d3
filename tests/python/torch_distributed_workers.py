"""The two-rank programs of test_torch_distributed.py, written once for both frameworks: each
function takes the framework's module name ("gpuaccel.torch" or "torch") and runs as rank
``rank`` under that framework's ``multiprocessing.spawn``, so gpuaccel and PyTorch run the same
program. Only NumPy is imported at the top: a spawned child unpickles these functions by module
name, and must not import the other framework. Each rank saves what it computed to
``<folder>/rank<r>.npz`` for the parent to compare."""
import datetime
import importlib
import os

import numpy as np

FEATURES, HIDDEN, ROWS, BATCH, EPOCHS = 4, 6, 12, 3, 2
_REDUCE_OPS = ("SUM", "MAX", "MIN", "PRODUCT")


def training_data():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(ROWS, FEATURES)).astype(np.float32)
    y = (x @ rng.normal(size=(FEATURES, 1)) + 0.1).astype(np.float32)
    return x, y


def initial_weights(rank):
    """Different weights on each rank: DistributedDataParallel must start every rank from rank
    0's."""
    rng = np.random.default_rng(100 + rank)
    return [rng.normal(scale=0.5, size=shape).astype(np.float32)
            for shape in ((HIDDEN, FEATURES), (HIDDEN,), (1, HIDDEN), (1,))]


def rank_values(rank):
    """Each rank's input to the collectives: distinct, exact in float32 under every op."""
    return (np.arange(6, dtype=np.float32).reshape(2, 3) - 2.0) * (rank + 1) + rank


def _join(framework, rank, world_size, port):
    torch = importlib.import_module(framework)
    dist = importlib.import_module(framework + ".distributed")
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=30))
    return torch, dist


def collectives_and_training(rank, world_size, port, framework, folder):
    """all_reduce (each op), broadcast, all_gather, reduce, then DistributedDataParallel
    training with a DistributedSampler: saves every result and the final weights."""
    torch, dist = _join(framework, rank, world_size, port)
    out = {"rank": np.int64(dist.get_rank()), "world_size": np.int64(dist.get_world_size())}
    mine = torch.tensor(rank_values(rank))
    for op in _REDUCE_OPS:
        value = mine.clone()
        dist.all_reduce(value, op=getattr(dist.ReduceOp, op))
        out["all_reduce_" + op] = value.numpy()
    integers = torch.tensor(np.array([1, -2, 3 + rank], dtype=np.int64))
    dist.all_reduce(integers)
    out["all_reduce_int64"] = integers.numpy()
    value = mine.clone()
    dist.broadcast(value, src=1)
    out["broadcast_from_1"] = value.numpy()
    gathered = [torch.zeros(2, 3) for _ in range(world_size)]
    dist.all_gather(gathered, mine)
    out["all_gather"] = np.stack([g.numpy() for g in gathered])
    value = mine.clone()
    dist.reduce(value, dst=0, op=dist.ReduceOp.MAX)
    if rank == 0:
        out["reduce_max_at_0"] = value.numpy()
    dist.barrier()

    nn = torch.nn
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, 1))
    with torch.no_grad():
        for param, array in zip(model.parameters(), initial_weights(rank)):
            param.copy_(torch.tensor(array))
    ddp = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    loss_fn = nn.MSELoss()
    x, y = training_data()
    data = torch.utils.data
    dataset = data.TensorDataset(torch.tensor(x), torch.tensor(y))
    sampler = data.distributed.DistributedSampler(dataset, shuffle=True, seed=5)
    loader = data.DataLoader(dataset, batch_size=BATCH, sampler=sampler)
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        out[f"indices_epoch{epoch}"] = np.array(list(sampler), dtype=np.int64)
        for inputs, targets in loader:
            optimizer.zero_grad()
            loss_fn(ddp(inputs), targets).backward()
            optimizer.step()
    for k, param in enumerate(model.parameters()):
        out[f"weight{k}"] = param.detach().numpy()
    dist.destroy_process_group()
    out["initialized_after_destroy"] = np.bool_(dist.is_initialized())
    np.savez(os.path.join(folder, f"rank{rank}.npz"), **out)


def raise_on_rank_1(rank):
    if rank == 1:
        raise ValueError("rank 1 fails on purpose")


def exit_with_code_3(rank):
    os._exit(3)


def kill_itself(rank):
    import signal
    os.kill(os.getpid(), signal.SIGKILL)


def tensors_through_queue(rank, tensors, queue):
    """Sends back what arrived (spawn pickled ``tensors``), doubled, and a new bfloat16 one."""
    import gpuaccel.torch as torch
    queue.put([t * 2 for t in tensors] + [torch.ones(2, dtype=torch.bfloat16)])
