"""Fixtures of the `grammask lint` and `grammask check` tests."""
from __future__ import annotations

import pytest

import grammask.compiler.frontends.gbnf as gbnf_module


@pytest.fixture
def gbnf() -> object:
    """The GBNF frontend, which the tests on GBNF files need."""
    return gbnf_module
