"""The contract every release method keeps, checked on every class of the registry: a new
method is held to it by being registered (release/methods/__init__.py)."""

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from microagg import datasets
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError, PrivacyLeakWarning
from microagg.evaluation.audit import scenarios, type_scenarios
from microagg.release.methods import METHODS, Family
from microagg.release.params import method_fields
from microagg.release.reports.report import (
    ChoiceNoise,
    Domain,
    EpsilonPart,
    NumericNoise,
    Sensitivity,
)

# A value for every required parameter a method may declare; a new method with a required
# parameter not listed here fails below with its name.
REQUIRED = {"k": 10, "t": 0.5, "epsilon": 1.0, "gamma": 0.2, "s": 0.2, "fraction": 0.2,
            "hierarchy": ("region",), "similar": ("education",)}
# Parameters that have a default but of which a method needs one given (top or bottom).
GIVEN = {"TopBottomCoding": {"top": 50_000.0},
         "GlobalRecoding": {"breaks": {"age": [0, 50, 120]}},
         "RecordSwap": {"risk_variables": ("age",)}}
ALL = [pytest.param(m, id=m.name + "/" + m.family.value) for m in METHODS]


@pytest.fixture(scope="module")
def data():
    made = datasets.synthetic(400, 3, seed=2)
    frame = made.frame.assign(person=np.arange(1000, 1400))
    schema = Schema((*made.schema.attributes,
                     Attribute("person", Role.IDENTIFIER, Kind.NUMERIC)))
    return frame, schema


def _make(cls):
    needed = [f.name for f in method_fields(cls) if f.default is dataclasses.MISSING]
    missing = [n for n in needed if n not in REQUIRED]
    assert not missing, f"{cls.__name__} needs {missing}: add a value to REQUIRED"
    return cls(**{n: REQUIRED[n] for n in needed}, **GIVEN.get(cls.__name__, {}))


def _release(method, frame, schema):
    if method.family is Family.T_CLOSENESS:
        return method.release(frame, schema=schema, quasi=["age", "income"],
                              confidential=["expenses"])
    if method.family is Family.K_ANONYMITY:
        return method.release(frame, schema=schema)
    if method.family is Family.KEYS and "hierarchy" in method.parameters():
        # record swapping needs households: here one per record
        return method.release(frame.assign(household=np.arange(len(frame))), schema=schema,
                              roles={"household": "household"}, rng=5)
    if method.family is Family.KEYS:
        return method.release(frame, schema=schema, keys=["region", "education"],
                              **({"rng": 5} if method.randomized else {}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return method.release(frame, schema=schema, columns=["age", "income", "expenses"],
                              rng=5)


@pytest.mark.parametrize("cls", ALL)
def test_every_method_keeps_the_release_contract(cls, data):
    frame, schema = data
    method = _make(cls)
    release = _release(method, frame, schema)
    # runs, and the report names the method (a DP report's `method` describes the mechanism
    # in words, the method's name among them)
    assert cls.name in release.report.method.lower()
    assert len(release.frame) == len(frame)
    # identifiers dropped from every release
    assert "person" not in release.frame.columns
    assert "person" in getattr(release.report, "identifiers_dropped",
                               getattr(release.report, "dropped_columns", ["person"]))
    # the report round-trips to JSON, with the method's parameters as the report states them
    text = json.dumps(release.report.to_dict())
    assert json.loads(text) == json.loads(json.dumps(release.report.to_dict()))
    assert json.loads(text)["method"] == release.report.method
    # row order: a DP release writes a uniformly random order with a fresh index; the
    # others keep the input's rows in input order
    if cls.family is Family.DIFFERENTIAL_PRIVACY:
        assert release.frame.index.equals(pd.RangeIndex(len(frame)))
        rows = release.source_rows
        assert rows is not None and not np.array_equal(rows.reshape(len(frame), -1)[:, 0],
                                                       np.arange(len(frame)))
        assert "uniformly random" in release.report.row_order
        # typed entries: attributes for code, the same keys for JSON
        report = release.report
        assert all(isinstance(e, EpsilonPart) for e in report.epsilon_split)
        assert all(isinstance(e, Sensitivity) and e.mechanism for e in report.sensitivities)
        assert all(isinstance(d, Domain) for d in report.domains.values())
        assert all(isinstance(v, NumericNoise | ChoiceNoise) for v in report.noise.values())
        assert report.to_dict()["epsilon_split"][0]["epsilon"] == report.epsilon_split[0].epsilon
        assert sum(e.epsilon for e in report.epsilon_split) <= method.epsilon
    else:
        assert release.frame.index.equals(frame.index)
    # a method object is frozen and checked when made
    with pytest.raises(dataclasses.FrozenInstanceError):
        method.k = 3  # type: ignore[misc]
    assert method == _make(cls) and hash(method) == hash(_make(cls))


@pytest.mark.parametrize("cls", ALL)
def test_an_option_a_method_does_not_take_is_refused_by_name(cls):
    from microagg.release.functions import make_method

    own = {f.name for f in method_fields(cls)}
    foreign = sorted({f.name for m in METHODS if m.family is cls.family
                      for f in method_fields(m)} - own)
    required = {n: REQUIRED[n] for n in own if n in REQUIRED} | GIVEN.get(cls.__name__, {})
    for name in foreign:
        with pytest.raises(InputError, match=f"`{name}` applies to .* not {cls.name}"):
            make_method(cls.family, cls, {**required, name: object()})
    with pytest.raises(TypeError):
        cls(**required, not_a_parameter=1)


def test_every_dp_method_has_an_audit_scenario():
    """Each DP release type is attacked end to end on worst-case neighbours (the slow audit
    test runs them); here: a scenario exists for every DP method of the registry, for its
    values and for its written column types."""
    covered = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for scenario in [*scenarios(), *type_scenarios()]:
            report = scenario.release(scenario.neighbours[0], np.random.default_rng(0)).report
            text = report.method.lower()  # the method's name comes first in its description
            name = min((m.name for m in METHODS if m.family is Family.DIFFERENTIAL_PRIVACY
                        and m.name in text), key=text.index)
            covered.setdefault(name, set()).add(
                "type" if "column type" in scenario.name else "value")
    for cls in METHODS:
        if cls.family is Family.DIFFERENTIAL_PRIVACY:
            assert covered.get(cls.name) == {"type", "value"}, cls.name
