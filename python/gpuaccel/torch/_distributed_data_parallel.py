"""``torch.nn.parallel.DistributedDataParallel``: one model replica per process; each rank's
backward averages the gradients over all ranks, so every rank's optimizer takes the same step
and the replicas stay equal. Construction copies rank 0's parameters and buffers to every rank
(as PyTorch does), and forward copies rank 0's buffers again when ``broadcast_buffers``.

The average runs when the backward pass after a forward ends (gpuaccel._backward_callbacks):
every gradient of the module, in one all-reduce call per backward (the engine packs them per
dtype), each divided by the world size first as PyTorch's default hook does. A parameter with
no gradient on this rank contributes zeros and receives the others' average, so ranks that
use different parameters still call the same collective (PyTorch asks for
``find_unused_parameters=True`` there)."""
from .. import _backward_callbacks
from .._array_ops import zeros_like
from .._tensor import no_grad
from .._torch_ops import is_grad_enabled
from ._module import Module
from .distributed._process_group import default_group


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        self._process_group = default_group(process_group)
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        devices = {p._device_name for p in module.parameters()}
        on_cpu = all(p._device_type == "CPU" for p in module.parameters())
        if on_cpu and (device_ids is not None or output_device is not None):
            raise ValueError(f"DistributedDataParallel device_ids and output_device arguments "
                             f"only work with single-device/multiple-device GPU modules or CPU "
                             f"modules, but got device_ids {device_ids}, output_device "
                             f"{output_device}, and module parameters {devices}.")
        # dim (the batch axis PyTorch scatters along for a module spanning several devices)
        # and the bucketing options change no result with one device per process: kept as given.
        self.module, self.device_ids, self.output_device, self.dim = (module, device_ids,
                                                                      output_device, dim)
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self._sync_from_rank_0(list(module.parameters()) + list(module.buffers()))

    def _sync_from_rank_0(self, tensors):
        collective = self._process_group.collective
        if collective is not None and tensors:
            with no_grad():
                collective.broadcast(tensors, 0)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers:
            self._sync_from_rank_0(list(self.module.buffers()))
        if is_grad_enabled() and self.require_backward_grad_sync:
            _backward_callbacks.queue_after_backward(id(self), self._average_gradients)
        return self.module(*inputs, **kwargs)

    def _average_gradients(self):
        collective = self._process_group.collective
        if collective is None:
            return
        params = [p for p in self.module.parameters() if p.requires_grad]
        with no_grad():
            grads = []
            for p in params:
                grad = p.grad if p.grad is not None else zeros_like(p)
                grads.append(grad / float(collective.world_size))
            collective.all_reduce_sum(grads)
            for p, grad in zip(params, grads):
                p.grad = grad

    def no_sync(self):
        """A context in which forward/backward only accumulate local gradients; the first
        backward after it averages the accumulated ones."""
        return _NoSync(self)


class _NoSync:
    def __init__(self, ddp):
        self._ddp = ddp

    def __enter__(self):
        self._previous = self._ddp.require_backward_grad_sync
        self._ddp.require_backward_grad_sync = False

    def __exit__(self, *exc):
        self._ddp.require_backward_grad_sync = self._previous
        return False
