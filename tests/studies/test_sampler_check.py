"""The context sampler against its closed forms (rgr.studies.sampler_check; chapter *the task and the model*)."""

import pytest

from rgr.studies.sampler_check import chance_rate, sampler_rates


def test_sampler_rates_closed_forms():
    assert chance_rate(32, 16) == pytest.approx(15 / 31)
    r0 = sampler_rates(32, 0, 4000, 16, 0.0)
    assert r0.target_present == pytest.approx(chance_rate(32, 16), abs=0.02)
    r = sampler_rates(64, 0, 500, 16, 0.5)
    assert r.served == 1.0 and r.target_present > 0.5
    with pytest.raises(ValueError, match="ell"):
        chance_rate(8, 9)
