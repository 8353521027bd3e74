"""Progress bars for long jobs: on stderr, and only when stderr is a terminal, so that logs and piped output stay
clean. One place decides how they look, so every command and bench shows them alike and turns them off alike
(``--no-progress``, ``--json``)."""

from __future__ import annotations

import sys


def progress_bar(total: float | None = None, description: str = "", unit: str = "it", enabled: bool = True,
                 initial: float = 0, bar_format: str | None = None):
    """A tqdm bar: use it as a context manager, or close it. Switched off (``enabled`` False, or stderr not a
    terminal) it draws nothing and its updates cost next to nothing. ``bar_format`` is tqdm's."""
    return _tqdm(None, description, unit, enabled, total=total, initial=initial, bar_format=bar_format)


def progress_over(iterable, description: str = "", unit: str = "it", enabled: bool = True):
    """:func:`progress_bar` moved on by each item of ``iterable`` as a loop takes it."""
    return _tqdm(iterable, description, unit, enabled)


def _tqdm(iterable, description: str, unit: str, enabled: bool, **options):
    from tqdm import tqdm

    return tqdm(iterable, desc=description or None, unit=unit, file=sys.stderr, dynamic_ncols=True,
                disable=not enabled or not sys.stderr.isatty(), **options)


def move_to(bar, done: float, total: float | None = None, **postfix) -> None:
    """Set ``bar`` to ``done`` (and ``total``, where a job learns it as it goes), with ``postfix`` figures beside
    it: for jobs that report how far they are rather than each step."""
    if total is not None:
        bar.total = total
    bar.n = done
    if postfix:
        bar.set_postfix(**postfix)
    bar.refresh()
