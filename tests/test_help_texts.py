"""The help of every method parameter and family option says what the option does, in
words a data owner reads: the command line, the web app's forms and the docstrings all show
it, and none of them has the papers at hand."""

from __future__ import annotations

import re

import pytest

from microagg.release.family_options import FAMILY_OPTIONS
from microagg.release.methods import METHODS
from microagg.release.params import method_fields

CITATION = re.compile(r"\b00[0-4]\b|\bpapers?\s+\d|the paper's|§|\bAlg\.|\beq\.",
                      re.IGNORECASE)
"""A reference to one of the papers (000-004) by number, section, algorithm or equation."""

TEXTS = sorted({(f"{m.name}: summary", m.summary) for m in METHODS}
               | {(f"{m.name}.{f.name}", f.metadata["help"]) for m in METHODS
                  for f in method_fields(m)}
               | {(f"family option {o.name}", text) for o in FAMILY_OPTIONS
                  for text in o.texts()})


def test_the_citation_pattern_finds_what_it_looks_for() -> None:
    assert CITATION.search("correct (default; one epsilon, 000 §4)")
    assert CITATION.search("joint (default; Alg. 1)")
    assert CITATION.search("as in paper 004") and CITATION.search("the paper's records")
    assert not CITATION.search("a window of 0.05 = 5 % of the records")
    assert not CITATION.search("paper (every attribute spends the whole epsilon)")


@pytest.mark.parametrize(("where", "text"), TEXTS, ids=[w for w, _ in TEXTS])
def test_help_says_what_the_option_does(where: str, text: str) -> None:
    assert text and text.strip() == text
    assert not CITATION.search(text), f"{where} cites a paper instead of explaining: {text}"


COMMANDS = ["microaggregate", "tclose", "dp", "mask", "compare", "recode", "suppress",
            "pram", "topcode", "risk", "run"]


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_the_commands_help_cites_no_paper(run_cli, command: str | None) -> None:
    result = run_cli(*([command] if command else []), "--help")
    assert result.code == 0 and "Usage" in result.stdout
    text = " ".join(result.stdout.replace("│", " ").split())
    found = CITATION.search(text)
    assert found is None, f"microagg {command} --help: {text[found.start() - 60:found.end()]}"


PAPER_NUMBER = re.compile(
    r"\bpapers? 00[0-4]\b|(?<![\d.])00[0-4](\)| §| eq\.|,? Alg\.|'s| Prop\.| Table)")
"""One of the papers named by the project's own number (000-004), which no reader has."""


def _shown_strings() -> list[tuple[str, str]]:
    """Every string literal of the package that is not a docstring (the texts of reports,
    errors, the command line and the web app), with where it is."""
    import ast
    from pathlib import Path

    import microagg

    found = []
    for path in sorted(Path(microagg.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        found += [(f"{path.name}:{node.lineno}", node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and id(node) not in docstrings]
    return found


def test_no_text_shown_to_a_user_names_a_paper_by_its_number() -> None:
    """Reports, errors and the app cite a paper by its authors and year, if at all."""
    assert PAPER_NUMBER.search("record linkage (000 §5.2)")
    assert PAPER_NUMBER.search("k-anonymity (000): identity")
    assert PAPER_NUMBER.search("(paper 004, Alg. 1)") and PAPER_NUMBER.search("paper 000's")
    assert PAPER_NUMBER.search("000 Alg. 4, eq. 6") and PAPER_NUMBER.search("(004 Prop. 9)")
    assert not PAPER_NUMBER.search("epsilon = 0.001 (Soria-Comas et al. 2014, §4)")
    texts = _shown_strings()
    assert len(texts) > 1000
    assert [(where, text) for where, text in texts if PAPER_NUMBER.search(text)] == []
