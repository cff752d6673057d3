"""``torch.optim.RMSprop``: PyTorch 1.13's update, the running average of squared gradients
(``alpha``), ``centered`` subtracting the squared running mean gradient, eps added after the
square root, and ``momentum`` keeping a buffer of the scaled steps."""
from ..._tensor import tensor
from .optimizer import Optimizer


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, foreach=None, maximize=False, differentiable=False):
        for value, what in ((lr, "learning rate"), (eps, "epsilon value"),
                            (momentum, "momentum value"), (weight_decay, "weight_decay value"),
                            (alpha, "alpha value")):
            if not 0.0 <= value:
                raise ValueError(f"Invalid {what}: {value}")
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize,
                                      differentiable=differentiable))

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = tensor(0.0)
            state["square_avg"] = param.detach().clone().zero_()
            if group["momentum"] > 0:
                state["momentum_buffer"] = param.detach().clone().zero_()
            if group["centered"]:
                state["grad_avg"] = param.detach().clone().zero_()
        state["step"].add_(1)
        grad = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            grad = grad + param.detach() * group["weight_decay"]
        alpha = group["alpha"]
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
