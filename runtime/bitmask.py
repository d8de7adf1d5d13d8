"""Token bitmasks in XGrammar's layout: int32 (batch, ceil(V/32)), bit j of word w is token 32w+j."""
from __future__ import annotations

from typing import Any

import numpy as np


def allocate_token_bitmask(batch_size: int, vocab_size: int) -> np.ndarray:
    """A zeroed int32 bitmask of shape (batch_size, ceil(vocab_size / 32))."""
    for name, v in (("batch_size", batch_size), ("vocab_size", vocab_size)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    return np.zeros((int(batch_size), bitmask_words(int(vocab_size))), dtype=np.int32)


def bitmask_words(vocab_size: int) -> int:
    """Words of 32 bits that one bitmask row over `vocab_size` logits needs."""
    return (vocab_size + 31) // 32


def ids_to_row(ids: np.ndarray, n_words: int) -> np.ndarray:
    """An int32 bitmask row with the bits of `ids` set."""
    bits = np.zeros(32 * n_words, dtype=np.bool_)
    bits[np.asarray(ids, dtype=np.int64)] = True
    return np.packbits(bits, bitorder="little").view(np.int32)


_INT32 = np.dtype(np.int32)


def as_bitmask_array(bitmask: Any, n_words: int, index: Any) -> np.ndarray:
    """The numpy view of row `index` of a bitmask (numpy, or a CPU torch tensor), checked: an
    int32 array of shape (batch, n_words), `index` an int in [0, batch), the row C-contiguous
    and writeable. Kernels write exactly `n_words` words into the row it returns."""
    arr = bitmask_view(bitmask, n_words)
    if type(index) is not int:
        if isinstance(index, bool) or not isinstance(index, np.integer):
            raise TypeError(f"index must be an int, got {type(index).__name__} {index!r}")
        index = int(index)
    if not 0 <= index < arr.shape[0]:
        raise ValueError(f"index {index} out of range for a batch of {arr.shape[0]}")
    return arr[index]


def bitmask_view(bitmask: Any, n_words: int) -> np.ndarray:
    """The numpy view of a whole bitmask (numpy, or a CPU torch tensor), checked as
    `as_bitmask_array` checks it, but for a row index."""
    arr = bitmask
    if type(arr) is not np.ndarray:
        if isinstance(arr, np.ndarray):
            arr = arr.view(np.ndarray)
        elif type(arr).__module__.split(".")[0] == "torch":
            if arr.device.type != "cpu":
                raise ValueError("bitmask must be on the CPU to be filled; copy it to the device after")
            if str(arr.dtype) != "torch.int32":
                raise TypeError(f"bitmask must have dtype int32, got {arr.dtype}")
            arr = arr.detach().numpy()
        else:
            raise TypeError(f"bitmask must be a numpy array or a torch tensor, got {type(bitmask).__name__}")
    if arr.dtype is not _INT32 and arr.dtype != _INT32:
        raise TypeError(f"bitmask must have dtype int32, got {arr.dtype}")
    shape = arr.shape
    if len(shape) != 2 or shape[1] != n_words:
        raise ValueError(f"bitmask must have shape (batch, {n_words}) for this vocabulary, got {tuple(shape)}")
    if not arr.flags.writeable:
        raise ValueError("bitmask is read-only")
    if arr.strides[1] != 4 and n_words > 1:
        raise ValueError("bitmask rows must be contiguous (e.g. a C-ordered array)")
    return arr


def unpack_bitmask(bitmask: np.ndarray, width: int) -> np.ndarray:
    """bool (batch, width): token allowed, from an int32 bitmask (width <= 32 * words)."""
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32 or bitmask.ndim not in (1, 2):
        raise TypeError("bitmask must be a 1-D or 2-D int32 numpy array")
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 0:
        raise ValueError(f"width must be a non-negative int, got {width!r}")
    bm = np.ascontiguousarray(bitmask if bitmask.ndim == 2 else bitmask[None, :])
    if width > bm.shape[1] * 32:
        raise ValueError(f"bitmask of {bm.shape[1]} words covers {bm.shape[1] * 32} tokens, not {width}")
    bits = np.unpackbits(bm.astype("<i4").view(np.uint8), axis=1, bitorder="little")
    return bits[:, :width].astype(bool)


def _rows(indices: Any, n_bitmask: int, n_logits: int) -> list[int]:
    """The logits row of each bitmask row, checked."""
    if indices is None:
        rows = list(range(n_bitmask))
    else:
        rows = list(indices)
        for r in rows:
            if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
                raise TypeError(f"indices must be ints, got {type(r).__name__} {r!r}")
    if len(rows) != n_bitmask:
        raise ValueError(f"{len(rows)} indices for a bitmask of {n_bitmask} rows")
    if any(not 0 <= r < n_logits for r in rows):
        raise ValueError(f"indices {rows} out of range for logits of batch {n_logits}")
    return [int(r) for r in rows]


def apply_token_bitmask_inplace(logits: Any, bitmask: Any, indices: list[int] | None = None) -> None:
    """Set logits of disallowed tokens to -inf, in place, row by row.

    `logits` is (batch, V) or (V,), numpy or torch; `bitmask` is (batch, W) or (W,) int32 in the
    same library; `indices` picks the logits rows to mask (bitmask row i goes to indices[i]),
    by default bitmask row i masks logits row i. Tokens beyond 32·W are masked too. Mismatched
    arguments raise TypeError or ValueError before anything is written.
    """
    if type(logits).__module__.split(".")[0] == "torch":
        _apply_torch(logits, bitmask, indices)
        return
    if not isinstance(logits, np.ndarray) or not np.issubdtype(logits.dtype, np.floating):
        raise TypeError("logits must be a floating-point numpy array or torch tensor")
    if not isinstance(bitmask, np.ndarray) or bitmask.dtype != np.int32:
        raise TypeError("bitmask must be an int32 numpy array")
    if logits.ndim not in (1, 2) or bitmask.ndim not in (1, 2):
        raise ValueError(f"logits and bitmask must be 1-D or 2-D, got {logits.shape} and {bitmask.shape}")
    if not logits.flags.writeable:
        raise ValueError("logits are read-only")
    lg = logits if logits.ndim == 2 else logits[None, :]
    bm = bitmask if bitmask.ndim == 2 else bitmask[None, :]
    rows = _rows(indices, bm.shape[0], lg.shape[0])
    width = lg.shape[1]
    covered = min(width, bm.shape[1] * 32)
    allowed = unpack_bitmask(bm, covered)
    for i, r in enumerate(rows):
        lg[r, :covered][~allowed[i]] = -np.inf
        lg[r, covered:] = -np.inf


def _apply_torch(logits: Any, bitmask: Any, indices: list[int] | None) -> None:
    import torch

    if not logits.is_floating_point():
        raise TypeError("logits must be a floating-point tensor")
    if not isinstance(bitmask, torch.Tensor) or bitmask.dtype != torch.int32:
        raise TypeError("bitmask must be an int32 torch tensor")
    if logits.dim() not in (1, 2) or bitmask.dim() not in (1, 2):
        raise ValueError(f"logits and bitmask must be 1-D or 2-D, got {tuple(logits.shape)} "
                         f"and {tuple(bitmask.shape)}")
    lg = logits if logits.dim() == 2 else logits.unsqueeze(0)
    bm = bitmask if bitmask.dim() == 2 else bitmask.unsqueeze(0)
    rows = _rows(indices, bm.shape[0], lg.shape[0])
    bm = bm.to(device=lg.device)
    shifts = torch.arange(32, device=lg.device, dtype=torch.int32)
    bits = ((bm.unsqueeze(-1) >> shifts) & 1).bool().reshape(bm.shape[0], -1)
    width = lg.shape[1]
    covered = min(width, bits.shape[1])
    for i, r in enumerate(rows):
        lg[r, :covered].masked_fill_(~bits[i, :covered], float("-inf"))
        lg[r, covered:] = float("-inf")
