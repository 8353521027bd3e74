"""The Python examples of the docs run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("page", ["lower-layers.md"])
def test_python_examples_run(page, capsys):
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.DOTALL)
    assert blocks
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page} example {i + 1}", "exec"), {})  # noqa: S102 - our own docs, run as a user would
