"""Test configuration shared by every test module.

GPU runs (FUNCAD_BACKEND=gpu) share one card between pytest-xdist workers and
the JAX oracle: by default XLA's GPU client preallocates 75% of the card's
memory per process, so a second worker fails with CUDA_ERROR_OUT_OF_MEMORY.
Allocating on demand lets them share it. Set before any backend starts; an
explicit setting in the environment wins.
"""
import os

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
