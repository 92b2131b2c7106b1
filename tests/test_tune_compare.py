"""bench/tune_dev.py's `compare`: the paired bootstrap that says whether a candidate's
objective differs from the first candidate's beyond chance (development tuning only)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import tune_dev  # noqa: E402


def _out(per_set: dict, wrong_refusals: int = 0) -> dict:
    """A `Suite.evaluate` result from per-question (normal, lean) recalls per set."""
    out = {}
    for name, rows in per_set.items():
        normal = [n for n, _ in rows]
        lean = [x for _, x in rows]
        out[name] = (sum(normal) / len(normal), sum(lean) / len(lean), 0, 0, 0, wrong_refusals, None,
                     (normal, lean))
    return out


def _interval(line: str) -> tuple[float, float, float]:
    obj = float(line.split("objective ")[1].split(",")[0])
    low, high = line.split("interval [")[1].split("]")[0].split(", ")
    return obj, float(low), float(high)


def test_the_same_packs_differ_by_nothing():
    base = _out({"a": [(1.0, 0.5), (0.0, 0.0), (0.5, 1.0)], "b": [(1.0, 1.0), (1.0, 0.0)]})
    line = tune_dev.compare(base, base)
    assert _interval(line) == (0.0, 0.0, 0.0)
    assert "better / worse: 0 / 0" in line


def test_a_candidate_better_on_every_question_is_above_zero():
    base = _out({"a": [(0.5, 0.5)] * 20, "b": [(0.0, 0.0)] * 10})
    better = _out({"a": [(1.0, 0.5)] * 20, "b": [(0.5, 0.0)] * 10})
    obj, low, high = _interval(tune_dev.compare(base, better))
    assert obj == 0.5  # both sets' normal recall +0.5, lean the same
    assert 0 < low <= obj <= high
    assert "better / worse: 30 / 0" in tune_dev.compare(base, better)


def test_one_question_of_many_is_noise():
    rows = [(1.0, 1.0)] * 29 + [(0.0, 0.0)]
    base = _out({"a": rows})
    one_more = _out({"a": [(1.0, 1.0)] * 30})
    obj, low, high = _interval(tune_dev.compare(base, one_more))
    assert obj > 0 and low == 0.0  # most draws lack that question: no evidence of a gain


def test_wrong_refusals_count_against_the_candidate():
    rows = [(1.0, 1.0)] * 10
    obj, low, high = _interval(tune_dev.compare(_out({"a": rows}), _out({"a": rows}, wrong_refusals=2)))
    assert obj == low == high == -0.004
