"""Tests for ragweb.config: defaults, lookup order, every error kind with its line, dump."""

import re

import pytest
import snowballstemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from ragweb.config import (DEFAULTS, SCHEMA, config_help, default_config, dump_config,
                           load_config, parse_config)
from ragweb.analysis import Analyzer, folded_words, synonym_groups
from ragweb.engine import analysis_settings
from ragweb.errors import ConfigError
from ragweb.files import backslash_problem, glob_problem


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def error_of(text, name="rag.yaml"):
    with pytest.raises(ConfigError) as info:
        parse_config(text, name)
    return str(info.value)


# --------------------------------------------------------------------------- defaults

def test_no_config_file_gives_defaults_and_none(tmp_path):
    cfg, used = load_config(tmp_path)
    assert used is None
    assert cfg == DEFAULTS
    assert cfg["index"]["chunk_tokens"] == 512
    assert cfg["retrieve"]["top_k"] == 20


def test_default_config_is_a_deep_copy():
    cfg = default_config()
    cfg["index"]["includes"].append("**/*.xyz")
    cfg["pack"]["token_budget"] = 1
    assert "**/*.xyz" not in DEFAULTS["index"]["includes"]
    assert default_config()["pack"]["token_budget"] == 4000


def test_defaults_apply_key_by_key(tmp_path):
    write(tmp_path / "rag.yaml", "index:\n  chunk_tokens: 256\nretrieve:\n  top_k: 5\n")
    cfg, _ = load_config(tmp_path)
    assert cfg["index"]["chunk_tokens"] == 256
    assert cfg["index"]["chunk_overlap"] == 50
    assert cfg["index"]["includes"] == DEFAULTS["index"]["includes"]
    assert cfg["retrieve"]["top_k"] == 5
    assert cfg["retrieve"]["mmr_lambda"] == 0.7
    assert cfg["pack"] == DEFAULTS["pack"]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n", "~\n"])
def test_empty_file_gives_defaults(tmp_path, text):
    path = write(tmp_path / "rag.yaml", text)
    assert load_config(tmp_path) == (DEFAULTS, path)


def test_empty_section_gives_defaults():
    assert parse_config("index:\n  # chunk_tokens: 100\npack:\n") == DEFAULTS


# --------------------------------------------------------------------------- lookup

def test_lookup_prefers_rag_yaml_over_dot_rag_config(tmp_path):
    write(tmp_path / ".rag" / "config.yaml", "retrieve:\n  top_k: 2\n")
    cfg, used = load_config(tmp_path)
    assert used == tmp_path / ".rag" / "config.yaml"
    assert cfg["retrieve"]["top_k"] == 2

    write(tmp_path / "rag.yaml", "retrieve:\n  top_k: 1\n")
    cfg, used = load_config(tmp_path)
    assert used == tmp_path / "rag.yaml"
    assert cfg["retrieve"]["top_k"] == 1


def test_explicit_path_wins_over_root_files(tmp_path):
    write(tmp_path / "rag.yaml", "retrieve:\n  top_k: 1\n")
    other = write(tmp_path / "elsewhere" / "custom.yml", "retrieve:\n  top_k: 3\n")
    cfg, used = load_config(tmp_path, other)
    assert used == other
    assert cfg["retrieve"]["top_k"] == 3
    cfg, used = load_config(str(tmp_path), str(other))  # str paths work too
    assert cfg["retrieve"]["top_k"] == 3


def test_explicit_path_must_exist(tmp_path):
    write(tmp_path / "rag.yaml", "")
    with pytest.raises(ConfigError, match=r"config file not found: .*missing\.yaml"):
        load_config(tmp_path, tmp_path / "missing.yaml")


def test_errors_name_the_file_relative_to_root(tmp_path):
    write(tmp_path / ".rag" / "config.yaml", "\nindex:\n  k1: high\n")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value).startswith(".rag/config.yaml line 3: index.k1 must be a number")


def test_explicit_file_outside_root_is_named_by_its_path(tmp_path):
    outside = write(tmp_path / "a" / "conf.yaml", "pack:\n  token_budget: 0\n")
    (tmp_path / "root").mkdir()
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "root", outside)
    assert str(info.value).startswith(f"{outside} line 2: pack.token_budget")


# --------------------------------------------------------------------------- errors

def test_documented_example_message():
    text = "# ragweb\nindex:\n  stemming: true\n  chunk_tokens: abc\n"
    assert error_of(text) == ("rag.yaml line 4: index.chunk_tokens must be an integer "
                              "between 16 and 100000, got 'abc'")


def test_yaml_syntax_error_carries_line():
    msg = error_of("index:\n  chunk_tokens: 100\n  includes: [a, b\nretrieve:\n  top_k: 3\n")
    assert msg.startswith("rag.yaml line ")
    assert "invalid YAML" in msg
    line = int(re.match(r"rag\.yaml line (\d+):", msg).group(1))
    assert line in (4, 5)  # the parser notices the unclosed list on the next lines


def test_an_unclosed_bracket_or_quote_names_the_line_it_opens_on_with_a_hint():
    """`index: {includes: ["*.md"]` (a one-line rag.yaml missing its last brace) was "rag.yaml
    line 2: invalid YAML: expected ',' or '}', but got '<stream end>'" with a final newline:
    YAML notices it where the file ends, on a line the user never wrote, and says nothing of
    the brace. The line of the bracket (or quote) is named, with what to close it with."""
    brace = ("rag.yaml line 1: invalid YAML: expected ',' or '}', but got '<stream end>' (while parsing a flow "
             "mapping); the { at column 8 is never closed: close it with }")
    for end in ("", "\n", "\r\n", "\n\n# the end\n"):
        assert error_of('index: {includes: ["*.md"]' + end) == brace
    assert error_of('index:\n  includes: ["*.md"\n\n').startswith("rag.yaml line 2: invalid YAML: ")
    assert error_of('index:\n  includes: ["*.md"\n').endswith("; the [ at column 13 is never closed: close it with ]")
    assert error_of('index: {includes: ["*.md"], \n') == (
        "rag.yaml line 1: invalid YAML: expected the node content, but found '<stream end>' (while parsing a flow "
        "node); the file ends inside a [ or { that is never closed: close it with ] or }")
    assert error_of("embedding: {api_key_env: 'sk-SECRET\n") == (
        "rag.yaml line 1: invalid YAML: found unexpected end of stream (while scanning a quoted scalar); the quote "
        "at column 26 is never closed: end the value with '")
    assert error_of('index: {includes: ["*.md"]\nretrieve:\n  top_k: 3\n').endswith(
        "; the { on line 1 (column 8) is not closed before this line: close it with }, or write a comma between "
        "its items")
    assert error_of('index: {includes: ["*.md"]]\n').endswith("; close the { at column 8 with }")
    assert error_of("index:\n  language: 'english\n---\n").endswith(
        "; the quote on line 2 (column 13) is not closed before this line: end the value with '")


def test_yaml_mapping_value_error_line():
    assert error_of("index:\n  chunk_tokens: 1: 2\n").startswith("rag.yaml line 2: invalid YAML")


def test_tab_indentation_gets_a_hint():
    msg = error_of("index:\n\tchunk_tokens: 100\n")
    assert msg.startswith("rag.yaml line 2: invalid YAML")
    assert msg.endswith("; indent with spaces, not tabs")
    for text in ("index:\n  chunk_tokens:\t100\n", b"index:\n  chunk_tokens: 100\t\n"):  # (not indentation)
        assert error_of(text).endswith("; write spaces, not tabs, between a key, its value and a comment")


def test_a_key_without_a_space_after_its_colon_is_named_and_an_embedding_value_never_shown():
    """`top_k:3` (no space after the colon) is one string to YAML: under `retrieve:` alone it
    was "section 'retrieve' must be a mapping of keys, got the value 'top_k:3'", with other
    keys "mapping values are not allowed here" on the next line, or, last, "could not find
    expected ':'" on the line after it; none said why. And `api_key_env:sk_live_...` showed
    the key in the message."""
    space = "; write a space after the key's colon (top_k: ...)"
    assert error_of("retrieve:\n  top_k:3\n") == ("rag.yaml line 2: section 'retrieve' must be a mapping of keys, "
                                                  "got the value 'top_k:3'" + space)
    assert error_of("retrieve:\n  mmr: true\n  top_k:3\n\n# the end\n") == (
        "rag.yaml line 3: invalid YAML: could not find expected ':' (while scanning a simple key)" + space)
    assert error_of("retrieve:\n  top_k:3\n  mmr: true\n") == (
        "rag.yaml line 3: invalid YAML: mapping values are not allowed here; the line above it has no space after its "
        "key's colon (top_k: ...)")
    assert error_of("index:chunk_tokens: 200\n") == (
        "rag.yaml line 1: unknown section 'index:...': a section's name ends its line (index:), its keys go on the "
        "lines below it, indented")
    for text in ("embedding:\n  api_key_env:sk_live_SECRET39HqLyjWDarjtT1zdp7dc\n", "embedding:\n  sk-SECRET\n",
                 "api_key_env:sk-SECRET\n", "embedding:\n  provider: openai\n  api_key_env:sk-SECRET: x\n"):
        msg = error_of(text)
        assert "SECRET" not in msg, msg
        assert "not shown, being maybe the API key" in msg or "'api_key_env:...'" in msg, msg
    for text in ("embedding:api_key_env:sk-SECRET\n", "OPENAI_API_KEY=sk-SECRET\n",  # (the file a string: its value was shown)
                 "index:\n  sk_live_SECRET39HqLyjWDarjtT1zdp7dc\n"):
        msg = error_of(text)
        assert "SECRET" not in msg and "not shown, being maybe the API key" in msg, msg
    assert error_of("embedding:\n  api_key_env:sk_live_SECRET\n").endswith("; write a space after the key's colon "
                                                                           "(api_key_env: ...)")
    assert error_of("index:\n  chunks:200\n") == ("rag.yaml line 2: section 'index' must be a mapping of keys, got "
                                                  "the value 'chunks:200'")  # (no key of index: nothing to say)
    assert error_of("embedding:\n  base_url: x\n  http://x\n").endswith(  # ("http" is no key)
        "; write each line of a section as key: value, with a space after the colon")


def test_a_line_indented_unlike_its_neighbours_gets_a_hint():
    """A key or section name indented one space off ("index:" / "  chunk_tokens: 200" / " pack:")
    was "invalid YAML: expected <block end>, but found '<block mapping start>'", and a key
    indented deeper than the one above "mapping values are not allowed here": YAML's words,
    which do not say what is wrong with the line."""
    alike = ("; indent alike: a section's name at the start of its line, its keys (and a list's items) each by the "
             "same number of spaces")
    for text, line in (("index:\n  chunk_tokens: 200\n pack:\n  token_budget: 10\n", 3),
                       ("index:\n    chunk_tokens: 200\n  chunk_overlap: 10\n", 3),
                       ("index:\n  includes:\n    - '*.md'\n  - '*.txt'\n", 4),
                       (" index:\n  chunk_tokens: 200\nretrieve:\n  top_k: 3\n", 3)):
        msg = error_of(text)
        assert msg.startswith(f"rag.yaml line {line}: invalid YAML: ") and msg.endswith(alike), msg
    assert error_of("index:\n  chunk_tokens: 200\n   chunk_overlap: 10\n") == (
        "rag.yaml line 3: invalid YAML: mapping values are not allowed here; this line is indented more than the "
        "line above it: indent it as that line")
    for text in ("embedding:\n  base_url: http://localhost: 11434\n", "index: chunk_tokens: 200\n"):
        assert error_of(text).endswith("mapping values are not allowed here; quote a value that holds ': ' "
                                       "('a: b'), and write each key on a line of its own")


def test_a_name_without_its_colon_or_a_list_item_without_its_dash_gets_a_hint():
    """A section's name or a key written without its colon, or a list's item without "- ",
    was YAML's "could not find expected ':'" or "mapping values are not allowed here", or
    "got the value 'chunk_tokens 200'", none of which says what is missing."""
    assert error_of("index\n  chunk_tokens: 200\n") == ("rag.yaml line 2: invalid YAML: mapping values are not "
                                                        "allowed here; the line above it has no colon after index "
                                                        "(index:)")
    assert error_of("index:\n  chunk_tokens: 200\nretrieve\n  top_k: 3\n") == (
        "rag.yaml line 3: invalid YAML: could not find expected ':' (while scanning a simple key); write a colon "
        "after retrieve (retrieve:)")
    assert error_of("index:\n  chunk_tokens 200\n") == ("rag.yaml line 2: section 'index' must be a mapping of keys, "
                                                        "got the value 'chunk_tokens 200'; write a colon after the key "
                                                        "(chunk_tokens: ...)")
    msg = error_of("embedding:\n  api_key_env sk-SECRET\n")
    assert msg.endswith("; write a colon after the key (api_key_env: ...)") and "SECRET" not in msg, msg
    assert error_of("pack:\n  synonyms:\n    - k8s kubernetes\n    docs documentation\n") == (
        "rag.yaml line 4: invalid YAML: could not find expected ':' (while scanning a simple key); start each item "
        "of a list with '- ', as the one above it")


def test_an_unquoted_glob_that_starts_with_a_star_gets_a_hint():
    """`includes: [*.md]` (a glob as a shell writes it) was "invalid YAML: expected alphabetic or
    numeric character, but found '.' (while scanning an alias)": YAML reads a value that starts
    with "*" as an alias. The message says to quote it."""
    hint = "; a value that starts with * names a YAML alias: quote a glob that starts with *, as '*.md'"
    for text, line in (("index:\n  includes: [*.md]\n", 2), ("index:\n  includes:\n    - **/*.md\n", 3),
                       ("index:\n  excludes: [docs/*, *.log]\n", 2), ("index:\n  excludes:\n    - *\n", 3),
                       ("index:\n  excludes:\n    - *build\n", 3)):
        msg = error_of(text)
        assert msg.startswith(f"rag.yaml line {line}: invalid YAML: ") and msg.endswith(hint), msg
    assert parse_config("index:\n  includes: ['*.md']\n")["index"]["includes"] == ["*.md"]


def test_top_level_must_be_a_mapping():
    msg = error_of("\n- index\n- retrieve\n")
    assert msg.startswith("rag.yaml line 2: the top level must be a mapping of sections")
    assert "got a list" in msg


def test_top_level_scalar_is_rejected():
    assert "got the value 'hello'" in error_of("hello\n")


def test_unknown_section_suggests_and_lists_sections():
    msg = error_of("index:\n  k1: 1\nretreive:\n  top_k: 3\n")
    assert msg.startswith("rag.yaml line 3: unknown section 'retreive'")
    assert "did you mean 'retrieve'?" in msg
    assert msg.endswith("valid sections: " + ", ".join(SCHEMA))


def test_key_at_top_level_points_to_its_section():
    msg = error_of("chunk_tokens: 100\n")
    assert msg.startswith("rag.yaml line 1: unknown section 'chunk_tokens'")
    assert "key of section 'index'" in msg


def test_unknown_key_suggests_and_lists_keys():
    msg = error_of("index:\n  chunk_tokens: 100\n  chunk_overlp: 10\n")
    assert msg.startswith("rag.yaml line 3: unknown key 'chunk_overlp' in section 'index'")
    assert "did you mean 'chunk_overlap'?" in msg
    assert msg.endswith("valid keys: " + ", ".join(SCHEMA["index"]))


def test_a_glob_negated_as_in_a_gitignore_is_refused():
    msg = error_of('index:\n  excludes:\n    - "**/build/**"\n    - "!build/keep.md"\n')
    assert msg.startswith("rag.yaml line 4: index.excludes items cannot start with '!', got '!build/keep.md'")
    msg = error_of('index:\n  includes: ["**/*.md", "!secret.md"]\n')
    assert msg.startswith("rag.yaml line 2: index.includes items cannot start with '!'")
    assert "index.excludes" in msg


def test_a_file_that_is_not_utf8_or_holds_a_control_character_names_its_line():
    with pytest.raises(ConfigError) as e:
        parse_config(b"# r\xe9glages\npack:\n  token_budget: 100\n")
    assert str(e.value) == "rag.yaml line 1: not UTF-8 text (the byte 0xe9); save it as UTF-8"
    with pytest.raises(ConfigError) as e:
        parse_config(b"# x\n\npack:\n  token_budget: 100 \xe9\n")
    assert str(e.value).startswith("rag.yaml line 4: not UTF-8 text")
    for text in ("pack:\n  token_budget: 100\n  # x\x01y\n", b"pack:\n  token_budget: 100\n  # x\x01y\n"):
        with pytest.raises(ConfigError) as e:
            parse_config(text)
        assert str(e.value) == "rag.yaml line 3: the control character U+0001 is not allowed in YAML; remove it"


def test_a_glob_that_can_match_no_file_is_refused():
    msg = error_of('index:\n  excludes:\n    - "**/build/**"\n    - "docs/[abc"\n')
    assert msg.startswith("rag.yaml line 4: index.excludes item 'docs/[abc' can match no file: "
                          "it has a '[' that no ']' closes (write '\\[' for the character itself)")
    msg = error_of('index:\n  includes: ["v[[:digits:]].md"]\n')
    assert msg.startswith("rag.yaml line 2: index.includes item 'v[[:digits:]].md' can match no file: "
                          "it has an unknown character class [:digits:] (known: alnum, alpha,")
    cfg = parse_config('index:\n  includes: ["v[[:digit:]].md", "\\\\[draft\\\\].md", "[z-a].md"]\n')
    assert cfg["index"]["includes"] == ["v[[:digit:]].md", "\\[draft\\].md", "[z-a].md"]


@pytest.mark.parametrize("text, line", [
    ('index:\n  includes: [""]\n', 2),
    ("index:\n  includes:\n    - '**/*.md'\n    - '   '\n", 4),
    ('index:\n  excludes: ["**/build/**", ""]\n', 2),
])
def test_an_empty_glob_is_refused_naming_key_and_line(text, line):
    key = "includes" if "includes" in text else "excludes"
    msg = error_of(text)
    assert msg.startswith(f"rag.yaml line {line}: index.{key} item ")
    assert "is empty and can match no file" in msg


def test_a_glob_written_as_a_windows_path_is_refused():
    msg = error_of('index:\n  excludes: ["private\\notes"]\n')  # (YAML reads "\n" in double quotes)
    assert msg.startswith("rag.yaml line 2: index.excludes item 'private\\notes' can match no file: it has "
                          "the control character U+000A, a line break (in double quotes YAML reads")
    msg = error_of("index:\n  excludes:\n    - '.\\build'\n")
    assert msg == ("rag.yaml line 3: index.excludes item '.\\build' has a backslash before 'b': globs separate "
                   "folders with '/', and '\\' only makes the next character plain (\\*, \\?, \\[)")
    msg = error_of("index:\n  includes: ['docs\\']\n")
    assert msg.startswith("rag.yaml line 2: index.includes item 'docs\\' can match no file: it has a last '\\' "
                          "that escapes nothing")
    globs = ["\\#notes.md", "a\\*b.md", "c\\\\d.md", "**/*\\.md", "a[\\-_]b.md", "a[\\.]md"]  # (escapes, as git reads them)
    cfg = parse_config("index:\n  includes: [" + ", ".join(f"'{g}'" for g in globs) + "]\n")
    assert cfg["index"]["includes"] == globs


@pytest.mark.parametrize("encoding", ["utf-32", "utf-32-le", "utf-32-be"])
def test_a_config_in_utf32_is_named_so(encoding):
    for text in ("index:\n  chunk_tokens: 300\n", "index:\n  language: 'é'\n"):
        assert error_of(text.encode(encoding)) == "rag.yaml: UTF-32 text; save it as UTF-8"


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_named_so_before_its_bytes_that_are_not_utf8(encoding):
    assert error_of("# réglages\nindex:\n  chunk_tokens: 300\n".encode(encoding)) == (
        "rag.yaml: UTF-16 text without a byte order mark; save it as UTF-8")


def test_a_config_in_utf16_without_a_byte_order_mark_or_with_lone_cr_line_ends_says_so():
    assert error_of("index:\n  chunk_tokens: 300\n".encode("utf-16-le")) == (
        "rag.yaml: UTF-16 text without a byte order mark; save it as UTF-8")
    assert parse_config("index:\n  chunk_tokens: 300\n".encode("utf-16"))["index"]["chunk_tokens"] == 300
    assert error_of("index:\n  chunk_tokens: 300\n\n\n  # \x01\n".encode("utf-16")) == (
        "rag.yaml line 5: the control character U+0001 is not allowed in YAML; remove it")
    assert error_of(b"index:\r  chunk_tokens: 300\r  # x\x01\r") == (
        "rag.yaml line 3: the control character U+0001 is not allowed in YAML; remove it")
    assert error_of(b"index:\r  chunk_tokens: 300\r  # \xff\r").startswith("rag.yaml line 3: not UTF-8 text")


def test_an_unknown_key_is_quoted_escaped_and_cut_short():
    msg = error_of('"x\\n\\nThe index is damaged\\u202e": {}\n')
    assert msg.startswith("rag.yaml line 1: unknown section 'x\\n\\nThe index is damaged\\u202e'")
    msg = error_of('index:\n  ? "' + "k" * 5000 + '"\n  : 1\n')
    assert msg.startswith(f"rag.yaml line 2: unknown key '{'k' * 80}...' in section 'index'") and len(msg) < 600


def test_key_in_wrong_section_names_the_right_one():
    msg = error_of("retrieve:\n  chunk_tokens: 100\n")
    assert msg.startswith("rag.yaml line 2: unknown key 'chunk_tokens' in section 'retrieve'")
    assert "belongs in section 'index'" in msg


def test_section_must_be_a_mapping():
    assert error_of("index: 5\n").startswith(
        "rag.yaml line 1: section 'index' must be a mapping of keys, got the value '5'")


@pytest.mark.parametrize("text, message", [
    ("index:\n  chunk_tokens: true\n",
     "line 2: index.chunk_tokens must be an integer between 16 and 100000, got true"),
    ("index:\n  chunk_tokens: 512.5\n",
     "line 2: index.chunk_tokens must be an integer between 16 and 100000, got 512.5"),
    ("index:\n  b: yes\n", "line 2: index.b must be a number between 0 and 1, got true"),
    ("index:\n  gitignore: 1\n", "line 2: index.gitignore must be true or false, got 1"),
    ("embedding:\n  model: 7\n", "line 2: embedding.model must be a string, got 7"),
    ("index:\n  includes: '**/*.md'\n",
     "line 2: index.includes must be a list of strings (globs), got '**/*.md'"),
    ("retrieve:\n  top_k: [1]\n",
     "line 2: retrieve.top_k must be an integer between 1 and 10000, got a list"),
    ("retrieve:\n  top_k:\n",
     "line 2: retrieve.top_k must be an integer between 1 and 10000, got null"),
])
def test_wrong_types(text, message):
    assert error_of(text) .startswith("rag.yaml " + message)


def test_null_value_says_how_to_get_the_default():
    assert "delete the line to use the default" in error_of("pack:\n  token_budget: ~\n")


def test_int_is_accepted_for_float():
    cfg = parse_config("index:\n  k1: 2\n  b: 0\n")
    assert cfg["index"]["k1"] == 2.0 and isinstance(cfg["index"]["k1"], float)
    assert cfg["index"]["b"] == 0.0 and isinstance(cfg["index"]["b"], float)


@pytest.mark.parametrize("text, message", [
    ("index:\n  chunk_tokens: 8\n", "line 2: index.chunk_tokens must be an integer between 16 and 100000, got 8"),
    ("retrieve:\n  mmr_lambda: 1.5\n", "line 2: retrieve.mmr_lambda must be a number between 0 and 1, got 1.5"),
    ("index:\n  k1: -0.1\n", "line 2: index.k1 must be a number between 0 and 10, got -0.1"),
    ("index:\n  k1: .nan\n", "line 2: index.k1 must be a number between 0 and 10, got nan"),
    ("pack:\n  token_budget: 0\n", "line 2: pack.token_budget must be an integer between 1 and 10000000, got 0"),
])
def test_out_of_range(text, message):
    assert error_of(text).startswith("rag.yaml " + message)


def test_a_number_with_a_leading_zero_is_decimal_not_octal():
    cfg = parse_config("pack:\n  token_budget: 01000\nindex:\n  chunk_tokens: 0_100\n  chunk_overlap: 09\n"
                       "  k1: 02\n")
    assert cfg["pack"]["token_budget"] == 1000  # (YAML 1.1: octal 512)
    assert (cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"]) == (100, 9)
    assert cfg["index"]["k1"] == 2.0
    assert parse_config("pack:\n  token_budget: 0x10\n")["pack"]["token_budget"] == 16  # (hex says so)
    assert error_of("pack:\n  token_budget: '010'\n").endswith("got '010'")  # (quoted: a string)


@pytest.mark.parametrize("text, shown", [
    ("index:\n  chunk_overlap: 1:00\n", "index.chunk_overlap must be an integer between 0 and 10000, got 1:00"),
    ("retrieve:\n  top_k: 0:30\n", "retrieve.top_k must be an integer between 1 and 10000, got 0:30"),
    ("index:\n  k1: 1:30.5\n", "index.k1 must be a number between 0 and 10, got 1:30.5"),
])
def test_a_base_60_number_is_refused(text, shown):
    assert error_of(text) == (f"rag.yaml line 2: {shown}, which YAML 1.1 reads as a base-60 number; "
                              "write it in decimal")


def test_a_whole_number_written_with_a_point_is_read_for_an_integer_key():
    """``top_k: 2.0`` was refused ("must be an integer") while ``2e0`` was taken."""
    cfg = parse_config("retrieve:\n  top_k: 2.0\npack:\n  token_budget: 1400.0\n")
    assert cfg["retrieve"]["top_k"] == 2 and isinstance(cfg["retrieve"]["top_k"], int)
    assert cfg["pack"]["token_budget"] == 1400 and isinstance(cfg["pack"]["token_budget"], int)
    assert error_of("retrieve:\n  top_k: 2.5\n") == (
        "rag.yaml line 2: retrieve.top_k must be an integer between 1 and 10000, got 2.5")
    assert error_of("retrieve:\n  top_k: .inf\n").endswith("got inf")
    assert error_of("retrieve:\n  top_k: .nan\n").endswith("got nan")
    assert error_of("retrieve:\n  top_k: 0.0\n").endswith("got 0.0")  # (shown as written)


def test_a_number_with_an_exponent_is_read_and_ranges_are_shown_without_one():
    cfg = parse_config("retrieve:\n  min_score_threshold: 1e+09\nindex:\n  max_file_bytes: 5e6\n"
                       "  k1: 2.5E-1\n  b: .5e0\npack:\n  token_budget: 1.5e3\n")
    assert cfg["retrieve"]["min_score_threshold"] == 1e9
    assert cfg["index"]["max_file_bytes"] == 5_000_000 and isinstance(cfg["index"]["max_file_bytes"], int)
    assert (cfg["index"]["k1"], cfg["index"]["b"], cfg["pack"]["token_budget"]) == (0.25, 0.5, 1500)
    assert error_of("\nretrieve:\n  min_score_threshold: 2e9\n") == (
        "rag.yaml line 3: retrieve.min_score_threshold must be a number between 0 and 1000000000, got 2e9")
    assert error_of("index:\n  max_file_bytes: 5.5e0\n") == (  # (an integer key: only a whole number)
        "rag.yaml line 2: index.max_file_bytes must be an integer between 1 and 1099511627776, got 5.5e0")
    assert error_of("index:\n  max_file_bytes: 1e999999\n").endswith("got 1e999999")
    # (an exponent past what a number holds was a traceback: decimal.InvalidOperation)
    assert error_of("retrieve:\n  top_k: 1e99999999999999999999\n").endswith("got 1e99999999999999999999")
    assert error_of("index:\n  chunk_tokens: 1" + "0" * 5000 + "e1\n").endswith("got 1" + "0" * 79 + "...")
    assert error_of("index:\n  chunk_tokens: 0" + "9" * 5000 + "\n") == (
        "rag.yaml line 2: index.chunk_tokens is a number too long to read (5001 characters)")
    assert "1e+" not in config_help()


def test_range_bounds_are_inclusive():
    cfg = parse_config("index:\n  chunk_tokens: 16\n  chunk_overlap: 0\n  b: 1\n")
    assert (cfg["index"]["chunk_tokens"], cfg["index"]["chunk_overlap"], cfg["index"]["b"]) == (16, 0, 1.0)


def test_a_choice_is_read_in_any_case():
    # (as `language: English` and `stemming: Porter` were, while `output: JSON` was refused)
    cfg = parse_config("pack:\n  output: JSON\nlogging:\n  level: WARNING\nembedding:\n  provider: OpenAI\n")
    assert (cfg["pack"]["output"], cfg["logging"]["level"], cfg["embedding"]["provider"]) == \
        ("json", "warning", "openai")
    msg = error_of("pack:\n  output: JSN\n")  # (the error as it was: the value as written)
    assert msg.startswith("rag.yaml line 2: pack.output must be one of: ") and "got 'JSN'" in msg
    assert "did you mean 'json'?" in msg


def test_choice_error_lists_every_choice_from_schema():
    msg = error_of("\npack:\n  output: jsn\n")
    choices = SCHEMA["pack"]["output"][2]
    assert msg.startswith(f"rag.yaml line 3: pack.output must be one of: {', '.join(choices)}, got 'jsn'")
    assert "did you mean 'json'?" in msg
    msg = error_of("logging:\n  level: loud\n")
    assert "one of: " + ", ".join(SCHEMA["logging"]["level"][2]) in msg


def test_list_item_error_points_at_the_item_line():
    msg = error_of("index:\n  excludes:\n    - '**/x/**'\n    - 42\n")
    assert msg == "rag.yaml line 4: index.excludes items must be strings (globs), got 42"


def test_pack_synonyms_are_groups_of_words():
    assert parse_config("pack:\n  synonyms: ['k8s kubernetes', 'pg postgres']\n")["pack"]["synonyms"] == \
        ["k8s kubernetes", "pg postgres"]
    msg = error_of("pack:\n  synonyms:\n    - k8s kubernetes\n    - [a, b]\n")
    assert msg == "rag.yaml line 4: pack.synonyms items must be strings of words, got a list"


def test_a_synonym_group_of_one_word_is_an_error():
    """`synonyms: ['zap']` (or `[k8s, kubernetes]`, one group meant) was accepted and did
    nothing: a word alone in its group has no other word to match."""
    msg = error_of("pack:\n  synonyms:\n    - k8s kubernetes\n    - zap\n")
    assert msg == ("rag.yaml line 4: pack.synonyms item 'zap' has one word: a group is two or more words "
                   "for the same thing in one string, such as 'k8s kubernetes'")
    assert error_of("pack:\n  synonyms: ['K8s k8s']\n").startswith("rag.yaml line 2: pack.synonyms item 'K8s k8s' has one word")
    assert error_of("pack:\n  synonyms: [k8s, kubernetes]\n").endswith(
        " (to make k8s and kubernetes one group, write ['k8s kubernetes'])")
    assert error_of("pack:\n  synonyms: ['pg postgres', ' ']\n") == (
        "rag.yaml line 2: pack.synonyms item ' ' has no words: write a group of words for the same thing "
        "in one string, such as 'k8s kubernetes', or delete the item")
    assert parse_config("pack:\n  synonyms: ['k8s, kubernetes', 'हिन्दी hindi']\n")["pack"]["synonyms"] == \
        ["k8s, kubernetes", "हिन्दी hindi"]


def test_a_synonym_group_of_words_no_search_looks_for_is_an_error():
    """`synonyms: ['the a']` (stopwords) or `['the widget']` (all but one) was accepted and
    did nothing; English stopwords are searched with another index.language."""
    msg = error_of("pack:\n  synonyms:\n    - k8s kubernetes\n    - the a\n")
    assert msg == ("rag.yaml line 4: pack.synonyms item 'the a' would match nothing: 'the' and 'a' are English "
                   "stopwords, which no search looks for; a group is two or more words for the same thing, "
                   "such as 'k8s kubernetes'")
    assert error_of("pack:\n  synonyms: ['the widget']\n").startswith(
        "rag.yaml line 2: pack.synonyms item 'the widget' would match nothing: 'the' is an English stopword")
    assert "'run' and 'running' are one word once stemmed ('run')" in error_of("pack:\n  synonyms: ['run running']\n")
    assert error_of("index:\n  language: german\npack:\n  synonyms: ['the a']\n").startswith(
        "rag.yaml line 4: pack.synonyms item 'the a' would match nothing: 'a' is too short to be searched")
    assert parse_config("index:\n  language: german\npack:\n  synonyms: ['the das']\n")["pack"]["synonyms"] == \
        ["the das"]


def test_an_idle_synonym_group_names_every_word_that_makes_it_so():
    """`'we us'` named 'we' alone, as if 'us' were fine (it is left with nothing to match);
    `'数据 数据库'` was "one word once stemmed", where Chinese is not stemmed: a word of a group
    is matched by its first pair of characters, and both start with '数据'; `'ﬁle file'` (a
    ligature) said nothing at all."""
    assert error_of("pack:\n  synonyms: ['we us']\n") == (
        "rag.yaml line 2: pack.synonyms item 'we us' would match nothing: 'we' is an English stopword, which no "
        "search looks for; 'us' is left with no other word to match; a group is two or more words for the same "
        "thing, such as 'k8s kubernetes'")
    assert error_of("pack:\n  synonyms: ['数据 数据库']\n") == (
        "rag.yaml line 2: pack.synonyms item '数据 数据库' would match nothing: '数据' and '数据库' both start with "
        "'数据': Chinese, Japanese, Korean or Thai text is searched as pairs of characters, and a word of a group "
        "is matched by its first pair; a group is two or more words for the same thing, such as 'k8s kubernetes'")
    assert "'服务器', '服务' and '服务端' all start with '服务': " in error_of("pack:\n  synonyms: ['服务器 服务 服务端']\n")
    assert "would match nothing: its words are all 'file' as the index reads words; " in error_of(
        "pack:\n  synonyms: ['\ufb01le file']\n")
    assert error_of("pack:\n  synonyms: ['数据资料']\n").endswith(
        "has one word: a group is two or more words for the same thing in one string, such as 'k8s kubernetes' "
        "(separate its words by spaces, Chinese and Japanese ones too: '数据 资料')")
    assert parse_config("pack:\n  synonyms: ['数据 资料', '我 你']\n")["pack"]["synonyms"] == ["数据 资料", "我 你"]


def test_an_environment_variable_in_the_embedding_url_is_an_error():
    """`base_url: "http://${OLLAMA_HOST}:11434"` was sent as written ("name not known"):
    nothing in rag.yaml is expanded."""
    for url, variable in (("http://${OLLAMA_HOST}:11434/v1", "${OLLAMA_HOST}"), ("$OLLAMA_URL", "$OLLAMA_URL")):
        assert error_of(f'embedding:\n  enabled: true\n  base_url: "{url}"\n') == (
            f"rag.yaml line 3: embedding.base_url '{url}' holds {variable}, an environment variable, which "
            "rag.yaml does not expand: write the address itself, such as http://localhost:11434")
    url = "http://localhost:11434/a$b"  # (a path may hold a $)
    assert parse_config(f'embedding:\n  enabled: true\n  base_url: "{url}"\n')["embedding"]["base_url"] == url


def test_an_api_key_written_where_its_variables_name_goes_is_an_error_that_never_shows_it():
    """`api_key_env: sk-proj-...` (the key where the name of the variable holding it goes, a
    natural slip) was looked up as a variable, none was set, no key was sent, and the 401
    answer's hint printed the key: "(is the API key in $sk-proj-...?)"."""
    for value in ("sk-proj-SECRET9f8e7d", "'Bearer SECRET9f8e7d'", "SECRET9f8e7d==", "0SECRET", "$SECRET-9f8e",
                  "'${SECRET9f8e7d'", "'${sk-SECRET}'"):
        msg = error_of(f"embedding:\n  provider: openai\n  api_key_env: {value}\n")
        assert msg.startswith("rag.yaml line 3: embedding.api_key_env must be the name of the environment variable "
                              "that holds the API key"), msg
        assert "SECRET" not in msg, msg
    for value in ("OPENAI_API_KEY", "my_key2", "_K", "''"):
        assert parse_config(f"embedding:\n  api_key_env: {value}\n")["embedding"]["api_key_env"] == value.strip("'")


def test_a_key_of_only_letters_digits_and_underscores_is_refused_as_api_key_env_without_being_shown():
    """`api_key_env: sk_live_4eC39HqLyjWDarjtT1zdp7dc` (a key of the characters a variable's
    name is written in) was taken as a variable's name; none was set, no key was sent, and a
    401 answer's hint printed it: "(is the API key in $sk_live_...?)". A run of 20 or more
    letters and digits mixed as a random string's are is a key's, not a name's; a long name's
    words in camel case or capitals with a number are a name's (they were refused as keys)."""
    for value in ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "da39a3ee5e6b4b0d3255bfef95601890afd80709",
                  "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
                  "$sk_live_4eC39HqLyjWDarjtT1zdp7dc", "'${tok0a1B2c3D4e5F6g7H8i9J}'", "AKIA2JX4RT7Q5ZP3MW6N"):
        msg = error_of(f"embedding:\n  provider: openai\n  api_key_env: {value}\n")
        assert msg == ("rag.yaml line 3: embedding.api_key_env must be the name of the environment variable that "
                       "holds the API key (such as OPENAI_API_KEY), not the key, which this looks like: it has 20 or "
                       "more letters and digits in a row, mixed as a random string's are, as a variable's "
                       "name does not: put the key in that variable (export OPENAI_API_KEY=...) and its name here "
                       "(the value is not shown, being maybe the key)"), msg
    for value in ("OPENAI_API_KEY", "MY_KEY_2", "api_key", "openai_key", "HUGGINGFACEHUB_API_TOKEN", "$MY_KEY_2",
                  "AZURE_OPENAI_API_KEY_20240501", "GOOGLEAPPLICATIONCREDENTIALS", "a123456789012345678",
                  "myEmbeddingServiceApiKey", "AZUREOPENAIAPIKEY2024PROD", "OpenAIApiKeyForProduction2"):
        assert parse_config(f"embedding:\n  api_key_env: {value}\n")["embedding"]["api_key_env"] == value.lstrip("$")


@pytest.mark.parametrize("enabled", ["false", "true"])
def test_an_api_key_env_written_as_a_shell_variable_names_that_variable(enabled):
    """`api_key_env: $OPENAI_API_KEY` (a shell habit) was a config error, even with
    embeddings off: it names the variable OPENAI_API_KEY, as ``${OPENAI_API_KEY}`` does."""
    for value, name in (("$OPENAI_API_KEY", "OPENAI_API_KEY"), ("'${OPENAI_API_KEY}'", "OPENAI_API_KEY"),
                        ('"$OPENAI_API_KEY"', "OPENAI_API_KEY"), ("${my_key2}", "my_key2")):
        cfg = parse_config(f"embedding:\n  enabled: {enabled}\n  provider: openai\n  api_key_env: {value}\n")
        assert cfg["embedding"]["api_key_env"] == name

def test_duplicate_key_is_an_error():
    msg = error_of("index:\n  k1: 1\n  k1: 2\n")
    assert msg == "rag.yaml line 3: index.k1 appears twice (first on line 2)"


def test_duplicate_section_is_an_error():
    assert error_of("pack: {}\nindex: {}\npack: {}\n").startswith(
        "rag.yaml line 3: section 'pack' appears twice (first on line 1)")


def test_overlap_must_be_smaller_than_chunk():
    msg = error_of("index:\n  chunk_tokens: 40\n")  # (the overlap not written: its default is named so)
    assert msg == ("rag.yaml line 2: index.chunk_tokens (40) must be larger than index.chunk_overlap, whose "
                   "default is 50; set index.chunk_overlap too (below 40)")
    msg = error_of("index:\n  chunk_tokens: 40\n  chunk_overlap: 40\n")
    assert msg.startswith("rag.yaml line 3: index.chunk_overlap (40)")


def test_unsafe_yaml_tags_are_rejected():
    assert "invalid YAML" in error_of("index:\n  k1: !!python/object:os.system x\n")


# --------------------------------------------------------------------------- stemming, language

def test_stemming_accepts_porter_as_english_snowball():
    cfg = parse_config("index:\n  stemming: porter\n")
    assert cfg["index"]["stemming"] is True
    assert cfg["index"]["language"] == "english"
    assert parse_config("index:\n  stemming: Porter\n")["index"]["stemming"] is True
    assert parse_config("index:\n  stemming: false\n")["index"]["stemming"] is False


def test_porter_with_another_language_is_an_error():
    msg = error_of("index:\n  language: german\n  stemming: porter\n")
    assert msg.startswith("rag.yaml line 3: index.stemming 'porter' means English stemming")


def test_stemming_language_name_hints_at_language_key():
    msg = error_of("index:\n  stemming: german\n")
    assert msg.startswith("rag.yaml line 2: index.stemming must be true, false or 'porter', got 'german'")
    assert "language: german" in msg


def test_language_is_validated_against_snowball():
    cfg = parse_config("index:\n  language: German\n")
    assert cfg["index"]["language"] == "german"
    msg = error_of("index:\n  language: germn\n")
    assert msg.startswith("rag.yaml line 2: index.language must be one of: ")
    for lang in snowballstemmer.algorithms():
        assert lang in msg
    assert "did you mean 'german'?" in msg


# --------------------------------------------------------------------------- dump and help

def test_dump_lists_sections_and_keys_in_schema_order():
    text = dump_config(default_config())
    sections = [line[:-1] for line in text.splitlines() if line and not line.startswith(" ")]
    assert sections == list(SCHEMA)
    keys = [m.group(1) for m in re.finditer(r"^  (\w+):", text, re.M)]
    assert keys == [k for section in SCHEMA.values() for k in section]
    assert "  # max tokens per chunk\n  chunk_tokens: 512\n" in text


def test_dump_round_trips_defaults():
    assert parse_config(dump_config(default_config())) == DEFAULTS


def test_dump_round_trips_a_loaded_file(tmp_path):
    write(tmp_path / "rag.yaml", "index:\n  stemming: porter\n  includes: ['docs/*.md', 'yes']\n"
                                 "embedding:\n  model: 'null'\n  base_url: 'http://x:1/#a'\n")
    cfg, _ = load_config(tmp_path)
    assert cfg["index"]["includes"] == ["docs/*.md", "yes"]
    assert cfg["embedding"]["model"] == "null"
    assert parse_config(dump_config(cfg)) == cfg


def _value_strategy(section, key):
    default, typ, check, _ = SCHEMA[section][key]
    if key == "language":
        return st.sampled_from(sorted(snowballstemmer.algorithms()))
    if key == "stemming" or typ is bool:
        return st.booleans()
    if typ is list:
        items = st.text(max_size=12)
        if key in ("includes", "excludes"):  # (a glob may not start with "!", match nothing, nor be a Windows path)
            items = items.filter(lambda t: t.strip() and not t.startswith("!") and glob_problem(t) is None
                                 and backslash_problem(t) is None)
        if key == "synonyms":  # (a group is two or more words)
            word = st.text(st.characters(categories=("L", "Nd")), min_size=1, max_size=6)
            items = st.lists(word, min_size=2, max_size=3).map(" ".join).filter(
                lambda t: len({w.lower() for w in folded_words(t)}) >= 2)
        return st.lists(items, max_size=4)
    if typ is str:
        return st.sampled_from(check) if check else st.text(max_size=20)
    lo, hi = check
    if typ is int:
        return st.integers(lo, hi)
    return st.floats(lo, hi, allow_nan=False)


config_strategy = st.fixed_dictionaries({
    section: st.fixed_dictionaries({key: _value_strategy(section, key) for key in keys})
    for section, keys in SCHEMA.items()
})


@st.composite
def valid_configs(draw):
    """A config that also meets the parser's rules across keys.

    The rules are met by construction: filtering random configs for them threw away most of
    the draws, and Hypothesis failed its health check on some seeds.
    """
    cfg = draw(config_strategy)
    index, emb = cfg["index"], cfg["embedding"]
    index["chunk_overlap"] = draw(st.integers(0, min(index["chunk_tokens"] - 1, SCHEMA["index"]["chunk_overlap"][2][1])))
    if emb["enabled"]:
        # (a URL urllib can send a request to: `base_url_problem`; its path any printable ASCII
        # but "#", a fragment, which is never sent, and "$", which may start an environment
        # variable's name)
        emb["base_url"] = (draw(st.sampled_from(["http://", "https://", "HTTP://"]))
                           + draw(st.sampled_from(["localhost", "127.0.0.1", "[::1]", "bücher.example"]))
                           + draw(st.sampled_from(["", ":1", ":11434", ":65535"]))
                           + draw(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e, blacklist_characters="#$"),
                                          max_size=20)
                                  .map(lambda path: "/" + path if path else "")))
    else:
        cfg["retrieve"]["hybrid_enabled"] = False
    # (a variable's name, or none: `api_key_env_problem`; under 20 characters, never like a key)
    emb["api_key_env"] = draw(st.from_regex(r"\A(?:[A-Za-z_][A-Za-z0-9_]{0,18})?\Z"))
    # (a group is two or more words as the index reads them: not stopwords, not one stem)
    analyzer = Analyzer.of(analysis_settings(cfg))
    cfg["pack"]["synonyms"] = [group for group in cfg["pack"]["synonyms"] if synonym_groups(
        analyzer.word_terms, [group], lambda text: analyzer.words(analyzer.normal(text)))]
    return cfg


@settings(max_examples=60, deadline=None)
@given(valid_configs())
def test_dump_then_parse_is_identity(cfg):
    assert parse_config(dump_config(cfg)) == cfg


def test_config_help_documents_every_key():
    text = config_help()
    lines = text.splitlines()
    assert lines[0] == "| key | default | valid values | meaning |"
    for section, keys in SCHEMA.items():
        for key, (_, _, _, help_text) in keys.items():
            row = next(line for line in lines if line.startswith(f"| `{section}.{key}` |"))
            assert help_text in row
    assert "| `index.chunk_tokens` | `512` | an integer between 16 and 100000 |" in text
    assert "| `pack.output` | `json` | one of: json, markdown, xml, text |" in text
    assert len(lines) == 2 + sum(len(keys) for keys in SCHEMA.values())


# --------------------------------------------------------------------------- odd files and YAML

@pytest.mark.parametrize("make, what", [
    (lambda p: p.symlink_to(p.parent / "moved-away.yaml"), "a broken symlink"),
    (lambda p: p.mkdir(), "a folder"),
    (lambda p: __import__("os").mkfifo(p), "a named pipe"),
])
def test_a_root_config_that_is_not_a_readable_file_is_an_error_not_the_defaults(tmp_path, make, what):
    # (taken as absent, the files it kept out were indexed, silently)
    make(tmp_path / "rag.yaml")
    with pytest.raises(ConfigError, match=re.escape(f"rag.yaml is not a file rag can read ({what})")):
        load_config(tmp_path)


def test_an_explicit_config_may_be_a_pipe(tmp_path):
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "ragweb", "config", "-d", str(tmp_path), "--config", "/dev/stdin"],
                       input="index:\n  chunk_tokens: 100\n", capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "chunk_tokens: 100" in r.stdout


def test_yaml_nested_too_deeply_or_a_number_too_long_is_an_error_naming_it():
    assert error_of("index:\n  includes: " + "[" * 300 + "]" * 300 + "\n") == "rag.yaml: invalid YAML: nested too deeply"
    assert error_of("index:\n  chunk_tokens: " + "9" * 5000 + "\n") == (
        "rag.yaml line 2: index.chunk_tokens is a number too long to read (5000 characters)")
    assert "got a number of 6021 digits" in error_of("index:\n  chunk_tokens: 0x" + "f" * 5000 + "\n")


def test_a_key_set_beside_a_merge_overrides_the_merged_one():
    assert parse_config("index: {<<: {chunk_tokens: 100}, chunk_tokens: 200}\n")["index"]["chunk_tokens"] == 200
    cfg = parse_config("index: {<<: [{chunk_tokens: 100}, {chunk_tokens: 300, b: 0.5}], k1: 1.0}\n")["index"]
    assert (cfg["chunk_tokens"], cfg["b"], cfg["k1"]) == (300, 0.5, 1.0)  # (the last source wins, as yaml.safe_load reads it)
    assert "appears twice" in error_of("index: {chunk_tokens: 100, chunk_tokens: 200}\n")


@pytest.mark.parametrize("merge", ["5", "[5]", "[{top_k: 3}, x]", "~", "'text'"])
def test_a_merge_of_something_not_a_mapping_is_an_error_naming_its_line(merge):
    # (PyYAML's flatten_mapping raised its ConstructorError through `rag`, a traceback)
    message = error_of(f"pack:\n  lean: true\nretrieve:\n  <<: {merge}\n")
    assert message.startswith("rag.yaml line 4: invalid YAML: expected a mapping"), message
    assert "for merging" in message
    assert error_of(f"<<: {merge}\n").startswith("rag.yaml line 1: invalid YAML: expected a mapping")


@pytest.mark.parametrize("value, tag", [("!!bool maybe", "bool"), ("!!bool 5", "bool"), ("!!int x", "int"),
                                        ("!!int 1.5", "int"), ("!!float x", "float"), ("!!timestamp x", "timestamp")])
def test_a_value_its_tag_cannot_read_is_an_error_naming_it(value, tag):
    # (PyYAML's constructors raised KeyError or AttributeError through `rag`, a traceback,
    # and a ValueError was said to be "a number too long to read (1 characters)")
    message = error_of(f"index:\n  stemming: true\nretrieve:\n  top_k: {value}\n")
    shown = value.split()[1]
    assert message == (f"rag.yaml line 4: retrieve.top_k: '{shown}' cannot be read as !!{tag}; "
                       "write the value without the tag"), message
    message = error_of(f"index:\n  includes:\n    - '**/*.md'\n    - {value}\n")
    assert message.startswith(f"rag.yaml line 4: index.includes: '{shown}' cannot be read as !!{tag}"), message


def test_a_glob_of_too_many_brace_alternatives_is_refused_up_front():
    bomb = "**/" + "{a,b}" * 30 + ".md"  # (a billion globs: expanding them ate gigabytes)
    assert "stand for more than 1000 globs" in error_of(f"index:\n  includes: ['{bomb}']\n")
    assert glob_problem("**/" + "{a,b}" * 9 + ".md") is None  # (512)


def test_without_pyyaml_a_config_file_is_a_clear_error_and_none_is_fine(tmp_path):
    import subprocess
    import sys
    (tmp_path / "a.md").write_text("# A\nThe zeppelin hangar.\n")
    run = ("import sys; sys.modules['yaml'] = None  # (as with a --no-deps install)\n"
           "from ragweb.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", run, "index", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr  # (no rag.yaml: PyYAML is not needed)
    (tmp_path / "rag.yaml").write_text("index:\n  chunk_tokens: 256\n")
    r = subprocess.run([sys.executable, "-c", run, "index", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "rag.yaml is read (and the config shown) with PyYAML, which is not installed: pip install pyyaml" in r.stderr
