"""The appendix page *What the paper reports* (book/reported.md) is generated from
rgr.results.reported (issue 30)."""


from rgr.results import reported
from tests import ROOT


def test_the_committed_page_is_current():
    page = (ROOT / "book" / "reported.md").read_text(encoding="utf-8")
    assert page == reported.page_markdown(), (
        "book/reported.md is stale: run `python -m rgr.results.reported`")


def test_every_claim_is_on_the_page_under_its_section():
    page = reported.page_markdown()
    for c in reported.CLAIMS:
        heading = page.index(f"## {reported.SECTION_TITLES[c.section]}")
        cell = c.claim.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_").replace("|", "\\|")
        row = page.index(f"| {cell} |")  # escaped: no emphasis from * or _, no cell break from |
        later = [page.index(f"## {t}") for t in reported.SECTION_TITLES.values() if page.index(f"## {t}") > heading]
        assert heading < row < min(later, default=len(page))
    assert all(f"| {m} |" in page for m, _ in reported.TABLE1)


def test_the_page_is_in_the_book():
    assert "file: book/reported" in (ROOT / "_toc.yml").read_text()


def test_the_papers_seed_counts_match_the_paper_preset():
    """The seeds the replication chapter says the paper used are the ones the `paper` preset runs (E2: 10 seeds, 3 at
    the diagonal's largest points)."""
    from rgr.experiments.planner import Cell
    from rgr.experiments.registry import EXPERIMENTS
    from rgr.results.reported import PAPER_FEW_SEEDS, PAPER_SEEDS

    grid = EXPERIMENTS["lambda8"].presets["paper"]
    m_few, few = PAPER_FEW_SEEDS["lambda8"]
    assert len(grid.seeds_for(Cell(m_few // 2, m_few // 16))) == PAPER_SEEDS["lambda8"]
    assert len(grid.seeds_for(Cell(m_few, m_few // 8))) == few
