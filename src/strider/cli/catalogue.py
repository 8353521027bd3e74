"""The shape every catalogue command shares (``strider character``, ``strider course``): ``list`` the shipped
files, ``show NAME`` one of them (described, ``--json``, and seen with ``--video``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any


def add_list_and_show(commands, formatter, noun: str, plural: str, description: str, shipped: list[str],
                      show_help: str) -> argparse.ArgumentParser:
    """Add ``NOUN list`` and ``NOUN show NAME|PATH [--video] [--json]``; the ``show`` parser, for its own flags.
    The chosen action lands in ``args.<noun>_action``."""
    parser = commands.add_parser(noun, help=f"list the {plural}, or describe and show one", description=description,
                                 formatter_class=formatter)
    sub = parser.add_subparsers(dest=f"{noun}_action", metavar="ACTION", required=True)
    sub.add_parser("list", help=f"the shipped {plural}, one line each", description=description,
                   formatter_class=formatter)
    show = sub.add_parser("show", help=show_help, description=description, formatter_class=formatter)
    show.add_argument("name", metavar="NAME|PATH", help=f"shipped {noun} ({', '.join(shipped)}) or a {noun} .yaml file")
    show.add_argument("--json", action="store_true", help="print the description as JSON")
    return show


def list_shipped(names: Iterable[str], load: Callable[[str], Any], line: Callable[[str, Any], str]) -> int:
    """``NOUN list``: one line per shipped file, ``line(name, loaded)``; the exit status."""
    for name in names:
        print(line(name, load(name)))
    return 0
