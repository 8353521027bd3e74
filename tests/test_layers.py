"""The house keeps its layers: every import inside strider points down (or within its own package)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "strider"

LAYERS = {
    # the leaves every layer may use
    "errors": 0, "quat": 0, "display": 0, "progress": 0, "datafile": 1, "outputs": 1,
    "characters": 2, "courses": 2,
    "sim": 3,           # the only code that touches mujoco
    "motion": 4,
    "control": 5,
    "optimize": 6, "parallel": 6,
    "runner": 7,
    "methods": 8,
    "bench": 9, "api": 9,
    "cli": 10,
    "__main__": 11,
}


def _unit(module: str) -> str:
    """The layer a dotted strider module belongs to (its first component below ``strider``)."""
    return module.split(".")[1]


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, node.lineno))
        elif isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
    return [(m, line) for m, line in found if m.startswith("strider.")]


def test_every_import_points_down_the_layers():
    upward = []
    for path in sorted(SRC.rglob("*.py")):
        relative = path.relative_to(SRC.parent).with_suffix("")
        parts = relative.parts
        if len(parts) == 2 and parts[1] == "__init__":
            continue   # the package's face re-exports the API
        source = parts[1]
        assert source in LAYERS, f"{path}: a new top-level module; give it a layer in this test"
        for module, line in _imports(path):
            target = _unit(module)
            assert target in LAYERS, f"{path}:{line}: imports {module}, which has no layer"
            if target != source and LAYERS[target] > LAYERS[source]:
                upward.append(f"{relative}:{line} ({source}, layer {LAYERS[source]}) imports {module} "
                              f"(layer {LAYERS[target]})")
    assert not upward, "imports that point up the layers:\n" + "\n".join(upward)


def test_only_sim_imports_mujoco():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "sim":
            continue
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            if any(n == "mujoco" or n.startswith("mujoco.") for n in names):
                offenders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not offenders, offenders
