"""``torch.optim`` of the PyTorch face: Optimizer, SGD, Adam, AdamW, RMSprop and lr_scheduler,
with PyTorch 1.13's update formulas, composed from gpuaccel's tensor ops."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
