"""Which ragweb a bench script measures: the package PYTHONPATH names (the way the helpers'
clones and an old commit's worktree are measured: ``PYTHONPATH=/path/src python bench/...``),
else the src/ folder of the checkout the script is in (not the one an editable install of
the venv points to)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def use_src() -> Path:
    """Put the src folder to measure first on ``sys.path`` and return it (for a ``rag``
    subprocess's PYTHONPATH, so that it runs the same code)."""
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and (Path(p) / "ragweb" / "__init__.py").is_file():
            return Path(p)  # (already before site-packages; putting this checkout's src first hid it)
    src = Path(__file__).resolve().parent.parent / "src"
    sys.path.insert(0, str(src))
    return src
