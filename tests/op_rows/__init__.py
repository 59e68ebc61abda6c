"""Op-table rows by topic, one module each (funcad.nn, the decompositions, funcad.scipy.special, ...).

Each module calls `tests.op_table.op(...)` at import; `tests/op_table.py`
imports every module here, so their rows run in every table-driven test.
"""

# A test module may import one of these modules before tests.op_table; loading the table
# first registers every module's rows in one order (the table's, then these by name).
import tests.op_table  # noqa: E402,F401
