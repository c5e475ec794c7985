"""Train one of a paper preset's stacks on the CPU and on a GPU and record how far their results differ.

    python scripts/device_check.py [--cell 1024x128] [--heads 8] [--steps 1000] [--early-steps 10] [--out FILE]

Issue 28's check that a table's GPU rows and its CPU rows are the same results up to float rounding
(:func:`rgr.experiments.sizing.device_check.compare_devices`): the stack is the ``paper`` preset's first-round stack of
the cell with ``--heads`` heads at its largest D_K (:func:`rgr.experiments.sizing.bench.cell_stack`), each run cut at
``--steps``. Prints the record as JSON (also to ``--out``), with the commit it ran at and the date; needs CUDA.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import torch

from rgr.experiments.sizing.bench import CELLS, cell_stack
from rgr.experiments.sizing.device_check import compare_devices
from rgr.store import code_version


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cell", default="1024x128", choices=sorted(CELLS))
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--early-steps", type=int, default=10)
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if not torch.cuda.is_available():
        print("device_check: no CUDA device on this machine", file=sys.stderr)
        return 2
    cfgs = cell_stack(a.cell, a.heads, "cpu")
    rec = compare_devices(cfgs, "cpu", "cuda", early_steps=a.early_steps, steps=a.steps).as_dict()
    rec.update(cell=a.cell, heads=a.heads, gpu=torch.cuda.get_device_name(), torch=torch.__version__,
               dtype=cfgs[0].dtype, cuda_graphs="on unless RGR_CUDA_GRAPHS=0",
               git_commit=code_version(), date=datetime.date.today().isoformat())
    text = json.dumps(rec, indent=1)
    print(text)
    if a.out is not None:
        a.out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
