"""Hypothesis profiles: `ci` (default, what .ci/run uses) and `thorough` (local, long)."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile(
    "thorough", parent=settings.get_profile("ci"), max_examples=5000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
