"""Every example in the command line's help texts, the README and the docs pages parses: a user who copies one gets
the command, not a usage error (``--push -150@8`` once read as a flag). Parsing only: nothing is run."""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from strider.cli.main import build_parser

PROSE = re.compile(r"\s{2,}|\s#")   # an example's own note follows two spaces or a '#'


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _examples() -> list[tuple[str, str]]:
    found = []
    for path, parser in _parsers(build_parser()):
        text = "\n".join(filter(None, [parser.description, parser.epilog]))
        in_examples = False
        for line in text.splitlines():
            stripped = line.strip()
            if stripped == "examples:":
                in_examples = True
                continue
            if in_examples and not stripped:
                in_examples = False
            if not in_examples or not stripped.startswith("strider ") or stripped.endswith("\\"):
                continue
            for command in PROSE.split(stripped)[0].split("&&"):
                found.append((f"'strider {' '.join(path)} --help'", command.strip()))
    return found


def _page_examples() -> list[tuple[str, str]]:
    """``strider`` command lines in the fenced code blocks of the README and the docs pages (continued lines
    joined)."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        fenced, pending = False, ""
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                fenced, pending = not fenced, ""
                continue
            if not fenced:
                continue
            line = pending + line.strip()
            if line.endswith("\\"):
                pending = line[:-1].rstrip() + " "
                continue
            pending = ""
            for command in PROSE.split(line)[0].split("&&"):
                command = command.strip()
                if command.startswith("strider "):
                    found.append((page.name, command))
    return found


EXAMPLES = _examples() + _page_examples()


def test_the_help_texts_have_examples():
    assert len(EXAMPLES) > 100


@pytest.mark.parametrize(("where", "command"), EXAMPLES, ids=[c for _, c in EXAMPLES])
def test_a_help_example_parses(where, command):
    args = shlex.split(command)[1:]
    if "--help" in args or "-h" in args:
        return
    try:
        build_parser().parse_args(args)
    except SystemExit as exc:
        pytest.fail(f"the example in {where} does not parse (exit {exc.code}): {command}")
