"""The funcad tour: `python -m funcad`.

Derivatives of any order, forward and reverse mode, the programs funcad
builds (jaxprs), batching with vmap, and compilation with XLA.
"""
from .example_libraries._tour import main

if __name__ == "__main__":
    main()
