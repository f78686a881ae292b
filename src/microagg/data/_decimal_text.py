"""Released numbers as text, compiled: each float rounded exactly to 15 significant digits
and written as ``"%.15g" % x`` writes it, each integer as ``str(i)``, a whole numeric table as
CSV bytes in two passes over the rows (lengths, then text), split over threads.

The rounding is exact without extended precision. For a positive finite x, with q = 14 −
⌊log₁₀ x⌋ and 0 ≤ q ≤ 22 (so 10^q is an exact double), x·10^q = hi + lo exactly, by Dekker's
product (hi = fl(x·10^q), lo its rounding error, found with Veltkamp's split; Dekker 1971,
*Numer. Math.* 18, "mul12"). hi < 2⁵³ is a multiple of its unit in the last place u ≤ 1/2, and
|lo| ≤ u/2, so the fraction f = hi − ⌊hi⌋ is exact and decides the rounding of hi + lo to an
integer N: up when f > 1/2, down when f < 1/2 (hi + lo then lies at least u/2 from the tie),
and at f = 1/2 by the sign of lo, or to even when lo = 0 — the exact binary value's
round-half-even, as C's printf and Python's ``%`` round. The decade is decided on hi + lo
before rounding: when x·10^q is below 10¹⁴ or from 10¹⁵ on, ⌊log₁₀ x⌋ was one off (log10 is
not exact next to a power of ten) and q moves by one; N = 10¹⁵ after rounding is a round-up
to a power of ten and becomes 10¹⁴ one decade higher.
Values outside 10⁻⁸ ≤ |x| < 10¹⁵, where 10^q is not exact, are left to Python (kind
``PYTHON``); microdata rarely has them.
"""

from __future__ import annotations

import math

import numba
import numpy as np

__all__ = ["EXACT_TENS", "FINITE", "NAN", "NEGATIVE", "PYTHON", "ZERO", "csv_lengths",
           "fifteen_digits", "fill_csv", "release_doubles"]

# kinds of a float, with the sign in NEGATIVE
FINITE, NAN, ZERO, INFINITE, PYTHON = 0, 1, 2, 3, 4
NEGATIVE = 8

EXACT_TENS = 22
"""10**0 … 10**22 are exact doubles (5**22 < 2**53)."""
_TENS = np.array([10.0**i for i in range(EXACT_TENS + 1)])
_LOW, _HIGH = 10**14, 10**15
_TEN = np.uint64(10)
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's constant for doubles


@numba.njit(cache=True, inline="always")
def _product(a, b):
    """``(p, e)`` with ``p + e == a * b`` exactly (Dekker's mul12; no overflow here)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, e


@numba.njit(cache=True)
def _round15(x, tens):
    """``(N, X, ok)``: the positive finite ``x`` rounded to 15 significant digits is
    N·10^(X−14), 10¹⁴ ≤ N < 10¹⁵; ``ok`` is False outside the exact range."""
    q = 14 - math.floor(math.log10(x))
    for _ in range(3):
        if q < 0 or q > EXACT_TENS:
            return 0, 0, False
        hi, lo = _product(x, tens[q])
        if hi < _LOW or (hi == _LOW and lo < 0.0):  # x·10^q < 10¹⁴: a decade lower
            q += 1
            continue
        if hi > _HIGH or (hi == _HIGH and lo >= 0.0):  # x·10^q ≥ 10¹⁵
            q -= 1
            continue
        whole = math.floor(hi)
        f = hi - whole
        n = np.int64(whole)
        if f > 0.5 or (f == 0.5 and (lo > 0.0 or (lo == 0.0 and n % 2 == 1))):
            n += 1
        if n == _HIGH:  # rounded up to the next power of ten
            return np.int64(_LOW), 15 - q, True
        return n, 14 - q, True
    return 0, 0, False


@numba.njit(cache=True, parallel=True)
def fifteen_digits(values, mantissa, exponent, kind):
    """Fill ``mantissa`` (N), ``exponent`` (X) and ``kind`` for every value (module
    docstring); a value of kind PYTHON is left for the caller."""
    tens = _TENS
    for i in numba.prange(values.shape[0]):
        x = values[i]
        sign = NEGATIVE if (x < 0.0 or (x == 0.0 and math.copysign(1.0, x) < 0.0)) else 0
        if math.isnan(x):
            kind[i] = NAN
        elif x == 0.0:
            kind[i] = ZERO | sign
        elif math.isinf(x):
            kind[i] = INFINITE | sign
        else:
            n, e, ok = _round15(abs(x), tens)
            mantissa[i] = n
            exponent[i] = e
            kind[i] = (FINITE if ok else PYTHON) | sign


@numba.njit(cache=True, parallel=True)
def release_doubles(mantissa, exponent, kind, out):
    """The double nearest N·10^(X−14) for each FINITE value (one correctly rounded product
    or quotient of exact operands); ``out`` keeps its value where |X − 14| > EXACT_TENS (the
    caller's to round)."""
    tens = _TENS
    for i in numba.prange(out.shape[0]):
        k = kind[i] & (NEGATIVE - 1)
        if k != FINITE:
            continue
        power = exponent[i] - 14
        if 0 <= power <= EXACT_TENS:
            y = mantissa[i] * tens[power]
        elif power < 0 and -power <= EXACT_TENS:
            y = mantissa[i] / tens[-power]
        else:
            continue
        out[i] = -y if kind[i] & NEGATIVE else y


@numba.njit(cache=True)
def _float_length(n, e, k):
    """Characters of ``"%.15g"`` for kind ``k`` (sign included); NaN is an empty field."""
    sign = 1 if k & NEGATIVE else 0
    k &= NEGATIVE - 1
    if k == NAN:
        return 0
    if k == ZERO:
        return 1 + sign
    if k == INFINITE:
        return 3 + sign
    keep = 15
    u = np.uint64(n)  # unsigned: division by a constant is a multiplication
    while u % _TEN == 0:
        u //= _TEN
        keep -= 1
    if -4 <= e < 15:
        if e >= 0:
            return sign + e + 1 + (keep - e if keep > e + 1 else 0)
        return sign + 2 + (-e - 1) + keep
    digits = 3 if abs(e) >= 100 else 2
    return sign + 1 + (keep if keep > 1 else 0) + 2 + digits


@numba.njit(cache=True)
def _write_float(buffer, at, n, e, k):
    """Write ``"%.15g"`` of the value at ``buffer[at:]``; return the next position."""
    if k & NEGATIVE:
        buffer[at] = 45  # '-'
        at += 1
    k &= NEGATIVE - 1
    if k == NAN:
        return at
    if k == ZERO:
        buffer[at] = 48
        return at + 1
    if k == INFINITE:
        buffer[at] = 105  # 'inf'
        buffer[at + 1] = 110
        buffer[at + 2] = 102
        return at + 3
    keep = 15
    u = np.uint64(n)
    while u % _TEN == 0:
        u //= _TEN
        keep -= 1
    # where digit j (0 = the leading one) goes, as at + j + shift once past the point
    if -4 <= e < 15:
        if e >= 0:
            point, shift, end = e + 1, 1, at + e + 1 + (keep - e if keep > e + 1 else 0)
            if keep > e + 1:
                buffer[at + e + 1] = 46  # '.'
            for j in range(keep, e + 1):  # the integer part's own trailing zeros
                buffer[at + j] = 48
        else:
            buffer[at] = 48
            buffer[at + 1] = 46
            for j in range(-e - 1):
                buffer[at + 2 + j] = 48
            at += 1 - e
            point, shift, end = 0, 0, at + keep
    else:
        point, shift = 1, 1
        end = at + keep + (1 if keep > 1 else 0)
        if keep > 1:
            buffer[at + 1] = 46
    for j in range(keep - 1, -1, -1):
        buffer[at + j + (shift if j >= point else 0)] = 48 + np.uint8(u % _TEN)
        u //= _TEN
    return end if -4 <= e < 15 else _write_exponent(buffer, end, e)


@numba.njit(cache=True, inline="always")
def _write_exponent(buffer, at, e):
    buffer[at] = 101  # 'e'
    buffer[at + 1] = 45 if e < 0 else 43
    at += 2
    a = abs(e)
    if a >= 100:
        buffer[at] = 48 + a // 100
        at += 1
    buffer[at] = 48 + (a // 10) % 10
    buffer[at + 1] = 48 + a % 10
    return at + 2


@numba.njit(cache=True)
def _int_length(v):
    u = np.uint64(-(v + 1)) + np.uint64(1) if v < 0 else np.uint64(v)
    count = 1
    while u >= _TEN:
        u //= _TEN
        count += 1
    return count + (1 if v < 0 else 0)


@numba.njit(cache=True)
def _write_int(buffer, at, v):
    if v < 0:
        buffer[at] = 45
        at += 1
        u = np.uint64(-(v + 1)) + np.uint64(1)  # |v| without overflow at -2**63
    else:
        u = np.uint64(v)
    count = 1
    t = u
    while t >= _TEN:
        t //= _TEN
        count += 1
    for j in range(count - 1, -1, -1):
        buffer[at + j] = 48 + np.uint8(u % _TEN)
        u //= _TEN
    return at + count


@numba.njit(cache=True, parallel=True)
def csv_lengths(mantissa, exponent, kind, integers, order, lengths):
    """Bytes of each row (separators and the line break included) into ``lengths``.
    ``order[j]`` is the column j of the table: ``c >= 0`` the float column c (of
    mantissa/exponent/kind), ``-1 - c`` the integer column c."""
    columns = order.shape[0]
    for i in numba.prange(lengths.shape[0]):
        total = columns  # separators and the line break
        for j in range(columns):
            c = order[j]
            if c >= 0:
                total += _float_length(mantissa[i, c], exponent[i, c], kind[i, c])
            else:
                total += _int_length(integers[i, -1 - c])
        lengths[i] = total


@numba.njit(cache=True, parallel=True)
def fill_csv(mantissa, exponent, kind, integers, order, starts, buffer, separator):
    """Write every row at ``buffer[starts[i]:]`` (columns as in :func:`csv_lengths`)."""
    columns = order.shape[0]
    for i in numba.prange(starts.shape[0]):
        at = starts[i]
        for j in range(columns):
            c = order[j]
            if c >= 0:
                at = _write_float(buffer, at, mantissa[i, c], exponent[i, c], kind[i, c])
            else:
                at = _write_int(buffer, at, integers[i, -1 - c])
            buffer[at] = separator if j < columns - 1 else 10
            at += 1
