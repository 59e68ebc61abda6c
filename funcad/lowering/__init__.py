"""Backends: StableHLO emission (stablehlo.py), PJRT compile/transfer/execute through
jaxlib (xla.py, imported lazily), device-resident results (array.py), and readable
NumPy source for jaxprs (python_source.py)."""
