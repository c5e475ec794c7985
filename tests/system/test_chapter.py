"""What every data chapter does first (rgr.chapters.loading): load or fall back loudly, and say where rows came from.

The theory chapters show data/constructions.csv as it is: rgr.catalog.load_complete reads all of it or stops."""

import pandas as pd
import pytest

from rgr.catalog import get as get_table
from rgr.catalog import load_complete
from rgr.chapters.loading import (
    ExperimentData,
    load_experiment,
    provenance_note,
    reproduce_note,
    scope_words,
)
from rgr.paths import data_dir
from rgr.store import TableError, load_table
from rgr.store.write import repair_table, replace_table


def test_missing_table_falls_back_to_labelled_smoke(tmp_path):
    data = load_experiment("base", "book", "cpu", root=tmp_path)
    assert data.is_fallback and data.preset == "smoke" and len(data.runs)
    note = provenance_note(data).data
    assert "Smoke data, not results" in note and "python -m rgr sweep base --preset book" in note
    assert not any(tmp_path.iterdir())  # the smoke rows went to a temporary folder, not to data/


def test_corrupt_table_is_an_error_not_a_fallback(tmp_path):
    (tmp_path / "base.csv").write_text("run_key,m\nabc")  # truncated: no final newline
    with pytest.raises(TableError):
        load_experiment("base", "book", "cpu", root=tmp_path)


def _rows(commits):
    return pd.DataFrame(dict(device_name="cpu", git_commit=commits, rgr_version="0.1.0",
                             date=[f"2026-11-21T00:00:{i:02d}Z" for i in range(len(commits))]))


def test_provenance_names_few_commits_and_counts_many():
    few = provenance_note(ExperimentData("base", "book", _rows(["a", "b", "a"]))).data
    assert "commits a, b" in few and "Reduced grid" in few
    many = provenance_note(ExperimentData("base", "paper", _rows(["a", "b", "c", "d", "e"]))).data
    assert "5 commits, from a to e" in many and "Reduced grid" not in many


def test_reproduce_note_lists_paper_commands():
    text = reproduce_note(["base", "lambda8"], "permutation_sweeps.ipynb").data
    assert "python -m rgr sweep lambda8 --preset paper --device cuda" in text
    assert "papermill book/permutation_sweeps.ipynb" in text


def test_gpt2_goes_through_the_same_loader(tmp_path):
    data = load_experiment("gpt2", "book", "cpu", root=tmp_path)  # its own runner, the same fallback
    assert data.is_fallback and (data.runs.embedding_source == "stand-in (not GPT-2)").all()
    (tmp_path / "gpt2.csv").write_text("run_key\nabc")  # truncated: an error, never a silent stand-in
    with pytest.raises(TableError):
        load_experiment("gpt2", "book", "cpu", root=tmp_path)


def test_scope_words_count_what_the_rows_span_and_the_presets_rounds():
    rows = pd.DataFrame([dict(m=m, d_model=d, h=h, seed=s) for m, d in ((64, 16), (64, 32)) for h in (1, 16)
                         for s in (0, 1)])
    said = scope_words(ExperimentData("softmax", "book", rows))
    assert said == "the book preset trains 2 seeds and head counts up to 16 at 2 cells, with 1 refinement round"
    one = scope_words(ExperimentData("value", "paper", rows[rows.seed == 0]))
    assert one.startswith("the paper preset trains 1 seed and") and one.endswith("with 0 refinement rounds")


def test_seeds_are_counted_per_cell_and_a_range_named_where_cells_differ():
    rows = pd.DataFrame([dict(m=m, d_model=m // 8, h=1, seed=s) for m in (512, 4096)
                         for s in range(10 if m == 512 else 3)])

    def seeds_words(df: pd.DataFrame) -> str:  # what the limits paragraph says the rows train
        said = scope_words(ExperimentData("lambda8", "paper", df)).removeprefix("the paper preset trains ")
        return said.split(" and head counts", 1)[0].strip()

    assert seeds_words(rows) == "3–10 seeds a cell" and seeds_words(rows[rows.m == 512]) == "10 seeds"
    assert seeds_words(rows[rows.seed == 0]) == "1 seed" and seeds_words(rows.drop(columns="seed")) == ""
    assert "(3–10 seeds a cell)" in provenance_note(ExperimentData("lambda8", "paper", rows.assign(
        device_name="cpu", git_commit="a", rgr_version="0.1.0", date="2026-11-27T00:00:00Z"))).data


@pytest.fixture
def constructions_lines() -> list[str]:
    """data/constructions.csv (the book rows the theory chapters show), as lines."""
    return (data_dir() / "constructions.csv").read_text().splitlines(keepends=True)


def write_sealed(path, lines: list[str]) -> None:
    """A table as a sweep leaves it, seal included (a table without one reads with an UnsealedTable warning)."""
    path.write_text("".join(lines))
    repair_table(path, get_table("constructions").schema, seal=True)  # as `python -m rgr repair <table> --seal`


def test_load_complete_reads_every_planned_run(constructions_lines, tmp_path):
    write_sealed(tmp_path / "constructions.csv", constructions_lines)
    assert len(load_complete("constructions", "book", tmp_path)) == len(constructions_lines) - 1


def test_load_complete_refuses_a_cut_table_in_one_line(constructions_lines, tmp_path):
    """Issue 33: a constructions.csv cut to half its rows ran with no warning."""
    kept = (len(constructions_lines) - 1) // 2
    write_sealed(tmp_path / "constructions.csv", constructions_lines[: kept + 1])
    with pytest.raises(TableError, match=rf"constructions.csv holds {kept} of the {len(constructions_lines) - 1} "
                                         r"planned runs of preset 'book'") as e:
        load_complete("constructions", "book", tmp_path)
    assert "\n" not in str(e.value) and "`python -m rgr constructions --preset book`" in str(e.value)


def test_load_complete_refuses_a_table_without_the_presets_rows(tmp_path):
    """Issue 33: a constructions.csv with only smoke rows gave `KeyError: 0` deep in the chapter."""
    schema = get_table("constructions").schema
    smoke = load_table(data_dir() / "constructions.csv", schema).assign(preset="smoke")
    replace_table(tmp_path / "constructions.csv", schema, smoke.assign(run_key=list(schema.key.of(smoke))))  # keyed
    with pytest.raises(TableError, match="constructions.csv holds no rows of preset 'book'; complete it with "
                                         "`python -m rgr constructions --preset book`"):
        load_complete("constructions", "book", tmp_path)
    with pytest.raises(TableError, match="no such table"):
        load_complete("constructions", "book", tmp_path / "elsewhere")
    with pytest.raises(ValueError, match=r"preset must be one of \['book', 'smoke'\] .*for constructions, got 'huge'"):
        load_complete("constructions", "huge", tmp_path)
