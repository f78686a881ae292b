"""The web app's step forms hold every field a recipe step has, and read back into the
step they describe."""

from __future__ import annotations

import re

import pytest

from microagg.recipe.families import ADAPTERS
from microagg.recipe.model import Protects, Step
from microagg.release.methods import family
from microagg.release.params import method_fields

pytest.importorskip("shiny")

from microagg.ui.forms import field_id, method_form, read_form

CASES = [(of, cls) for of in ADAPTERS for cls in family(of)]


@pytest.mark.parametrize(("of", "cls"), CASES, ids=[f"{o.value}-{c.name}" for o, c in CASES])
def test_a_form_has_every_field_of_its_recipe_step(of, cls):
    html = str(method_form(cls, ADAPTERS[of], ["age", "sex"]))
    shown = set(re.findall(r'id="f_([a-z_]+)"', html))
    wanted = ({f.name for f in method_fields(cls)} | {o.name for o in ADAPTERS[of].options}
              | ({"protects"} if ADAPTERS[of].private else set()))
    assert shown == wanted
    for name in shown:  # each beside the slot where its error is shown
        assert f'id="err-{name}"' in html


def test_what_a_dp_step_protects_is_read_from_its_form():
    of = next(o for o in ADAPTERS if ADAPTERS[o].private)
    cls = next(c for c in family(of) if c.name == "laplace")
    filled = {field_id("epsilon"): 1.0, field_id("protects"): Protects.STEP_INPUT.value}
    spec = read_form(cls, ADAPTERS[of], filled.get)
    step = Step.of({"family": of.value, "method": cls.name, **spec})
    assert step.protects is Protects.STEP_INPUT
    filled[field_id("protects")] = Protects.ORIGINAL.value
    assert "protects" not in read_form(cls, ADAPTERS[of], filled.get)
