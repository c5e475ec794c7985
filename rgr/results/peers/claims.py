"""What each peer says, in its own words and version, and what each stores per parameter, counted one way (chapter
*the law beside other capacity results*).

A peer's claim is quoted from the file it was read in, named by repository, commit and path, so a reader (and
``tests/results/peers/test_wider.py``, where the file has been fetched) can check the words against it. The
book's reading of a claim lives in the chapter's prose, not here. Claims read from a paper's published text
that is not fetched (Mahdavi et al.) are listed with ``quote=None`` and a paraphrase the chapter marks as one.

**Bits per parameter** (:func:`bits_table`), counted the same way for the law, the book's measured thresholds, pal
and Dana et al., to set beside Allen-Zhu and Li's "2 bits of knowledge per parameter". The bits of a stored map are
those needed to name it among all maps of its kind: a permutation of m items (RGR) or a bijection of N inputs to N
outputs (pal) holds log2(m!) bits; Dana et al.'s N^2 associations, each naming one of N tokens, hold log2 N bits
each. The parameters counted are the trained maps that store it: RGR's W_Q and W_K (2 h d_k d_model; the table also
gives bits per unit of D_K d_model = h d_k d_model, the law's variable), pal's d x d matrix, Dana et al.'s query,
key, value and output maps (4 H d^2 at d = d_h, their experiment 1; embeddings and unembedding left out). Their
number is a marginal one (associations gained per added head, from their step-1 slope), the others are totals at
the threshold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np
import pandas as pd

from .dana import LogFactor
from .refit import COMMIT, PAPER, PAPER_V2, REPO

_PAL_REPO = "facebookresearch/pal"
PAL_COMMIT = "4d977c1ac2a8b3640e5a72e6ada8264a6020cd34"
_PAL_README = "README.md"  # its list of papers names the folder each paper's code is in


@dataclass(frozen=True)
class _PeerClaim:
    """One claim: who, which version, where in it, and the words (None: paraphrased from an unfetched text)."""

    key: str  # a short name the chapter and the test use
    peer: str
    version: str  # the version the words are from
    repo: str  # where the file was read ("" for a paper read outside a repository)
    commit: str
    path: str
    where: str  # section, figure or line of the file
    quote: str | None
    paraphrase: str = ""  # only where quote is None


_AISTATS = "AISTATS 2025 (the accepted version, in their repository)"
_V2 = "V2 (an earlier version, in the same repository)"
CLAIMS: tuple[_PeerClaim, ...] = (
    _PeerClaim("dana_exponent", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Sec. 5.1, experiment 4",
              "We observe that the coefficient's growth is between quadratic and cubic when d = dh."),
    _PeerClaim("dana_only_quadratic", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Sec. 5.1",
              "Combining experiments 1,2 and 3 means we should expect a cubic scaling from experiment 4. However, "
              "we provide further experiments in larger dimension and with more layers, in Appendix B, suggesting "
              "that the scaling might be only quadratic."),
    _PeerClaim("dana_appendix", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Appendix B.1, Figure 6",
              "The scaling here is linear. This contradicts the initial scaling laws from experiment 2, making the "
              "overall sclaing from experiment 4 quadratic instead of cubic."),
    _PeerClaim("dana_optimisation", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Appendix B.1",
              "this could be explained by optimization problems in lower dimensions, making it seem like a "
              "quadratic scaling."),
    _PeerClaim("dana_beyond", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Sec. 5.1, experiment 3",
              "When d ≥ dh, the scaling is expected to be constant because the increase in embedding space is not "
              "beneficial to the heads when they have smaller inner dimension."),
    _PeerClaim("dana_split", "Dana et al.", _AISTATS, REPO, COMMIT, PAPER, "Sec. 5.1, experiment 2",
              "taking d = dh is optimal in terms of memorization per parameter, since the parameter scaling is "
              "linear in dh yet quadratic (for dh ≤ d) in memorization power."),
    _PeerClaim("dana_v2_cubic", "Dana et al.", _V2, REPO, COMMIT, PAPER_V2, "Sec. 4.2",
              "We observe that the coefficient has a cubic growth when d = dh"),
    _PeerClaim("dana_readme", "Dana et al.", "their repository's README", REPO, COMMIT, "README.md",
              "Experiments",
              "Thus, the final scaling law is between $CHd_hd$ and $CHd_hd^2$."),
    _PeerClaim("pal_paper", "Cabannes et al.", "the repository's list of papers", _PAL_REPO, PAL_COMMIT, _PAL_README,
              "Research papers",
              "Vivien Cabannes, Berfin Simsek, Alberto Bietti. *Learning Associative Memories with Gradient "
              "Descent* in International Conference on Machine Learning (ICML), 2024. The codebase is in the folder "
              "`projects/gradient_descent`."),
    _PeerClaim("mahdavi_capacity", "Mahdavi et al.", "ICLR 2024", "", "", "arXiv:2306.02010", "abstract, Figure 2",
              None, paraphrase="H heads of an attention layer with context size n < d memorise Omega(H n) examples; "
              "in their synthetic experiments memorisation grows with the head width d_h only while d_h <= n"),
)


_SUB = str.maketrans("0123456789h", "₀₁₂₃₄₅₆₇₈₉ₕ")
_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _as_text(quote: str) -> str:
    """A quote's inline TeX (``$CHd_hd^2$``, as a Markdown README writes it) as the reader sees it rendered
    ("CHdₕd²"): subscripts and superscripts of single characters, the dollar signs dropped. The words are the same."""
    def plain(m: re.Match) -> str:
        t = re.sub(r"_(\w)", lambda k: k.group(1).translate(_SUB), m.group(1))
        return re.sub(r"\^(\w)", lambda k: k.group(1).translate(_SUP), t)

    return re.sub(r"\$([^$]+)\$", plain, quote)


def _breakable(name: str) -> str:
    """A file name that may wrap after its underscores in a narrow column (a zero-width space; it reads the same)."""
    return name.replace("_", "_\u200b")


def claims_table() -> pd.DataFrame:
    """One row per claim: peer, version, where, the words (or the paraphrase, marked; inline TeX as rendered:
    :func:`_as_text`) and the file they are in (its name and commit; the repositories are in data/peers/README.md)."""
    rows = [dict(peer=c.peer, version=c.version, where=c.where,
                 words=f"“{_as_text(c.quote)}”" if c.quote is not None else f"(paraphrase) {c.paraphrase}",
                 file=_breakable(f"{c.path.rsplit('/', 1)[-1]} @ {c.commit[:7]}" if c.repo else c.path))
            for c in CLAIMS]
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- bits per parameter

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


_ALLEN_ZHU_LI_BITS = 2.0  # bits of knowledge per parameter that Allen-Zhu and Li find language models store


def _times_below(bits: float) -> int | None:
    """How many times fewer bits per parameter than Allen-Zhu and Li's 2, to the nearest whole factor (None: NaN)."""
    return None if not math.isfinite(bits) else round(_ALLEN_ZHU_LI_BITS / bits)


@dataclass(frozen=True)
class _BitsRanges:
    """The smallest and largest bits per trained parameter of each source of :func:`bits_table`, and for the
    measured thresholds the factor by which they fall below Allen-Zhu and Li's :data:`_ALLEN_ZHU_LI_BITS`
    (``measured_below_min`` from ``measured_hi``, ``measured_below_max`` from ``measured_lo``; whole factors)."""

    law_lo: float
    law_hi: float
    measured_lo: float
    measured_hi: float
    pal_lo: float
    pal_hi: float
    dana_lo: float
    dana_hi: float
    measured_below_min: int | None
    measured_below_max: int | None


def bits_ranges(bits: pd.DataFrame) -> _BitsRanges:
    """:class:`_BitsRanges` of a :func:`bits_table`; NaN for a source without rows (a smoke table's)."""
    out = {}
    for name, source in (("law", "RGR law"), ("measured", "RGR measured"), ("pal", "pal"), ("dana", "Dana")):
        sel = bits[bits.source.str.startswith(source)].bits_per_param
        out[f"{name}_lo"], out[f"{name}_hi"] = ((float("nan"),) * 2 if sel.empty
                                                else (float(sel.min()), float(sel.max())))
    out["measured_below_min"], out["measured_below_max"] = (_times_below(out["measured_hi"]),
                                                            _times_below(out["measured_lo"]))
    return _BitsRanges(**out)
