"""One frozen preset type per theory chapter, beside its studies (rgr.studies.sampler_check, construction_sweeps,
lower_bounds), smoke / book / paper each, picked by rgr.protocol.pick_preset."""

import dataclasses

import pytest

from rgr.studies.construction_sweeps import CONSTRUCTIONS, ConstructionsPreset
from rgr.studies.lower_bounds import LowerBoundsPreset
from rgr.studies.sampler_check import TheoryPreset

PRESETS = ("smoke", "book", "paper")
THEORY = {name: TheoryPreset.named(name) for name in PRESETS}
LOWER_BOUNDS = {name: LowerBoundsPreset.named(name) for name in PRESETS}


@pytest.mark.parametrize("kind", [TheoryPreset, ConstructionsPreset, LowerBoundsPreset])
def test_every_chapter_has_the_three_presets_frozen(kind):
    assert list(CONSTRUCTIONS) == list(PRESETS)
    for name in PRESETS:
        p = kind.named(name)
        assert type(p) is kind and kind.named(name) is p
        assert kind is not ConstructionsPreset or CONSTRUCTIONS[name] is p
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(p, dataclasses.fields(p)[0].name, None)
    with pytest.raises(ValueError, match="preset = 'auto'.* presets are 'smoke', 'book', 'paper'$"):  # live
        kind.named("auto")  # computations: 'auto' picks stored rows


def test_presets_grow_from_smoke_to_paper():
    assert THEORY["smoke"].n_check < THEORY["book"].n_check < THEORY["paper"].n_check
    for p in CONSTRUCTIONS.values():
        assert p.rbce_cell[0] > p.rbce_cell[1] and p.repair_cell[0] > p.repair_cell[1]  # compression: m > d_model
    seeds = [CONSTRUCTIONS[p].onehot_seeds for p in ("smoke", "book", "paper")]
    assert seeds == sorted(seeds) and len(set(seeds)) == 3
    assert len(LOWER_BOUNDS["smoke"].margin_runs) < len(LOWER_BOUNDS["book"].margin_runs) <= len(
        LOWER_BOUNDS["paper"].margin_runs)
