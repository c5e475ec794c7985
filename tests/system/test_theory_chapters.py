"""A theory chapter stops with one ParameterError line on a bad chapter-specific parameter (issue 16 item 4).

Every chapter's smoke-preset run and its bad-preset refusal are in tests/test_chapter_presets.py."""


import pytest

from tests import ROOT

papermill = pytest.importorskip("papermill")

BOOK = ROOT / "book"


def test_bad_parameter_is_one_line(tmp_path):
    with pytest.raises(papermill.PapermillExecutionError) as e:
        papermill.execute_notebook(str(BOOK / "theory.ipynb"), str(tmp_path / "t.ipynb"),
                                   parameters={"preset": "smoke", "h": 0}, cwd=str(BOOK), progress_bar=False,
                                   kernel_name="python3")
    assert e.value.ename == "ParameterError" and "h = 0" in e.value.evalue
