"""``strider bench report``: the latest result of every bench and controller, gathered into one Markdown page.

Result files are recognised by their contents (a ``bench``, a ``controller`` and
summary ``rows``), not their names; runs over part of a shipped protocol (the ``subset``
variant) are left out. For each (controller, bench, variant, configuration) the
newest by date, then by file name, is used. The page has one table per
controller and embeds each bench's plots, with paths relative to the page. Each
bench names the date and the git commit it was measured on (the result file's
``versions``), and the page says whether every result comes from one commit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from strider.bench.citations import readable
from strider.bench.output import SUBSET, Row, cell
from strider.errors import UsageError

ORDER = ("push", "push-find-max", "gbwc-ablation", "envelope", "turning", "terrain", "bodies", "crates", "speed", "soak")

HEADER = """\
# Benchmarks

Written by `strider bench report` from the latest files in `results/`. Every figure is measured by
`strider bench <bench> --controller NAME` with the protocol in `src/strider/bench/protocols/`; the
column "source / target" holds the published figure or the target it is compared with. A fall is the shared
definition of `strider.control.falls`: a body other than the feet touches the ground or an obstacle, the torso
tilts more than 1 rad, or the root sinks below half its standing height. Beside each bench are the date and
the git commit it was measured on, from the result file's `versions`.
"""


Found = dict[str, dict[str, dict[str, tuple[Path, dict]]]]   # controller -> bench label -> config -> result


def latest_results(results_dir: Path) -> Found:
    """controller -> bench label -> configuration -> (path, payload) of the newest result file."""
    found: Found = {}
    for path in sorted(results_dir.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict) or not {"bench", "controller", "rows"} <= set(data):
            continue
        if (data.get("variant") or "").endswith(SUBSET):
            continue   # a run over part of its protocol: its figures are not the protocol's
        label = data["bench"] + (f"-{data['variant']}" if data.get("variant") else "")
        config = data.get("config") or "default"
        mine = found.setdefault(data["controller"], {}).setdefault(label, {})
        # Newest by date, then by file name: a checkout's modification times say nothing, and the page must
        # come out the same from the same files on any machine.
        if config not in mine or (data.get("date", ""), path.name) > (mine[config][1].get("date", ""),
                                                                     mine[config][0].name):
            mine[config] = (path, data)
    return found


def commit_of(data: dict) -> str:
    """The git commit a result was measured on, as recorded in its ``versions``."""
    return (data.get("versions") or {}).get("git_commit") or "unknown commit"


def _named(controller: str, label: str, config: str) -> str:
    return f"{label} ({controller}{'' if config == 'default' else ', ' + config})"


def commits_line(found: Found) -> str:
    by_commit: dict[str, list[str]] = {}
    for controller in sorted(found):
        for label, configs in sorted(found[controller].items()):
            for config, (_, data) in _in_order(configs):
                by_commit.setdefault(commit_of(data), []).append(_named(controller, label, config))
    if len(by_commit) == 1:
        return f"Every result below was measured on commit `{next(iter(by_commit))}`."
    return "The results below come from more than one commit: " + "; ".join(
        f"`{c}`: {', '.join(labels)}" for c, labels in sorted(by_commit.items())) + "."


def _default_first(config: str) -> tuple[bool, str]:
    """Sort key: the default configuration first, then the others by name."""
    return config != "default", config


def _in_order(configs: dict) -> list:
    return sorted(configs.items(), key=lambda kv: _default_first(kv[0]))


def render(results_dir: Path, page: Path) -> str:
    found = latest_results(results_dir)
    if not found:
        raise UsageError(f"no benchmark results in {results_dir}; run 'strider bench push' (or another bench) first")
    rel = Path(os.path.relpath(results_dir.resolve(), page.resolve().parent))
    parts = [HEADER, commits_line(found), ""]
    for controller in sorted(found):
        benches = found[controller]
        labels = sorted(benches, key=lambda b: (ORDER.index(b) if b in ORDER else len(ORDER), b))
        configs = sorted({c for b in benches.values() for c in b}, key=_default_first)
        parts += [f"## {controller}", ""]
        if len(configs) > 1:
            parts += [(f"Configurations side by side: {', '.join(f'`{c}`' for c in configs)} "
                      f"(`strider bench BENCH --controller {controller} --config NAME`)."), ""]
        measured = " | ".join(configs if len(configs) > 1 else ["measured"])
        met = " | ".join(f"met ({c})" for c in configs) if len(configs) > 1 else "met"
        parts += [f"| bench | figure | {measured} | source / target | {met} |",
                  "|" + "---|" * (3 + 2 * len(configs))]
        for label in labels:
            parts += _bench_rows(label, benches[label], configs, rel)
        parts.append("")
        for label in labels:
            for config, (path, data) in _in_order(benches[label]):
                name = label if config == "default" else f"{label} ({config})"
                for png in sorted(results_dir.glob(f"{path.stem}-*.png")):
                    parts += [f"![{name} {png.stem[len(path.stem) + 1:]}]({(rel / png.name).as_posix()})", ""]
                for note in data.get("notes", []):
                    parts.append(f"- {name}: {readable(note)}")
                if data.get("notes"):
                    parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def _bench_rows(label: str, results: dict, configs: list[str], rel: Path) -> list[str]:
    """One bench's rows, each configuration's figure in its own column, matched by the figure's name."""
    links = [f"[{label}{'' if c == 'default' else ' ' + c}]({(rel / path.with_suffix('.md').name).as_posix()}) "
             f"({data['date']}, {commit_of(data)})" for c, (path, data) in _in_order(results)]
    # A figure is named by its label and which of the rows with that label it is: a bench may repeat a label
    # under each case (every gait's "  speed, one process"), and each repeat is a figure of its own.
    order: list[tuple[str, int]] = []
    by_config: dict[str, dict[tuple[str, int], Row]] = {}
    for config, (_, data) in _in_order(results):
        seen: dict[str, int] = {}
        named = {}
        for r in (Row(**r) for r in data["rows"]):
            named[(r.what, seen.get(r.what, 0))] = r
            seen[r.what] = seen.get(r.what, 0) + 1
        by_config[config] = named
        order += [key for key in named if key not in order]
    out = []
    for i, key in enumerate(order):
        what = key[0]
        cells = [by_config.get(c, {}).get(key) for c in configs]
        anchor = next((r.anchor for r in cells if r is not None and r.anchor), "")
        measured = " | ".join(cell(r.measured) if r is not None else "" for r in cells)
        verdicts = " | ".join(r.verdict if r is not None else "" for r in cells)
        out.append(f"| {'<br>'.join(links) if i == 0 else ''} | {cell(readable(what))} | {measured} | "
                   f"{cell(readable(anchor))} | "
                   f"{verdicts} |")
    return out


def write_report(results_dir: Path, page: Path) -> Path:
    text = render(results_dir, page)
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(text)
    return page
