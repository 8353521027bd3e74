"""``strider bench report``: the latest result of every bench and controller, gathered into one Markdown page.

Result files are recognised by their contents (a ``bench``, a ``controller`` and
summary ``rows``), not their names; for each (controller, bench, variant) the
newest by date, then by modification time, is used. The page has one table per
controller and embeds each bench's plots, with paths relative to the page. Each
bench names the date and the git commit it was measured on (the result file's
``versions``), and the page says whether every result comes from one commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from strider.bench.output import Row, cell
from strider.errors import UsageError

ORDER = ("push", "push-find-max", "envelope", "terrain", "speed", "soak")

HEADER = """\
# Benchmarks

Written by `strider bench report` from the latest files in `results/`. Every figure is measured by
`strider bench <bench> --controller NAME` with the protocol in `src/strider/bench/protocols/`; the
column "source / target" holds the published figure or the target it is compared with. A fall is the shared
definition of `strider.control.falls`: a body other than the feet touches the ground or an obstacle, the torso
tilts more than 1 rad, or the root sinks below half its standing height. Beside each bench are the date and
the git commit it was measured on, from the result file's `versions`.
"""


def latest_results(results_dir: Path) -> dict[str, dict[str, tuple[Path, dict]]]:
    """controller -> bench label -> (path, payload) of the newest result file."""
    found: dict[str, dict[str, tuple[Path, dict]]] = {}
    for path in sorted(results_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict) or not {"bench", "controller", "rows"} <= set(data):
            continue
        label = data["bench"] + (f"-{data['variant']}" if data.get("variant") else "")
        key = (data.get("date", ""), os.path.getmtime(path))
        mine = found.setdefault(data["controller"], {})
        if label not in mine or key > (mine[label][1].get("date", ""), os.path.getmtime(mine[label][0])):
            mine[label] = (path, data)
    return found


def commit_of(data: dict) -> str:
    """The git commit a result was measured on, as recorded in its ``versions``."""
    return (data.get("versions") or {}).get("git_commit") or "unknown commit"


def commits_line(found: dict[str, dict[str, tuple[Path, dict]]]) -> str:
    by_commit: dict[str, list[str]] = {}
    for controller in sorted(found):
        for label, (_, data) in sorted(found[controller].items()):
            by_commit.setdefault(commit_of(data), []).append(f"{label} ({controller})")
    if len(by_commit) == 1:
        return f"Every result below was measured on commit `{next(iter(by_commit))}`."
    return "The results below come from more than one commit: " + "; ".join(
        f"`{c}`: {', '.join(labels)}" for c, labels in sorted(by_commit.items())) + "."


def render(results_dir: Path, page: Path) -> str:
    found = latest_results(results_dir)
    if not found:
        raise UsageError(f"no benchmark results in {results_dir}; run 'strider bench push' (or another bench) first")
    rel = Path(os.path.relpath(results_dir.resolve(), page.resolve().parent))
    parts = [HEADER, commits_line(found), ""]
    for controller in sorted(found):
        benches = found[controller]
        labels = sorted(benches, key=lambda b: (ORDER.index(b) if b in ORDER else len(ORDER), b))
        parts += [f"## {controller}", "", "| bench | figure | measured | source / target | met |",
                  "|---|---|---|---|---|"]
        for label in labels:
            path, data = benches[label]
            link = f"[{label}]({(rel / path.with_suffix('.md').name).as_posix()}) ({data['date']}, {commit_of(data)})"
            for i, r in enumerate(data["rows"]):
                row = Row(**r)
                parts.append(f"| {link if i == 0 else ''} | {cell(row.what)} | {cell(row.measured)} | "
                             f"{cell(row.anchor)} | {row.verdict} |")
        parts.append("")
        for label in labels:
            path, data = benches[label]
            pngs = sorted(results_dir.glob(f"{path.stem}-*.png"))
            for png in pngs:
                parts += [f"![{label} {png.stem[len(path.stem) + 1:]}]({(rel / png.name).as_posix()})", ""]
            for note in data.get("notes", []):
                parts.append(f"- {label}: {note}")
            if data.get("notes"):
                parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def write_report(results_dir: Path, page: Path) -> Path:
    text = render(results_dir, page)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return page
