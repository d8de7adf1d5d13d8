"""Hypothesis settings shared by every property (example counts: see budget.py).

Under CI (the CI environment variable set) examples are derandomized, so a run is repeatable;
elsewhere every run draws new examples.
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "grammask", deadline=None, derandomize=bool(os.environ.get("CI")), print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("grammask")
