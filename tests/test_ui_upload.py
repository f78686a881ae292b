"""The upload in headless Chromium, on a table written as UCI Adult writes it (`?` for a
missing value): `?` counted as a value until it is declared a missing-value token at the
upload (typed as a DP release's missing value, the page says where it belongs), then
counted missing column by column; a taxonomy without `?` refused when it is
applied, then accepted; the token reaching the recipe the app offers; and a second table
in the same session starting from its own roles and kinds, not the first table's by
position."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.test_ui_browser import (  # noqa: F401 (app_url: a fixture)
    _attach_taxonomy,
    _loaded,
    adult_like,
    app_url,
    choose_column,
    choose_method,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TAXONOMY = "Private;Non-Government;*\nSelf-emp;Non-Government;*\n" \
           "Federal-gov;Government;*\nLocal-gov;Government;*\n"


def _census_like(n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Numbers only, named as the CASC Census file names them: its weight first."""
    rng = np.random.default_rng(seed)
    names = ["AFNLWGT", "AGI", "EMCONTRB", "FEDTAX", "PTOTVAL", "STATETAX", "TAXINC"]
    return pd.DataFrame({name: rng.integers(1, 90_000, n) for name in names})


def test_missing_tokens_taxonomy_coverage_and_a_second_table(app_url, tmp_path):  # noqa: F811
    pytest.importorskip("playwright.sync_api", reason="the browser tests need playwright")
    url, _ = app_url
    frame = adult_like(600)
    written = frame.fillna({"workclass": "?", "native-country": "?"})
    data = tmp_path / "adult.csv"
    written.to_csv(data, index=False)
    tokens = {c: int((written[c] == "?").sum()) for c in written.columns}
    assert tokens["workclass"] > 0
    taxonomy = tmp_path / "workclass.csv"
    taxonomy.write_text(TAXONOMY)
    census = tmp_path / "census.csv"
    _census_like().to_csv(census, index=False)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    with _loaded(url, data) as page:
        # read as is, `?` is a value: no missing cell, and the taxonomy without it refused
        assert "600 records, 9 columns, 0 missing cells" in page.inner_text("#loaded-text")
        assert page.inner_text("td[data-missing='workclass']") == "0"
        choose_column(page, "workclass")
        page.fill("#detail_missing", "?")  # the DP field, where `?` does not belong
        page.click("#detail_apply")
        page.wait_for_selector("#err-missing .field-error")
        assert f"value of {tokens['workclass']:,} cells of 'workclass', which are not " \
            "missing" in page.inner_text("#err-missing")
        page.fill("#detail_missing", "")
        _attach_taxonomy(page, taxonomy)
        page.click("#detail_apply")
        page.wait_for_selector("#err-taxonomy .field-error")
        said = page.inner_text("#err-taxonomy")
        assert f"'?' ({tokens['workclass']:,})" in said and "workclass" in said
        assert "taxonomy" not in page.inner_text("#declared li[data-column='workclass']")

        # `?` declared a missing-value token: read again, counted missing per column
        page.fill("#upload_na", "?")
        page.click("#upload_again")
        total = sum(tokens.values())
        page.wait_for_selector(f"#loaded-text:has-text('{total:,} missing cells')")
        assert "?" in page.inner_text("#loaded-text")  # the tokens read as missing, said
        for column in ("workclass", "native-country", "age"):
            assert page.inner_text(f"td[data-missing='{column}']") == f"{tokens[column]:,}"
        choose_column(page, "workclass")
        _attach_taxonomy(page, taxonomy)
        page.click("#detail_apply")
        page.wait_for_selector("#declared li[data-column='workclass']")
        assert page.locator("#err-taxonomy .field-error").count() == 0

        # a step, and the recipe the app offers reads `?` as missing
        page.click("text=3 · Steps")
        choose_method(page, "keys", "local-suppression")
        page.fill("#f_k", "3")
        for key in ("workclass", "sex"):
            page.locator("#f_keys-selectized").fill(key)
            page.keyboard.press("Enter")
        page.click("#run_step")
        page.wait_for_selector("#step-1")
        page.click("text=5 · Download")
        page.wait_for_selector("#dl_recipe")
        with page.expect_download() as download:
            page.click("#dl_recipe")
        recipe_path = downloads / download.value.suggested_filename
        download.value.save_as(recipe_path)
        recipe = yaml.safe_load(recipe_path.read_text())
        assert recipe["read"] == {"na": ["?"]}

        # a second table: its own suggested roles and kinds, whatever the first one had
        page.click("text=1 · Data")
        page.fill("#upload_na", "")
        page.set_input_files("#upload", str(census))
        page.wait_for_selector("#loaded-text:has-text('census.csv')")
        # AFNLWGT, named as a weight (the roles' table is drawn after the summary line)
        page.wait_for_function("document.querySelector('#role_0') && "
                               "document.querySelector('#role_0').value === 'weight'",
                               timeout=20_000)
        page.click("text=4 · Compare")
        expected = list(_census_like().columns[1:])  # numeric quasi-identifiers
        page.wait_for_function(
            "(want) => { const s = document.querySelector('#compare_columns');"
            " return s && Array.from(s.selectedOptions).map(o => o.value).join() === want; }",
            arg=",".join(expected), timeout=30_000)
        page.click("text=2 · Risk")
        page.wait_for_function(
            "(want) => { const k = document.querySelector('#keys');"
            " return k && k.innerText.endsWith(want); }", arg=": " + ", ".join(expected),
            timeout=30_000)
