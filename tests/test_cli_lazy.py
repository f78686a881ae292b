"""The command line loads only what runs: ``microagg --help`` imports no command (and so
neither pandas nor numba), ``microagg COMMAND --help`` imports that command's module and the
method declarations, not numba (nor, then, any kernel); and the table the help is written from
(:data:`microagg.cli.app.COMMANDS`) names every command exactly where it is registered."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

from microagg.cli.app import COMMANDS, app, datasets_app
from microagg.cli.program import main

_LOADED = """
import json, sys
from microagg.cli.program import main
codes = [main(args) for args in json.loads(sys.argv[1])]
roots = sorted({m.split(".")[0] for m in sys.modules})
commands = sorted(m for m in sys.modules if m.startswith("microagg.cli.")
                  and m.rsplit(".", 1)[1] in {c[0] for c in __import__(
                      "microagg.cli.app", fromlist=["COMMANDS"]).COMMANDS.values()})
print(json.dumps({"codes": codes, "roots": roots, "commands": commands}))
"""


def _loaded(*commands: list[str]) -> dict:
    """What a fresh process has imported after running ``commands`` through the program."""
    done = subprocess.run([sys.executable, "-c", _LOADED, json.dumps(commands)],
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_imports_no_command():
    loaded = _loaded(["--help"])
    assert loaded["codes"] == [0]
    assert loaded["commands"] == []
    assert not {"numba", "pandas", "rich", "scipy"} & set(loaded["roots"])


def test_command_help_imports_no_kernel():
    families = [["microaggregate", "--help"], ["tclose", "--help"], ["dp", "--help"],
                ["mask", "--help"], ["recode", "--help"], ["check", "--help"]]
    loaded = _loaded(*families)
    assert loaded["codes"] == [0] * len(families)
    assert loaded["commands"] == sorted(
        f"microagg.cli.{m}" for m in ("microaggregate", "tclose", "dp", "mask", "keys",
                                      "check"))
    # every kernel module imports numba: none was loaded for a help text
    assert "numba" not in loaded["roots"] and "scipy" not in loaded["roots"]


def test_the_table_names_every_command_where_it_is_registered():
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(f"microagg.cli.{module}")
    registered = {info.name: info for info in app.registered_commands}
    assert set(registered) | {"datasets"} == set(COMMANDS)
    for name, info in registered.items():
        assert info.callback is not None
        assert info.callback.__module__ == f"microagg.cli.{COMMANDS[name][0]}", name
        assert info.short_help == COMMANDS[name][1]
    assert {i.name for i in datasets_app.registered_commands} == {"list", "export"}


def test_help_lists_the_table_in_order(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    listed = [line.split()[0] for line in text.split("Commands:")[1].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    assert listed == list(COMMANDS)


def test_an_unknown_command_is_one_line(capsys):
    assert main(["microaggregat"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("microagg: error:") and "microaggregat" in err[0]
