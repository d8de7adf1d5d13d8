"""Example counts for the Hypothesis properties, scaled by GRAMMASK_EXAMPLES_SCALE (default 1).

CI runs the default counts; `GRAMMASK_EXAMPLES_SCALE=20 pytest` runs twenty times as many.
"""
from __future__ import annotations

import os

SCALE = float(os.environ.get("GRAMMASK_EXAMPLES_SCALE", "1"))


def examples(n: int) -> int:
    """`n` scaled by GRAMMASK_EXAMPLES_SCALE, at least 1."""
    return max(1, int(n * SCALE))
