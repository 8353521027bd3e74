"""Citations as a reader meets them.

Results measured before strider cited the papers by author and year carry the project's internal names for
them ("seed 000", "coros-walking.md, P1", "issue 3"). The benchmark page shows every citation the way today's
protocols write it (docs/README.md lists the references), so an old result reads like a new one without its
file being rewritten.
"""

from __future__ import annotations

INTERNAL_NAMES: tuple[tuple[str, str], ...] = (
    ("seed 000 Ch. 5", "Coros 2010, Ch. 5"),
    ("seed 000, Sec.", "Coros 2010, Sec."),
    ("seed 000, Ch.", "Coros 2010, Ch."),
    ("seed 000", "Coros 2010"),
    ("seed 001", "Mordatch et al. 2010"),
    ("seed 002", "Liu et al. 2015"),
    ("seed 003", "Torres 2012"),
    ("seed 004", "Abe 2012"),
    ("coros-walking.md, P3 (e)", "docs/gbwc.md, P3"),
    ("Protocol P1 (coros-walking.md)", "Protocol P1 (docs/gbwc.md)"),
    ("coros-walking.md, P", "docs/gbwc.md, P"),
    ("torres-skills.md, P", "docs/skills.md, P"),
    ("issue 13, part 6 (target)", "docs/lower-layers.md"),
    ("issue 3", "docs/gbwc.md"),
)


def readable(text: str) -> str:
    """``text`` with the project's internal source names replaced by the references a reader can look up."""
    for internal, reference in INTERNAL_NAMES:
        text = text.replace(internal, reference)
    return text
