"""Nothing POSIX-only on a command's path: microagg runs on Windows too. The stand-in for a
Windows machine is a reading of the source: every module, function or constant that Windows
lacks (or, for ``os.kill``, gives another meaning: there it ends the process) is used only
under a guard that says so: ``hasattr``, ``sys.platform``/``os.name``, or a ``try`` that
catches its absence."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "microagg"

POSIX_MODULES = {"fcntl", "grp", "posix", "pty", "pwd", "resource", "syslog", "termios", "tty"}
POSIX_ATTRIBUTES = {
    "os": {"chown", "fork", "forkpty", "fpathconf", "getegid", "geteuid", "getgid",
           "getgroups", "getloadavg", "getpgid", "getpgrp", "getpriority", "getuid", "kill",
           "killpg", "lchown", "mkfifo", "nice", "pathconf", "sched_getaffinity",
           "sched_setaffinity", "setpgid", "setpriority", "setsid", "statvfs", "sysconf",
           "uname", "wait", "WNOHANG"},
    "signal": {"SIGALRM", "SIGCHLD", "SIGCONT", "SIGHUP", "SIGKILL", "SIGPIPE", "SIGQUIT",
               "SIGSTOP", "SIGTSTP", "SIGUSR1", "SIGUSR2", "alarm", "getitimer",
               "pthread_kill", "pthread_sigmask", "setitimer", "siginterrupt", "sigwait"},
}
ABSENCE = {"AttributeError", "ImportError", "ModuleNotFoundError"}


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If | ast.IfExp):
            test = ast.unparse(parent.test)
            if "hasattr" in test or "sys.platform" in test or "os.name" in test:
                return True
        if isinstance(parent, ast.Try) and child in parent.body:
            caught = {ast.unparse(h.type) for h in parent.handlers if h.type is not None}
            if any(name in text for text in caught for name in ABSENCE):
                return True
        child, parent = parent, parents.get(parent)
    return False


def _unguarded(path: Path, root: Path = SOURCE) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = _parents(tree)
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.split(".")[0] in POSIX_MODULES]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            if node.module.split(".")[0] in POSIX_MODULES:
                names = [node.module]
            elif node.module in POSIX_ATTRIBUTES:
                names = [f"{node.module}.{a.name}" for a in node.names
                         if a.name in POSIX_ATTRIBUTES[node.module]]
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.attr in POSIX_ATTRIBUTES.get(node.value.id, ())):
            names = [f"{node.value.id}.{node.attr}"]
        if names and not _guarded(node, parents):
            found += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names]
    return sorted(found)


def test_nothing_posix_only_runs_unguarded():
    found = [line for path in sorted(SOURCE.rglob("*.py")) for line in _unguarded(path)]
    assert found == []


def test_the_check_sees_what_it_looks_for(tmp_path):
    """The reading above finds an unguarded use and accepts a guarded one."""
    sample = tmp_path / "sample.py"
    sample.write_text("import fcntl\nimport os, signal, sys\nos.getuid()\n"
                      "if hasattr(signal, 'SIGHUP'):\n    signal.signal(signal.SIGHUP, 1)\n"
                      "signal.SIGHUP\ntry:\n    os.pathconf('.', 'x')\nexcept AttributeError:\n"
                      "    pass\nif sys.platform == 'win32':\n    pass\nelse:\n    os.kill(1, 0)\n")
    assert _unguarded(sample, tmp_path) == ["sample.py:1: fcntl", "sample.py:3: os.getuid",
                                            "sample.py:6: signal.SIGHUP"]
