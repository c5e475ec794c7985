"""What the paper reports, transcribed once (chapter *Does it replicate?*).

This module is the ONLY place in the project where the paper's numbers are
typed. They are copied from the project's notes on the paper (arXiv:2509.22840 as
published), section by section (:data:`SECTION_TITLES`); facts to compare against, never targets (why: the page).
:mod:`rgr.results.replication.verdicts` compares the book's measurements with them, and :func:`page_markdown`
writes them as the book's appendix page *What the paper reports* (book/reported.md: ``python -m
rgr.results.reported`` rewrites it; a test checks that the committed page is current), so what the book cites is in
the book.
"""

from __future__ import annotations

from dataclasses import dataclass

SECTION_TITLES = {
    "Sec. 6.1 / App. A.2": "Max-over-heads, permutation graphs (Sec. 6.1; App. A.2)",
    "Fig. 4": "Fixed compression (Fig. 4)",
    "App. A.3": "Denser graphs (App. A.3; m = 128, d_model = 32)",
    "Sec. 7.1": "Softmax (Sec. 7.1, Fig. 5)",
    "Sec. 7.2": "Value channel (Sec. 7.2, Fig. 6; m = 64)",
    "Sec. 7.3": "GPT-2 block (Sec. 7.3, Fig. 7; m = 6144, ell = 16, d_model = 768)",
}
SECTIONS = tuple(SECTION_TITLES)


@dataclass(frozen=True)
class _Reported:
    """One claim of the paper: its key, where it stands, its wording and its number(s), if any.

    ``value`` is a float, a tuple (a range, a list of cells or head counts) or None for a purely
    qualitative statement; ``paper`` is how the chapter shows it; ``chapter`` is the book's notebook
    (without extension) that shows the measurement; ``name`` a few words naming the claim in prose
    (the verdict summary, the verdict table's first column).
    """

    key: str
    section: str
    claim: str
    paper: str
    value: object
    chapter: str
    name: str


_S61, _F4, _A3, _S71, _S72, _S73 = SECTIONS
_P, _D, _S, _V, _G = "permutation_sweeps", "denser_graphs", "softmax", "value_channel", "gpt2_block"

CLAIMS: tuple[_Reported, ...] = (
    # --- Sec. 6.1 / App. A.2 -------------------------------------------------------------
    _Reported("law_slope_all", _S61, "D_K* = c · m log m / d_model through the origin, all 12 base cells: slope",
             "1.19", 1.19, _P, name="the law's constant c, all base cells"),
    _Reported("law_r2_all", _S61, "same fit, all 12 base cells: R²", "0.944", 0.944, _P,
             name="the law's R², all base cells"),
    _Reported("law_slope_pre", _S61, "same fit without d_model = 16, m > 64: slope", "0.966", 0.966, _P,
             name="the law's constant c, precondition cells"),
    _Reported("law_r2_pre", _S61, "same fit without d_model = 16, m > 64: R²", "0.992", 0.992, _P,
             name="the law's R², precondition cells"),
    _Reported("excluded_above", _S61, "the three cells d_model = 16, m > 64 sit above the line",
             "above", ((128, 16), (256, 16), (512, 16)), _P, name="the excluded cells lie above the law's line"),
    _Reported("heads_slope", _S61, "h* = a · m / d_model + b (Fig. 10): slope a", "1.65", 1.65, _P,
             name="the head-count line: slope"),
    _Reported("heads_intercept", _S61, "h* = a · m / d_model + b (Fig. 10): intercept b", "−6.64", -6.64, _P,
             name="the head-count line: intercept"),
    _Reported("heads_r2", _S61, "h* = a · m / d_model + b (Fig. 10): R²", "0.824", 0.824, _P,
             name="the head-count line: R²"),
    _Reported("dk_range", _S61, "per-head width d_k* at D_K* on the base grid: range", "[5, 24]", (5, 24), _P,
             name="per-head width d_k*: range"),
    _Reported("dk_median", _S61, "per-head width d_k* at D_K* on the base grid: median", "11", 11.0, _P,
             name="per-head width d_k*: median"),
    _Reported("table1", _S61, "Table 1: d_k* per (m, d_model) cell", "Table 1", None, _P,
              name="Table 1: d_k* per cell"),
    _Reported("single_head_never", _S61, "one head never reaches F1 0.99 within the scanned D_K at these cells",
             "(512, 64), (256, 32)", ((512, 64), (256, 32)), _P, name="one head never reaches the F1 target"),
    _Reported("fig1_one_head_worse", _S61, "Fig. 1, (256, 32): one head markedly worse than several at every budget",
             "worse at every budget", (256, 32), _P, name="Fig. 1: one head worse at every budget"),
    _Reported("fig2_more_heads", _S61, "Fig. 2: more heads are needed as m grows and as d_model shrinks",
             "monotone", None, _P, name="Fig. 2: more heads as m grows and d_model shrinks"),
    # --- Fig. 4 --------------------------------------------------------------------------
    _Reported("diag_growth", _F4, "m / d_model = 8: D_K* grows roughly like log m from m >= 512",
             "∝ log m", 512, _P, name="λ = 8 diagonal: growth like log m"),
    _Reported("diag_first_two_above", _F4, "m / d_model = 8: (128, 16) and (256, 32) lie a little above that trend",
             "above", ((128, 16), (256, 32)), _P, name="λ = 8 diagonal: first two cells above the trend"),
    _Reported("diag_heads", _F4,
             "head count at D_K* roughly proportional to the compression (constant along m / d_model = 8)",
             "constant", None, _P, name="λ = 8 diagonal: one head count"),
    # --- App. A.3 ------------------------------------------------------------------------
    _Reported("regular_slope", _A3, "D_K* = c · (r m / d_model) log2 m, r in {1, 2, 4, 8, 16}: c", "0.46", 0.46, _D,
             name="denser graphs: the constant c"),
    _Reported("regular_plateaus", _A3,
             "r = 2: one head plateaus below F1 1.0; r = 4: two heads plateau; 4–8 heads reach ~1.0",
             "plateau / ~1.0", None, _D, name="denser graphs: few heads plateau"),
    _Reported("regular_heads", _A3, "h* grows about linearly in r, within about 2x of r m / d_model",
             "within 2x", 2.0, _D, name="denser graphs: h* near r m / d_model"),
    _Reported("regular_r16_bound", _A3, "r = 16: the learned D_K* is slightly below the constructive upper bound",
             "slightly below", 16, _D, name="denser graphs: r = 16 below the constructive bound"),
    _Reported("regular_lower_form", _A3,
             "dense graphs: the optimum sits nearer the lower-bound form than the upper-bound form",
             "lower-bound form", None, _D, name="denser graphs: nearer the lower-bound form"),
    # --- Sec. 7.1 ------------------------------------------------------------------------
    _Reported("softmax_advantage", _S71, "softmax: a multi-head advantage in every panel except (64, 32)",
             "all but (64, 32)", (64, 32), _S, name="softmax: a multi-head advantage"),
    _Reported("softmax_shift", _S71, "softmax: the D_K for F1 0.99 shifts to larger budgets than max-over-heads",
             "larger", None, _S, name="softmax: thresholds shift to larger D_K"),
    # --- Sec. 7.2 ------------------------------------------------------------------------
    _Reported("value_d16", _S72,
             "value channel, d_model = 16: one head plateaus at a high error; h >= 4 drives it down sharply",
             "h ≥ 4 far lower", 4, _V, name="value channel, d_model = 16: many heads far lower error"),
    _Reported("value_d32_small", _S72, "value channel, d_model = 32: one head beats h = 16 at small D_K",
             "h = 1 < h = 16", 16, _V, name="value channel, d_model = 32: one head best at small D_K"),
    _Reported("value_d32_best", _S72, "value channel, d_model = 32: h = 4 and 8 reach the lowest error",
             "h ∈ {4, 8}", (4, 8), _V, name="value channel, d_model = 32: lowest error at h = 4, 8"),
    # --- Sec. 7.3 ------------------------------------------------------------------------
    _Reported("gpt2_multi", _S73, "GPT-2 block, h >= 2: accuracy rises with D_K, near perfect by D_K ~ 512",
             "≈ 1 at D_K 512", 512, _G, name="GPT-2 block: h ≥ 2 near perfect"),
    _Reported("gpt2_single", _S73,
             "GPT-2 block, h = 1, D_K >= 256: seeds split, some collapse to ~0, the rest near 0.81",
             "split; 0.81", 0.81, _G, name="GPT-2 block: one head's seeds split"),
    _Reported("gpt2_best", _S73, "GPT-2 block: the best partitions are h in {4, 8}", "h ∈ {4, 8}", (4, 8), _G,
             name="GPT-2 block: best h = 4 or 8"),
)

# Table 1 of the paper: d_k at D_K* per (m, d_model)
TABLE1: dict[tuple[int, int], int] = {
    (64, 16): 5, (64, 32): 6, (64, 64): 5,
    (128, 16): 11, (128, 32): 21, (128, 64): 7,
    (256, 16): 6, (256, 32): 16, (256, 64): 24,
    (512, 16): 7, (512, 32): 9, (512, 64): 14,
}

# the paper's GPT-2 setting (Sec. 7.3) and its seeds / head counts where the text states them
GPT2_M, GPT2_D_MODEL, GPT2_ELL = 6144, 768, 16
PAPER_SEEDS = {"base": 10, "lambda8": 10, "regular": 10, "softmax": 3, "value": 3, "gpt2": 7, "linear": 10,
               "lambda32": 10}
PAPER_MAX_HEADS = 64
# protocol E2: "3 seeds for the largest points" of the lambda = 8 diagonal (the paper preset reads them as m >= 2048)
PAPER_FEW_SEEDS = {"lambda8": (2048, 3)}  # experiment -> (from m, seeds)
PAPER_DIAG_M_MAX = 4096  # the lambda = 8 diagonal of Fig. 4 (protocol E2) runs to m = 4096


def claim(key: str) -> _Reported:
    """The claim with this key; a KeyError naming the key otherwise."""
    for c in CLAIMS:
        if c.key == key:
            return c
    raise KeyError(f"no reported claim {key!r}; keys: {[c.key for c in CLAIMS]}")


_PAGE = "book/reported.md"  # the appendix page written by page_markdown()


def _markdown_cell(text: str) -> str:
    """``text`` safe in a Markdown table cell: no emphasis from ``*`` / ``_``, no cell break from ``|``."""
    return text.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("|", "\\|")


def page_markdown() -> str:
    """The appendix page *What the paper reports*: every claim of :data:`CLAIMS` by section, with the
    paper's value and the chapter that measures it, and Table 1 (:data:`TABLE1`)."""
    out = [
        "# What the paper reports",
        "",
        "The paper's numbers and statements that this book compares itself with (arXiv:2509.22840 as published",
        "{cite:p}`adler2025capacity`), section by section; {doc}`replication` puts each beside the book's",
        "measurement and gives its verdict. They are facts to compare against, never targets: no preset, grid or",
        'cutoff of the project is derived from them. Where the paper writes "log" without a base (the main scaling',
        "law) the base is not stated; the denser-graph normalisation states log2.",
        "",
        "This page is generated from `rgr.results.reported`, the one place in the project where the paper's",
        "numbers are typed (`python -m rgr.results.reported` rewrites it; a test checks that it is current).",
    ]
    for section in SECTIONS:
        out += ["", f"## {SECTION_TITLES[section]}", "", "| claim | reported | measured in |", "|---|---|---|"]
        out += [f"| {_markdown_cell(c.claim)} | {_markdown_cell(c.paper)} | {{doc}}`{c.chapter}` |"
                for c in CLAIMS if c.section == section]
        if section == SECTIONS[0]:
            ms, ds = sorted({m for m, _ in TABLE1}), sorted({d for _, d in TABLE1})
            out += ["", "Table 1 of the paper: the per-head width d\\_k at D\\_K\\* (rows m, columns d\\_model).", "",
                    "| m | " + " | ".join(map(str, ds)) + " |", "|---" * (len(ds) + 1) + "|"]
            out += [f"| {m} | " + " | ".join(str(TABLE1[(m, d)]) for d in ds) + " |" for m in ms]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # python -m rgr.results.reported: rewrite the appendix page
    from pathlib import Path

    from rgr.paths import replace_whole

    target = Path(__file__).resolve().parents[2] / _PAGE
    replace_whole(target, page_markdown().encode("utf-8"))
    print(f"wrote {target}")
