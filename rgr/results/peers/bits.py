"""Bits stored per parameter, counted the same way for the law, the book's measured thresholds, pal and Dana et
al. (chapter *the law beside other capacity results*), to set beside Allen-Zhu and Li's "2 bits of knowledge per
parameter".

The bits of a stored map are those needed to name it among all maps of its kind: a permutation of m items (RGR)
or a bijection of N inputs to N outputs (pal) holds log2(m!) bits; Dana et al.'s N^2 associations, each naming
one of N tokens, hold log2 N bits each. The parameters counted are the trained maps that store it: RGR's W_Q and
W_K (2 h d_k d_model; the table also gives bits per unit of D_K d_model = h d_k d_model, the law's variable), pal's
d x d matrix, Dana et al.'s query, key, value and output maps (4 H d^2 at d = d_h, their experiment 1; embeddings
and unembedding left out). Their number is a marginal one (associations gained per added head, from their
step-1 slope), the others are totals at the threshold.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .dana import LogFactor

__all__ = ["bits_table", "bits_ranges"]


def _log2_factorial(n: int) -> float:
    """log2(n!), the bits that name one permutation of n items."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return math.lgamma(int(n) + 1) / math.log(2)


def _row(source: str, setting: str, bits: float, unit: float, params: float, bits_how: str, params_how: str) -> dict:
    return dict(source=source, setting=setting, bits=bits, bits_per_unit=bits / unit, bits_per_param=bits / params,
                bits_counted=bits_how, params_counted=params_how)


def bits_table(c_law: float, law_m: tuple[int, ...], passing: Iterable[Any], pal: pd.DataFrame,
               dana: LogFactor) -> pd.DataFrame:
    """One row per source and setting: bits, bits per unit of the law's variable (h d_k d_model; pal: d^2; Dana:
    H d^2) and bits per trained parameter, with how each is counted.

    ``c_law``: the law's constant (D_K* d_model = c m ln m); ``law_m``: the m at which the law's row is given;
    ``passing``: per cell of the head sweep (:func:`rgr.results.peers.sweep.transitions`: attributes m, d_model,
    h_pass) the smallest head count whose mean F1 reaches the protocol's level (None: none does); ``pal``: per width
    (columns d, N_mean) the mean largest N stored;
    ``dana``: :func:`rgr.results.peers.dana.log_factor` (associations per head per unit of d^2 at two N).
    """
    if not c_law > 0 or not law_m:
        raise ValueError(f"c_law must be positive and law_m non-empty, got {c_law}, {law_m}")
    rows = []
    perm, two = "log2(m!) (one permutation of m items)", "W_Q, W_K: 2 h d_k d_model"
    for m in law_m:
        unit = c_law * m * math.log(m)
        rows.append(_row("RGR law", f"m = {m}, c = {c_law:g}", _log2_factorial(m), unit, 2 * unit, perm, two))
    for r in (t for t in passing if t.h_pass is not None):
        unit = int(r.h_pass) * r.d_model * r.d_model
        rows.append(_row("RGR measured (peers sweep)", f"(m, d_model) = ({r.m}, {r.d_model}), h = {int(r.h_pass)}",
                         _log2_factorial(int(r.m)), unit, 2 * unit, perm, two + " (d_k = d_model)"))
    for r in pal.itertuples():
        n = int(round(r.N_mean))
        rows.append(_row("pal (re-implemented)", f"d = {r.d}, N = {n}", _log2_factorial(n), r.d**2, r.d**2,
                         "log2(N!) (one bijection of N inputs to N outputs)", "W: d^2"))
    for N, per_d2, ds in ((dana.N_small, dana.per_d2_small, dana.d_small), (dana.N_large, dana.per_d2_large,
                                                                           dana.d_large)):
        bits = per_d2 * math.log2(N)  # per head per unit of d^2
        rows.append(_row("Dana et al. (their files)", f"N = {N}, d = {ds}, per added head", bits, 1.0, 4.0,
                         "log2 N per association gained (their step-1 slope x N^2)",
                         "W_Q, W_K, W_V, W_O: 4 d^2 per head"))
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class _BitsRanges:
    """The smallest and largest bits per trained parameter of each source of :func:`bits_table`."""

    law_lo: float
    law_hi: float
    measured_lo: float
    measured_hi: float
    pal_lo: float
    pal_hi: float
    dana_lo: float
    dana_hi: float


def bits_ranges(bits: pd.DataFrame) -> _BitsRanges:
    """:class:`_BitsRanges` of a :func:`bits_table`; NaN for a source without rows (a smoke table's)."""
    out = {}
    for name, source in (("law", "RGR law"), ("measured", "RGR measured"), ("pal", "pal"), ("dana", "Dana")):
        sel = bits[bits.source.str.startswith(source)].bits_per_param
        out[f"{name}_lo"], out[f"{name}_hi"] = ((float("nan"),) * 2 if sel.empty
                                                else (float(sel.min()), float(sel.max())))
    return _BitsRanges(**out)
