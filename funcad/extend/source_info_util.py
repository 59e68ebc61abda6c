"""Where user code is (JAX's `extend.source_info_util`): a library registers its
own files so that funcad's tracebacks and error locations skip them.

>>> import os, funcad.extend.source_info_util as siu
>>> siu.register_exclusion(os.path.join(os.sep, "opt", "mylib"))
"""
from ..core.traceback_util import register_exclusion

__all__ = ["register_exclusion"]
