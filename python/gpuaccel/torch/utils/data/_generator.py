"""The random orders of torch.utils.data (shuffling samplers, random_split), drawn from a
``torch.Generator`` when one is passed, else from the global generator that
``torch.manual_seed`` seeds."""
from ...._torch_functions import randperm
from ...._torch_generator import drawing_from


def check_generator(generator, where):
    """``generator`` itself, or PyTorch's TypeError when it is neither None nor a Generator."""
    with drawing_from(generator, where):
        pass  # checks the type and draws nothing
    return generator


def permutation(n, generator=None):
    """A random order of range(n) as a list of ints."""
    return randperm(n, generator=generator).tolist()
