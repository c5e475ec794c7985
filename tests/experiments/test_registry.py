"""Which preset's rows a reader gets: rgr.catalog.resolve_preset and the chapters' loader."""

from __future__ import annotations

import pytest

from rgr import catalog
from rgr.chapters import loading, params
from rgr.store.write import write_rows


@pytest.mark.parametrize(
    "completeness, requested, expected",
    [
        ({"book": 1.0}, "auto", "book"),
        ({"book": 1.0, "paper": 1.0}, "auto", "paper"),
        ({"book": 1.0, "paper": 0.4}, "auto", "book"),
        ({"book": 0.5, "paper": 0.6}, "auto", "paper"),
        ({"paper": 0.2}, "auto", "paper"),
        ({}, "auto", "book"),
        ({"book": 1.0, "paper": 1.0}, "book", "book"),
        ({"book": 1.0, "paper": 1.0}, "smoke", "smoke"),
        ({"book": 1.0}, "paper", "paper"),
    ],
)
def test_one_table_s_preset(completeness, requested, expected):
    assert catalog.resolve_preset(["base"], requested, found={"base": completeness}) == expected


def test_resolve_preset_rejects_bad_input():
    with pytest.raises(ValueError, match="preset = 'huge'"):
        catalog.resolve_preset(["base"], "huge")
    with pytest.raises(ValueError, match="completeness"):
        catalog.resolve_preset(["base"], found={"base": {"book": 1.5}})


@pytest.fixture
def fake_completeness(monkeypatch):
    """base: paper complete; softmax: paper 30%; linear: book only."""
    table = {("base", "paper"): 1.0, ("base", "book"): 1.0, ("softmax", "paper"): 0.3, ("softmax", "book"): 1.0,
             ("linear", "book"): 1.0}
    monkeypatch.setattr(catalog, "preset_completeness", lambda name, preset, root=None: table.get((name, preset)))


def test_resolve_preset_alone_and_together(fake_completeness):
    assert catalog.resolve_preset(["base"]) == "paper"
    assert catalog.resolve_preset(["softmax"]) == "book"
    assert catalog.resolve_preset(["linear"]) == "book"
    # compared run against run: paper only when every one of them would be paper
    assert catalog.resolve_preset(["softmax", "linear", "base"]) == "book"
    assert catalog.resolve_preset(["base", "base"]) == "paper"
    # a preset asked for by name is obeyed, whatever is complete
    assert catalog.resolve_preset(["softmax", "base"], "paper") == "paper"
    assert catalog.resolve_preset(["base"], "book") == "book"


def test_preset_completeness_on_committed_tables():
    # the committed book sweeps are complete; a preset the experiment lacks has no completeness
    assert catalog.preset_completeness("base", "book") == 1.0
    assert catalog.preset_completeness("base", "nope") is None
    assert catalog.resolve_preset(["base"], "smoke") == "smoke"


def _book_rows_only(root, *names):
    """data/'s book rows of ``names`` alone in ``root``: what auto reads then does not depend on which paper sweeps
    ran."""
    for name in names:
        rows = catalog.load(name, "book")
        write_rows(root / f"{name}.csv", catalog.schema_for_file(catalog.table_path(name)), rows.to_dict("records"))


def test_chapter_loader_says_which_preset_and_why(tmp_path):
    _book_rows_only(tmp_path, "linear", "value")
    data = loading.load_experiment("linear", "auto", root=tmp_path)  # book only: auto reads book
    assert (data.preset, data.requested) == ("book", "auto")
    note = loading.provenance_note(data).data
    assert "Chosen by `preset = \"auto\"`" in note and "seeds)" in note and "`linear`: book 100%" in note
    asked = loading.provenance_note(loading.load_experiment("linear", "book", root=tmp_path)).data
    assert "Chosen by" not in asked
    pair = loading.load_experiments(["linear", "value"], "auto", root=tmp_path, together=True)
    assert {d.preset for d in pair.values()} == {"book"}
    assert "compared run against run" in loading.provenance_note(pair["value"]).data


def test_chapter_params_accept_auto_and_name_the_choices():
    assert params.check("auto").preset == "auto"
    with pytest.raises(params.ParameterError, match="choose one of 'auto', 'smoke', 'book', 'paper'"):
        params.check("nope")


def test_load_groups_reads_each_table_once_per_preset(tmp_path, monkeypatch):
    # value has paper rows here, linear only book: alone, value reads paper; read with linear, both read book
    _book_rows_only(tmp_path, "linear")
    rows = catalog.load("value")
    write_rows(tmp_path / "value.csv", catalog.schema_for_file(catalog.table_path("value")), rows.to_dict("records"))
    reads = []
    real = loading.load
    monkeypatch.setattr(loading, "load",
                        lambda name, preset, *a: reads.append((name, preset)) or real(name, preset, *a))
    got = loading.load_groups({"value": ("value",), "linear": ("linear",), "pair": ("value", "linear")}, "auto",
                              root=tmp_path)
    alone = "paper" if catalog.preset_completeness("value", "paper", tmp_path) == 1.0 else "book"
    assert got["value"]["value"].preset == alone and got["pair"]["value"].preset == "book"
    assert "compared run against run" in got["pair"]["linear"].why
    assert got["linear"]["linear"].why.startswith("paper rows")
    assert sorted(reads) == sorted(set(reads))  # one read per (table, preset)


@pytest.mark.parametrize("name", catalog.NAMES)
def test_every_preset_of_every_table_can_be_written(name):
    """The provenance column ``preset`` admits each preset a table declares (one vocabulary, checked when a row is
    written): a preset missing there fails its first write after its first stack trained."""
    (col,) = [c for c in catalog.get(name).schema.all_columns if c.name == "preset"]
    assert set(catalog.get(name).presets) <= set(col.choices)


def test_several_presets_are_read_at_once_and_completeness_takes_rows_read():
    """load_if_present of several presets: their rows as one preset at a time would give them, the table read once;
    preset_completeness on rows the caller read equals reading them itself."""
    import pandas as pd

    both = catalog.load_if_present("settled", ["paper", "wide", "no-such-preset"])
    apart = pd.concat([catalog.load_if_present("settled", p) for p in ("paper", "wide")], ignore_index=True)
    assert both.equals(apart) and set(both["preset"]) == {"paper", "wide"}
    assert catalog.load_if_present("settled", ["no-such-preset"]).empty
    for p in ("paper", "wide"):
        assert catalog.preset_completeness("settled", p, done=both) == catalog.preset_completeness("settled", p)
