"""Option values parsed without pydantic (:mod:`microagg.cli.coercion`) are those Typer's
pydantic adapters give, and a small command does not import pydantic at all."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from typer._adapters import try_build_adapter
from typer.models import OptionInfo

from microagg.cli.coercion import PLAIN_TYPES, UNHANDLED, install, plain_value

TEXTS = ["0", "5", "-3", "+7", "-0", "10000", "123456789012345678", "1234567890123456789",
         "007", "1_000", " 5", "5 ", "", "2.5", "0.25", "-0.5", "+1.5", "1e3", "1E-3",
         "2.5e+10", "1e400", "-1e400", "1e-400", ".5", "5.", "inf", "nan", "0x10", "abc",
         "٣", "1.5.2", "--5", "a/b.csv", "~/x", " a ", "-"]


def _pydantic(annotation: type, value: object) -> object:
    adapter = try_build_adapter(annotation, OptionInfo())
    assert adapter is not None
    try:
        return adapter.validate_python(value)
    except Exception:  # pydantic's rejection, whatever it is
        return UNHANDLED


@pytest.mark.parametrize("annotation", [str, int, float, Path])
def test_plain_values_are_pydantics(annotation):
    handled = 0
    for text in TEXTS:
        mine = plain_value(text, annotation)
        if mine is UNHANDLED:
            continue
        handled += 1
        theirs = _pydantic(annotation, text)
        assert type(mine) is type(theirs), text
        assert mine == theirs or (isinstance(mine, float) and math.isnan(mine)
                                  and math.isnan(theirs)), text
        if isinstance(mine, float):  # the same double, sign of zero included
            assert math.copysign(1, mine) == math.copysign(1, theirs), text
    assert handled >= 3  # the common spellings are parsed here, not left to pydantic


def test_only_plain_forms_are_parsed():
    assert plain_value("1_000", int) is UNHANDLED
    assert plain_value("1e400", float) is UNHANDLED  # pydantic's inf, and its message later
    assert plain_value("nan", float) is UNHANDLED
    assert plain_value("5", bool) is UNHANDLED  # a flag's text: Typer's own rules
    assert plain_value(True, int) is UNHANDLED  # a bool is no int here
    assert plain_value("x", complex) is UNHANDLED
    for value, annotation in ((True, bool), (3, int), (0.5, float), (Path("a"), Path),
                              ("a", str)):  # a default of the declared type is kept as is
        assert annotation in PLAIN_TYPES
        assert plain_value(value, annotation) is value


def test_install_is_idempotent():
    import typer.core

    assert install() and install()
    assert getattr(typer.core.build_runtime_param, "plain_first", False)


_CHILD = """
import json, sys
from microagg.cli.program import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "pydantic": "pydantic" in sys.modules}))
"""


def test_a_small_command_imports_no_pydantic(tmp_path):
    data = tmp_path / "in.csv"
    data.write_text("a,b\n" + "".join(f"{i % 7}.5,{i % 5}\n" for i in range(40)))
    done = subprocess.run([sys.executable, "-c", _CHILD, "microaggregate", str(data), "-o",
                           str(tmp_path / "out.csv"), "--k", "5"],
                          capture_output=True, text=True, check=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"code": 0, "pydantic": False}
    # a value outside the plain forms still parses, through Typer's coercion
    done = subprocess.run([sys.executable, "-c", _CHILD, "microaggregate", str(data), "-o",
                           str(tmp_path / "out2.csv"), "--k", "0_5"],
                          capture_output=True, text=True, check=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"code": 0, "pydantic": True}
    assert (tmp_path / "out.csv").read_bytes() == (tmp_path / "out2.csv").read_bytes()
