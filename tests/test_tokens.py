from hypothesis import given, strategies as st

from ragweb.tokens import count_tokens


def test_known_values():
    assert [count_tokens(s) for s in ["", "a", "abcd", "abcde", "x" * 400]] == [0, 1, 1, 2, 100]


@given(st.text(), st.text())
def test_ceil_chars_over_4_and_subadditive(a, b):
    assert count_tokens(a) == -(-len(a) // 4)
    assert count_tokens(a + b) <= count_tokens(a) + count_tokens(b)
