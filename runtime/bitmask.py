"""Token bitmasks in XGrammar's layout: int32 (batch, ceil(V/32)), bit j of word w is token 32w+j."""
from __future__ import annotations

from typing import Any

import numpy as np


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A zeroed int32 bitmask of shape (batch_size, ceil(vocab_size / 32))."""
    for name, v in (("batch_size", batch_size), ("vocab_size", vocab_size)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    return np.zeros((int(batch_size), (int(vocab_size) + 31) // 32), dtype=np.int32)


def as_bitmask_array(bitmask: Any, n_words: int, index: int) -> np.ndarray:
    """The numpy view of row `index` of a bitmask (numpy, or a CPU torch tensor), checked."""
    arr = bitmask
    if not isinstance(arr, np.ndarray):
        if type(arr).__module__.split(".")[0] == "torch":
            if arr.device.type != "cpu":
                raise ValueError("bitmask must be on the CPU to be filled; copy it to the device after")
            arr = arr.numpy()
        else:
            raise TypeError(f"bitmask must be a numpy array or a torch tensor, got {type(bitmask).__name__}")
    if arr.dtype != np.int32:
        raise TypeError(f"bitmask must have dtype int32, got {arr.dtype}")
    if arr.ndim != 2 or arr.shape[1] != n_words:
        raise ValueError(
            f"bitmask must have shape (batch, {n_words}) for this vocabulary, got {tuple(arr.shape)}"
        )
    if not isinstance(index, (int, np.integer)) or isinstance(index, bool):
        raise TypeError(f"index must be an int, got {index!r}")
    if not 0 <= index < arr.shape[0]:
        raise ValueError(f"index {index} out of range for a batch of {arr.shape[0]}")
    if not arr.flags.writeable:
        raise ValueError("bitmask is read-only")
    return arr[index]


def unpack_bitmask(bitmask: np.ndarray, width: int) -> np.ndarray:
    """bool (batch, width): token allowed, from an int32 bitmask (width <= 32 * words)."""
    bm = np.ascontiguousarray(bitmask, dtype=np.int32)
    if bm.ndim == 1:
        bm = bm[None, :]
    if width > bm.shape[1] * 32:
        raise ValueError(f"bitmask of {bm.shape[1]} words covers {bm.shape[1] * 32} tokens, not {width}")
    bits = np.unpackbits(bm.astype("<i4").view(np.uint8), axis=1, bitorder="little")
    return bits[:, :width].astype(bool)


def apply_token_bitmask_inplace(logits: Any, bitmask: Any, indices: list[int] | None = None) -> None:
    """Set logits of disallowed tokens to -inf, in place, row by row.

    `logits` is (batch, V) or (V,), numpy or torch; `bitmask` is (batch, W) or (W,) int32 in the
    same library; `indices` picks the logits rows to mask (bitmask row i goes to indices[i]).
    Tokens beyond 32·W are masked too.
    """
    if type(logits).__module__.split(".")[0] == "torch":
        _apply_torch(logits, bitmask, indices)
        return
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise TypeError("logits must be a floating-point numpy array or torch tensor")
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32:
        raise TypeError("bitmask must be an int32 numpy array")
    lg = logits if logits.ndim == 2 else logits[None, :]
    bm = bitmask if bitmask.ndim == 2 else bitmask[None, :]
    rows = list(range(bm.shape[0])) if indices is None else list(indices)
    if len(rows) != bm.shape[0] or any(not 0 <= r < lg.shape[0] for r in rows):
        raise ValueError(f"indices {rows} do not fit logits of batch {lg.shape[0]} / bitmask of batch {bm.shape[0]}")
    width = lg.shape[1]
    covered = min(width, bm.shape[1] * 32)
    allowed = unpack_bitmask(bm, covered)
    for i, r in enumerate(rows):
        lg[r, :covered][~allowed[i]] = -np.inf
        lg[r, covered:] = -np.inf


def _apply_torch(logits: Any, bitmask: Any, indices: list[int] | None) -> None:
    import torch

    lg = logits if logits.dim() == 2 else logits.unsqueeze(0)
    bm = bitmask if bitmask.dim() == 2 else bitmask.unsqueeze(0)
    bm = bm.to(device=lg.device, dtype=torch.int32)
    shifts = torch.arange(32, device=lg.device, dtype=torch.int32)
    bits = ((bm.unsqueeze(-1) >> shifts) & 1).bool().reshape(bm.shape[0], -1)
    width = lg.shape[1]
    covered = min(width, bits.shape[1])
    rows = list(range(bm.shape[0])) if indices is None else list(indices)
    if len(rows) != bm.shape[0]:
        raise ValueError("indices must have one entry per bitmask row")
    for i, r in enumerate(rows):
        lg[r, :covered].masked_fill_(~bits[i, :covered], float("-inf"))
        lg[r, covered:] = float("-inf")
