"""Work queued for the end of the next backward pass, after ``.grad`` is filled:
``torch.nn.parallel.DistributedDataParallel``'s forward queues the all-reduce of its
gradients here and ``Tensor.backward`` runs the queue (PyTorch's DDP reducer finishes its
all-reduce from the autograd engine's end-of-backward callback the same way). Per thread,
since each thread runs its own forward and backward."""
import threading

_local = threading.local()


def queue_after_backward(key, callback):
    """Runs ``callback()`` once after the next backward pass of this thread; queuing the same
    ``key`` again before then replaces the earlier callback (one all-reduce per model)."""
    if not hasattr(_local, "queued"):
        _local.queued = {}
    _local.queued[key] = callback


def run_queued():
    """Runs (and forgets) this thread's queued callbacks, in the order they were queued."""
    queued = getattr(_local, "queued", None)
    if not queued:
        return
    _local.queued = {}
    for callback in queued.values():
        callback()
