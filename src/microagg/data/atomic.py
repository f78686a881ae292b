"""Outputs written atomically: every write goes to a temporary file in the target folder and
is renamed over the target only when complete, so a failed run never leaves a partial output
behind; a command with several outputs renames them together (:func:`write_all`). A signal
that ends the command (:mod:`microagg.interrupts`) removes the temporaries on its way out,
and one that arrives while they are made, renamed or removed waits until that step is whole
(the renames are then undone). A process killed outright (SIGKILL) can leave hidden
``.<name>.microagg-<pid>-*.tmp`` files; the next write to the same name removes them. Also
the JSON text of reports (:func:`json_text`)."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

import microagg.interrupts as interrupts
from microagg.errors import InputError

__all__ = ["TMP_TAG", "atomic_path", "atomic_paths", "beside", "check_output", "json_text",
           "remove_stale_temporaries", "temporary_prefix", "write_all", "write_json",
           "write_text"]


# Temporary files are named .<target>.microagg-<pid>-<random>.tmp (the target's name cut to
# STEM characters, so that a name near the file system's limit still has a temporary): a later
# write to the same target removes those whose process is gone (e.g. killed during a write).
TMP_TAG = ".microagg-"
STEM = 64


def temporary_prefix(path: Path) -> str:
    """The name prefix of the temporaries of writes to ``path``."""
    return f".{path.name[:STEM]}{TMP_TAG}"


def beside(path: Path, suffix: str) -> Path:
    """The file named ``path``'s name followed by ``suffix``, in ``path``'s folder (a
    release's ``OUT.report.json``); refuses a ``path`` that names no file (``""``, ``.``,
    ``..``, ``/``).

    Examples
    --------
    >>> beside(Path("out/t.csv"), ".report.json").as_posix()
    'out/t.csv.report.json'
    """
    if path.name in ("", ".", ".."):
        raise InputError(f"'{path}' names a folder, not a file: name the output file")
    return path.with_name(path.name + suffix)


def _process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (when in doubt, yes: its temporaries stay)."""
    if sys.platform == "win32":  # os.kill would end the process (or signal a console group)
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return bool(ctypes.get_last_error() == 5)  # ERROR_ACCESS_DENIED: it exists
        try:
            status = ctypes.c_ulong()
            return (not kernel32.GetExitCodeProcess(handle, ctypes.byref(status))
                    or status.value == 259)  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)
    else:
        try:
            os.kill(pid, 0)  # signal 0: only asks whether the process exists
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True


def remove_stale_temporaries(path: Path, remove: Callable[[Path], None] | None = None,
                             keep: Sequence[str | Path] = ()) -> None:
    """Remove the hidden temporaries of writes to ``path`` whose process is gone (files by
    default; ``remove`` removes anything else, e.g. a temporary folder), except the files
    ``keep`` names (a command's inputs, whatever they are called)."""
    prefix = temporary_prefix(path)
    kept = {Path(k).resolve() for k in keep}
    for stale in path.parent.glob(f"{glob_escape(prefix)}*.tmp"):
        pid_text = stale.name[len(prefix):].split("-", 1)[0]
        if (pid_text.isdigit() and not _process_alive(int(pid_text))
                and not any(stale.resolve() == k or stale.resolve() in k.parents
                            for k in kept)):
            with contextlib.suppress(OSError):
                (remove or Path.unlink)(stale)


def _file_mode() -> int:
    """The mode a new file gets under the process's umask (0666 & ~umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _name_limit(folder: Path) -> int:
    """The longest file name ``folder``'s file system takes (255 where the system does not
    say: Windows has no pathconf)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (AttributeError, OSError, ValueError):
        return 255


def check_output(path: str | Path, sources: Sequence[str | Path] = ()) -> Path:
    """Refuse an output path that is a folder, lies in a missing folder, has a name longer
    than the file system allows, or is one of the ``sources`` (every file the command reads:
    writing it would destroy an input)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder does not exist: {folder}")
    if len(os.fsencode(path.name)) > _name_limit(folder):
        raise InputError(f"output name is too long for its file system ({len(path.name)} "
                         f"characters): {path.name[:40]}...")
    if path.is_dir():
        raise InputError(f"output {path} is a folder; name a file")
    for source in sources:
        if Path(source).exists() and path.exists() and os.path.samefile(source, path):
            raise InputError(f"output {path} is an input of this command ({source}); writing "
                             "it would destroy the input: choose another name")
    return path


def _reserve(target: Path, keep: Sequence[str | Path] = ()) -> Path:
    """A new empty temporary file beside ``target``: proof, before any work, that the folder
    takes the output. Stale temporaries of earlier writes go, the files ``keep`` names stay."""
    remove_stale_temporaries(target, keep=keep)
    try:
        handle, name = tempfile.mkstemp(prefix=f"{temporary_prefix(target)}{os.getpid()}-",
                                        suffix=".tmp",
                                        dir=target.parent if str(target.parent) else ".")
    except OSError as exc:
        raise InputError(f"cannot write to {target.parent if str(target.parent) else '.'}: "
                         f"{exc.strerror or exc}") from None
    os.close(handle)
    return Path(name)


def _commit(temporaries: Sequence[Path], targets: Sequence[Path]) -> None:
    """Rename every temporary over its target, or none: targets that exist are first moved
    aside, and any failure puts them back and removes what was already renamed. Run under
    :func:`microagg.interrupts.held`: a signal that arrived meanwhile undoes the renames too,
    so that an interrupted command has written nothing."""
    mode = _file_mode()
    aside: list[tuple[Path, Path]] = []  # (target, its previous version)
    placed: list[Path] = []
    try:
        for target in targets:
            if target.exists():
                previous = _reserve(target)
                os.replace(target, previous)
                aside.append((target, previous))
        for tmp, target in zip(temporaries, targets, strict=True):
            os.chmod(tmp, mode)
            os.replace(tmp, target)
            placed.append(target)
    except BaseException as exc:
        _undo(placed, aside)
        if isinstance(exc, OSError):
            failed = targets[min(len(placed), len(targets) - 1)]
            raise InputError(f"cannot write {failed}: {exc.strerror or exc}; no output was "
                             "written") from None
        raise
    if interrupts.pending():
        _undo(placed, aside)
        return
    for _, previous in aside:
        with contextlib.suppress(OSError):
            previous.unlink()
    interrupts.wrote(targets)


def _undo(placed: Sequence[Path], aside: Sequence[tuple[Path, Path]]) -> None:
    """Remove the outputs ``placed`` and put back the previous versions set ``aside``."""
    for target in placed:
        with contextlib.suppress(OSError):
            target.unlink()
    for target, previous in aside:
        with contextlib.suppress(OSError):
            os.replace(previous, target)


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it to ``path`` if the block succeeds.

    On any exception the temporary file is removed and ``path`` is left untouched. The file
    gets the mode the umask allows, like any new file.
    """
    with atomic_paths([path]) as (tmp,):
        yield tmp


@contextlib.contextmanager
def atomic_paths(paths: Sequence[str | Path], sources: Sequence[str | Path] = ()
                 ) -> Iterator[list[Path]]:
    """Temporary paths beside every one of ``paths``, renamed to them together if the block
    succeeds; on any exception none of ``paths`` is touched. Outputs equal to one of the
    ``sources``, to each other, naming a folder, or in a folder that cannot be written are
    refused before the block runs, so a command that computes inside the block fails before
    its work, not after. A write that fails for lack of space becomes an :class:`InputError`."""
    targets = [check_output(p, sources) for p in paths]
    resolved = [t.resolve() for t in targets]
    if len(set(resolved)) < len(resolved):
        twice = next(t for t, r in zip(targets, resolved, strict=True)
                     if resolved.count(r) > 1)
        raise InputError(f"{twice} is named as two different outputs of one command")
    temporaries: list[Path] = []
    try:
        for target in targets:
            with interrupts.held():  # a temporary is made and recorded, or not made
                temporaries.append(_reserve(target, sources))
        try:
            yield temporaries
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                             errno.EACCES, errno.EPERM):
                raise InputError(f"cannot write the output: {exc.strerror or exc}; no output "
                                 "was written") from None
            raise
        with interrupts.held():
            _commit(temporaries, targets)
    finally:
        with interrupts.held():
            for tmp in temporaries:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()


def write_all(writers: Sequence[tuple[Path, Callable[[Path], None]]],
              sources: Sequence[str | Path] = ()) -> None:
    """Write every output of one command, or none: each writer fills a temporary file, and
    all are renamed at the end. Outputs equal to a source, to each other, or naming a folder
    are refused before anything is written."""
    with atomic_paths([target for target, _ in writers], sources) as temporaries:
        for tmp, (_, write) in zip(temporaries, writers, strict=True):
            write(tmp)


def write_text(path: str | Path, text: str) -> None:
    """Write a text file atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | Path, obj: Any) -> None:
    """Write ``obj`` as indented JSON, atomically."""
    write_text(path, json_text(obj))


def json_text(obj: Any) -> str:
    """``obj`` as indented, strictly valid JSON: numpy scalars and arrays as numbers and
    lists, paths and other objects as text, and a number that is not finite (NaN, ±inf,
    which JSON has no word for) as ``null``."""
    return json.dumps(_plain(obj), indent=2, allow_nan=False) + "\n"


def _plain(obj: Any) -> Any:
    import numpy as np

    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return _plain(obj.tolist())
    if isinstance(obj, np.generic):
        return _plain(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if obj is None or isinstance(obj, bool | int | str):
        return obj
    return str(obj)
