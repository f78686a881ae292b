"""The random generator every randomized step draws from: a numpy Generator made from a
Generator, a seed or fresh OS entropy, with the seed checked."""

from __future__ import annotations

import numpy as np

from microagg.errors import InputError

__all__ = ["make_rng"]


def make_rng(rng: np.random.Generator | int | None) -> np.random.Generator:
    """A numpy Generator from a Generator, a seed, or None (fresh OS entropy)."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and rng < 0:
        raise InputError(f"the seed must be a non-negative integer, got {rng}")
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    raise InputError(f"rng must be a numpy Generator, a seed or None, got {rng!r}")
