"""Issue 45, item 5 (second bullet): chapter *Denser graphs* reads the `unstopped` extension (the regular table's
futility stops at its false-stop point and on the plateau curves, retrained with the rule off) as a second reading.

Edits cell sources only (nbformat), at exact string anchors; idempotent (a second run changes nothing); fails
loudly when an anchor is missing. Outputs are left as they are: the chapter is re-executed after the merge.

    python scripts/_issue45_nb_edits.py [REPO_ROOT]   # default: this checkout
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

IMPORTS = {  # anchor line in the imports cell -> the line that goes right after it
    "from rgr.experiments.registry import get_experiment": "from rgr.experiments.unstopped import PLATEAUS",
    "from rgr.results import denser_graphs as dg": "from rgr.results.replication.rows import Source\n"
                                                   "from rgr.results.replication.unstopped import unstopped_reading, "
                                                   "unstopped_runs",
}
REPLACE = {  # old -> new, each in exactly one cell: the chapter links and reproduces the extension's table too
    'download_links(["regular"])': 'download_links(["regular", "unstopped"])',
    'reproduce_note(["regular"], "denser_graphs.ipynb")':
        'reproduce_note(["regular", "unstopped"], "denser_graphs.ipynb")',
}
AFTER = "Limits of this reading: one $(m, d_\\text{model})$ pair"  # the new cells go after this markdown cell

HEAD_ID, CODE_ID, TEXT_ID = "unstopped-head", "unstopped-reading", "unstopped-words"
HEAD = "## The futility rule's stops, retrained"
CODE = """\
unstopped = unstopped_reading(Source("regular", reg.preset, reg.runs), unstopped_runs(reg.preset), PLATEAUS)
glue_finding(unstopped, prefix="unstopped_")
table(unstopped.points, digits={"f1_before": 2, "f1_after": 2},
      caption="Points with a futility-stopped run retrained with the rule off: seeds at the point, runs retrained, "
              "how many of them reached F1 0.99 or ran to the cutoff, and the point's mean test F1 before and after")"""
TEXT = """\
The futility rule is not in the paper's protocol. A declared extension (`unstopped`, README *Choices the paper left
open*) retrained {glue:text}`unstopped_retrained:d` of the runs it stopped here, each from its own seed to the same
20,000-step cutoff with the rule off: the {glue:text}`unstopped_false_retrained:d` false stops (stopped at a point
where a sibling seed reached the target) and the {glue:text}`unstopped_plateau_retrained:d` stopped runs on the two
plateau curves that the verdict reads (r = 2 with one head, r = 4 with two heads;
{glue:text}`unstopped_plateau_points:d` budgets). {glue:text}`unstopped_false_reached:d` of the
{glue:text}`unstopped_false_retrained:d` false stops reach the target once retrained, which moves their point's mean
F1 from {glue:text}`unstopped_false_f1_before:.2f` to {glue:text}`unstopped_false_f1_after:.2f`. On the plateau
curves {glue:text}`unstopped_plateau_reached:d` of the {glue:text}`unstopped_plateau_retrained:d` retrained runs
reach it; no point's mean F1 moves by more than {glue:text}`unstopped_plateau_shift_max:.2f` (the largest move at
{glue:text}`unstopped_plateau_shift_where`), and the best point of the two curves goes from
{glue:text}`unstopped_plateau_best_before:.2f` to {glue:text}`unstopped_plateau_best_after:.2f`. Read again with
the retrained runs in the stopped ones' place, {glue:text}`unstopped_rows_changed:d` of the
{glue:text}`unstopped_rows_read:d` verdict rows of this table change their reading and
{glue:text}`unstopped_statuses_changed:d` their status (changed: {glue:text}`unstopped_changed_words`). This is a
second reading: the figures above and the verdicts of *Does it replicate?* read the table as the protocol's sweep
trained it."""


def _cell(nb, anchor: str) -> int:
    hits = [i for i, c in enumerate(nb.cells) if anchor in c.source]
    if len(hits) != 1:
        raise SystemExit(f"anchor {anchor!r}: found in {len(hits)} cells of the chapter, expected 1")
    return hits[0]


def _ensure(nb, at: int, cell_id: str, cell) -> int:
    """Put ``cell`` (id ``cell_id``) at index ``at`` unless a cell with that id exists (then its source is set)."""
    ids = [c.get("id") for c in nb.cells]
    cell["id"] = cell_id
    if cell_id in ids:
        nb.cells[ids.index(cell_id)].source = cell.source
        return ids.index(cell_id)
    nb.cells.insert(at, cell)
    return at


def edit(root: Path) -> bool:
    path = root / "book" / "denser_graphs.ipynb"
    nb = nbformat.read(path, as_version=4)
    before = nbformat.writes(nb)
    imports = _cell(nb, "from rgr.results.thresholds import thresholds")
    lines = nb.cells[imports].source.split("\n")
    for anchor, new in IMPORTS.items():
        if anchor not in lines:
            raise SystemExit(f"anchor {anchor!r}: not a line of the imports cell")
        if new.split("\n")[0] not in lines:
            at = lines.index(anchor) + 1
            lines[at:at] = new.split("\n")
    nb.cells[imports].source = "\n".join(lines)
    for old, new in REPLACE.items():
        if not any(new in c.source for c in nb.cells):
            i = _cell(nb, old)
            nb.cells[i].source = nb.cells[i].source.replace(old, new)
    at = _cell(nb, AFTER) + 1
    at = _ensure(nb, at, HEAD_ID, nbformat.v4.new_markdown_cell(HEAD)) + 1
    code = nbformat.v4.new_code_cell(CODE, metadata={"tags": ["hide-input"]})
    at = _ensure(nb, at, CODE_ID, code) + 1
    _ensure(nb, at, TEXT_ID, nbformat.v4.new_markdown_cell(TEXT))
    if nbformat.writes(nb) == before:
        return False
    nbformat.write(nb, path)
    return True


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    print(f"{root / 'book' / 'denser_graphs.ipynb'}: {'edited' if edit(root) else 'already edited'}")
