"""The face has no ``torch.Generator``: shuffling draws from the global generator that
``torch.manual_seed`` seeds. A generator passed in is refused by name rather than ignored."""
from ...._torch_functions import randperm


def check_no_generator(generator, where):
    if generator is not None:
        raise TypeError(f"{where}(generator=...) is not supported: gpuaccel's PyTorch face has "
                        f"no torch.Generator; seed the global generator with "
                        f"torch.manual_seed(seed) and leave generator=None")


def permutation(n):
    """A random order of range(n) as a list of ints (the global generator)."""
    return randperm(n).tolist()
