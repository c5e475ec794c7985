"""Where the engine trains: the device a caller names, checked, and waiting for it (chapter *permutation sweeps*).

Every module that takes a ``device`` argument resolves it here (:func:`resolve_device`), so
``"auto"``, ``"cpu"`` and ``"cuda[:i]"`` mean the same thing everywhere; :func:`sync` waits for a GPU's
queued kernels before a clock is read.
"""

from __future__ import annotations

import torch

__all__ = ["resolve_device", "sync"]


def resolve_device(device: str | torch.device = "auto") -> torch.device:
    """``"auto"`` -> CUDA when available, else CPU; ``"cpu"``/``"cuda[:i]"`` as given (checked)."""
    if isinstance(device, torch.device):
        dev = device
    elif device == "auto":
        dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            dev = torch.device(device)
        except (RuntimeError, TypeError) as e:
            raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}") from e
    if dev.type not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'auto', 'cpu' or 'cuda[:i]', got {device!r}")
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' requested but CUDA is not available")
    return dev


def sync(device: torch.device) -> None:
    """Wait for the kernels queued on ``device`` (a no-op on a CPU), so a clock read after it is honest."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
