"""Keras's snake_case of a class name ('BatchNormalization' -> 'batch_normalization'): the
prefix of automatic layer names and the group names of .weights.h5 files."""
import re


def snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()
