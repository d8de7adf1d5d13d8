"""Where the tests find their files, so that a test module can move between folders.

`TESTS` is the tests folder, `DATA` its vendored data, `ROOT` the repository root (README,
specs, fuzz) and `CORPORA` the shared corpora beside the repository, present on some machines
only: tests that read it skip without it.
"""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
DATA = TESTS / "data"
ROOT = TESTS.parent
SPECS = ROOT / "specs"
CORPORA = ROOT.parent / "shared" / "corpora"
JSON_SCHEMA_SUITE = CORPORA / "json-schema-test-suite" / "draft2020-12"
"""The JSON-Schema-Test-Suite in the shared corpora (a vendored copy is in `DATA`)."""
