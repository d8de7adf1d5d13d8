"""How many strings of each length a DFA accepts: exact counts and the generating function.

For a DFA with transfer matrix M (M[i, j] = number of bytes leading from i to j), start vector
u and accepting vector f, the number of accepted strings of length n is u·Mⁿ·f, and the
generating function Σ cₙ zⁿ = u·(I − zM)⁻¹·f is a rational function. Equal languages have equal
functions, so it is an independent check of determinization and minimization; it also tells a
grammar author how large a language is. sympy is imported only by `generating_function`.
"""
from __future__ import annotations

from typing import Any

from grammask.runtime.dfa.table import DFATable


def transfer_matrix(dfa: DFATable) -> list[list[int]]:
    """M[i][j]: the number of bytes that lead from state i to state j."""
    n = dfa.n_states
    class_size = [0] * dfa.n_classes
    for c in dfa.byte_class.tolist():
        class_size[c] += 1
    m = [[0] * n for _ in range(n)]
    for i in range(n):
        for c, j in enumerate(dfa.transitions[i].tolist()):
            if j >= 0:
                m[i][j] += class_size[c]
    return m


def count_by_length(dfa: DFATable, max_len: int) -> list[int]:
    """Exact numbers of accepted byte strings of length 0..max_len."""
    m = transfer_matrix(dfa)
    n = dfa.n_states
    vec = [0] * n
    vec[dfa.start] = 1
    acc = dfa.accepting.tolist()
    counts = []
    for _ in range(max_len + 1):
        counts.append(sum(v for v, a in zip(vec, acc) if a))
        nxt = [0] * n
        for i, v in enumerate(vec):
            if v:
                for j, k in enumerate(m[i]):
                    if k:
                        nxt[j] += v * k
        vec = nxt
    return counts


def generating_function(dfa: DFATable) -> Any:
    """Σ cₙ zⁿ as a sympy rational function in the symbol `z`, in lowest terms.

    The denominator is det(I − zM), from M's characteristic polynomial (division-free, so
    its cost is polynomial); the numerator, of degree below n, is that denominator times the
    series of exact counts, cut at degree n − 1."""
    import sympy

    z = sympy.Symbol("z")
    n = dfa.n_states
    charpoly = sympy.Matrix(transfer_matrix(dfa)).charpoly().all_coeffs()
    denominator = sympy.Poly(list(reversed(charpoly)), z)
    series = sympy.Poly(list(reversed(count_by_length(dfa, n))), z)
    numerator = sympy.Poly((denominator * series).all_coeffs()[-n:], z)
    return sympy.cancel(numerator.as_expr() / denominator.as_expr())
