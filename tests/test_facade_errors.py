"""The page's facade (run here on CPython): an error quotes a long argument cut short, never whole."""

import json

import pytest

from ragweb import facade


@pytest.fixture
def fresh():
    assert json.loads(facade.init())["success"]
    yield
    facade.clear()


@pytest.mark.parametrize("call", [
    # (a text given as the name, ragIndex(text, name): the whole text came back in the error)
    lambda: facade.index_text("line\n" * 200_000, "notes.md"),
    lambda: facade.remove("line\n" * 200_000),
    lambda: facade.index_text("a\ud800" * 3000, "x"),
    lambda: facade.index_text("a\ud800" * 1000, "x"),
    lambda: facade.remove("line\n" * 500),
    lambda: facade.index_text("../" + "x/" * 2000, "x"),
    lambda: facade.index_text("x/" * 2000, "x"),
    lambda: facade.query("the " * 20_000),
    lambda: facade.pack("/ " * 20_000),
])
def test_an_error_quotes_a_long_argument_cut_short(fresh, call):
    error = json.loads(call())["error"]
    assert len(error) < 400, error[:400]
    assert "..." in error or "characters long, more than 4,096" in error, error


def test_a_short_argument_is_quoted_whole(fresh):
    assert json.loads(facade.remove("a\nb"))["error"] == (
        "the file name 'a\\nb' holds a line break or another control character")
    assert json.loads(facade.query("the of"))["error"].startswith("the question 'the of' has no indexable words")


def test_a_long_names_end_stays_in_its_error(fresh):
    # (what the message is about is often at the end: the "/" of a folder given as a file)
    error = json.loads(facade.index_text("a" * 100 + "/guide/", "x"))["error"]
    assert "names no file" in error and "/guide/'" in error and "..." in error and len(error) < 300, error
