"""Shared fixtures: the sample corpus (sample/ at the repo root), copied per test."""

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"


@pytest.fixture
def sample_root(tmp_path) -> Path:
    """A fresh copy of the sample corpus in a temporary directory."""
    dest = tmp_path / "corpus"
    shutil.copytree(SAMPLE, dest, ignore=shutil.ignore_patterns(".rag"))
    return dest


def sample_documents() -> list[tuple[str, str]]:
    """(relative path, text) of every sample file, sorted."""
    return sorted((p.relative_to(SAMPLE).as_posix(), p.read_text(encoding="utf-8"))
                  for p in SAMPLE.rglob("*") if p.is_file() and ".rag" not in p.parts)
