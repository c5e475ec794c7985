"""Futility stopping is not in the paper's protocol: every chapter that reads a table with futile-stopped rows
names how many (issue 45). Read from the committed notebooks: their recorded inputs and their outputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rgr import catalog
from rgr.experiments.futility import futile_stops

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "book").glob("*.ipynb"))


def _outputs(nb: dict) -> str:
    texts = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            for key in ("text", "data"):
                v = out.get(key)
                if isinstance(v, dict):
                    texts += ["".join(x) if isinstance(x, list) else str(x) for x in v.values()]
                elif v is not None:
                    texts.append("".join(v) if isinstance(v, list) else str(v))
    return "\n".join(texts)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_reading_futile_stopped_runs_names_their_count(path):
    nb = json.loads(path.read_text())
    read = [Path(f).stem for f in nb["metadata"].get("rgr", {}).get("inputs", {}).get("files", [])
            if f.startswith("data/") and f.endswith(".csv")]
    shown = _outputs(nb)
    for name in read:
        try:
            runs = catalog.load(name, "paper")
        except Exception:  # not a sweep table with a paper preset
            continue
        stops = futile_stops(runs)
        if stops.stopped and f"`{name}` — " in shown:  # the chapter shows this table's paper rows
            assert f"{stops.stopped:,} of {stops.runs:,}" in shown, (path.name, name)
