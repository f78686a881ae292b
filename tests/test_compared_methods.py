"""The comparison's candidates are tied to the registry: one entry per compared method, its
parameter a field of its class, its flags read off that class."""

from __future__ import annotations

import numpy as np
import pytest

from microagg.evaluation.compare import candidates
from microagg.evaluation.compared_methods import COMPARED, compared
from microagg.options import CompareMethod
from microagg.release.methods import METHODS, Family
from microagg.release.params import method_fields


def test_one_entry_per_compared_method() -> None:
    assert sorted(c.name for c in COMPARED) == sorted(CompareMethod)
    assert all(c.method in METHODS for c in COMPARED)


@pytest.mark.parametrize("entry", [c for c in COMPARED if c.step], ids=lambda c: c.name.value)
def test_a_step_entry_searches_a_parameter_of_its_class(entry) -> None:
    assert entry.parameter in {f.name for f in method_fields(entry.method)}
    # a DP method protects less as epsilon grows; every other parameter protects more
    # as it grows, but the retention of PRAM
    assert entry.increasing is (entry.family is not Family.DIFFERENTIAL_PRIVACY
                                and entry.parameter != "retention")


def test_flags_follow_the_class() -> None:
    assert compared(CompareMethod.MDAV).integer and not compared(CompareMethod.MDAV).randomized
    assert not compared(CompareMethod.DP_LAPLACE).aligned
    assert compared(CompareMethod.INVARIANT_PRAM).randomized
    assert not compared(CompareMethod.LOCAL_SUPPRESSION).randomized
    assert not compared(CompareMethod.RANK_SWAP).integer


def test_the_rank_candidates_carry_their_entrys_flags() -> None:
    X = np.random.default_rng(0).normal(size=(30, 2))
    table = candidates(X, X.min(axis=0), X.max(axis=0))
    assert set(table) == {c for c in CompareMethod if not c.keys_only}
    for name, made in table.items():
        entry = compared(name)
        assert (made.parameter, made.integer, made.randomized, made.increasing,
                made.aligned) == (entry.parameter, entry.integer, entry.randomized,
                                  entry.increasing, entry.aligned)


def test_the_t_closeness_algorithms_are_the_familys_methods() -> None:
    from microagg.options import TClosenessMethod
    from microagg.release.methods import family

    methods = family(Family.T_CLOSENESS)
    assert sorted(TClosenessMethod) == sorted(m.name for m in methods)
    assert all(m.algorithm == m.name for m in methods)  # type: ignore[attr-defined]


def test_the_public_dp_method_is_the_familys_base() -> None:
    import microagg
    from microagg.release.families.dp import DPMethod

    assert microagg.DPMethod is DPMethod
    assert all(issubclass(m, DPMethod) for m in METHODS
               if m.family is Family.DIFFERENTIAL_PRIVACY)


def test_merge_starts_from_a_method_of_the_k_anonymity_family() -> None:
    from microagg.options import Method
    from microagg.release.methods import family

    assert [m.value for m in Method] == [m.name for m in family(Family.K_ANONYMITY)]
