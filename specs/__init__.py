"""grammask.specs: meta-grammars, support matrices and invariants, shipped as package data."""
