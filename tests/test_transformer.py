import numpy as np
import pandas as pd
import pytest

from microagg import datasets
from microagg.errors import InputError
from microagg.release import dp_laplace, mask, microaggregate
from microagg.release.methods import MDAV, DPLaplace, RankSwap
from microagg.release.transformer import Microaggregator


@pytest.fixture(scope="module")
def data():
    return datasets.synthetic(300, 3, seed=1)


def test_the_transformer_is_the_release_it_wraps(data):
    frame = data.frame[["age", "income", "expenses"]]
    model = Microaggregator(k=5, method="vmdav", gamma=0.4).set_output(transform="pandas")
    out = model.fit_transform(frame)
    expected = microaggregate(frame, k=5, method="vmdav", gamma=0.4)
    pd.testing.assert_frame_equal(out, expected.frame)
    np.testing.assert_array_equal(model.labels_, expected.labels)
    assert model.release_.report.k_anonymity["holds"]
    assert list(model.feature_names_in_) == ["age", "income", "expenses"]
    # default output: a numpy array of the same values, as scikit-learn's transformers give
    array = Microaggregator(k=5, method="vmdav", gamma=0.4).fit_transform(frame)
    assert isinstance(array, np.ndarray)
    np.testing.assert_array_equal(array, expected.frame.to_numpy())


def test_a_numpy_input_and_a_method_object(data):
    X = data.frame[["age", "income"]].to_numpy(float)
    out = Microaggregator(MDAV(k=4)).fit_transform(X)
    same = MDAV(k=4).release(pd.DataFrame(X, columns=["x0", "x1"])).frame.to_numpy()
    np.testing.assert_array_equal(out, same)


def test_random_state_is_the_seed_of_a_randomized_method_and_refused_otherwise(data):
    frame = data.frame[["age", "income"]]
    masked = Microaggregator(RankSwap(fraction=0.2), random_state=7).fit_transform(frame)
    np.testing.assert_array_equal(
        masked, mask(frame, method="rank-swap", fraction=0.2, rng=7).frame.to_numpy())
    with pytest.raises(InputError, match="`random_state` applies to randomized methods"):
        Microaggregator(k=5, random_state=7).fit_transform(frame)
    with pytest.raises(InputError, match="`k` belongs to the method object"):
        Microaggregator(MDAV(k=5), k=3).fit(frame)
    with pytest.raises(InputError, match="`k` is needed by mdav"):
        Microaggregator().fit(frame)
    with pytest.raises(InputError, match="`transform` must be one of"):
        Microaggregator(k=5).set_output(transform="polars")


def test_a_dp_release_cannot_be_aligned_with_y(data):
    frame = data.frame
    model = Microaggregator(DPLaplace(epsilon=1.0), columns=["age", "income"],
                            schema=data.schema, random_state=3)
    with pytest.warns(Warning):  # a seeded DP release says it is weaker than epsilon-DP
        out = model.set_output(transform="pandas").fit_transform(frame)
    with pytest.warns(Warning):
        alone = dp_laplace(frame, epsilon=1.0, columns=["age", "income"], schema=data.schema,
                           rng=3)
    pd.testing.assert_frame_equal(out, alone.frame)
    with pytest.raises(InputError, match="`y` cannot follow a DP release"):
        model.fit_transform(frame, y=np.zeros(len(frame)))


def test_scikit_learn_clones_it_and_runs_it_in_a_pipeline(data):
    sklearn = pytest.importorskip("sklearn")
    from sklearn.base import clone
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    model = Microaggregator(k=5, method="mdav", scaling="range")
    copy = clone(model)
    assert copy.get_params() == model.get_params() and copy is not model
    copy.set_params(k=7)
    assert copy.get_params()["k"] == 7 and model.get_params()["k"] == 5
    frame = data.frame[["age", "income", "expenses"]]
    pipeline = make_pipeline(model, FunctionTransformer(np.log1p))
    pipeline.set_output(transform="pandas")
    out = pipeline.fit_transform(frame)
    expected = np.log1p(microaggregate(frame, k=5, scaling="range").frame)
    pd.testing.assert_frame_equal(out, expected)
    assert sklearn.__version__
