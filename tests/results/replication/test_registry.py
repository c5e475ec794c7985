"""The claim registry of *Does it replicate?*: one reader per claim key, and it is the function whose rows carry
that key when :func:`rgr.results.replication.table.evaluate` reads the committed book tables."""

import functools
import inspect
import sys

import pytest

from rgr.results.replication import registry
from rgr.results.replication import reported as rep
from rgr.results.replication.rows import ClaimRow, Source
from rgr.results.replication.table import evaluate


def test_every_claim_has_one_reader_in_the_claims_order():
    assert list(registry.READERS) == [c.key for c in rep.CLAIMS]
    listed = registry.claims()
    assert [c.key for c in listed] == [c.key for c in rep.CLAIMS]
    assert listed[0].where == "sec61.law_rows" and listed[0].reported.paper == rep.claim("law_slope_all").paper
    with pytest.raises(KeyError, match="no reader for the claim 'nope'"):
        registry.reader_of("nope")


def test_each_row_comes_from_its_registered_reader(monkeypatch):
    from rgr import catalog

    made_by: dict[str, str] = {}  # key -> the innermost function of the readers' modules that returned its row

    def recording(f):
        @functools.wraps(f)
        def wrapped(*args, **kwargs):
            out = f(*args, **kwargs)
            for r in out if isinstance(out, list) else [out]:
                if isinstance(r, ClaimRow):
                    made_by.setdefault(r.key, f.__qualname__)
            return out
        return wrapped

    modules = {f.__module__ for f in registry.READERS.values()} | {"rgr.results.replication.table"}
    functions = {id(v): v for m in modules for v in vars(sys.modules[m]).values()
                 if inspect.isfunction(v) and v.__module__ in modules}  # not rows.py's helpers (fit_row, untestable)
    for name in modules:
        for attr, value in list(vars(sys.modules[name]).items()):
            if id(value) in functions:
                monkeypatch.setattr(sys.modules[name], attr, recording(value))
    names = ("base", "lambda8", "lambda32", "regular", "softmax", "value", "gpt2")
    rows = evaluate({n: Source(n, "book", catalog.load(n, "book")) for n in names})
    assert {r.key for r in rows} == set(registry.READERS)
    wrong = {k: (made_by.get(k), f.__qualname__) for k, f in registry.READERS.items()
             if made_by.get(k) != f.__qualname__}
    assert not wrong, f"rows made by another reader than the registry names (made by, registered): {wrong}"
