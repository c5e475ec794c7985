"""The context sampler against its closed forms (rgr.studies.sampler_check; chapter *the task and the model*)."""

import dataclasses

import pytest

from rgr.results.findings import flatten
from rgr.studies.sampler_check import sampler_rates, theory_finding


def test_sampler_rates_closed_forms():
    r0 = sampler_rates(32, 0, 4000, 16, 0.0)
    r = sampler_rates(64, 0, 500, 16, 0.5)
    predicted = theory_finding(r0, r, r).chance_predicted
    assert predicted == pytest.approx(15 / 31)  # (ell - 1) / (m - 1)
    assert r0.target_present == pytest.approx(predicted, abs=0.02)
    assert r.served == 1.0 and r.target_present > 0.5
    with pytest.raises(ValueError, match="ell"):
        theory_finding(dataclasses.replace(r0, m=8, ell=9), r, r)


def test_theory_finding_names_and_refuses_a_chance_draw_with_rho():
    SamplerRates = type(sampler_rates(32, 0, 1, 16, 0.0))
    chance = SamplerRates(m=32, ell=16, rho=0.0, n=10, target_present=0.5, served=float("nan"))
    small = SamplerRates(m=64, ell=16, rho=0.5, n=10, target_present=0.53, served=1.0)
    large = SamplerRates(m=1024, ell=16, rho=0.5, n=10, target_present=0.45, served=1.0)
    v = flatten(theory_finding(chance, small, large))
    assert v["chance_predicted"] == round(15 / 31, 6) and v["chance_target_present"] == 0.5
    assert (v["small_m"], v["large_m"], v["small_rho"], v["large_served"]) == (64, 1024, 0.5, 1.0)
    with pytest.raises(ValueError, match="rho = 0"):
        theory_finding(small, small, large)
