"""More op-table rows, one module per namespace (funcad.nn, funcad.random, ...).

Each module calls `tests.op_table.op(...)` at import; `tests/op_table.py`
imports every module here, so their rows run in every table-driven test.
"""
