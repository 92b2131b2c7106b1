"""numpy as an optional accelerator: `numpy(work)` is the module when it is installed,
`ENABLED`, and loaded already or worth loading for ``work`` items, else None. Every caller
has a pure-Python path that gives the same results (the browser build has no numpy), and
tests run both."""

from __future__ import annotations

import os
import sys

ENABLED = os.environ.get("RAGWEB_NUMPY", "1") != "0"  # False: always the pure-Python paths
# Importing numpy takes ~55 ms, a one-question `rag query` in all; pure Python does about
# this many items of work (postings, multiply-adds) in that time.
IMPORT_WORK = 200_000


def numpy(work: int = IMPORT_WORK):
    """The numpy module, or None: not installed, not `ENABLED`, or not loaded yet and
    ``work`` too small to pay for loading it."""
    if not ENABLED:
        return None
    np = sys.modules.get("numpy")
    if np is not None:
        return np
    if work < IMPORT_WORK:
        return None
    try:
        import numpy as np
    except ImportError:
        return None
    return np
