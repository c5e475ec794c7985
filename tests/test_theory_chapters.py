"""The theory chapters (theory, constructions, lower bounds) run through papermill on the smoke preset,
and stop with one ParameterError line on a bad parameter (issue 16 items 1 and 4)."""

from pathlib import Path

import pytest

papermill = pytest.importorskip("papermill")

BOOK = Path(__file__).resolve().parents[1] / "book"


@pytest.mark.parametrize("chapter", ["theory.ipynb", "constructions.ipynb", "lower_bounds.ipynb"])
def test_chapter_runs_on_smoke(chapter, tmp_path):
    papermill.execute_notebook(str(BOOK / chapter), str(tmp_path / chapter), parameters={"preset": "smoke"},
                               cwd=str(BOOK), progress_bar=False, kernel_name="python3")


def test_bad_parameter_is_one_line(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as e:
        papermill.execute_notebook(str(BOOK / "theory.ipynb"), str(tmp_path / "t.ipynb"),
                                   parameters={"preset": "smoke", "h": 0}, cwd=str(BOOK), progress_bar=False,
                                   kernel_name="python3")
    assert e.value.ename == "ParameterError" and "h = 0" in e.value.evalue
