"""What every frontend returns: the grammar and the diagnostics found while reading it.

A named tuple, so `grammar, diagnostics = parse_lark(text)` reads as it always has; the
diagnostics are in source order and never errors (an error is raised, not returned).
"""
from __future__ import annotations

from typing import NamedTuple

from ..ir.nodes import Grammar
from ..support.diagnostics import Diagnostic


class Parsed(NamedTuple):
    """A frontend's result: `grammar`, and `diagnostics` (warnings and notes) about it."""

    grammar: Grammar
    diagnostics: tuple[Diagnostic, ...] = ()
