"""Outputs checked before the work that makes them: a file or a folder that cannot be written is refused with
one clear line (:class:`~strider.errors.UsageError`, exit 2) before any simulation runs.

Permission bits say nothing to root, nor about pseudo file systems such as ``/proc`` and ``/sys``, so each
check does what the write will do (open the file, create the folder and a file in it) and takes away what it
created.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from strider.errors import UsageError


def _reason(exc: OSError) -> str:
    return (exc.strerror or "not writable").lower()


def check_writable(path: str | Path) -> Path:
    """``path`` as a Path, once it is sure a file can be written there; its folder must exist."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise UsageError(f"cannot write {path}: folder {parent} does not exist")
    if not parent.is_dir():
        raise UsageError(f"cannot write {path}: {parent} is not a folder")
    if path.is_dir():
        raise UsageError(f"cannot write {path}: it is a folder")
    existed = path.exists()
    try:
        with open(path, "ab"):
            pass
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {_reason(exc)}") from None
    finally:
        if not existed and path.is_file():
            path.unlink()
    return path


def check_output_folder(path: str | Path, flag: str = "--out") -> Path:
    """``path`` as a Path, created with its parents if missing, once it is sure files can be written in it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise UsageError(f"{flag} {path}: it is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".strider-check-"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write there: {_reason(exc)}") from None
    return path
