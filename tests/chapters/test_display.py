"""rgr.chapters.display.table: headers, rounding, missing values, stable HTML."""

import numpy as np
import pandas as pd
import pytest

from rgr.catalog import NAMES, schema_for_file
from rgr.chapters.display import table
from tests.glued import prose

MISSING = "—"  # what a reader sees for a missing value


def _df():
    return pd.DataFrame({"m": [64, 128], "D_K*": [np.nan, 48.0], "f1": [0.991234, np.nan]})


def test_missing_values_and_rounding():
    html = table(_df(), digits={"f1": 3}).to_html()
    assert MISSING in html and "0.991" in html and "nan" not in html.lower().replace("nano", "")
    assert "<th" in html and "D<sub>K</sub>*" in html and ">items m<" in html  # headers in words


def _headers(df: pd.DataFrame) -> list[str]:
    html = table(df).to_html()
    return [h.split(">", 1)[1].split("</th>")[0] for h in html.split("<th")[1:] if "col_heading" in h]


def test_column_labels_are_words():
    names = ["best_f1_one_soft_head", "present_rate", "a_new_column", 3]  # 3: a pivoted column (a head count)
    assert _headers(pd.DataFrame({n: ["x"] for n in names})) == [
        "best F1, one softmax head", "present: rate", "a new column", "3"]
    columns = {c.name for n in NAMES for c in schema_for_file(f"{n}.csv").all_columns}
    labels = _headers(pd.DataFrame({c: ["x"] for c in sorted(columns)}))
    assert len(labels) == len(columns) and all("_" not in h.replace("<sub>", "").replace("</sub>", "") for h in labels)


def test_text_columns_are_marked_for_left_alignment():
    df = _df().assign(preset=["paper", None], why=["a long reason", "another"], n=pd.Series([1, None], dtype=object))
    html = table(df).to_html()
    cells = html.split("<td")
    text_cells = [c for c in cells if 'class="data row0 col3 text"' in c or 'class="data row0 col4 text"' in c]
    assert len(text_cells) == 2  # preset and why
    assert "col0 text" not in html and "col5 text" not in html  # m (numbers) and n (numbers stored as objects)
    long = table(df.assign(why=["x" * 41, "short"])).to_html()
    assert 'col4 text long"' in long and 'col3 text long"' not in long  # only a column with a long entry wraps


def test_html_is_stable_across_calls():
    assert table(_df(), caption="c").to_html() == table(_df(), caption="c").to_html()


def test_bad_input_names_the_parameter():
    with pytest.raises(TypeError, match="df"):
        table([1, 2])
    with pytest.raises(ValueError, match="digits"):
        table(_df(), digits={"nope": 1})


def test_number_for_prose():
    import math

    import numpy as np

    assert prose(1.234, 1) == "1.2" and prose(np.float64(0.5), 3) == "0.500"
    assert prose(3) == "3" and prose(np.int64(7), 2) == "7"
    assert prose(None) == prose(math.nan) == prose(pd.NA) == prose(np.nan) == MISSING


def test_intervals_fold_into_one_column():
    """X_lo / X_hi show inside X as "x [lo, hi]" (or alone where there is no X): fewer columns, same numbers."""
    df = pd.DataFrame({"h": [32, 8], "h_lo": [16, 4], "h_hi": [64, 16], "D_K_pred": [212.0, 300.0],
                       "D_K_lo": [119.0, np.nan], "D_K_hi": [377.0, 400.0], "f1": [0.5, 0.7], "f1_lo": [0.41, 0.6],
                       "f1_hi": [0.55, 0.8]})
    html = table(df, digits={"D_K_lo": 0}).to_html()
    cells = [c.split(">", 1)[1] for c in html.split("<td")[1:]]
    cells = [c[: c.index("</td>")] for c in cells]
    assert cells[:4] == ["32 [16, 64]", "212", "[119, 377]", "0.50 [0.41, 0.55]"]
    assert f"[{MISSING}, 400]" in cells and html.count("[low, high]") == 3 and "h_lo" not in html
    assert table(df[["h", "h_lo"]]).to_html().count("col_heading") == 2  # no pair: nothing folds


def test_long_tables_fold():
    LONG_ROWS = 20  # a longer table folds

    assert 'class="rgr-table rgr-long"' in table(pd.DataFrame({"m": range(LONG_ROWS + 1)})).to_html()
    assert 'class="rgr-table"' in table(pd.DataFrame({"m": range(LONG_ROWS)})).to_html()


def test_a_wide_table_says_its_constant_columns_once():
    WIDE_COLUMNS = 10  # a wider table says its constant columns once

    df = pd.DataFrame({f"c{i}": [1, 2] for i in range(WIDE_COLUMNS)}).assign(m=1024, tau=0.5, ok=True)
    html = table(df, caption="Cor. B.10.").to_html()
    assert "<caption>Cor. B.10. In every row: items m = 1024, threshold τ = 0.500</caption>" in html
    assert html.count("col_heading") == WIDE_COLUMNS + 1  # m and tau said once; the flag column stays
    narrow = table(df[["c0", "m"]]).to_html()
    assert narrow.count("col_heading") == 2 and "In every row" not in narrow  # a narrow table keeps them
