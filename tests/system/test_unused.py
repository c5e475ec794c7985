"""No public name goes unused (issue 49): every public name of rgr (a module-level def, class or constant not
starting with ``_``, or one listed in ``__all__``) is used outside its own module by rgr, a chapter's code cells,
book/_ext, scripts/ or tasks.py. A name used only in its own module is private (``_name``); a name used only by
tests is dead code. Uses are identifiers (ast): names, attributes, imported names, and strings that are exactly a
name (a dispatch by name)."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pytest

from tests import ROOT

# entry points reached by no import: the name, and why it is public
ENTRY_POINTS: dict[str, str] = {
    "rgr.results.replication.registry.sec61_claims": "the replication chapter's prose names it (the law's slope)",
    "rgr.results.choosing_heads.design.fit_rule": "the choosing-heads chapter's prose names it (the rule)",
    "rgr.task.graphs.DegreeStats": "Graph.stats returns it and the theory chapter prints its repr",
    "rgr.results.replication.seed_bootstrap.PAIRED_CLAIMS": "the replication chapter's prose names it",
    "rgr.results.value_channel.paper_mse": "the value-channel chapter's prose names it (the paper's MSE convention)",
    "rgr.theory.checks.score_terms": "the constructions chapter's prose names it (the score's terms N_1..N_3)",
    "rgr.experiments.settled.GPU_UNITS": "README's table of extensions names it",
    "rgr.experiments.sizing.calibration.calibrate_from_history": "README's sizing section tells researchers to call it",
    "rgr.experiments.cluster.DaskExecutor": "README's cluster section builds one for run_sweep's executor",
    "rgr.experiments.futility.false_stops": "data/SCHEMA.md and the unstopped extension's design name it (its rule)",
    "rgr.theory.bounds.upper_bound": "theorem check: the constructions (chapter constructions) build this D_K",
    "rgr.studies.per_context.context_separates": "theorem check of the per-context construction (chapter lower bounds)",
}
# edited on another branch of issue 49 at the same time (the chapters' display and parameters): the lead settles
# these at merge
OTHER_BRANCH: set[str] = {
    "rgr.chapters.display.COLUMN_LABELS",
    "rgr.chapters.display.LONG_ROWS",
    "rgr.chapters.display.LONG_TEXT",
    "rgr.chapters.display.MISSING",
    "rgr.chapters.display.SITE_DATA",
    "rgr.chapters.display.WIDE_COLUMNS",
    "rgr.chapters.display.column_label",
    "rgr.chapters.display.finding_values",
    "rgr.chapters.display.number",
    "rgr.chapters.display.table_files",
    "rgr.chapters.params.ChapterParams",
    "rgr.chapters.params.DEVICES",
    "rgr.chapters.params.ParameterError",
}
# used in their own module and tested directly (issue 49): each becomes private, its tests going through the
# public function that uses it; remove a name once done (test_the_pending_list_only_shrinks fails on a stale one)
TESTED_DIRECTLY: set[str] = {
    "rgr.catalog.ELSEWHERE",
    "rgr.catalog.PROTOCOL",
    "rgr.catalog.choose_preset",
    "rgr.catalog.produce_command",
    "rgr.chapters.bottom_line.PLAIN",
    "rgr.chapters.bottom_line.section_name",
    "rgr.chapters.glossary_links.TERMS",
    "rgr.chapters.glossary_links.edge_cells",
    "rgr.chapters.glossary_links.on_edge",
    "rgr.chapters.loading.ExperimentData",
    "rgr.chapters.loading.seeds_words",
    "rgr.chapters.replication_words.arithmetic_summary",
    "rgr.chapters.replication_words.base_words",
    "rgr.chapters.replication_words.fit_words",
    "rgr.chapters.replication_words.row_value",
    "rgr.chapters.replication_words.table1_basis_words",
    "rgr.chapters.style.MAX_SHOWN_PX",
    "rgr.chapters.style.PROBLEMS_KEY",
    "rgr.chapters.style.TEXT_KEY",
    "rgr.chapters.style.head_palette",
    "rgr.chapters.style.png_metadata",
    "rgr.chapters.style.smallest_text_px",
    "rgr.chapters.style.text_boxes",
    "rgr.chapters.style.text_problems",
    "rgr.chapters.verdict_table.EXPLAIN",
    "rgr.chapters.verdict_table.VERDICT_CLASS",
    "rgr.chapters.verdict_table.longer_words",
    "rgr.gpt2.block.forward",  # its full-sequence path (last_only=False) exists to check last-only evaluation
    "rgr.model.qk.AggregatedScores",
    "rgr.results.baselines.trivial_mse",
    "rgr.results.choosing_heads.checks.PREREGISTERED",
    "rgr.results.choosing_heads.checks.capacity",
    "rgr.results.denser_graphs.form_fit",
    "rgr.results.diagonals.cells_basis",
    "rgr.results.findings.DIGITS",
    "rgr.results.findings.pastes_as_itself",
    "rgr.results.gpt2_block.gpt2_reading",
    "rgr.results.lower_bounds.BoundsFinding",
    "rgr.results.lower_bounds.MARGIN_DIGITS",
    "rgr.results.lower_bounds.SeedPaperFinding",
    "rgr.results.peers.aot.AotFinding",
    "rgr.results.peers.aot.CONFIG",
    "rgr.results.peers.aot.Difference",
    "rgr.results.peers.aot.difference",
    "rgr.results.peers.bits.log2_factorial",
    "rgr.results.peers.refit.EXP1",
    "rgr.results.peers.refit.NEEDED",
    "rgr.results.peers.refit.peer_dir",
    "rgr.results.peers.sweep.PreconditionReading",
    "rgr.results.peers.sweep.SeriesDrift",
    "rgr.results.peers.sweep.crossing",
    "rgr.results.peers.sweep.series_drift",
    "rgr.results.permutation_sweeps.cutoff_share",
    "rgr.results.permutation_sweeps.rank_ceiling",
    "rgr.results.permutation_sweeps.transition_widths",
    "rgr.results.replication.extensions.gpt2_testable",
    "rgr.results.replication.paper_arithmetic.log_space_constant",
    "rgr.results.replication.paper_arithmetic.meet_in_the_middle",
    "rgr.results.replication.paper_arithmetic.printed_half_unit",
    "rgr.results.replication.paper_arithmetic.table1_heads",
    "rgr.results.replication.registry.Inputs",
    "rgr.results.replication.registry.READERS",
    "rgr.results.replication.registry.basis_of",
    "rgr.results.replication.registry.few_seeds_of",
    "rgr.results.replication.reported.PAGE",
    "rgr.results.replication.reported.markdown_cell",
    "rgr.results.replication.reported.page_markdown",
    "rgr.results.replication.rows.NAN",
    "rgr.results.replication.rows.x_of",
    "rgr.results.replication.sec61.law_caveat",
    "rgr.results.replication.sec61.table1_median_note",
    "rgr.results.replication.second_readings.longer_draws",
    "rgr.results.replication.verdicts.STATUSES",
    "rgr.results.replication.verdicts.dk_star_intervals",
    "rgr.results.replication.verdicts.interval_verdict",
    "rgr.results.replication.verdicts.near_misses",
    "rgr.results.replication.verdicts.verdict_counts",
    "rgr.results.stats.DKStar",
    "rgr.results.stats.p_paired",
    "rgr.results.value_channel.rank_floor",
    "rgr.results.value_channel.value_summary",
    "rgr.schema_doc.render",
    "rgr.store.read.file_bytes",
    "rgr.store.seal.Seal",
    "rgr.store.write.types_hold",
    "rgr.store.write.write_sealed",
    "rgr.studies.margins.normalised_margin",
    "rgr.studies.per_context.DE_EMBED_TOL",
    "rgr.studies.per_context.de_embedding_error",
    "rgr.studies.per_context.first_separating_width",
    "rgr.studies.per_context.hoeffding_dk",
    "rgr.studies.per_context.per_context_dk",
    "rgr.studies.per_context.signature_scores",
    "rgr.studies.presets.LOWER_BOUNDS",
    "rgr.studies.presets.THEORY",
    "rgr.studies.sampler_check.SamplerRates",
    "rgr.studies.sampler_check.chance_rate",
    "rgr.studies.theorem81.leakage_logits",
    "rgr.studies.theorem81.softmax_failures",
    "rgr.studies.theorem81.width_sweep",
    "rgr.task.rng.STREAMS",
    "rgr.task.rng.mix",
    "rgr.theory.bounds.bit_budget_min_DK",
    "rgr.theory.bounds.entropy_bounds",
    "rgr.theory.bounds.log2_binom",
    "rgr.theory.bounds.log2_derangement_count",
    "rgr.theory.bounds.log2_graph_count",
    "rgr.theory.checks.construction_scores",
    "rgr.theory.checks.limit_scores",
    "rgr.theory.theorem81.repair_min_d_model",
}


def _module(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def public_names(tree: ast.Module) -> set[str]:
    """The module-level defs, classes and constants of ``tree`` not starting with ``_``, and its ``__all__``."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        if n.id == "__all__" and isinstance(node.value, (ast.List, ast.Tuple)):
                            names.update(e.value for e in node.value.elts if isinstance(e, ast.Constant))
                        else:
                            names.add(n.id)
    return {n for n in names if not n.startswith("_")}


_WORD = re.compile(r"[A-Za-z_]\w*")


def used_identifiers(source: str, reexports: bool = True) -> set[str]:
    """Every identifier ``source`` uses: names, attributes, imported names, strings that are one name. Without
    ``reexports``, names a module only imports (a package's ``__init__`` re-exporting them) do not count."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a shell script, or a cell with IPython magics: its words
        return set(_WORD.findall(source))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias) and reexports:
            out.update(node.name.split("."))
            out.add(node.asname or node.name)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            out.add(node.value)
    return out


def loaded(tree: ast.Module) -> set[str]:
    """The names ``tree`` reads (not those it only defines, assigns or lists in ``__all__``)."""
    listing = {id(n) for node in tree.body if isinstance(node, ast.Assign)
               and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets) for n in ast.walk(node)}
    return {n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.value
            for n in ast.walk(tree) if id(n) not in listing and (
                isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) or isinstance(n, ast.Attribute)
                or isinstance(n, ast.Constant) and isinstance(n.value, str))}


def notebook_code(path: Path) -> str:
    """The code cells of a notebook, IPython magics and shell lines dropped."""
    cells = json.loads(path.read_text())["cells"]
    lines = [line for c in cells if c["cell_type"] == "code"
             for line in ("".join(c["source"]) + "\n").splitlines() if not line.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def users(root: Path) -> dict[str, str]:
    """Every file that may use rgr's names outside tests, as its source: rgr, the chapters' code cells, book/_ext,
    scripts/ (its shell scripts too), tasks.py."""
    files = {str(p.relative_to(root)): p.read_text() for p in (root / "rgr").rglob("*.py")}
    files |= {str(p.relative_to(root)): notebook_code(p) for p in (root / "book").glob("*.ipynb")}
    for p in [*(root / "book").rglob("*.py"), *(root / "scripts").glob("*"), root / "tasks.py"]:
        if p.is_file():
            files[str(p.relative_to(root))] = p.read_text()  # a shell script's Python is read as its words
    return files


def unused(root: Path, allowed: dict[str, str] = ENTRY_POINTS) -> dict[str, list[str]]:
    """The public names of rgr used nowhere outside their module (``own``: used there, so private; ``dead``: not
    even there), as ``module.name``; ``allowed`` entry points excepted."""
    files = users(root)
    uses = {f: used_identifiers(src, reexports=not f.endswith("__init__.py")) for f, src in files.items()}
    out: dict[str, list[str]] = {"own": [], "dead": []}
    for p in sorted((root / "rgr").rglob("*.py")):
        rel, src = str(p.relative_to(root)), p.read_text()
        tree = ast.parse(src)
        for name in sorted(public_names(tree)):
            full = f"{_module(p, root)}.{name}"
            if full in allowed or any(name in u for f, u in uses.items() if f != rel):
                continue
            out["own" if name in loaded(tree) else "dead"].append(full)
    return out


@pytest.fixture(scope="module")
def found() -> dict[str, list[str]]:
    return unused(ROOT)


def test_no_public_name_goes_unused(found):
    own = [n for n in found["own"] if n not in OTHER_BRANCH | TESTED_DIRECTLY]
    dead = [n for n in found["dead"] if n not in OTHER_BRANCH | TESTED_DIRECTLY]
    assert not own and not dead, (
        "used only in their own module (make them private):\n" + "\n".join(own) +
        "\nused by nothing but tests (delete them and their tests):\n" + "\n".join(dead))


def test_the_pending_lists_only_shrink(found):
    """Every name still listed is still unused and still public (a name fixed leaves the list); every allowed entry
    point exists."""
    stale = (OTHER_BRANCH | TESTED_DIRECTLY) - set(found["own"]) - set(found["dead"])
    assert not stale, f"no longer unused (take them off the list): {sorted(stale)}"
    gone = [n for n in ENTRY_POINTS if not hasattr(importlib.import_module(n.rsplit(".", 1)[0]), n.rsplit(".", 1)[1])]
    assert not gone, f"allowed entry points that no longer exist: {gone}"


def test_the_check_can_fail(tmp_path):
    """A synthetic package: a name used by another module passes; one used only in its own module, one used only by
    a test, one listed in ``__all__`` and nowhere else, and one used in a chapter's markdown only are reported; a
    chapter's code cell and an allowed entry point count as users."""
    (tmp_path / "rgr" / "sub").mkdir(parents=True)
    (tmp_path / "book").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "rgr" / "__init__.py").write_text("")
    (tmp_path / "rgr" / "sub" / "__init__.py").write_text("from .a import re_exported\n")
    (tmp_path / "rgr" / "sub" / "a.py").write_text(
        '__all__ = ["listed", "used"]\nLIMIT = 3\n\n\ndef used():\n    return LIMIT\n\n\ndef tested():\n    pass\n\n\n'
        "def listed():\n    pass\n\n\ndef re_exported():\n    pass\n\n\ndef in_notebook():\n    pass\n\n\n"
        "def in_markdown():\n    pass\n\n\ndef entry():\n    pass\n")
    (tmp_path / "rgr" / "b.py").write_text("from .sub.a import used\n\nused()\n")
    (tmp_path / "tests" / "test_a.py").write_text("from rgr.sub.a import tested\n\ntested()\n")
    cells = [{"cell_type": "code", "source": ["%matplotlib inline\n", "from rgr.sub.a import in_notebook\n"]},
             {"cell_type": "markdown", "source": ["`rgr.sub.a.in_markdown` does it"]}]
    (tmp_path / "book" / "x.ipynb").write_text(json.dumps({"cells": cells}))
    found = unused(tmp_path, allowed={"rgr.sub.a.entry": "a command"})
    assert found == {"own": ["rgr.sub.a.LIMIT"],
                     "dead": ["rgr.sub.a.in_markdown", "rgr.sub.a.listed", "rgr.sub.a.re_exported",
                              "rgr.sub.a.tested"]}
