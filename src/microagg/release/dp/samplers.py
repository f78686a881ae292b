"""Exact samplers of the differential-privacy mechanisms (numba kernels).

Discrete Laplace noise is drawn with the rejection sampler of Canonne, Kamath and Steinke
("The discrete Gaussian for differential privacy", NeurIPS 2020, Algorithms 1-2), and the
choices of the exponential mechanism by rejection from uniform proposals with exact
Bernoulli(exp(−a/b)) trials: only integer comparisons against uniform integers, each made from
a 62-bit word of the caller's numpy Generator by mask-and-reject (exactly uniform). The
mechanisms built on them, and why they are sampled this way, are in
:mod:`microagg.release.dp.mechanisms`; the generator they draw from is made by
:func:`microagg.core.rng.make_rng`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from microagg.core.rng import make_rng
from microagg.core.threads import most_threads
from microagg.errors import InputError

__all__ = ["discrete_laplace", "exponential_choices"]


# Uniform words: 62 random bits each, drawn from the Generator in blocks (a power-of-two range,
# so every word is exactly uniform).
_WORD = 1 << 62
_BLOCK = 4096


@numba.njit(cache=True, nogil=True)
def _mask_below(bound: int) -> int:
    """The smallest all-ones bit mask >= bound - 1 (bound >= 2)."""
    mask = bound - 1
    mask |= mask >> 1
    mask |= mask >> 2
    mask |= mask >> 4
    mask |= mask >> 8
    mask |= mask >> 16
    mask |= mask >> 32
    return mask


@numba.njit(cache=True, nogil=True)
def _uniform_below(rng: np.random.Generator, block: np.ndarray, cursor: np.ndarray,
                   bound: int) -> int:
    """A uniform integer in [0, bound): the low bits of a 62-bit word under the smallest
    all-ones mask >= bound - 1, rejected if >= bound (exactly uniform). ``block`` holds words
    from the Generator, ``cursor[0]`` the next unused one."""
    if bound <= 1:
        return 0
    mask = _mask_below(bound)
    while True:
        if cursor[0] == block.shape[0]:
            block[:] = rng.integers(0, _WORD, block.shape[0])
            cursor[0] = 0
        x = block[cursor[0]] & mask
        cursor[0] += 1
        if x < bound:
            return x


@numba.njit(cache=True, nogil=True)
def _bernoulli_exp(rng: np.random.Generator, block: np.ndarray, cursor: np.ndarray,
                   numerator: int, denominator: int) -> bool:
    """Bernoulli(exp(−numerator / denominator)) for integers numerator >= 0, denominator >= 1,
    exactly (CKS 2020, Algorithm 1): one Bernoulli(e^-1) per whole unit of the exponent, all of
    which must succeed, then Bernoulli(exp(−r/d)) for the remainder r < d: draw
    A_j ~ Bernoulli(r / (d j)) for j = 1, 2, ... until one fails; true iff that j is odd."""
    for _ in range(numerator // denominator):
        j = 1
        while _uniform_below(rng, block, cursor, j) < 1:  # A_j ~ Bernoulli(1/j)
            j += 1
        if j % 2 == 0:
            return False
    remainder = numerator % denominator
    if remainder == 0:
        return True
    j = 1
    while _uniform_below(rng, block, cursor, denominator * j) < remainder:
        j += 1
    return j % 2 == 1


@numba.njit(cache=True, nogil=True)
def _discrete_laplace_fill(rng: np.random.Generator, scale: int, out: np.ndarray) -> None:
    """Discrete Laplace variables, ``P(z) ∝ exp(-|z| / scale)``, into ``out``: CKS 2020,
    Algorithm 2 with s = 1, t = scale, and Algorithm 1 for every Bernoulli(exp(-γ)).

    1. U uniform below t, sign uniform (one uniform integer below 2t: its half and its parity);
    2. accept U with probability exp(-U/t), else go back to 1;
    3. V: the number of successes of Bernoulli(exp(-1)) trials before the first failure;
    4. Z = ±(U + t V), rejecting "−0"; restart from 1 if rejected.

    Bernoulli(exp(-a/b)), 0 <= a <= b (Algorithm 1): draw A_j ~ Bernoulli(a / (b j)) for
    j = 1, 2, ... until one fails; true iff the failing j is odd (for a = b the first trial is
    certain and skipped). Bernoulli(a / c) is "a uniform integer below c is below a".

    The steps are a state machine around one draw site, so every uniform integer comes from a
    local block of words with no call overhead (as in :func:`_uniform_below`, 2.5 times faster
    than calling it). The Generator refills the block.
    """
    block = np.empty(_BLOCK, dtype=np.int64)
    used = _BLOCK
    i = 0
    state = 0  # 0: draw U and the sign; 1: accept U (trial j); 2: geometric V (trial j)
    draw = u = j = v = 0
    while i < out.shape[0]:
        if state == 0:
            bound = 2 * scale
        elif state == 1:
            bound = scale * j
        else:
            bound = j
        x = 0
        if bound > 1:
            mask = _mask_below(bound)
            while True:
                if used == _BLOCK:
                    block[:] = rng.integers(0, _WORD, _BLOCK)
                    used = 0
                x = block[used] & mask
                used += 1
                if x < bound:
                    break
        if state == 0:
            draw, u, j, state = x, x // 2, 1, 1
        elif state == 1:
            if x < u:
                j += 1
            elif j % 2 == 1:  # U accepted: start V
                v, j, state = 0, 2, 2
            else:
                state = 0
        elif x < 1:  # state 2: the trial A_j of Bernoulli(exp(-1)) succeeded
            j += 1
        elif j % 2 == 1:  # Bernoulli(exp(-1)) was true: V grows
            v, j = v + 1, 2
        else:  # V is complete
            magnitude = u + scale * v
            negative = draw % 2 == 1
            if not (negative and magnitude == 0):
                out[i] = -magnitude if negative else magnitude
                i += 1
            state = 0


# Draws per thread below which one thread does all the work.
_PARALLEL_DRAWS = 200_000


def discrete_laplace(scale: int, size: int, rng: np.random.Generator | int | None) -> np.ndarray:
    """``size`` exact draws of discrete Laplace noise with ``P(z) ∝ exp(-|z| / scale)``.

    Large requests are split between threads, each drawing from its own child Generator
    spawned from ``rng`` (so a seed still fixes the result)."""
    scale = int(scale)
    if scale < 1 or scale > 2**46:
        raise InputError(f"discrete Laplace scale must lie in [1, 2^46], got {scale}")
    rng = make_rng(rng)
    out = np.empty(int(size), dtype=np.int64)
    threads = max(1, min(most_threads(), out.size // _PARALLEL_DRAWS))
    if threads == 1:
        _discrete_laplace_fill(rng, scale, out)
        return out
    parts = np.array_split(out, threads)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(_discrete_laplace_fill, rng.spawn(threads), [scale] * threads, parts))
    return out


@numba.njit(cache=True, nogil=True)
def exponential_choices(rng: np.random.Generator, gaps: np.ndarray, scale: int,
                        out: np.ndarray) -> None:
    """For every row r, candidate i with probability ∝ exp(−gaps[r, i] / scale), by rejection
    from uniform proposals (see the module docstring of :mod:`microagg.release.dp.mechanisms`)."""
    block = np.empty(_BLOCK, dtype=np.int64)
    cursor = np.full(1, _BLOCK, dtype=np.int64)
    candidates = gaps.shape[1]
    for r in range(gaps.shape[0]):
        while True:
            i = _uniform_below(rng, block, cursor, candidates)
            if _bernoulli_exp(rng, block, cursor, gaps[r, i], scale):
                out[r] = i
                break
