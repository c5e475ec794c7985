"""The peers chapter's wider readings: quoted claims against the fetched files (skipped where absent), the
log-factor test and bits per parameter against closed forms, the d_k saturation and pal learning-rate readings
on small synthetic tables, the parameter counts of aot."""

from __future__ import annotations

import math
import re
import subprocess
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rgr.experiments.peers.engine_sweeps import DK_SATURATION
from rgr.experiments.peers.reimplemented import PalConfig
from rgr.results.peers.claims import CLAIMS, PAL_COMMIT, bits_ranges, bits_table, claims_table
from rgr.results.peers.dana import log_factor
from rgr.results.peers.refit import local_name
from rgr.results.peers.single_head import capacities, ell_effect, f1_table, lr_table, past_ell
from rgr.results.peers.sweep import param_table

ROOT = Path(__file__).resolve().parents[3]


def _pdf_text(path: Path) -> str:
    pypdf = pytest.importorskip("pypdf")
    return "\n".join(page.extract_text() for page in pypdf.PdfReader(str(path)).pages)


@pytest.mark.parametrize("claim", [c for c in CLAIMS if c.quote is not None and "Dana" in c.peer], ids=lambda c: c.key)
def test_a_quoted_dana_claim_is_in_the_fetched_file(claim):
    f = ROOT / "data" / "peers" / local_name(claim.path)  # where scripts/fetch_peers.py puts them
    if not f.is_file():
        pytest.skip(f"{f.name} not fetched (python scripts/fetch_peers.py)")
    text = _pdf_text(f) if f.suffix == ".pdf" else f.read_text(encoding="utf-8")
    assert quoted_in(claim.quote, text)


def test_the_pal_attribution_is_in_their_readme_where_a_clone_is_at_hand():
    git = ROOT.parent / ".mirror" / "facebookresearch+pal" / "repo"
    r = subprocess.run(["git", "--git-dir", str(git), "show", f"{PAL_COMMIT}:README.md"], capture_output=True,
                       text=True)
    if r.returncode:
        pytest.skip("no clone of facebookresearch/pal at the pinned commit")
    (claim,) = [c for c in CLAIMS if c.key == "pal_paper"]
    assert quoted_in(claim.quote, r.stdout)


def test_quoted_in_reads_pdf_breaks_and_refuses_other_words():
    text = "We observe that the coefficient\u2019s growth is\nbetween quadratic and cubic when d = dh. per pa-\nrameter"
    assert quoted_in("the coefficient's growth is between quadratic and cubic", text)
    assert quoted_in("per parameter", text)
    assert not quoted_in("the coefficient's growth is cubic", text)
    t = claims_table()
    assert len(t) == len(CLAIMS) and t.words.str.startswith("(paraphrase)").sum() == 1


def test_log_factor_closed_form():
    d = np.array([6, 8, 10])
    lf = log_factor(50, d, 0.8 * d**2 / 2500, 200, d, 0.8 * 0.7 * d**2 / 40000)
    assert lf.ratio == pytest.approx(0.7) and lf.ratio_low == pytest.approx(0.7) == lf.ratio_high
    assert lf.law_ratio == pytest.approx(math.log(2500) / math.log(40000)) and lf.nearer == "the law's"
    assert lf.range_holds == "holds neither prediction"  # every pair at 0.7: below 1, just below the law's 0.74
    wide = log_factor(50, d, 0.8 * d**2 / 2500, 200, d, np.array([0.7, 0.9, 1.02]) * 0.8 * d**2 / 40000)
    assert (wide.ratio_low, wide.ratio_high) == (pytest.approx(0.7), pytest.approx(1.02))
    assert wide.range_holds == "holds both predictions"
    count = log_factor(50, d, 0.8 * d**2 / 2500, 200, d, np.array([0.79, 0.9, 1.04]) * 0.8 * d**2 / 40000)
    assert count.ratio_low > count.law_ratio and count.range_holds == "holds a count law's 1 but not the law's ratio"
    law = log_factor(50, d, 0.8 * d**2 / 2500, 200, d, np.array([0.7, 0.75, 0.8]) * 0.8 * d**2 / 40000)
    assert law.range_holds == "holds the law's ratio but not a count law's 1"
    with pytest.raises(ValueError, match="N_small"):
        log_factor(200, d, d, 50, d, d)


class _T:
    def __init__(self, m, d_model, h_pass):
        self.m, self.d_model, self.h_pass = m, d_model, h_pass


def _log2_factorial(n: int) -> float:
    return math.log2(math.factorial(n))


def test_bits_table_counts():
    d = np.array([6, 8])
    lf = log_factor(50, d, np.ones(2) * 0.01, 200, d, np.ones(2) * 0.001)
    b = bits_table(1.0, (128,), [_T(128, 16, 2), _T(64, 8, None)], pd.DataFrame(dict(d=[16], N_mean=[60.0])), lf)
    assert list(b.source.str.split(" ").str[0]) == ["RGR", "RGR", "pal", "Dana", "Dana"]
    assert b.bits_per_param.iloc[0] == pytest.approx(_log2_factorial(128) / (2 * 128 * math.log(128)))
    assert b.bits_per_param.iloc[1] == pytest.approx(_log2_factorial(128) / (2 * 2 * 16 * 16))
    assert b.bits_per_param.iloc[2] == pytest.approx(_log2_factorial(60) / 256)
    assert b.bits_per_unit.iloc[3] == pytest.approx(np.mean(0.01 * 2500 / d**2) * math.log2(50))
    r = bits_ranges(b)
    assert r.pal_lo == r.pal_hi == pytest.approx(b.bits_per_param.iloc[2])
    assert r.measured_below_min == r.measured_below_max == round(2 / b.bits_per_param.iloc[1])  # Allen-Zhu and Li's 2
    none = bits_ranges(b[~b.source.str.startswith("RGR")])  # no RGR rows (a smoke table): no factor
    assert none.measured_below_min is None and none.measured_below_max is None


def _dk_runs() -> pd.DataFrame:
    rows = []
    for seed in range(3):
        for d_k in (2, 4, 8):
            rows.append(dict(m=16, d_model=8, h=1, ell=4, d_k=d_k, seed=seed, test_f1=0.2 * d_k + 0.01 * seed))
        for ell in (2, 8):
            rows.append(dict(m=16, d_model=8, h=1, ell=ell, d_k=4, seed=seed, test_f1=0.5 + 0.01 * ell))
    return pd.DataFrame(rows)


def test_saturation_readings_on_a_known_table():
    runs = _dk_runs()
    (g,) = past_ell(runs)
    assert (g.frm, g.to, g.n, g.sign) == (4, 8, 3, "+") and g.mean == pytest.approx(0.8)
    (e,) = ell_effect(runs)
    assert (e.frm, e.to) == (2, 8) and e.mean == pytest.approx(0.08 - 0.02)
    assert len(f1_table(runs)) == 5
    assert past_ell(runs[runs.ell != 4]) == []  # no ladder through d_k = ell (a smoke table): nothing to read


def test_dk_sweep_plans_its_points():
    runs = DK_SATURATION.planned_runs("book")
    assert len(runs) == 114 and {r.ell for r in runs} == {4, 8, 16, 32, 64} and max(r.d_k for r in runs) < 64
    assert all(r.d_model == 64 and r.h in (1, 2) for r in runs)
    with pytest.raises(ValueError, match="preset"):
        DK_SATURATION.planned_runs("nope")


def test_pal_adam_keys_unchanged_and_lr_table():
    assert PalConfig(N=8, d=4).key() == PalConfig(N=8, d=4, optimizer="adam").key() != PalConfig(
        N=8, d=4, optimizer="gd").key()
    with pytest.raises(ValueError, match="optimizer"):
        PalConfig(optimizer="sgd")
    rows = []
    for opt, lr, n in (("adam", 0.1, 20), ("adam", 0.01, 16), ("gd", 10.0, 18)):
        for seed in range(2):
            rows += [dict(N=n, d=8, seed=seed, steps=3000, lr=lr, optimizer=opt, accuracy=1.0),
                     dict(N=n + 1, d=8, seed=seed, steps=3000, lr=lr, optimizer=opt, accuracy=0.5)]
    t = lr_table(capacities(pd.DataFrame(rows)))
    assert list(t.N_ratio) == pytest.approx([1.0, 0.8, 0.9]) and set(t.seeds) == {2}


def test_aot_param_counts():
    runs = pd.DataFrame([dict(question="split", param="code", d=10, d_h=4, H=10, N=50, n_params=1728, accuracy=0.1,
                              seed=0)])
    assert param_table(runs).attention_params.iloc[0] == 720


def quoted_in(quote: str, text: str) -> bool:
    """Whether ``quote`` occurs in ``text`` once both are :func:`_normalise`d, spaces ignored (a PDF's extraction
    drops or adds spaces between words: "Amongrecentworks"), with a line-end hyphen read either way."""
    q = normalise(quote).replace(" ", "")
    return any(q in normalise(text, h).replace(" ", "") for h in ("-", ""))


def normalise(text: str, hyphenation: str = "-") -> str:
    """Text as compared: Unicode NFKC, typographic quotes made plain, a hyphen at a line's end joined to the next
    line by ``hyphenation`` ("-": a hyphenated word; "": a word the line break split), every run of whitespace
    one space (a PDF's extracted text breaks lines and ligatures where the source did not)."""
    text = unicodedata.normalize("NFKC", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = re.sub(r"-[ \t]*\n\s*", hyphenation, text)
    return re.sub(r"\s+", " ", text).strip()
