"""The engine still trains the committed rows bit for bit: a paper stack of data/base.csv, retrained here.

Refactors of rgr.experiments.engine must not move a number: sweeps resume with new code on tables written by
old code. A stack's runs interact only through rounding order (padding, compaction when runs stop), so the check
rebuilds one whole committed stack (its rows share date, wall time and stack size, in stack order) and compares
steps, stop reason, test F1 and the validation curve exactly. The futility-stopped stacks of data/regular.csv
take minutes; their check is recorded in issue 31's report (the same function, another table).
"""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import torch

from rgr.experiments.engine.config import RunConfig, stack_groups
from rgr.experiments.engine.loop import train
from rgr.paths import data_dir

# base, paper preset: (64, 16), h = 2, D_K = 24, ten seeds, all converged (trained at commit 1cdee022b66c)
BASE_STACK = ("base", "2026-11-23T19:09:47Z")


def committed_stack(table: Path, date: str) -> list[dict[str, str]]:
    """The rows of the paper-preset stack of ``table`` trained at ``date``, as the CSV has them (text)."""
    with open(table, newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["preset"] == "paper" and r["date"] == date
                and not r.get("reused_from")]
    stacks = {(r["wall_time_s"], r["stack_size"]) for r in rows}
    assert len(stacks) == 1 and len(rows) == int(rows[0]["stack_size"]), f"{table}: no whole stack at {date}"
    return rows


def config_of(row: dict[str, str]) -> RunConfig:
    """The RunConfig of a committed row, by keyword, each field parsed as its type."""
    kinds = {f.name: f.type for f in dataclasses.fields(RunConfig)}
    parse = {"int": int, "float": float, "str": str, "int | None": int, "float | None": float, "str | None": str}
    return RunConfig(**{k: parse[t](row[k]) if row.get(k) else None for k, t in kinds.items()
                        if row.get(k) or "None" in t})


def retrain_stack(table: Path, date: str) -> list[str]:
    """Retrain one committed stack; the differences from its rows (empty: bit-identical)."""
    rows = committed_stack(table, date)
    cfgs = [config_of(r) for r in rows]
    assert [c.key() for c in cfgs] == [r["config_key"] for r in rows]
    assert stack_groups(cfgs) == [list(range(len(cfgs)))], "the rows do not form one stack"
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the sweeps ran
    try:
        results = train(cfgs, device="cpu", progress=False)
    finally:
        torch.set_num_threads(threads)
    diffs = []
    for res, row in zip(results, rows):
        got = (res.steps, res.stop_reason, repr(res.test_f1), [list(p) for p in res.val_curve])
        want = (int(row["steps"]), row["stop_reason"], row["test_f1"], json.loads(row["val_curve"]))
        if got != want:
            diffs.append(f"{row['run_key']}: got steps {got[0]}, {got[1]}, F1 {got[2]}; "
                         f"committed {want[0]}, {want[1]}, F1 {want[2]}")
    return diffs


def test_a_committed_paper_stack_retrains_bit_identically():
    table, date = BASE_STACK
    assert retrain_stack(data_dir() / f"{table}.csv", date) == []


def test_config_of_reads_every_field():
    row = {f.name: "" for f in dataclasses.fields(RunConfig)}
    cfg = RunConfig(m=16, d_model=8, h=2, d_k=4, seed=3, graph="regular", r=2, futility="trend-v1")
    row.update({k: "" if v is None else str(v) for k, v in cfg.to_dict().items()})
    assert config_of(row) == cfg and config_of({**row, "futility": ""}).futility is None
