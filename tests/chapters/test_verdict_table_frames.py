"""The frames chapter *Does it replicate?* displays (rgr.chapters.verdict_table)."""

from rgr.chapters.verdict_table import longer_frame, readings_frame
from rgr.results.replication.rows import ClaimRow, Longer, Reading
from rgr.results.replication.verdicts import Verdict


def _row(key, readings=(), longer=None, status="deviates"):
    return ClaimRow(key, "1.77", "[1.71, 2.23]", "b", Verdict(status, "x"), value=1.77, lo=1.71, hi=2.23,
                    readings=readings, longer=longer)


def test_the_longer_budget_frame_lists_only_rows_read_again():
    x = Longer(budget=4, book="0.83", interval="[0.8, 0.9]", status="deviates", said="x", settled=False, cut="",
               moved="")
    f = longer_frame([_row("diag_growth", longer=x), _row("law_r2_all", status="agrees")])
    assert list(f.columns) == ["claim", "protocol", "budget", "book_there", "status_there", "settled"]
    assert f.to_dict("records") == [dict(claim="λ = 8 diagonal: growth like log m", protocol="deviates", budget="4x",
                                         book_there="0.83", status_there="deviates", settled="no")]
    assert len(longer_frame([])) == 0


def test_a_reading_frame_shows_the_named_reading_beside_the_verdicts():
    r = _row("law_slope_all", readings=(Reading("ln, log space", 1.13, 1.06, 1.22, True),))
    f = readings_frame([r, _row("law_r2_all")], "ln, log space")
    assert f[["key", "verdict_reading", "paper_inside", "reading", "reading_inside"]].to_dict("records") == [
        dict(key="law_slope_all", verdict_reading="1.77 [1.71, 2.23]", paper_inside=False, reading="1.13 [1.06, 1.22]",
             reading_inside=True)]
