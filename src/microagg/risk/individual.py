"""Individual and household risk of re-identification from the frequencies of key combinations.

The individual risk of a record is the probability that a match of its key values in the
population is the record itself. Without sampling weights the sample is taken to be the
population and the risk is 1/f_k. With weights it is the estimate of Benedetti and Franconi
(1998) under a negative-binomial superpopulation model, in the closed forms that μ-ARGUS and
sdcMicro (``indivRisk(method = "approx")``, called by ``measure_risk``) use (Franconi and
Polettini 2004): with p_k = f_k / F_k,

* f_k = 1: r = p/(1 − p) · log(1/p);
* f_k = 2: r = p/(1 − p) − (p/(1 − p))² · log(1/p);
* f_k ≥ 3: r = p / (f_k − (1 − p)), the first term of the series;
* F_k = f_k (the whole population combination is in the sample): r = 1/f_k.

The f_k = 2 form cancels as p → 1 (sdcMicro returns 1.5 for F_k = 2 (1 + 2⁻⁵²)); it is
evaluated as p − p² (log(1/p) − q)/q², q = 1 − p = (F_k − f_k)/F_k, with the series
Σ_{k≥2} q^(k−2)/k for small q, and log(1/p) as −log1p(−q) for p near 1: every risk is then
correct to a few units of the last place, and tends to 1/f_k as F_k → f_k.

The household risk of a record (sdcMicro ``measure_risk(hid = …)``) is the probability that
at least one member of its household is re-identified, the members taken as independent:
r_h = 1 − Π_{i ∈ h} (1 − r_i).

References
----------
Benedetti, R. and Franconi, L. (1998). Statistical and technological solutions for controlled
data dissemination. Pre-proceedings of New Techniques and Technologies for Statistics, 1,
225-232.

Franconi, L. and Polettini, S. (2004). Individual risk estimation in μ-Argus: a review.
Privacy in Statistical Databases, LNCS 3050, 262-272. Springer.
"""

from __future__ import annotations

import numpy as np

from microagg.errors import InputError

__all__ = ["household_risk", "individual_risk"]


def individual_risk(fk: np.ndarray, Fk: np.ndarray | None = None) -> np.ndarray:
    """The individual risk of every record from its sample frequency ``fk`` and, for weighted
    data, its estimated population frequency ``Fk`` (the module docstring gives the formulas).

    Parameters
    ----------
    fk
        Sample frequencies f_k (positive).
    Fk
        Population frequencies F_k (sums of sampling weights, F_k ≥ f_k), or None for
        unweighted data: the risk is then 1/f_k.

    Returns
    -------
    numpy.ndarray
        float64 risks in [0, 1], one per record.

    Examples
    --------
    >>> import numpy as np
    >>> individual_risk(np.array([1, 2, 4])).tolist()
    [1.0, 0.5, 0.25]
    >>> risk = individual_risk(np.array([1, 3]), np.array([10.0, 3.0]))
    >>> round(float(risk[0]), 6), float(risk[1])
    (0.255843, 0.3333333333333333)
    """
    f = np.asarray(fk, dtype=np.float64)
    if Fk is None:
        return 1.0 / f
    F = np.asarray(Fk, dtype=np.float64)
    p = f / F
    q = (F - f) / F  # 1 − p without its rounding
    risk = np.empty_like(p)
    with np.errstate(divide="ignore", invalid="ignore"):
        # log(1/p): from q where p is near 1, from F/f elsewhere (each without cancellation)
        log_inverse = np.where(q < 0.5, -np.log1p(-q), np.log(F / f))
        one, two, more = f == 1, f == 2, f > 2
        risk[one] = (p / q * log_inverse)[one]
        risk[two] = (p - p * p * _excess(q, log_inverse))[two]
        risk[more] = (p / (f - q))[more]
    exact = f == F
    risk[exact] = 1.0 / f[exact]
    return risk


def _excess(q: np.ndarray, log_inverse: np.ndarray) -> np.ndarray:
    """(log(1/p) − q) / q² = Σ_{k ≥ 2} q^(k−2) / k, by its series where q is small (the
    difference cancels) and directly elsewhere."""
    series = np.zeros_like(q)
    for k in range(_TERMS + 1, 1, -1):  # Horner, from the highest term
        series = series * q + 1.0 / k
    with np.errstate(divide="ignore", invalid="ignore"):
        direct = (log_inverse - q) / (q * q)
    return np.where(np.abs(q) < _SERIES_BELOW, series, direct)


_SERIES_BELOW = 0.1
_TERMS = 24  # 0.1^23 / 25 is below double precision of the sum (≥ 1/2)


def household_risk(risk: np.ndarray, household: np.ndarray) -> np.ndarray:
    """The household risk of every record: 1 − Π (1 − r_i) over the members of its household.

    Parameters
    ----------
    risk
        Individual risks, one per record.
    household
        The household of every record, as int64 codes 0, 1, … (no missing household).

    Returns
    -------
    numpy.ndarray
        The risk of the record's household, one per record.

    Examples
    --------
    >>> import numpy as np
    >>> household_risk(np.array([0.5, 0.5, 0.2]), np.array([0, 0, 1])).tolist()
    [0.75, 0.75, 0.2]
    """
    codes = np.asarray(household, dtype=np.int64)
    if codes.size and codes.min() < 0:
        raise InputError("the household identifier is missing for some records")
    with np.errstate(divide="ignore"):
        log_safe = np.bincount(codes, weights=np.log1p(-np.asarray(risk, dtype=np.float64)))
    return -np.expm1(log_safe)[codes]
