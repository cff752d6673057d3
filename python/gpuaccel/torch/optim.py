"""``torch.optim`` of the PyTorch face: ``Optimizer``, ``SGD``, ``Adam``, ``AdamW`` and ``RMSprop``.

Why: PyTorch's tutorials train with ``optimizer.zero_grad(); loss.backward(); optimizer.step()``
(``torch.optim`` is the PyTorch face's most used missing name in them). gpuaccel's
``keras.optimizers`` apply a list of gradients to Keras variables; torch's optimizers read each
parameter's ``.grad`` and update the tensor in place, with ``param_groups`` that a training loop
edits (``group["lr"] = ...``). So this is a composition of the Tensor's in-place methods under
``no_grad``, written after PyTorch 1.13's update rules (the project's reference, whose
``zero_grad`` zeroes gradients rather than dropping them: ``set_to_none=False``). Parameters
whose ``.grad`` is None are skipped, as in torch.
"""
import math

from .. import _torch_functions
from .._tensor import Tensor, no_grad
from .._torch_ops import enable_grad

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop"]


class _RequiredParameter:
    """The default of an argument a parameter group must give (SGD's ``lr``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _check_at_least(value, minimum, what):
    if value is not required and not value >= minimum:
        raise ValueError(f"Invalid {what}: {value}")


class Optimizer:
    """torch.optim.Optimizer: ``param_groups`` (dicts of ``params`` and the hyperparameters),
    per-parameter ``state``, ``zero_grad`` and ``step``; subclasses give ``_update(group)``."""

    def __init__(self, params, defaults):
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _torch_functions.typename(params))
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group):
        """Adds a dict with ``params`` and any hyperparameters (the others take ``defaults``)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param group must be a dict, got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        param_group["params"] = params = list(params)
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _torch_functions.typename(param))
            if not (param.is_leaf or getattr(param, "retains_grad", False)):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 "optimization parameter " + name)
            param_group.setdefault(name, default)
        taken = {id(p) for group in self.param_groups for p in group["params"]}
        if any(id(p) in taken for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=False):
        """Zeroes every parameter's ``.grad`` (or drops it with ``set_to_none=True``)."""
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                else:
                    param.grad.zero_()

    def step(self, closure=None):
        """One update of every parameter that has a ``.grad``; ``closure`` (re)computes the
        loss with gradients enabled and its value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, self.state.setdefault(param, {}), group)
        return loss

    def _update(self, param, state, group):
        raise NotImplementedError(f"{type(self).__name__} does not define its update")

    def __repr__(self):
        groups = ["".join([f"\nParameter Group {index}\n"] + [
            f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params"])
            for index, group in enumerate(self.param_groups)]
        return type(self).__name__ + " (" + "".join(groups) + ")"


def _gradient(param, group):
    """The parameter's gradient, negated for ``maximize``, with L2 ``weight_decay`` added."""
    grad = -param.grad if group["maximize"] else param.grad
    if group.get("weight_decay", 0) != 0:
        grad = grad.add(param, alpha=group["weight_decay"])
    return grad


class SGD(Optimizer):
    """torch.optim.SGD: plain, momentum (with ``dampening``) and Nesterov updates."""

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        _check_at_least(lr, 0.0, "learning rate")
        _check_at_least(momentum, 0.0, "momentum value")
        _check_at_least(weight_decay, 0.0, "weight_decay value")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))

    def _update(self, param, state, group):
        step = _gradient(param, group)
        momentum = group["momentum"]
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = step.clone().detach()
            else:
                buffer.mul_(momentum).add_(step, alpha=1 - group["dampening"])
            step = step.add(buffer, alpha=momentum) if group["nesterov"] else buffer
        param.add_(step, alpha=-group["lr"])


def _check_adam_arguments(lr, betas, eps, weight_decay):
    _check_at_least(lr, 0.0, "learning rate")
    _check_at_least(eps, 0.0, "epsilon value")
    for index, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {beta}")
    _check_at_least(weight_decay, 0.0, "weight_decay value")


class Adam(Optimizer):
    """torch.optim.Adam (``weight_decay`` is L2 added to the gradient; ``amsgrad`` keeps the
    largest second moment)."""

    _DECOUPLED_WEIGHT_DECAY = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, foreach=foreach, maximize=maximize,
                                      capturable=capturable, differentiable=differentiable,
                                      fused=fused))

    def _update(self, param, state, group):
        if not state:
            state["step"] = _torch_functions.scalar_tensor(0.0)
            state["exp_avg"] = param.new_zeros(tuple(param.shape))
            state["exp_avg_sq"] = param.new_zeros(tuple(param.shape))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = param.new_zeros(tuple(param.shape))
        beta1, beta2 = group["betas"]
        state["step"].add_(1)
        step = state["step"].item()
        if self._DECOUPLED_WEIGHT_DECAY:
            grad = -param.grad if group["maximize"] else param.grad
            param.mul_(1 - group["lr"] * group["weight_decay"])
        else:
            grad = _gradient(param, group)
        state["exp_avg"].mul_(beta1).add_(grad, alpha=1 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        second_moment = state["exp_avg_sq"]
        if group["amsgrad"]:
            second_moment = state["max_exp_avg_sq"]
            second_moment.copy_(second_moment.maximum(state["exp_avg_sq"]))
        denominator = (second_moment.sqrt() / math.sqrt(1 - beta2 ** step)).add_(group["eps"])
        param.addcdiv_(state["exp_avg"], denominator,
                       value=-group["lr"] / (1 - beta1 ** step))


class AdamW(Adam):
    """torch.optim.AdamW: Adam with the weight decay applied to the parameter
    (``param *= 1 - lr * weight_decay``) instead of added to the gradient."""

    _DECOUPLED_WEIGHT_DECAY = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False):
        _check_adam_arguments(lr, betas, eps, weight_decay)
        Optimizer.__init__(self, params, dict(lr=lr, betas=betas, eps=eps,
                                              weight_decay=weight_decay, amsgrad=amsgrad,
                                              foreach=foreach, maximize=maximize,
                                              capturable=capturable))


class RMSprop(Optimizer):
    """torch.optim.RMSprop (``centered`` subtracts the squared mean gradient; ``momentum``
    keeps a buffer of the scaled steps)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        _check_at_least(lr, 0.0, "learning rate")
        _check_at_least(eps, 0.0, "epsilon value")
        _check_at_least(momentum, 0.0, "momentum value")
        _check_at_least(weight_decay, 0.0, "weight_decay value")
        _check_at_least(alpha, 0.0, "alpha value")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, param, state, group):
        if not state:
            state["step"] = 0
            state["square_avg"] = param.new_zeros(tuple(param.shape))
            if group["momentum"] > 0:
                state["momentum_buffer"] = param.new_zeros(tuple(param.shape))
            if group["centered"]:
                state["grad_avg"] = param.new_zeros(tuple(param.shape))
        state["step"] += 1
        alpha = group["alpha"]
        grad = _gradient(param, group)
        square_avg = state["square_avg"].mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
        if group["centered"]:
            grad_avg = state["grad_avg"].mul_(alpha).add_(grad, alpha=1 - alpha)
            average = square_avg.addcmul(grad_avg, grad_avg, value=-1).sqrt()
        else:
            average = square_avg.sqrt()
        average = average.add_(group["eps"])
        if group["momentum"] > 0:
            buffer = state["momentum_buffer"].mul_(group["momentum"]).addcdiv_(grad, average)
            param.add_(buffer, alpha=-group["lr"])
        else:
            param.addcdiv_(grad, average, value=-group["lr"])
