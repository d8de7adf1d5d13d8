"""Hypothesis settings shared by every property (example counts: see budget.py), and the
`vocab` fixture (the default vocabulary) of the tests that do not define their own.

Under CI (the CI environment variable set) examples are derandomized, so a run is repeatable;
elsewhere every run draws new examples.
"""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from grammask.runtime import Vocabulary

settings.register_profile(
    "grammask", deadline=None, derandomize=bool(os.environ.get("CI")), print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.load_profile("grammask")


@pytest.fixture(scope="session")
def vocab() -> Vocabulary:
    """The default vocabulary (Qwen2.5's ids)."""
    return Vocabulary.default()
