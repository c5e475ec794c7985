"""What each peer says, in its own words and version (chapter *the law beside other capacity results*).

A peer's claim is quoted from the file it was read in, named by repository, commit and path, so a reader (and
``tests/results/peers/test_wider.py``, where the file has been fetched) can check the words against it. The
book's reading of a claim lives in the chapter's prose, not here. Claims read from a paper's published text
that is not fetched (Mahdavi et al.) are listed with ``quote=None`` and a paraphrase the chapter marks as one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from .refit import COMMIT, PAPER, PAPER_V2, REPO

__all__ = ["PAL_COMMIT", "CLAIMS", "claims_table",]

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


def claims_table(claims: tuple[_PeerClaim, ...] = CLAIMS) -> pd.DataFrame:
    """One row per claim: peer, version, where, the words (or the paraphrase, marked; inline TeX as rendered:
    :func:`_as_text`) and the file they are in (its name and commit; the repositories are in data/peers/README.md)."""
    if not claims:
        raise ValueError("claims must hold at least one PeerClaim")
    rows = [dict(peer=c.peer, version=c.version, where=c.where,
                 words=f"“{_as_text(c.quote)}”" if c.quote is not None else f"(paraphrase) {c.paraphrase}",
                 file=_breakable(f"{c.path.rsplit('/', 1)[-1]} @ {c.commit[:7]}" if c.repo else c.path))
            for c in claims]
    return pd.DataFrame(rows)
