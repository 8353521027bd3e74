"""Generalized Biped Walking Control (seed 000, Ch. 5): the walking controller and its style data.

The controller is imported on first use, so that reading the style list (``strider --help``) does not load it.
"""

from strider.methods.gbwc.params import GBWCParams, Style, available_styles, load_style

__all__ = ["GBWC", "GBWCParams", "Style", "available_styles", "load_style"]


def __getattr__(name: str):
    if name == "GBWC":
        from strider.methods.gbwc.controller import GBWC

        return GBWC
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
