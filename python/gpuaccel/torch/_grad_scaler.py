"""``torch.cuda.amp.GradScaler``: dynamic loss scaling for float16 training, with PyTorch's
protocol (``scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()``).

float16 gradients underflow below ~6e-8; scaling the loss by S scales every gradient by S, and
``step`` divides them back before the optimizer sees them. A step whose gradients hold an inf
or NaN is skipped and S shrinks (``backoff_factor``); after ``growth_interval`` clean steps S
grows (``growth_factor``). This is the rule of Keras's LossScaleOptimizer
(docs/mixed_precision.md) in PyTorch's split into scale/unscale_/step/update. As PyTorch's,
without a usable GPU the scaler warns and disables itself: scale() returns the loss unchanged
and step() is optimizer.step().
"""
import warnings

from .. import _array_ops
from .. import math as _math
from .._cuda_devices import is_available
from .._tensor import Tensor, no_grad

__all__ = ["GradScaler"]


class GradScaler:
    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if enabled and not is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            enabled = False
        if enabled and not growth_factor > 1.0:  # PyTorch checks an enabled scaler's only
            raise ValueError(f"The growth factor must be > 1.0, got {growth_factor}")
        if enabled and not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"The backoff factor must be in (0, 1), got {backoff_factor}")
        self._enabled = bool(enabled)
        self._scale, self._growth_factor = float(init_scale), float(growth_factor)
        self._backoff_factor, self._growth_interval = float(backoff_factor), int(growth_interval)
        self._growth_tracker = 0
        self._found_inf = {}  # id(optimizer) -> whether its unscaled gradients were not finite

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        """``outputs`` (a tensor or nested lists/tuples of them) times the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer):
        """Divides ``optimizer``'s gradients by the scale (once per step) and notes whether
        any is inf or NaN."""
        if not self._enabled:
            return
        if id(optimizer) in self._found_inf:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        inverse, checks = 1.0 / self._scale, []
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if param.grad is None:
                        continue
                    param.grad = param.grad * inverse
                    checks.append(_math.reduce_all(_math.is_finite(param.grad)))
            # one read of the device for the whole step, not one per gradient
            finite = not checks or bool(_math.reduce_all(_array_ops.stack(checks)))
        self._found_inf[id(optimizer)] = not finite

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` on unscaled gradients, skipped (None) when any is inf/NaN."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        if id(optimizer) not in self._found_inf:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Shrinks the scale after a skipped step, grows it after ``growth_interval`` clean
        ones; or sets ``new_scale``."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._found_inf:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._found_inf.clear()

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
