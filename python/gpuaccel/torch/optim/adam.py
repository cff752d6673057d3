"""``torch.optim.Adam`` and ``AdamW``: PyTorch 1.13's update, moments with bias correction,
eps added after the corrected square root (denominator sqrt(v) / sqrt(1 - beta2^t) + eps),
amsgrad on the running maximum of v. Adam adds weight decay to the gradient; AdamW scales the
parameter by (1 - lr * weight_decay) first (decoupled decay)."""
import math

from ..._tensor import tensor
from ...math import maximum
from .optimizer import Optimizer


class Adam(Optimizer):
    _decoupled_decay = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for index in (0, 1):
            if not 0.0 <= betas[index] < 1.0:
                raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize, foreach=foreach, capturable=capturable,
                                      differentiable=differentiable, fused=fused))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = tensor(0.0)
            state["exp_avg"] = param.detach().clone().zero_()
            state["exp_avg_sq"] = param.detach().clone().zero_()
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = param.detach().clone().zero_()
        beta1, beta2 = group["betas"]
        lr, decay = group["lr"], group["weight_decay"]
        grad = -grad if group["maximize"] else grad
        state["step"].add_(1)
        step = state["step"].item()
        if decay != 0:
            if self._decoupled_decay:
                param.mul_(1 - lr * decay)
            else:
                grad = grad + param.detach() * decay
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
        exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
        second_moment = exp_avg_sq
        if group["amsgrad"]:
            state["max_exp_avg_sq"].copy_(maximum(state["max_exp_avg_sq"], exp_avg_sq))
            second_moment = state["max_exp_avg_sq"]
        step_size = lr / (1 - beta1 ** step)
        denom = (second_moment.sqrt() / math.sqrt(1 - beta2 ** step)).add_(group["eps"])
        param.addcdiv_(exp_avg, denom, value=-step_size)


class AdamW(Adam):
    _decoupled_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused)
