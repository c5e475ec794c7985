"""environment.yml carries exactly the pins of pyproject.toml."""

import re
import tomllib

import yaml

from tests import ROOT


def _pins(reqs):
    out = {}
    for r in reqs:
        m = re.fullmatch(r"\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;]+)\s*", r)
        if m:
            out[m.group(1).lower().replace("_", "-")] = m.group(2)
    return out


def test_environment_yml_matches_pyproject():
    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(proj["dependencies"]) + [r for extra in proj["optional-dependencies"].values() for r in extra]
    assert all("==" in r for r in reqs), "every dependency must be pinned exactly"
    py = _pins(reqs)
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_list = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    conda = _pins([p for p in pip_list if not p.startswith("-")])
    assert conda == py
    assert "python=3.11" in env["dependencies"]


def test_design_card_pins():
    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    allreqs = proj["dependencies"] + sum(proj["optional-dependencies"].values(), [])
    assert "torch==2.13.0" in allreqs and "jupyter-book==1.0.4.post1" in allreqs
