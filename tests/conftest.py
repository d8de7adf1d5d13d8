"""Hypothesis settings shared by every property (example counts: see budget.py)."""
from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile(
    "grammask", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("grammask")
