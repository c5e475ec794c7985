import pandas as pd
import pytest

from rgr.store import Column, Schema, TableError, load_table, provenance
from rgr.store.write import write_rows

SCHEMA = Schema(
    "toy",
    (
        Column("m", "int", "items"),
        Column("test_f1", "float", "F1"),
        Column("stop", "str", "why"),
        Column("converged", "bool", "flag"),
        Column("curve", "json", "validation curve"),
        Column("note", "str", "optional", nullable=True),
    ),
)


def _row(key, m=8, f1=0.5):
    return dict(run_key=key, m=m, test_f1=f1, stop="cutoff", converged=False, curve=[[500, 0.1], [1000, 0.2]],
                note=None, **provenance("smoke", "cpu"))


def test_roundtrip_merge_and_types(tmp_path):
    p = tmp_path / "toy.csv"
    assert write_rows(p, SCHEMA, [_row("a"), _row("b", f1=0.75)]) == 2
    assert write_rows(p, SCHEMA, [_row("b", f1=1.0), _row("c")]) == 3  # b replaced
    df = load_table(p, SCHEMA)
    assert list(df["run_key"]) == ["a", "b", "c"]
    assert df.loc[df.run_key == "b", "test_f1"].item() == 1.0
    assert df["m"].dtype == "int64" and df["converged"].dtype == bool
    assert df["curve"].iloc[0] == [[500, 0.1], [1000, 0.2]]
    assert df["preset"].iloc[0] == "smoke" and df["torch_version"].iloc[0]


def test_missing_table_names_the_command(tmp_path):
    with pytest.raises(TableError, match="python -m rgr sweep toy"):
        load_table(tmp_path / "toy.csv", SCHEMA)


def test_truncated_table(tmp_path):
    p = tmp_path / "toy.csv"
    write_rows(p, SCHEMA, [_row("a"), _row("b")])
    text = p.read_text()
    p.write_text(text[: len(text) - 20])
    with pytest.raises(TableError, match="incomplete|fields"):
        load_table(p, SCHEMA)
    p.write_text(text[: text.rindex("\n", 0, len(text) - 1) + 1].replace(",smoke,", ",,", 1))
    with pytest.raises(TableError, match="preset"):
        load_table(p, SCHEMA)


def test_malformed_column(tmp_path):
    p = tmp_path / "toy.csv"
    write_rows(p, SCHEMA, [_row("a")])
    df = pd.read_csv(p)
    df["m"] = "eight"
    df.to_csv(p, index=False)
    with pytest.raises(TableError, match="'m' is not of type int"):
        load_table(p, SCHEMA)
    df.drop(columns=["m"]).to_csv(p, index=False)
    with pytest.raises(TableError, match="columns missing"):
        load_table(p, SCHEMA)


def test_incomplete_row_is_not_written(tmp_path):
    p = tmp_path / "toy.csv"
    with pytest.raises(ValueError, match="missing columns"):
        write_rows(p, SCHEMA, [{"run_key": "a"}])
    assert not p.exists() and not list(tmp_path.iterdir())


def test_schema_markdown_lists_every_column():
    md = SCHEMA.markdown()
    for c in SCHEMA.all_columns:
        assert f"`{c.name}`" in md


def test_code_version_without_git_names_the_copy(monkeypatch):
    """A tree copied without .git, or with a stale one (a rented GPU machine), names its commit by RGR_GIT_COMMIT;
    with neither git nor the variable, "unknown"."""
    import subprocess

    from rgr.store import schema

    def no_git(*a, **kw):
        return subprocess.CompletedProcess(a, 128, "", "fatal: not a git repository")

    monkeypatch.setattr(schema.subprocess, "run", no_git)
    monkeypatch.delenv("RGR_GIT_COMMIT", raising=False)
    assert schema.code_version.__wrapped__() == "unknown"
    monkeypatch.setenv("RGR_GIT_COMMIT", "abc123def456")
    assert schema.code_version.__wrapped__() == "abc123def456"
