"""Conformance with the JSON-Schema-Test-Suite (draft 2020-12, vendored): every group compiles
or raises a GrammarError; no compiled group accepts an invalid instance; and every group in the
ratchet file (tests/data/json_schema_suite_passing.json) still passes, so a regression fails
here. `python -m tests.support.json_schema_suite --update` rewrites the ratchet after an improvement."""
from __future__ import annotations

import json

import pytest

from tests.support.json_schema_suite import RATCHET, groups, run_group

GROUPS = groups()
PASSING = set(json.loads(RATCHET.read_text(encoding="utf-8")))


def test_ratchet_names_existing_groups() -> None:
    assert PASSING <= {name for name, _ in GROUPS}
    assert len(PASSING) >= 200


@pytest.mark.parametrize("name, group", GROUPS, ids=[name for name, _ in GROUPS])
def test_group(name: str, group: dict) -> None:
    result = run_group(name, group)
    assert not result.wrong_accepts, f"invalid instances accepted: {result.wrong_accepts}"
    if name in PASSING:
        assert result.error is None, result.error
        assert not result.wrong_rejects, f"valid instances rejected: {result.wrong_rejects}"
