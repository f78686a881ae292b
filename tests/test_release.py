import numpy as np
import pandas as pd
import pytest

from microagg import datasets
from microagg.core.verifiers import k_anonymity
from microagg.data.schema import Attribute, Kind, Role, Schema
from microagg.errors import InputError
from microagg.release import mask, microaggregate
from microagg.release.methods import Family, family


@pytest.fixture(scope="module")
def synthetic():
    return datasets.synthetic(600, 4, seed=2)


@pytest.mark.parametrize("method", [m.name for m in family(Family.K_ANONYMITY)])
def test_release_shape_means_and_untouched_columns(synthetic, method):
    release = microaggregate(synthetic.frame, k=4, schema=synthetic.schema, method=method,
                             round_values=False)
    frame = release.frame
    assert list(frame.columns) == list(synthetic.frame.columns)
    assert len(frame) == len(synthetic.frame)
    pd.testing.assert_series_equal(frame["region"], synthetic.frame["region"])
    quasi = list(synthetic.schema.quasi_identifiers)
    np.testing.assert_allclose(frame[quasi].mean(), synthetic.frame[quasi].mean())
    report = release.report
    assert report.method == method and report.k == 4
    holds = k_anonymity(frame, quasi).holds(4)
    assert report.k_anonymity["holds"] == holds
    written = k_anonymity(frame, list(frame.columns))
    assert report.k_anonymity_as_written["smallest_class"] == written.smallest_class
    assert report.released_unchanged == ["region", "education"]
    if method in ("mdav", "vmdav", "insensitive"):
        assert holds
    else:
        assert any("not k-anonymous" in note for note in report.notes)


def test_identifiers_dropped_and_labels_frame():
    frame = pd.DataFrame({"id": ["a", "b", "c", "d"], "x": [1.0, 2, 3, 4], "y": [4.0, 3, 2, 1]})
    schema = Schema((Attribute("id", Role.IDENTIFIER, Kind.NOMINAL),
                     Attribute("x", Role.QUASI), Attribute("y", Role.OTHER)))
    release = microaggregate(frame, k=2, schema=schema)
    assert list(release.frame.columns) == ["x", "y"]
    assert release.report.identifiers_dropped == ["id"]
    assert release.report.columns == ["x"]
    assert list(release.labels_frame().columns) == ["cluster"]
    ranking = microaggregate(frame, k=2, schema=schema, method="individual-ranking",
                             columns=["x", "y"])
    assert list(ranking.labels_frame().columns) == ["cluster_x", "cluster_y"]


def test_without_a_schema_every_column_is_masked():
    """No silent pass-through: a text column (or a numeric column with one text cell) is a
    quasi-identifier with a flat taxonomy, and the written table is k-anonymous."""
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "c": list("abcd")})
    release = microaggregate(frame, k=2)
    assert release.report.columns == ["x", "c"]
    assert release.report.released_unchanged == []
    assert k_anonymity(release.frame, ["x", "c"]).smallest_class >= 2
    assert release.report.k_anonymity_as_written["holds"]


def test_columns_released_unchanged_are_reported():
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "c": list("abcd")})
    release = microaggregate(frame, k=2, columns=["x"])
    assert release.report.released_unchanged == ["c"]
    assert not release.report.k_anonymity_as_written["holds"]
    assert release.report.k_anonymity["holds"]
    assert list(release.frame["c"]) == list("abcd")


def test_drop_incomplete_is_reported():
    frame = pd.DataFrame({"x": [1.0, np.nan, 3, 4, 5]})
    release = microaggregate(frame, k=2, drop_incomplete=True)
    assert release.report.rows_dropped_as_incomplete == 1
    assert list(release.frame.index) == [0, 2, 3, 4]


def test_errors():
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "c": list("abcd")})
    with pytest.raises(InputError, match="unknown method"):
        microaggregate(frame, k=2, method="kmeans")
    with pytest.raises(InputError, match="'x' has none"):
        microaggregate(frame, k=2, method="insensitive")
    with pytest.raises(InputError, match="unknown column 'z'"):
        microaggregate(frame, k=2, columns=["z"])
    with pytest.raises(InputError, match="exceeds the number of records"):
        microaggregate(frame, k=5)
    with pytest.raises(InputError, match="`gamma` applies to vmdav only, not mdav"):
        microaggregate(frame, k=2, gamma=0.5)
    with pytest.raises(InputError, match="`reference` applies to insensitive only, not mdav"):
        microaggregate(frame, k=2, reference="single")
    with pytest.raises(InputError,
                       match="`scaling` applies to mdav and vmdav only, not individual-ranking"):
        microaggregate(frame, k=2, method="individual-ranking", scaling="range")


def test_mixed_release_with_flat_and_ordinal_categories():
    data = datasets.synthetic(400, 3, seed=5)
    columns = ["age", "income", "region", "education"]
    release = microaggregate(data.frame, k=5, schema=data.schema, columns=columns)
    assert release.report.scaling == "range"  # auto: eq. 8 for mixed data
    assert release.report.k_anonymity["holds"]
    assert k_anonymity(release.frame, columns).smallest_class >= 5
    # a flat taxonomy has no inner concept below its root, and an ordinal centroid is a level
    assert set(release.frame["region"]) <= set(data.schema["region"].categories) | {"*"}
    assert set(release.frame["education"]) <= set(data.schema["education"].categories)


def test_inner_concepts_are_released_and_reported(tmp_path):
    taxonomy = tmp_path / "job.csv"
    taxonomy.write_text("a1;A;root\na2;A;root\na3;A;root\na4;A;root\nb1;B;root\nb2;B;root\n")
    # Four distinct children of A in one cluster: m(a_i) = 3 log2(1.5) = 1.75 exceeds
    # m(A) = 4 log2(4/3) = 1.66, so A is the centroid; b1, b1, b2, b2 keep the leaf b1.
    frame = pd.DataFrame({"job": ["a1", "a2", "a3", "a4", "b1", "b1", "b2", "b2"]})
    schema = Schema((Attribute("job", Role.QUASI, Kind.NOMINAL, taxonomy=taxonomy),))
    release = microaggregate(frame, k=4, schema=schema)
    assert release.report.k_anonymity["holds"]
    assert release.frame["job"].tolist() == ["A"] * 4 + ["b1"] * 4
    assert release.report.generalized_categories["job"] == ["A"]
    assert any("inner concepts" in note for note in release.report.notes)


def test_a_schema_without_quasi_identifiers_is_not_read_as_mask_everything():
    frame = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [4.0, 3.0, 2.0, 1.0]})
    schema = Schema((Attribute("x", Role.OTHER, Kind.NUMERIC),
                     Attribute("y", Role.CONFIDENTIAL, Kind.NUMERIC)))
    with pytest.raises(InputError, match="the schema declares no quasi-identifier"):
        microaggregate(frame, k=2, schema=schema)
    with pytest.raises(InputError, match="the schema declares no quasi-identifier"):
        mask(frame, method="rank-swap", fraction=0.5, schema=schema, rng=0)
    assert microaggregate(frame, k=2, schema=schema, columns=["x"],
                          round_values=False).frame["x"].tolist() == [1.5, 1.5, 3.5, 3.5]
