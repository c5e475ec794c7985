"""Dana et al.'s published tables reduced to what the re-fit needs: data/peers_refit.csv (chapter *the law beside
other capacity results*).

Their repository (``leodana2000/Transformer_Attentional_Memory``) states no licence, so its files are not copied
into this one. ``python -m rgr peers-refit`` reads them, from data/peers/ (where ``scripts/fetch_peers.py`` puts
them) or from a local clone (``--git-dir``), at the pinned commit, and commits only our analysis of them: per
width d, the slope of accuracy in H by their own rule (:func:`rgr.results.peers.dana.their_slope`) and the head counts
it used; their experiment 3's two slopes in d and two accuracies (:func:`rgr.results.peers.dana.exp3_refit`). Every
row names its source file and commit and the code and command that wrote it. :func:`dana_refit` rebuilds the
chapter's fits from that table alone, so the chapter never needs their files.
"""

from __future__ import annotations

import hashlib
import io
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ... import __version__
from ...paths import data_dir
from ...store import Column, RowKey, Schema, TableError, code_version, load_table
from .dana import (
    EXP1_LARGE_WIDTHS,
    EXP1_WIDTHS,
    ExpThreeRefit,
    LogFactor,
    PowerRefit,
    exp3_refit,
    exp3_split,
    log_factor,
    power_refit,
    their_slope,
    their_stop,
)

REPO = "leodana2000/Transformer_Attentional_Memory"
COMMIT = "cffc0d8f3668d4e8bb1d59e0dac6f0fd70c2b13a"
_EXP1 = tuple(f"Scaling laws/Data_exp_1_{d}.csv" for d in EXP1_WIDTHS)  # N = 50, d = d_head from 3 to 13
_EXP1_LARGE = tuple(f"Scaling laws/Data_exp_1_{d}_dim.csv" for d in EXP1_LARGE_WIDTHS)  # their appendix B.1: N = 200
_EXP3 = "Scaling laws/Data_exp_3.csv"
PAPER = "Memorization_in_Attention_only_Transformers-2.pdf"  # the AISTATS 2025 version (their README: "accepted")
PAPER_V2 = "Memorization_in_Attention_only_Transformers V2.pdf"  # the earlier version, for the record
FILES: tuple[str, ...] = _EXP1 + _EXP1_LARGE + (  # what scripts/fetch_peers.py fetches
    "Scaling laws/Data_exp_2.csv", "Scaling laws/Data_exp_2_dim.csv", _EXP3, "README.md", PAPER, PAPER_V2)
_NEEDED: tuple[str, ...] = _EXP1 + _EXP1_LARGE + (_EXP3,)  # what the re-fit reads
COMMAND = "python -m rgr peers-refit"
_STATISTICS = ("slope_in_H", "slope_in_d_below", "slope_in_d_above", "acc_at_d_head", "acc_max_above")
_EXP3_STATS = _STATISTICS[1:]
_N_MAIN = 50  # their experiments 1-4; appendix B.1 repeats experiment 1 at N = 200
_COLUMNS = ("acc", "para", "N", "d", "d_head")


@dataclass(frozen=True)
class _DerivedSchema(Schema):
    """A table derived from another repository's files: a row key and its own provenance (no run, device, preset)."""

    provenance: tuple[Column, ...] = ()

    @property
    def all_columns(self) -> tuple[Column, ...]:
        return (Column("run_key", "str", "hash of the statistic, its source file and width; unique per row"),
                *self.columns, *self.provenance)


SCHEMA = _DerivedSchema("peers_refit", (
    Column("statistic", "str", "slope_in_H: their step 1 at one width (accuracy gained per head, the points up to the "
           "first accuracy above 0.95 included); slope_in_d_below / _above: their experiment 3's least-squares slope "
           "of accuracy in d over d <= d_head / d >= d_head; acc_at_d_head, acc_max_above: its accuracy at d = d_head "
           "and the largest above it", choices=_STATISTICS),
    Column("N", "int", "their vocabulary (N^2 associations memorised)", low=1),
    Column("d", "int", "embedding width d (empty where d is swept: experiment 3)", nullable=True, low=1,
           null_when=("statistic", _EXP3_STATS)),
    Column("d_head", "int", "head width d_head", low=1),
    Column("H", "int", "head count (empty where H is swept: slope_in_H)", nullable=True, low=1,
           null_when=("statistic", ("slope_in_H",))),
    Column("swept", "str", "the variable the statistic's points run along", choices=("H", "d")),
    Column("x_first", "int", "the first value of the swept variable among the points used", low=1),
    Column("x_last", "int", "the last value of the swept variable among the points used", low=1),
    Column("n_points", "int", "how many of the file's points the statistic used", low=1),
    Column("value", "float", "the statistic (accuracy per head, accuracy per unit of d, or accuracy)"),
), provenance=(
    Column("source_repo", "str", "the GitHub repository of the files read"),
    Column("source_commit", "str", "the commit of that repository the files were read at"),
    Column("source_file", "str", "the file the statistic was computed from, a path in that repository"),
    Column("rgr_version", "str", "version of the rgr package that wrote the row"),
    Column("git_commit", "str", "git commit of this repository (suffix +dirty if rgr/ had uncommitted changes)"),
    Column("date", "str", "UTC date and time the row was written (ISO 8601)"),
    Column("command", "str", "the command that wrote the table"),
), key=RowKey.per_row(("statistic", "source_file", "d"), lambda r: _key(r["statistic"], r["source_file"], r["d"])))


def local_name(path: str) -> str:
    """The name their file ``path`` has in data/peers/ (their README.md as ``their-README.md``, beside ours)."""
    name = Path(path).name
    return "their-README.md" if name == "README.md" else name


class PeerDataMissing(FileNotFoundError):
    """Their files are neither in data/peers/ nor in the clone given (they are fetched, not committed)."""


def _peer_dir(root: Path | None = None) -> Path:
    return data_dir(root) / "peers"


def _checked(df: pd.DataFrame, where: str) -> pd.DataFrame:
    if tuple(df.columns) != _COLUMNS or df.empty:
        raise ValueError(f"{where} must hold columns {_COLUMNS} and rows, got {tuple(df.columns)}")
    return df


def _git_show(git_dir: Path, path: str) -> bytes | None:
    r = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{COMMIT}:{path}"], capture_output=True)
    return r.stdout if r.returncode == 0 else None


def read_peer_files(folder: Path | None = None, git_dir: Path | None = None) -> dict[str, pd.DataFrame]:
    """Every file of :data:`_NEEDED` by its path in their repository, from ``folder`` (default data/peers/) or from
    the clone ``git_dir`` at :data:`COMMIT`; :class:`PeerDataMissing` naming every file that is absent."""
    raw: dict[str, bytes | None] = {}
    for path in _NEEDED:
        if git_dir is not None:
            raw[path] = _git_show(Path(git_dir), path)
        else:
            f = (folder or _peer_dir()) / local_name(path)
            raw[path] = f.read_bytes() if f.is_file() else None
    missing = [p for p, b in raw.items() if b is None]
    if missing:
        where = f"{git_dir} at commit {COMMIT[:12]}" if git_dir is not None else str(folder or _peer_dir())
        raise PeerDataMissing(f"{len(missing)} of their {len(_NEEDED)} files are not in {where}: "
                              f"{', '.join(Path(p).name for p in missing)}; fetch them with "
                              "`python scripts/fetch_peers.py` (or pass --git-dir a clone holding that commit)")
    return {p: _checked(pd.read_csv(io.BytesIO(b)), f"{p}") for p, b in raw.items()}


def _key(statistic: str, source: str, d: int | None) -> str:
    """A row's run_key: its statistic, source file and width (also recomputed by the loader: :data:`SCHEMA`)."""
    return hashlib.sha256(f"{statistic}|{source}|{d}".encode()).hexdigest()[:16]


def _row(statistic: str, source: str, df: pd.DataFrame, x: str, value: float, **design: int | None) -> dict:
    xs = df[x].astype(int)
    key = _key(statistic, source, design.get("d"))
    return dict(run_key=key, statistic=statistic, swept="H" if x == "para" else "d", x_first=int(xs.iloc[0]),
                x_last=int(xs.iloc[-1]), n_points=len(df), value=float(value), source_file=source, **design)


def summarise(tables: dict[str, pd.DataFrame], command: str = COMMAND) -> pd.DataFrame:
    """The rows of data/peers_refit.csv from their files (:func:`read_peer_files`), with provenance."""
    rows = []
    for path in _EXP1 + _EXP1_LARGE:
        df = tables[path].sort_values("para")
        if df["d"].nunique() != 1 or (df["d"] != df["d_head"]).any():
            raise ValueError(f"{path} must hold one width d = d_head (their experiment 1)")
        used = df.iloc[:their_stop(df["acc"].to_numpy())]
        rows.append(_row("slope_in_H", path, used, "para", their_slope(df["para"].to_numpy(), df["acc"].to_numpy()),
                         N=int(df.N.iloc[0]), d=int(df.d.iloc[0]), d_head=int(df.d.iloc[0]), H=None))
    df = tables[_EXP3]
    fit, (d_head, lo, hi) = exp3_refit(df), exp3_split(df)
    design = dict(N=int(df.N.iloc[0]), d=None, d_head=d_head, H=int(df.para.iloc[0]))
    for stat, part, value in (("slope_in_d_below", lo, fit.slope_below), ("slope_in_d_above", hi, fit.slope_above),
                              ("acc_at_d_head", lo.iloc[-1:], fit.acc_at_d_head),
                              ("acc_max_above", hi.iloc[1:], fit.acc_max_above)):
        rows.append(_row(stat, _EXP3, part, "d", value, **design))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    prov = dict(source_repo=REPO, source_commit=COMMIT, rgr_version=__version__, git_commit=code_version(),
                date=when, command=command)
    out = pd.DataFrame([{**r, **prov} for r in rows])
    for c in ("d", "H"):
        out[c] = out[c].astype("Int64")
    return out[[c.name for c in SCHEMA.all_columns]]


def refit_path(root: Path | None = None) -> Path:
    return data_dir(root) / "peers_refit.csv"


def _load_refit(root: Path | None = None) -> pd.DataFrame:
    """data/peers_refit.csv through the strict loader (a missing table names the command that writes it)."""
    path = refit_path(root)
    if not path.is_file():
        raise TableError(f"{path}: no such table; write it with `{COMMAND}` (it needs their files: "
                         "`python scripts/fetch_peers.py` first)")
    return load_table(path, SCHEMA)


def dana_refit(root: Path | None = None) -> tuple[PowerRefit, ExpThreeRefit, str]:
    """Their experiments 1/4 and 3 re-fitted from data/peers_refit.csv: (power fit, experiment 3, its source)."""
    df = _load_refit(root)
    exp1 = df[(df.statistic == "slope_in_H") & (df.N == _N_MAIN)].sort_values("d")
    one = {s: df[df.statistic == s] for s in _EXP3_STATS}
    bad = [s for s, rows in one.items() if len(rows) != 1]
    if bad or len(exp1) != len(set(exp1.d)):
        raise TableError(f"{refit_path(root)}: needs one row per width of slope_in_H and one of each of {_EXP3_STATS} "
                         f"(wrong count of {bad or ['slope_in_H']}); rewrite it with `{COMMAND}`")
    fit = power_refit(exp1.d.to_numpy(int), exp1.value.to_numpy(float))
    value = {s: float(rows.value.iloc[0]) for s, rows in one.items()}
    exp3 = ExpThreeRefit(d_head=int(one["acc_at_d_head"].d_head.iloc[0]), slope_below=value["slope_in_d_below"],
                         slope_above=value["slope_in_d_above"], acc_at_d_head=value["acc_at_d_head"],
                         acc_max_above=value["acc_max_above"])
    commits = sorted(set(df.source_commit))
    at = ", ".join(c[:12] for c in commits)
    return fit, exp3, f"{len(df)} statistics of {REPO} at commit {at} ({refit_path(root).name})"


def dana_wider(root: Path | None = None, d_from: int = 6) -> tuple[PowerRefit, LogFactor]:
    """From data/peers_refit.csv: their step 2 on the N = 50 widths d >= ``d_from`` only (d = 3, 4 sit near
    chance), and the log-factor test of their N = 50 widths d >= ``d_from`` against their N = 200 ones
    (:func:`rgr.results.peers.dana.log_factor`)."""
    df = _load_refit(root)
    slopes = df[df.statistic == "slope_in_H"].sort_values("d")
    main, large = slopes[slopes.N == _N_MAIN], slopes[slopes.N != _N_MAIN]
    kept = main[main.d >= d_from]
    if len(kept) < 4 or large.N.nunique() != 1 or len(large) < 2:
        raise TableError(f"{refit_path(root)}: needs slope_in_H at four or more N = {_N_MAIN} widths d >= {d_from} "
                         f"and at two or more widths of one larger N; rewrite it with `{COMMAND}`")
    fit = power_refit(kept.d.to_numpy(int), kept.value.to_numpy(float))
    return fit, log_factor(int(main.N.iloc[0]), kept.d.to_numpy(int), kept.value.to_numpy(float),
                           int(large.N.iloc[0]), large.d.to_numpy(int), large.value.to_numpy(float))


@dataclass(frozen=True)
class _RefitFinding:
    """Of the re-fit of their experiment 1: RSS(cubic) / RSS(quadratic) and the largest step-1 slope."""

    rss_ratio: float
    slope_max: float


def refit_finding(fit: PowerRefit) -> _RefitFinding:
    """:class:`_RefitFinding` of :func:`rgr.results.peers.dana.power_refit`'s result."""
    if not fit.slope:
        raise ValueError("fit must hold at least one slope")
    return _RefitFinding(rss_ratio=float(fit.rss_ratio), slope_max=float(max(fit.slope)))
