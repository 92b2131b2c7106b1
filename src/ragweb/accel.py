"""numpy as an optional accelerator: `numpy()` is the module when it is installed and
`ENABLED`, else None. Every caller has a pure-Python path that gives the same results
(the browser build has no numpy), and tests run both."""

from __future__ import annotations

import os

ENABLED = os.environ.get("RAGWEB_NUMPY", "1") != "0"  # False: always the pure-Python paths


def numpy():
    """The numpy module, or None (not installed, or `ENABLED` is False)."""
    if not ENABLED:
        return None
    try:
        import numpy
    except ImportError:
        return None
    return numpy
