"""Against sdcMicro itself (R): its invariant PRAM matrix, and its local suppression on its
own testdata, run through the scripts of reproduction/. Skipped where R with sdcMicro is not
installed."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _sdcmicro() -> bool:
    if shutil.which("Rscript") is None:
        return False
    found = subprocess.run(["Rscript", "-e", "library(sdcMicro)"], capture_output=True)
    return found.returncode == 0


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not _sdcmicro(), reason="R with sdcMicro is not installed")]


def _script(name, *args):
    done = subprocess.run([sys.executable, str(ROOT / "reproduction" / name), *args],
                          capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_the_pram_matrix_is_sdcmicros():
    for row in _script("sdcmicro_pram.py", "--variables", "roof,relat"):
        assert row["max_abs_difference"] < 1e-12
        assert row["invariance_microagg"] < 1e-12


@pytest.mark.parametrize("k", [3, 5])
def test_suppression_on_testdata_needs_fewer_values_than_sdcmicro(k, tmp_path):
    (row,) = _script("sdcmicro_suppress.py", "--data", "testdata", "--k", str(k),
                     "--workdir", str(tmp_path))
    assert row["microagg"]["smallest_fk"] >= k
    assert row["sdcmicro"]["smallest_fk_microagg"] >= k  # both are k-anonymous
    assert row["microagg"]["total"] <= row["sdcmicro"]["total"]


@pytest.mark.reference_data
def test_recoding_closed_on_the_right_gives_sdcmicros_classes():
    """Adult's age cut at 0:20:30:40:50:60:70:100 by sdcMicro's globalRecode and by
    GlobalRecoding: closed on the right every record's class agrees; closed on the left
    (the default) the 3,411 ages equal to an inner break are one class higher."""
    (row,) = _script("sdcmicro_recode.py")
    assert row["records"] == 32561 and row["sdcMicro_without_class"] == 0
    assert row["records_differing_right"] == 0
    assert row["records_differing_left"] == 3411
