"""rgr.chapters.params: every chapter's parameters fail in one line naming the parameter."""

import pytest

from rgr.chapters.params import PRESETS, ParameterError, check, in_range, one_of, positive_int


def test_good_parameters_pass():
    p = check("book", "cpu")
    assert (p.preset, p.device, p.seed) == ("book", "cpu", 0)  # a data chapter has no seed: 0
    assert check("book", "cpu", seed=3).seed == 3  # a chapter that draws live passes its own
    assert check("smoke", "auto").device in ("cpu", "cuda")


@pytest.mark.parametrize(
    "kwargs, name",
    [({"preset": "nope"}, "preset"), ({"preset": "book", "device": "tpu"}, "device"),
     ({"preset": "book", "seed": -1}, "seed"), ({"preset": "book", "seed": 1.5}, "seed")],
)
def test_bad_parameters_name_themselves(kwargs, name):
    with pytest.raises(ParameterError, match=rf"^{name} ="):
        check(**kwargs)


def test_the_seed_is_a_keyword():
    with pytest.raises(TypeError):
        check("book", "cpu", 0)  # positionally, a seed would read as a parameter every chapter has


def test_a_chapter_may_narrow_the_presets():
    assert check("auto").preset == "auto"  # a data chapter: "auto" picks stored rows by completeness
    assert check("paper", choices=PRESETS).preset == "paper"
    with pytest.raises(ParameterError, match=r"^preset = 'auto'; choose one of 'smoke', 'book', 'paper' \(this preset"):
        check("auto", choices=PRESETS)  # a theory chapter: its preset sizes live computations


def test_cuda_without_gpu_is_refused(monkeypatch):
    monkeypatch.setattr("rgr.chapters.params._cuda_available", lambda: False)
    with pytest.raises(ParameterError, match="device = 'cuda'"):
        check("book", "cuda")


def test_helpers():
    assert positive_int("h", 4) == 4
    with pytest.raises(ParameterError, match="^h = 0"):
        positive_int("h", 0)
    with pytest.raises(ParameterError, match="^rho"):
        in_range("rho", 1.5, 0.0, 1.0)
    with pytest.raises(ParameterError, match="^fig1_cell"):
        one_of("fig1_cell", [(1, 2)], [(256, 32)])
