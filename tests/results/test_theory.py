"""What the chapter *the task and the model* quotes (rgr.results.theory): the sampler check, glued by field name."""

import pytest

from rgr.results.findings import flatten
from rgr.results.theory import theory_finding
from rgr.studies.sampler_check import SamplerRates


def test_theory_finding_names_and_refuses_a_chance_draw_with_rho():
    chance = SamplerRates(m=32, ell=16, rho=0.0, n=10, target_present=0.5, served=float("nan"))
    small = SamplerRates(m=64, ell=16, rho=0.5, n=10, target_present=0.53, served=1.0)
    large = SamplerRates(m=1024, ell=16, rho=0.5, n=10, target_present=0.45, served=1.0)
    v = flatten(theory_finding(chance, small, large))
    assert v["chance_predicted"] == round(15 / 31, 6) and v["chance_target_present"] == 0.5
    assert (v["small_m"], v["large_m"], v["small_rho"], v["large_served"]) == (64, 1024, 0.5, 1.0)
    with pytest.raises(ValueError, match="rho = 0"):
        theory_finding(small, small, large)
