"""Shared fixtures: the sample corpus (sample/ at the repo root), copied per test."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from ragweb.webbuild import SAMPLE_FILES, copy_sample

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"

# The suite that CI runs draws the same examples every time, so a run's result does not depend
# on chance nor on how fast the machine is. HYPOTHESIS_PROFILE=explore draws new examples each
# run, to look for what the fixed draw misses.
settings.register_profile("ci", derandomize=True, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("explore", suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def sample_root(tmp_path) -> Path:
    """A fresh copy of the sample corpus in a temporary directory (its shipped files only: not
    an index or a ``ctx.json`` the README's own examples leave in sample/)."""
    dest = tmp_path / "corpus"
    copy_sample(dest)
    return dest


@pytest.fixture(autouse=True)
def _no_user_git_config(monkeypatch, tmp_path_factory):
    """Tests see no system or user git config (`gitconfig`): a developer's own
    ``~/.config/git/ignore`` must not change what a test's walk selects."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path_factory.getbasetemp() / "no-gitconfig"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.getbasetemp() / "no-xdg-config"))


def sample_documents() -> list[tuple[str, str]]:
    """(relative path, text) of every sample file, sorted."""
    return sorted((name, (SAMPLE / name).read_text(encoding="utf-8")) for name in SAMPLE_FILES)
