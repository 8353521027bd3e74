"""The docs run as written, their links lead somewhere, and what a user reads cites the papers, not the project's
internal names for them."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]
# The project's internal names for its sources: fine in code comments (docs/README.md decodes them), never in
# what a user reads.
INTERNAL = re.compile(r"seed 00\d|Decision \d|issue \d|coros-walking\.md|torres-skills\.md|character-bipv3\.md|"
                      r"slip-planning\.md|control-graphs\.md|phase-tracking\.md|specs/")


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), re.DOTALL)


@pytest.mark.parametrize("page", ["lower-layers.md", "gbwc.md"])
def test_python_examples_run(page, capsys):
    blocks = python_blocks(DOCS / page)
    assert blocks
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} example {i + 1}", "exec"), {})  # noqa: S102 - our own docs, run as a user would


def test_the_readme_stepping_loop_walks_and_takes_its_push(capsys):
    (block,) = [b for b in python_blocks(ROOT / "README.md") if "world.apply_force" in b]
    exec(compile(block, "README stepping loop", "exec"), {})  # noqa: S102
    printed = capsys.readouterr().out
    assert "fallen: False" in printed
    com_y = float(re.search(r"COM at \[\s*\S+\s+(\S+)", printed).group(1))
    assert com_y > 0.3   # pushed towards +y: without the push it drifts about 0.2 m


def test_every_link_between_the_pages_leads_to_a_file():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links to missing {target}"


def test_the_docs_name_the_papers_and_decode_the_code_comments():
    index = (DOCS / "README.md").read_text()
    for reference in ("Coros 2010", "Torres 2012", "Mordatch et al. 2010", "Liu et al. 2015", "Abe 2012"):
        assert reference in index
    for internal in ("seed 000", "seed 003", "coros-walking.md", "Decision N"):
        assert f"`{internal}" in index   # the table that says what a comment's citation stands for
    for page in PAGES:
        if page != DOCS / "README.md":
            assert not INTERNAL.findall(page.read_text()), page.name
    assert "## Decisions" in (DOCS / "skills.md").read_text()


def test_what_a_user_reads_cites_the_papers():
    """Every --help, the descriptions of shipped skills, styles, gaits and characters, and the protocols'
    anchors (they become the benchmark tables)."""
    from strider.bench.protocol import PROTOCOL_DIR, load_protocol
    from strider.cli.main import build_parser
    from strider.datafile import load_yaml

    texts = []

    def visit(parser):
        texts.append(parser.format_help())
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    visit(sub)

    visit(build_parser())
    src = ROOT / "src" / "strider"
    for path in [*src.glob("methods/*/data/*.yaml"), *src.glob("methods/*/data/styles/*.yaml"),
                 *src.glob("methods/simbicon/data/planar/*.yaml"),
                 *src.glob("characters/data/*.yaml")]:
        data = load_yaml(path)
        texts += [f"{path.name}: {data.get(key, '')}" for key in ("description", "source")]
    for path in PROTOCOL_DIR.glob("*.yaml"):
        protocol = load_protocol(path.stem)
        texts += [f"{path.name}: {protocol.description}"] + [f"{path.name}: {a.value} ({a.source})"
                                                             for a in protocol.anchors]
    found = [t[:120] for t in texts if INTERNAL.search(t)]
    assert not found, found
