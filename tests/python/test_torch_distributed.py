"""torch.multiprocessing, torch.distributed, DistributedDataParallel and DistributedSampler of
the PyTorch face against PyTorch 1.13 (Debian's python3-torch, which has Gloo): the same two-rank
program (torch_distributed_workers.py) runs under our ``mp.spawn`` with gpuaccel and under
PyTorch's with torch, and every collective's result, the sampler's indices and the weights after
DDP training are compared. Each spawn is joined with a deadline, and each process group with a
timeout, so a broken rank fails the test instead of hanging it."""
import datetime
import multiprocessing
import os
import pickle
import queue as queue_module
import socket
import tempfile
import time

import numpy as np
import pytest

import gpuaccel.torch as torch
import gpuaccel.torch.distributed as dist
import gpuaccel.torch.multiprocessing as mp
import torch_distributed_workers as workers
import torch_reference
from gpuaccel.torch.distributed import _process_group
from gpuaccel.torch.utils.data.distributed import DistributedSampler

TESTS_FOLDER = os.path.dirname(os.path.abspath(__file__))
JOIN_SECONDS = 90
# (dataset length, replicas, shuffle, seed, epoch, drop_last) for DistributedSampler
SAMPLER_CASES = [(10, 3, True, 0, 0, False), (10, 3, True, 4, 2, True),
                 (10, 3, False, 0, 0, False), (7, 4, True, 1, 1, False), (2, 5, True, 0, 0, False),
                 (9, 3, True, 2 ** 33 + 1, 3, True), (1000, 2, True, 12345, 0, False)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_within(context, seconds=JOIN_SECONDS):
    """Joins a ``spawn(..., join=False)`` context, failing (and ending the processes) past
    ``seconds`` rather than waiting forever."""
    deadline = time.monotonic() + seconds
    while not context.join(timeout=max(deadline - time.monotonic(), 0.1)):
        if time.monotonic() > deadline:
            for process in context.processes:
                process.kill()
            pytest.fail(f"spawned processes did not finish within {seconds} s")


_REFERENCE = r"""
import multiprocessing, os, pickle, socket, sys, tempfile
sys.path.insert(0, TESTS_FOLDER)
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_distributed_workers as workers
from torch.utils.data.distributed import DistributedSampler

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
folder = tempfile.mkdtemp()
context = mp.spawn(workers.collectives_and_training, args=(2, port, "torch", folder), nprocs=2,
                   join=False)
import time
deadline = time.monotonic() + 90
while not context.join(timeout=max(deadline - time.monotonic(), 0.1)):
    if time.monotonic() > deadline:
        raise RuntimeError("the PyTorch ranks did not finish within 90 s")
for rank in range(2):
    with np.load(f"{folder}/rank{rank}.npz") as saved:
        for key in saved.files:
            out[f"rank{rank}_{key}"] = saved[key]

def message_of(fn, nprocs):
    try:  # fork: the children have torch already, and the messages do not depend on it
        mp.start_processes(fn, nprocs=nprocs, start_method="fork")
    except (mp.ProcessRaisedException, mp.ProcessExitedException) as e:
        return [type(e).__name__, str(e), e.error_index]
out["raised"] = message_of(workers.raise_on_rank_1, 2)
out["exited"] = message_of(workers.exit_with_code_3, 1)

def error_of(call):
    try:
        call()
    except Exception as e:
        return [type(e).__name__, str(e)]
before = {}
for name, call in [("all_reduce", lambda: dist.all_reduce(torch.ones(2))),
                   ("broadcast", lambda: dist.broadcast(torch.ones(2), 0)),
                   ("get_rank", dist.get_rank), ("get_world_size", dist.get_world_size),
                   ("barrier", dist.barrier)]:
    before[name] = error_of(call)
out["before_init"] = before
non_leaf = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True) * 2))
out["non_leaf_pickle"] = [non_leaf.requires_grad, non_leaf.is_leaf, non_leaf.tolist()]
out["sampler_bad_rank"] = error_of(lambda: DistributedSampler(range(4), num_replicas=2, rank=2))
out["invalid_backend"] = error_of(lambda: dist.Backend("foo"))
os.environ.pop("MASTER_ADDR", None)
out["no_master_addr"] = error_of(lambda: dist.init_process_group("gloo", rank=0, world_size=1))
out["tcp_no_rank"] = error_of(lambda: dist.init_process_group(
    "gloo", init_method="tcp://127.0.0.1:1", world_size=1))
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
dist.init_process_group("gloo", rank=0, world_size=1)
one_rank = {"twice": error_of(lambda: dist.init_process_group("gloo", rank=0, world_size=1)),
            "avg": error_of(lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.AVG)),
            "bad_src": error_of(lambda: dist.broadcast(torch.ones(2), 3)),
            "gather_length": error_of(lambda: dist.all_gather([torch.zeros(2)] * 2, torch.ones(2))),
            "gather_shape": error_of(lambda: dist.all_gather([torch.zeros(2)], torch.ones(3))),
            "not_a_tensor": error_of(lambda: dist.all_reduce([torch.ones(2)]))}
value = torch.tensor([1.0, -2.0])
dist.all_reduce(value, op=dist.ReduceOp.PRODUCT)
one_rank["product"] = value.tolist()
one_rank["backend"] = dist.get_backend()
DDP = torch.nn.parallel.DistributedDataParallel
one_rank["ddp_keys"] = list(DDP(torch.nn.Linear(2, 1)).state_dict())
frozen = torch.nn.Linear(2, 1).requires_grad_(False)
one_rank["ddp_frozen"] = error_of(lambda: DDP(frozen))
dist.destroy_process_group()
out["one_rank"] = one_rank
out["samplers"] = []
for n, replicas, shuffle, seed, epoch, drop_last in SAMPLER_CASES:
    per_rank = []
    for rank in range(replicas):
        sampler = DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                     shuffle=shuffle, seed=seed, drop_last=drop_last)
        sampler.set_epoch(epoch)
        per_rank.append([list(sampler), len(sampler)])
    out["samplers"].append(per_rank)
""".replace("TESTS_FOLDER", repr(TESTS_FOLDER)).replace("SAMPLER_CASES", repr(SAMPLER_CASES))


@pytest.fixture(scope="module")
def pytorch():
    return torch_reference.run_once(_REFERENCE)


@pytest.fixture(scope="module")
def ours():
    """What each of our two ranks saved after the shared program."""
    with tempfile.TemporaryDirectory() as folder:
        context = mp.spawn(workers.collectives_and_training,
                           args=(2, free_port(), "gpuaccel.torch", folder), nprocs=2, join=False)
        join_within(context)
        saved = {}
        for rank in range(2):
            with np.load(os.path.join(folder, f"rank{rank}.npz")) as arrays:
                saved.update({f"rank{rank}_{key}": arrays[key] for key in arrays.files})
        return saved


@pytest.fixture
def no_process_group():
    """Leaves no default group behind, whatever the test did."""
    assert not dist.is_initialized()
    try:
        yield
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def test_two_ranks_collectives_match_pytorch(ours, pytorch):
    for rank in range(2):
        assert ours[f"rank{rank}_rank"] == rank and ours[f"rank{rank}_world_size"] == 2
        for op in ("SUM", "MAX", "MIN", "PRODUCT", "int64"):
            key = f"rank{rank}_all_reduce_{op}"
            assert ours[key].dtype == pytorch[key].dtype
            np.testing.assert_array_equal(ours[key], pytorch[key], err_msg=key)
        for name in ("broadcast_from_1", "all_gather"):
            key = f"rank{rank}_{name}"
            np.testing.assert_array_equal(ours[key], pytorch[key], err_msg=key)
        assert not ours[f"rank{rank}_initialized_after_destroy"]
    np.testing.assert_array_equal(ours["rank0_reduce_max_at_0"], pytorch["rank0_reduce_max_at_0"])


def test_two_ranks_sampler_indices_match_pytorch(ours, pytorch):
    for rank in range(2):
        for epoch in range(workers.EPOCHS):
            key = f"rank{rank}_indices_epoch{epoch}"
            np.testing.assert_array_equal(ours[key], pytorch[key], err_msg=key)


def test_ddp_training_matches_pytorch_and_keeps_ranks_equal(ours, pytorch):
    initial = workers.initial_weights(0)
    for k in range(len(initial)):
        # every rank took the same steps from rank 0's weights
        np.testing.assert_array_equal(ours[f"rank0_weight{k}"], ours[f"rank1_weight{k}"])
        np.testing.assert_allclose(ours[f"rank0_weight{k}"], pytorch[f"rank0_weight{k}"],
                                   rtol=1e-5, atol=1e-6, err_msg=f"weight{k}")
        assert not np.allclose(ours[f"rank0_weight{k}"], initial[k])  # it trained


def test_spawn_child_exception_raises_process_raised_exception(pytorch):
    context = mp.spawn(workers.raise_on_rank_1, nprocs=2, join=False)
    with pytest.raises(mp.ProcessRaisedException) as caught:
        join_within(context)
    error = caught.value
    assert error.error_index == 1 and error.pid == context.pids()[1]
    name, theirs, index = pytorch["raised"]
    assert (type(error).__name__, error.error_index) == (name, index)
    header = "\n\n-- Process 1 terminated with the following error:\nTraceback"
    assert str(error).startswith(header) and theirs.startswith(header)
    assert str(error).endswith("ValueError: rank 1 fails on purpose\n")
    assert theirs.endswith("ValueError: rank 1 fails on purpose\n")
    assert pickle.loads(pickle.dumps(error)).error_index == 1


def test_spawn_child_exit_code_raises_process_exited_exception(pytorch):
    # fork: the child needs nothing imported (start_processes takes every start method)
    context = mp.start_processes(workers.exit_with_code_3, nprocs=1, join=False,
                                 start_method="fork")
    with pytest.raises(mp.ProcessExitedException) as caught:
        join_within(context)
    assert [type(caught.value).__name__, str(caught.value), 0] == pytorch["exited"]
    assert caught.value.exit_code == 3 and caught.value.signal_name is None


def test_spawn_killed_child_names_the_signal():
    context = mp.start_processes(workers.kill_itself, nprocs=1, join=False, start_method="fork")
    with pytest.raises(mp.ProcessExitedException) as caught:
        join_within(context)
    assert str(caught.value) == "process 0 terminated with signal SIGKILL"
    assert (caught.value.exit_code, caught.value.signal_name) == (-9, "SIGKILL")


def test_tensors_cross_processes_through_spawn_args_and_a_queue():
    sent = [torch.tensor([[1.5, -2.0], [0.25, 8.0]]).T, torch.arange(4),
            torch.nn.Parameter(torch.tensor([3.0, 4.0])), torch.tensor(7, dtype=torch.int32)]
    queue = multiprocessing.get_context("spawn").Queue()
    context = mp.spawn(workers.tensors_through_queue, args=(sent, queue), nprocs=1, join=False)
    deadline = time.monotonic() + JOIN_SECONDS
    while True:  # a child that failed raises from join instead of leaving the queue empty
        try:
            received = queue.get(timeout=1)
            break
        except queue_module.Empty:
            context.join(timeout=0)
            if time.monotonic() > deadline:
                context.processes[0].kill()
                pytest.fail(f"nothing arrived through the queue within {JOIN_SECONDS} s")
    join_within(context)
    for before, after in zip(sent, received):
        assert after.dtype == before.dtype and tuple(after.shape) == tuple(before.shape)
        np.testing.assert_array_equal(after.detach().numpy(), before.detach().numpy() * 2)
    assert received[-1].dtype == torch.bfloat16
    np.testing.assert_array_equal(received[-1].float().numpy(), [1.0, 1.0])


def test_pickled_tensor_keeps_values_dtype_and_parameter_mark(pytorch):
    param = torch.nn.Parameter(torch.tensor([[1.0, 2.0]]))
    copy = pickle.loads(pickle.dumps(param))
    assert isinstance(copy, torch.nn.Parameter) and copy.requires_grad and copy.is_leaf
    np.testing.assert_array_equal(copy.detach().numpy(), [[1.0, 2.0]])
    scalar = pickle.loads(pickle.dumps(torch.tensor(True)))
    assert scalar.shape == () and scalar.dtype == torch.bool and bool(scalar)
    non_leaf = pickle.loads(pickle.dumps(torch.ones(2, requires_grad=True) * 2))
    assert [non_leaf.requires_grad, non_leaf.is_leaf, non_leaf.tolist()] == \
        pytorch["non_leaf_pickle"]


def test_calls_before_init_process_group_raise_pytorchs_error(pytorch, no_process_group):
    assert not dist.is_initialized() and dist.is_available()
    calls = {"all_reduce": lambda: dist.all_reduce(torch.ones(2)),
             "broadcast": lambda: dist.broadcast(torch.ones(2), 0),
             "get_rank": dist.get_rank, "get_world_size": dist.get_world_size,
             "barrier": dist.barrier}
    for name, call in calls.items():
        with pytest.raises(RuntimeError) as caught:
            call()
        assert ["RuntimeError", str(caught.value)] == pytorch["before_init"][name], name
    with pytest.raises(RuntimeError, match="has not been initialized"):
        torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
    with pytest.raises(RuntimeError, match="has not been initialized"):
        DistributedSampler(range(4))


def test_init_process_group_errors(pytorch, monkeypatch, no_process_group):
    with pytest.raises(ValueError) as caught:
        dist.Backend("foo")
    assert ["ValueError", str(caught.value)] == pytorch["invalid_backend"]
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    with pytest.raises(ValueError) as caught:
        dist.init_process_group("gloo", rank=0, world_size=1)
    assert ["ValueError", str(caught.value)] == pytorch["no_master_addr"]
    with pytest.raises(ValueError) as caught:
        dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", world_size=1)
    assert ["ValueError", str(caught.value)] == pytorch["tcp_no_rank"]
    with pytest.raises(RuntimeError, match="timedelta"):
        dist.init_process_group("gloo", rank=0, world_size=1, timeout=30)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{free_port()}?world_size=1",
                            rank=0)  # the URL's query and the arguments combine
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    dist.destroy_process_group()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.destroy_process_group()
    monkeypatch.setattr(_process_group._cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="doesn't have NCCL built in.*backend='gloo'"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    assert not dist.is_initialized()


def test_one_rank_group_matches_pytorch(pytorch, monkeypatch, no_process_group):
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", str(free_port()))
    theirs = pytorch["one_rank"]
    dist.init_process_group("gloo", rank=0, world_size=1, timeout=datetime.timedelta(seconds=30))
    assert dist.is_initialized() and dist.get_backend() == theirs["backend"] == "gloo"
    assert (dist.get_rank(), dist.get_world_size()) == (0, 1)
    checks = {"twice": lambda: dist.init_process_group("gloo", rank=0, world_size=1),
              "avg": lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.AVG),
              "bad_src": lambda: dist.broadcast(torch.ones(2), 3),
              "gather_length": lambda: dist.all_gather([torch.zeros(2)] * 2, torch.ones(2)),
              "gather_shape": lambda: dist.all_gather([torch.zeros(2)], torch.ones(3)),
              "not_a_tensor": lambda: dist.all_reduce([torch.ones(2)])}
    for name, call in checks.items():
        with pytest.raises(RuntimeError) as caught:
            call()
        assert ["RuntimeError", str(caught.value)] == theirs[name], name
    with pytest.raises(NotImplementedError, match="BAND.*supported: SUM, PRODUCT, MIN, MAX"):
        dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.BAND)
    value = torch.tensor([1.0, -2.0])
    work = dist.all_reduce(value, op=dist.ReduceOp.PRODUCT, async_op=True)
    assert work.wait() and value.tolist() == theirs["product"]
    DDP = torch.nn.parallel.DistributedDataParallel
    assert list(DDP(torch.nn.Linear(2, 1)).state_dict()) == theirs["ddp_keys"]
    with pytest.raises(RuntimeError) as caught:
        DDP(torch.nn.Linear(2, 1).requires_grad_(False))
    assert ["RuntimeError", str(caught.value)] == theirs["ddp_frozen"]
    with pytest.raises(ValueError, match="device_ids and output_device arguments only work"):
        DDP(torch.nn.Linear(2, 1), device_ids=[0])
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_distributed_sampler_matches_pytorch(pytorch):
    for case, theirs in zip(SAMPLER_CASES, pytorch["samplers"]):
        n, replicas, shuffle, seed, epoch, drop_last = case
        for rank in range(replicas):
            sampler = DistributedSampler(range(n), num_replicas=replicas, rank=rank,
                                         shuffle=shuffle, seed=seed, drop_last=drop_last)
            sampler.set_epoch(epoch)
            assert [list(sampler), len(sampler)] == theirs[rank], (case, rank)
    with pytest.raises(ValueError) as caught:
        DistributedSampler(range(4), num_replicas=2, rank=2)
    assert ["ValueError", str(caught.value)] == pytorch["sampler_bad_rank"]


def test_multiprocessing_reexports_the_standard_library():
    for name in multiprocessing.__all__:
        assert getattr(mp, name) is getattr(multiprocessing, name), name
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    assert torch.nn.parallel.DistributedDataParallel is \
        __import__("gpuaccel.torch.nn.parallel", fromlist=["x"]).DistributedDataParallel
