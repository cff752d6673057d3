"""``torch.optim.SGD``: PyTorch 1.13's update, weight decay added to the gradient, then the
momentum buffer (started as the first gradient) with dampening, optionally Nesterov."""
from .optimizer import Optimizer, required


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov,
                                      maximize=maximize, foreach=foreach,
                                      differentiable=differentiable))

    def _update(self, param, grad, state, group):
        direction = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            direction = direction + param.detach() * group["weight_decay"]
        momentum = group["momentum"]
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                buffer = state["momentum_buffer"] = direction.detach().clone()
            else:
                buffer.mul_(momentum).add_(direction, alpha=1 - group["dampening"])
            direction = direction + buffer * momentum if group["nesterov"] else buffer
        param.add_(direction, alpha=-group["lr"])
