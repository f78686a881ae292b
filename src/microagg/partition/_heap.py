"""Binary max-heaps of the partition kernels, kept in caller-owned arrays.

* Bounded heaps of (distance, row) pairs ordered by :func:`precedes` (distance, then
  tie-break values, then row number): :func:`heap_offer` keeps the ``cap`` smallest pairs
  offered, its root the greatest of them; :func:`heap_sort` sorts them in place.
* Heaps of float bounds alone (:func:`bound_push`, :func:`bound_replace_top`): the coded
  passes keep the ``near`` smallest upper bounds, the root being the running limit.
* A priority queue of (key, id) pairs, greatest key first and ties to the lowest id
  (:func:`priority_push`, :func:`priority_pop`): t-closeness merges the class with the
  greatest EMD first.

A heap of size s occupies positions 0..s-1 of its arrays; the children of position i are
2i + 1 and 2i + 2.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def precedes(d1: float, r1: int, d2: float, r2: int, tiebreak: np.ndarray) -> bool:
    """Whether (d1, tiebreak[r1], r1) < (d2, tiebreak[r2], r2).

    Parameters
    ----------
    d1, d2 : float
        Distances, compared first.
    r1, r2 : int
        Row numbers: the rows of ``tiebreak`` are compared next, lexicographically, then the
        row numbers themselves.
    tiebreak : ndarray of float64, shape (n, t)
        Tie-break values per row; with no columns ties are broken by row number alone.

    Returns
    -------
    bool
        True if the first pair comes first.
    """
    if d1 != d2:
        return d1 < d2
    for j in range(tiebreak.shape[1]):
        a = tiebreak[r1, j]
        b = tiebreak[r2, j]
        if a != b:
            return a < b
    return r1 < r2


@numba.njit(cache=True)
def heap_sift_down(hd: np.ndarray, hr: np.ndarray, size: int | np.int64, at: int | np.int64,
                   tiebreak: np.ndarray) -> None:
    """Restore the max-heap order (under :func:`precedes`) of (hd, hr) below position ``at``.

    Parameters
    ----------
    hd, hr : ndarray
        Distances and rows of the heap, positions 0..size-1.
    size : int
        The heap's size.
    at : int
        The position whose entry may be out of place.
    tiebreak : ndarray of float64, shape (n, t)
        As in :func:`precedes`.
    """
    while True:
        left = 2 * at + 1
        if left >= size:
            return
        big = left
        if left + 1 < size and precedes(hd[left], hr[left], hd[left + 1], hr[left + 1],
                                        tiebreak):
            big = left + 1
        if precedes(hd[at], hr[at], hd[big], hr[big], tiebreak):
            hd[at], hd[big] = hd[big], hd[at]
            hr[at], hr[big] = hr[big], hr[at]
            at = big
        else:
            return


@numba.njit(cache=True)
def heap_offer(hd: np.ndarray, hr: np.ndarray, size: int | np.int64, cap: int, d: float,
               r: int, tiebreak: np.ndarray) -> int | np.int64:
    """Offer (d, r) to the bounded max-heap (hd, hr) that keeps the ``cap`` smallest pairs.

    Parameters
    ----------
    hd, hr : ndarray
        Distances and rows of the heap, room for ``cap`` entries.
    size : int
        The heap's current size.
    cap : int
        How many pairs it keeps.
    d, r : float, int
        The pair offered.
    tiebreak : ndarray of float64, shape (n, t)
        As in :func:`precedes`.

    Returns
    -------
    int
        The heap's new size.
    """
    if cap == 0:
        return 0
    if size < cap:
        at = size
        hd[at] = d
        hr[at] = r
        while at > 0:
            parent = (at - 1) // 2
            if precedes(hd[parent], hr[parent], hd[at], hr[at], tiebreak):
                hd[at], hd[parent] = hd[parent], hd[at]
                hr[at], hr[parent] = hr[parent], hr[at]
                at = parent
            else:
                break
        return size + 1
    if precedes(d, r, hd[0], hr[0], tiebreak):
        hd[0] = d
        hr[0] = r
        heap_sift_down(hd, hr, size, np.int64(0), tiebreak)
    return size


@numba.njit(cache=True)
def heap_sort(hd: np.ndarray, hr: np.ndarray, size: int, tiebreak: np.ndarray) -> None:
    """Sort the max-heap (hd, hr) of ``size`` entries in place into ascending order
    (heapsort's second phase).

    Parameters
    ----------
    hd, hr : ndarray
        Distances and rows of a heap made by :func:`heap_offer`.
    size : int
        The heap's size.
    tiebreak : ndarray of float64, shape (n, t)
        As in :func:`precedes`.
    """
    for end in range(size - 1, 0, -1):
        hd[0], hd[end] = hd[end], hd[0]
        hr[0], hr[end] = hr[end], hr[0]
        heap_sift_down(hd, hr, end, np.int64(0), tiebreak)


@numba.njit(cache=True, inline="always")
def bound_push(heap: np.ndarray, size: int, value: float) -> int:
    """Add ``value`` to the max-heap of floats heap[:size].

    Parameters
    ----------
    heap : ndarray of float64
        The heap, with room for one more entry.
    size : int
        Its size.
    value : float
        The value added.

    Returns
    -------
    int
        The new size.
    """
    at = size
    heap[at] = value
    while at > 0 and heap[(at - 1) // 2] < heap[at]:
        parent = (at - 1) // 2
        heap[at], heap[parent] = heap[parent], heap[at]
        at = parent
    return size + 1


@numba.njit(cache=True, inline="always")
def bound_replace_top(heap: np.ndarray, size: int, value: float) -> None:
    """Replace the greatest value of the max-heap of floats heap[:size] by ``value``.

    Parameters
    ----------
    heap : ndarray of float64
        The heap.
    size : int
        Its size (at least 1).
    value : float
        The new value, placed at the root and sifted down.
    """
    heap[0] = value
    at = 0
    while True:
        left = 2 * at + 1
        if left >= size:
            break
        big = left
        if left + 1 < size and heap[left + 1] > heap[left]:
            big = left + 1
        if heap[big] > heap[at]:
            heap[at], heap[big] = heap[big], heap[at]
            at = big
        else:
            break


@numba.njit(cache=True)
def priority_push(keys: np.ndarray, ids: np.ndarray, size: int, key: float, ident: int) -> int:
    """Push (key, ident) on the priority queue (keys, ids): greatest key on top, ties to the
    lowest id.

    Parameters
    ----------
    keys, ids : ndarray
        The queue, with room for one more entry.
    size : int
        Its size.
    key : float
        The priority.
    ident : int
        What it is the priority of.

    Returns
    -------
    int
        The new size.
    """
    at = size
    keys[at] = key
    ids[at] = ident
    while at > 0:
        up = (at - 1) // 2
        if keys[up] > keys[at] or (keys[up] == keys[at] and ids[up] < ids[at]):
            break
        keys[up], keys[at] = keys[at], keys[up]
        ids[up], ids[at] = ids[at], ids[up]
        at = up
    return size + 1


@numba.njit(cache=True)
def priority_pop(keys: np.ndarray, ids: np.ndarray, size: int) -> int:
    """Drop the top of the priority queue (keys, ids) (read it first at keys[0], ids[0]).

    Parameters
    ----------
    keys, ids : ndarray
        The queue, as made by :func:`priority_push`.
    size : int
        Its size (at least 1).

    Returns
    -------
    int
        The new size.
    """
    size -= 1
    keys[0] = keys[size]
    ids[0] = ids[size]
    at = 0
    while True:
        a = 2 * at + 1
        b = a + 1
        top = at
        for c in (a, b):
            if c < size and (keys[c] > keys[top] or (keys[c] == keys[top]
                                                     and ids[c] < ids[top])):
                top = c
        if top == at:
            return size
        keys[top], keys[at] = keys[at], keys[top]
        ids[top], ids[at] = ids[at], ids[top]
        at = top
