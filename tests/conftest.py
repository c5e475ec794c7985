"""Shared test settings: hypothesis profiles (CI runs the same examples every time)."""

import os

import torch
from hypothesis import settings

settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
settings.register_profile("dev", max_examples=40, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
# one thread: the stacked tiny matmuls gain nothing from more, and a shared 2-core CI box loses a lot
torch.set_num_threads(1)
