"""rgr.results.peers.refit and `python -m rgr peers-refit`: synthetic peer files of a known power in d, reduced to
data/peers_refit.csv and re-fitted from that table alone; refusals that write nothing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rgr.cli import main
from rgr.results.peers.dana import exp3_refit, power_refit, their_slope
from rgr.results.peers.refit import COMMIT, REPO, SCHEMA, PeerDataMissing, dana_refit, read_peer_files
from rgr.store import TableError, load_table
from rgr.store.seal import UnsealedTable
from tests.results.peers.synthetic import H, acc_of, write_peer_files


def _root(tmp_path: Path) -> Path:
    (tmp_path / "_config.yml").write_text("")
    (tmp_path / "rgr").mkdir()
    (tmp_path / "data").mkdir()
    return tmp_path


@pytest.mark.parametrize("p, a", [(2.0, 1e-5), (3.0, 1e-5), (3.0, 1e-4)])
def test_the_table_reproduces_the_refit_of_the_raw_files(tmp_path, p, a):
    root = _root(tmp_path)
    write_peer_files(tmp_path / "raw", p, a)
    out = root / "data" / "peers_refit.csv"
    assert main(["peers-refit", "--peers", str(tmp_path / "raw"), "--out", str(out)]) == 0
    raw = read_peer_files(tmp_path / "raw")  # keyed by their path: experiment 1 at d = 3..13, B.1, experiment 3
    exp1 = [f"Scaling laws/Data_exp_1_{d}.csv" for d in range(3, 14)]
    assert list(raw) == [*exp1, *(f"Scaling laws/Data_exp_1_{d}_dim.csv" for d in (40, 50, 60)),
                         "Scaling laws/Data_exp_3.csv"]
    direct = power_refit(np.arange(3, 14), np.array([their_slope(raw[f].para, raw[f].acc) for f in exp1]))
    fit, exp3, source = dana_refit(root)  # from the table alone
    assert fit == direct and exp3 == exp3_refit(raw["Scaling laws/Data_exp_3.csv"])
    if a * 13**p * H[-1] < 0.9:  # nothing saturates: their rule recovers the power exactly
        assert fit.best_p == pytest.approx(p) and fit.best_p_low == fit.best_p_high == fit.best_p
    assert exp3.slope_below == pytest.approx(0.1) and exp3.acc_at_d_head == pytest.approx(0.8)
    assert COMMIT[:12] in source
    df = load_table(out, SCHEMA)
    assert set(df.source_repo) == {REPO} and set(df.source_commit) == {COMMIT}
    assert df.command.iloc[0].startswith("python -m rgr peers-refit") and set(df.source_file) == set(raw)
    for d in range(3, 14):  # the points used: up to the first accuracy above 0.95, included
        row = df[(df.statistic == "slope_in_H") & (df.d == d)].iloc[0]
        above = np.flatnonzero(acc_of(d, p, a) > 0.95)
        used = max(int(above[0]) + 1, 2) if len(above) else len(H)
        assert (row.n_points, row.x_first, row.x_last, row.value) == (used, 1, H[used - 1], pytest.approx(
            np.polyfit(H[:used], acc_of(d, p, a)[:used], 1)[0]))
    assert a < 1e-4 or df[df.statistic == "slope_in_H"].n_points.min() == 2  # the widest saturate at H = 6


def test_missing_files_are_named_and_nothing_is_written(tmp_path, capsys):
    write_peer_files(tmp_path / "raw", 2.0)
    (tmp_path / "raw" / "Data_exp_1_7.csv").unlink()
    (tmp_path / "raw" / "Data_exp_3.csv").unlink()
    out = tmp_path / "peers_refit.csv"
    out.write_text("kept\n")
    assert main(["peers-refit", "--peers", str(tmp_path / "raw"), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Data_exp_1_7.csv" in err and "Data_exp_3.csv" in err and "nothing written" in err
    assert out.read_text() == "kept\n" and sorted(p.name for p in tmp_path.iterdir()) == ["peers_refit.csv", "raw"]
    with pytest.raises(PeerDataMissing, match="fetch_peers.py"):
        read_peer_files(git_dir=tmp_path / "no-clone")


def test_a_file_with_other_columns_is_refused(tmp_path, capsys):
    write_peer_files(tmp_path / "raw", 2.0)
    (tmp_path / "raw" / "Data_exp_1_3.csv").write_text("acc,H\n0.1,1\n")
    assert main(["peers-refit", "--peers", str(tmp_path / "raw"), "--out", str(tmp_path / "t.csv")]) == 2
    assert "columns" in capsys.readouterr().err and not (tmp_path / "t.csv").exists()


def test_a_missing_or_damaged_table_names_the_command(tmp_path):
    root = _root(tmp_path)
    with pytest.raises(TableError, match="peers-refit"):
        dana_refit(root)
    write_peer_files(tmp_path / "raw", 2.0)
    out = root / "data" / "peers_refit.csv"
    assert main(["peers-refit", "--peers", str(tmp_path / "raw"), "--out", str(out)]) == 0
    row = pd.read_csv(out, dtype=str).tail(1)  # a 2nd row of one statistic, from another file, under its own key
    row = row.assign(source_file=row.source_file + "-copy")
    row = row.assign(run_key=list(SCHEMA.key.of(row)))  # (a row under a wrong key: tests/store/test_row_keys.py)
    out.write_text(out.read_text() + row.to_csv(index=False, header=False))
    with pytest.raises(TableError, match="peers-refit"), pytest.warns(UnsealedTable):  # edited by hand
        dana_refit(root)
