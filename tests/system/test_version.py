"""A version that tracks the verdict (issue 47): CHANGELOG.md's entry for the current version states the tally and
every row's verdict of the committed chapter *Does it replicate?*; a changed verdict without a new version fails.
(That the version is one number in rgr/__init__.py, pyproject.toml and CITATION.cff: test_site_config.py.)"""

from __future__ import annotations

import json
import re

from tests import ROOT

STATUSES = ("agrees", "deviates", "not testable")


def version() -> str:
    return re.search(r'^__version__\s*=\s*"([^"]+)"', (ROOT / "rgr" / "__init__.py").read_text(), re.M).group(1)


def changelog_entry(text: str, v: str) -> tuple[dict[str, int], dict[str, set[str]]]:
    """The tally ("Verdict: N claims: a agree, d deviate, t not testable") and the keys per status of the entry
    "## v" of ``text``."""
    m = re.search(rf"^## {re.escape(v)}\b.*?(?=^## |\Z)", text, re.M | re.S)
    assert m, f"CHANGELOG.md has no entry '## {v}': a new version needs one, with its verdict"
    entry = m.group(0)
    t = re.search(r"Verdict: (\d+) claims: (\d+) agree, (\d+) deviate, (\d+) not testable", entry)
    assert t, f"the entry of {v} states no tally ('Verdict: N claims: a agree, d deviate, t not testable')"
    tally = dict(zip(("rows", "agrees", "deviates", "not testable"), map(int, t.groups())))
    keys = {}
    for s in STATUSES:
        k = re.search(rf"^- {s}: (.*?)(?=^- |^\s*$|\Z)", entry, re.M | re.S)
        keys[s] = set(re.findall(r"[a-z0-9_]+", k.group(1))) if k else set()
    return tally, keys


def committed_verdict() -> tuple[dict[str, int], dict[str, set[str]]]:
    nb = json.loads((ROOT / "book" / "replication.ipynb").read_text(encoding="utf-8"))
    glued, table = {}, ""
    for c in nb["cells"]:
        for o in c.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                glued[name] = "".join(o.get("data", {}).get("application/papermill.record/text/plain", ""))
            html = "".join(o.get("data", {}).get("text/html", ""))
            if 'class="rgr-verdicts"' in html:
                table = html
    status = re.findall(r'id="verdict-([a-z0-9_]+)">.*?rgr-verdict--([a-z-]+)"', table)
    keys = {s: {k for k, v in status if v == s.replace(" ", "-")} for s in STATUSES}
    tally = {"rows": int(glued["n_rows"]), "agrees": int(glued["n_agrees"]), "deviates": int(glued["n_deviates"]),
             "not testable": int(glued["n_not_testable"])}
    return tally, keys


def test_the_changelog_entry_of_this_version_is_the_committed_verdict():
    v = version()
    tally, keys = changelog_entry((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), v)
    now_tally, now_keys = committed_verdict()
    assert tally == now_tally, (f"the verdict is now {now_tally}, CHANGELOG.md's {v} says {tally}: bump the version "
                                "(rgr/__init__.py, pyproject.toml, CITATION.cff) and add its entry")
    moved = {s: sorted(now_keys[s] ^ keys[s]) for s in STATUSES if now_keys[s] != keys[s]}
    assert not moved, f"rows whose verdict differs from CHANGELOG.md's {v}: {moved}: bump the version, add its entry"


def test_the_entry_parser_reads_and_refuses():
    text = ("## 1.0\n\nVerdict: 3 claims: 1 agree, 1 deviate, 1 not testable.\n\n- agrees: a_b\n- deviates: c\n"
            "- not testable: d\n\n## 0.9\n\nVerdict: 2 claims: 2 agree, 0 deviate, 0 not testable.\n")
    tally, keys = changelog_entry(text, "1.0")
    assert tally == {"rows": 3, "agrees": 1, "deviates": 1, "not testable": 1}
    assert keys == {"agrees": {"a_b"}, "deviates": {"c"}, "not testable": {"d"}}
    assert changelog_entry(text, "0.9")[0]["agrees"] == 2
    try:
        changelog_entry(text, "2.0")
    except AssertionError as e:
        assert "no entry" in str(e)
    else:
        raise AssertionError("a missing entry must fail")
