"""Configuration: every tunable default lives in DEFAULTS, documented where declared.

`load_config(root, path=None)` returns a plain nested dict with every key filled in
(defaults apply key by key). Lookup order: explicit path, ROOT/rag.yaml,
ROOT/.rag/config.yaml, else defaults. Unknown keys, wrong types and out-of-range values
raise ConfigError naming the key and the file line.
"""

from __future__ import annotations

import copy
import errno
import math
import os
import re
from pathlib import Path

from .errors import ConfigError

yaml = None  # PyYAML, imported by `_need_yaml` when a config file is read or shown: most runs have none


def _need_yaml() -> None:
    global yaml  # (its import costs ~15 ms a `rag` run and ~25 ms of the page's boot)
    if yaml is None:
        try:
            import yaml as module
        except ImportError:  # (a --no-deps install: a clear error, not a traceback)
            raise ConfigError("rag.yaml is read (and the config shown) with PyYAML, which is not installed: "
                              "pip install pyyaml") from None
        yaml = module

DEFAULT_INCLUDES = [
    "**/*.md", "**/*.markdown", "**/*.mdx", "**/*.txt", "**/*.rst", "**/*.adoc", "**/*.asciidoc", "**/*.org",
    "**/*.py", "**/*.pyi", "**/*.js", "**/*.mjs", "**/*.cjs", "**/*.jsx", "**/*.ts", "**/*.tsx",
    "**/*.go", "**/*.rs", "**/*.java", "**/*.kt", "**/*.scala", "**/*.c", "**/*.h",
    "**/*.cc", "**/*.cpp", "**/*.hpp", "**/*.cs", "**/*.rb", "**/*.php", "**/*.swift",
    "**/*.sh", "**/*.sql", "**/*.html", "**/*.htm", "**/*.xhtml", "**/*.css", "**/*.json", "**/*.yaml", "**/*.yml",
    "**/*.toml", "**/*.ini", "**/*.cfg", "**/*.xml", "**/*.csv",
    # prose in other formats, and documents known by their name alone (`files.PROSE_NAMES`)
    "**/*.texi", "**/*.texinfo", "**/*.pod", "**/*.tex", "**/*.rdoc", "**/*.Rmd", "**/*.rmd", "**/*.qmd",
    # (in the capitals they are written in: README, Readme, readme; not `install`, often a script)
    "**/README", "**/Readme", "**/readme", "**/INSTALL", "**/Install", "**/NEWS", "**/News",
    "**/news", "**/CHANGES", "**/Changes", "**/changes", "**/CHANGELOG", "**/ChangeLog", "**/Changelog",
    "**/changelog", "**/CONTRIBUTING", "**/Contributing", "**/contributing", "**/HACKING", "**/Hacking",
    "**/hacking", "**/TODO", "**/Todo", "**/todo", "**/AUTHORS", "**/Authors", "**/authors", "**/LICENSE",
    "**/License", "**/license", "**/COPYING", "**/Copying", "**/copying", "**/COPYING.LESSER",
    # ... and named with a word before or after (`files.affixed_prose`): TLS_README, README.Debian
    "**/*_README", "**/*-README", "**/README.*", "**/INSTALL.*", "**/NEWS.*", "**/*_FAQ", "**/FAQ.*",
    # more languages' programs, and build files known by their name alone
    "**/*.lua", "**/*.pl", "**/*.pm", "**/*.r", "**/*.R", "**/*.jl", "**/*.dart", "**/*.ex", "**/*.exs",
    "**/*.erl", "**/*.hs", "**/*.ml", "**/*.mli", "**/*.fs", "**/*.clj", "**/*.zig", "**/*.nim", "**/*.m",
    "**/*.mm", "**/*.cxx", "**/*.hxx", "**/*.hh", "**/*.cu", "**/*.vue", "**/*.svelte", "**/*.groovy",
    "**/*.gradle", "**/*.kts", "**/*.cmake", "**/*.mk", "**/*.bash", "**/*.zsh", "**/*.fish", "**/*.ps1",
    "**/*.bat", "**/*.proto", "**/*.graphql", "**/*.tf", "**/*.scss", "**/*.less", "**/*.sol",
    "**/Makefile", "**/makefile", "**/GNUmakefile", "**/Dockerfile", "**/Containerfile", "**/Jenkinsfile",
    "**/Vagrantfile", "**/Gemfile", "**/Rakefile", "**/rakefile",
]
DEFAULT_EXCLUDES = [
    "**/node_modules/**", "**/.git/**", "**/vendor/**", "**/dist/**", "**/build/**",
    "**/__pycache__/**", "**/*.min.js", "**/.rag/**",
    # a documentation build's theme files (Sphinx's _static/: jquery.js, underscore.js,
    # style sheets) and bundled copies of jQuery: library code whose words match every question
    "**/_static/**", "**/jquery*.js",
    # ragweb's own config: its words (pack.synonyms, globs) are not the documents'
    "**/rag.yaml",
]

# Each entry: key -> (default, type, check, help). `check` is None or (min, max) for
# numbers, or a tuple of allowed strings. The help text is the documentation.
SCHEMA: dict[str, dict[str, tuple]] = {
    "index": {
        "includes": (DEFAULT_INCLUDES, list, None, "globs of files to index, relative to the root"),
        "excludes": (DEFAULT_EXCLUDES, list, None, "globs of files never to index"),
        "stemming": (True, (bool, str), None, "Snowball stemming in index.language: true/false ('porter' is read as true, English stemming; the original Porter stemmer is language: porter)"),
        "language": ("english", str, None, "Snowball language (english, german, french, ...)"),
        "chunk_tokens": (512, int, (16, 100_000), "max tokens per chunk"),
        "chunk_overlap": (50, int, (0, 10_000), "tokens of overlap between consecutive chunks"),
        "k1": (1.2, float, (0.0, 10.0), "BM25 term-frequency saturation"),
        "b": (0.75, float, (0.0, 1.0), "BM25 length normalisation"),
        "max_file_bytes": (5_000_000, int, (1, 2**40), "skip files larger than this"),
        "gitignore": (True, bool, None, "respect .gitignore files and .ragignore"),
        "workers": (0, int, (0, 64), "processes that read and chunk files for `rag index` (0: one per CPU, at most 4; 1: none)"),
    },
    "retrieve": {
        "top_k": (20, int, (1, 10_000), "results returned by query / candidate pool of pack"),
        "mmr_lambda": (0.7, float, (0.0, 1.0), "1 = pure relevance, 0 = pure diversity"),
        "dedup_jaccard": (0.8, float, (0.0, 1.0), "drop candidates this similar to a kept one (word-set Jaccard; 0 is not off: every candidate is at least 0 similar, so one result is left; 1 drops only those whose set of words is a kept one's; `rag query --no-mmr` drops none)"),
        "path_boost_weight": (0.3, float, (0.0, 100.0), "extra score when query terms are in the path"),
        "changelog_weight": (0.8, float, (0.0, 1.0), "score x this for release notes and change logs (releases/, CHANGELOG.md, NEWS); 1: as any file"),
        "aggregate_weight": (0.8, float, (0.0, 1.0), "score x this for pages that gather other pages whole (mdBook's print.html, Sphinx's singlehtml), so citations name the page itself; 1: as any file"),
        "license_weight": (0.3, float, (0.0, 1.0), "score x this for license texts: files named LICENSE, COPYING, copyright ... and sections titled as one (a manual's GNU Free Documentation License appendix), unless the question asks about the license (says license, licence, licensing, copyright, GPL ...); 1: as any text"),
        "min_score_threshold": (0.0, float, (0.0, 1e9), "drop hits scoring below this (0 drops none; with "
                                "embeddings a score is a cosine similarity with `--semantic`, from -1 to 1, "
                                "and a fused score in hybrid search, at most 1 / (`rrf_k` + 1))"),
        "hybrid_enabled": (False, bool, None, "fuse BM25 with vector search (needs embeddings)"),
        "rrf_k": (60, int, (1, 10_000), "reciprocal rank fusion constant"),
        "bm25_weight": (0.5, float, (0.0, 1.0), "weight of the BM25 list in fusion"),
    },
    "embedding": {
        "enabled": (False, bool, None, "compute embeddings while indexing"),
        "provider": ("ollama", str, ("ollama", "openai"), "embedding provider"),
        "model": ("nomic-embed-text", str, None, "embedding model name"),
        "base_url": ("http://localhost:11434", str, None, "provider endpoint"),
        "api_key_env": ("OPENAI_API_KEY", str, None, "the name of the environment variable holding the API key, not the key ($OPENAI_API_KEY or ${OPENAI_API_KEY}, as a shell writes it, is read as OPENAI_API_KEY; 20 or more letters and digits in a row, mixed as a random string's are, sk_live_4eC39HqLyjWDarjtT1zdp7dc, is taken for a key and refused)"),
        "dimension": (768, int, (1, 65_536), "embedding dimension"),
        "batch_size": (50, int, (1, 10_000), "texts per embedding request"),
        "document_prefix": ("", str, None, "put before each chunk's text when it is embedded (nomic-embed-text wants 'search_document: ')"),
        "query_prefix": ("", str, None, "put before each question when it is embedded (nomic-embed-text wants 'search_query: ')"),
    },
    "pack": {
        "token_budget": (4000, int, (1, 10_000_000), "default budget for rag pack"),
        "recency_boost": (0.1, float, (0.0, 10.0), "score bonus for recent files: x(1 + this), halving for every 30 days a file is older than the newest hit, counted in whole days (files written the same day weigh alike; a text given to `ragIndex`, whose time is not known, counts as new)"),
        "output": ("json", str, ("json", "markdown", "xml", "text"), "default output format"),
        "compact": (True, bool, None, "split top chunks into sentences when they do not fit whole"),
        "lean": (False, bool, None, "trade recall for far fewer tokens"),
        "semantic_weight": (0.5, float, (0.0, 10.0), "with embeddings: how much a sentence's embedding similarity to the question lifts it in a lean pack (0: words only)"),
        "synonyms": ([], list, None, "more groups of words your documents and questions use for the same thing, each a string of two or more words: 'k8s kubernetes' (compaction matches a sentence by another word of a question word's group, as by the built-in English ones, and the evidence counts it as that word)"),
    },
    "logging": {
        "level": ("info", str, ("debug", "info", "warning", "error"), "which lines the CLI writes to standard error: warning hides the note: lines, error the warning: lines too (errors always show), debug adds the indexer's DEBUG: lines"),
    },
}

DEFAULTS: dict[str, dict] = {
    section: {key: spec[0] for key, spec in keys.items()} for section, keys in SCHEMA.items()
}


def default_config() -> dict:
    """A fresh, fully filled config dict with every default."""
    return copy.deepcopy(DEFAULTS)


CONFIG_FILES = ("rag.yaml", ".rag/config.yaml")  # looked up under the root, in this order


_MISNAMED_CONFIGS = ("rag.yaml", "rag.yml", "rag.yaml.txt", "rag.yml.txt", ".rag.yaml", ".rag.yml")


def misnamed_config_note(names, folder: str = "") -> str | None:
    """A note on a file among ``names`` (the entries of a folder with no config file) that
    was surely meant as its config but is not read: ``Rag.yaml`` (a Windows or macOS disk
    ignores case), ``rag.yml``, Notepad's ``rag.yaml.txt``; else None."""
    names = set(names)
    if CONFIG_FILES[0] in names:
        return None
    found = sorted(n for n in names if is_misnamed_config(n))
    if not found:
        return None
    where = f"{folder}/" if folder else ""
    return f"{where}{found[0]} is not read: the config file must be named rag.yaml (the defaults apply)"


def never_indexed(rel: str) -> bool:
    """Whether ``rel`` (relative to a root, ``/``-separated; a folder ends in ``/``) is never
    indexed, whatever ``index.excludes`` says (a user's excludes replace the defaults that
    list them): rag's own files, of this root or of another indexed folder inside it (a
    ``rag.yaml``, a config file under a name that misses it, ``Rag.yaml`` or ``rag.yml``,
    anything in a ``.rag/`` folder: the index, its config), and git's (a ``.git`` folder,
    whose config may hold a remote's token, or a worktree's ``.git`` file)."""
    name = rel.rstrip("/").rsplit("/", 1)[-1]
    return (name in (CONFIG_FILES[0], ".git") or rel.startswith((".rag/", ".git/"))
            or "/.rag/" in rel or "/.git/" in rel
            or (not rel.endswith("/") and is_misnamed_config(name)))


def is_misnamed_config(name: str) -> bool:
    """Whether the file ``name`` is one `misnamed_config_note` names: a config file under a
    name rag does not read (``Rag.yaml``, ``rag.yml``, ``rag.yaml.txt``). Its words are
    settings, not a document's, so it is not indexed either."""
    return name != CONFIG_FILES[0] and name.lower() in _MISNAMED_CONFIGS


def load_config(root: str | Path, path: str | Path | None = None) -> tuple[dict, Path | None]:
    """Load the effective config for ``root``: ``(config, file used or None)``.

    An explicit ``path`` must exist; otherwise ROOT/rag.yaml, then ROOT/.rag/config.yaml,
    else the defaults. Every key missing from the file gets its default.
    Raises ConfigError naming the file, line and key for anything invalid.
    """
    root = Path(root)
    if path is not None:
        found: Path | None = Path(path)
        if not found.exists():
            raise ConfigError(f"config file not found: {found} (check --config)")
        if found.is_dir():
            raise ConfigError(f"config file {found} is a folder (check --config)")
    else:  # (--config may name a pipe, `--config <(...)`; ROOT's own config must be a file)
        found = next((root / name for name in CONFIG_FILES if os.path.lexists(root / name)), None)
        if found is None:
            return default_config(), None
        if not found.is_file():  # (not taken as absent: the files it keeps out would be indexed)
            raise ConfigError(f"{found} is not a file rag can read ({_not_a_file(found)}); "
                              "fix or remove it")
    try:
        with open(found, "rb") as f:
            data = read_capped(f, MAX_CONFIG_BYTES)
    except OSError as e:
        raise ConfigError(f"cannot read config file {found}: {e.strerror or e}") from None
    if data is None:  # (`--config /dev/zero` never ends: read whole, it filled the memory)
        raise ConfigError(f"config file {found} is over {MAX_CONFIG_BYTES >> 20} MB: no rag.yaml is "
                          "(check --config)")
    return parse_config(data, _display_name(found, root)), found


MAX_CONFIG_BYTES = 16 << 20  # a config file's size at most (a rag.yaml is a few hundred bytes)


def read_capped(f, limit: int) -> bytes | None:
    """The bytes of the binary file ``f``, or None when it holds more than ``limit`` (read in
    parts, so that a device that never ends, `/dev/zero`, or a pipe that goes on is refused
    after ``limit`` bytes, not read until the memory is full)."""
    parts, size = [], 0
    while size <= limit:
        part = f.read(min(1 << 20, limit + 1 - size))
        if not part:
            return b"".join(parts)
        parts.append(part)
        size += len(part)
    return None


def _not_a_file(path: Path) -> str:
    """What stands at ``path`` that is not a regular file."""
    try:
        path.stat()
    except OSError as e:
        return "a broken symlink" if path.is_symlink() and e.errno == errno.ENOENT else (e.strerror or str(e))
    from .files import special_kind  # (files reads config's names)
    return special_kind(path)


def parse_config(text: str | bytes, name: str = "rag.yaml") -> dict:
    """Validate YAML config text and return the full config; ``name`` prefixes errors."""
    _need_yaml()
    try:
        loader = yaml.SafeLoader(text)  # (reads the first bytes: it may refuse them already)
    except yaml.reader.ReaderError as e:
        raise _reader_error(e, text, name) from None
    try:
        try:
            doc = loader.get_single_node()
        except RecursionError:
            raise ConfigError(f"{name}: invalid YAML: nested too deeply") from None
        except yaml.MarkedYAMLError as e:
            raise _syntax_error(e, name) from None
        except yaml.reader.ReaderError as e:
            raise _reader_error(e, text, name) from None
        except yaml.YAMLError as e:
            raise ConfigError(f"{name}: invalid YAML: {e}") from None
        try:
            return _validate(doc, loader, name)
        except RecursionError:
            raise ConfigError(f"{name}: invalid YAML: nested too deeply") from None
        except yaml.MarkedYAMLError as e:  # (a merge, `<<: 5`, of what is no mapping)
            raise _syntax_error(e, name) from None
    finally:
        loader.dispose()


_LINE_BREAK_RE = re.compile("\r\n|\r|\n")
_LINE_BREAK_B_RE = re.compile(b"\r\n|\r|\n")


def _reader_error(e, text: str | bytes, name: str) -> ConfigError:
    """A `yaml.reader.ReaderError` (bytes that are not UTF-8, a character YAML does not
    allow) as an error naming the line and what to do. The encodings YAML does not read
    are named first: UTF-32 (its little-endian byte order mark starts with UTF-16's), then
    UTF-16 without a byte order mark, whose first character beyond ASCII is no UTF-8."""
    from .files import utf16_encoding  # (files reads config's names)
    if isinstance(text, bytes):
        if text.startswith(_UTF32_BOMS) or _utf32_without_bom(text):
            return ConfigError(f"{name}: UTF-32 text; save it as UTF-8")
        if utf16_encoding(text) and not text.startswith((b"\xff\xfe", b"\xfe\xff")):
            return ConfigError(f"{name}: UTF-16 text without a byte order mark; save it as UTF-8")
    if e.encoding != "unicode" and isinstance(text, bytes):  # bytes it could not decode
        line = len(_LINE_BREAK_B_RE.findall(text, 0, e.position)) + 1
        return ConfigError(f"{name} line {line}: not UTF-8 text (the byte 0x{e.character:02x}); save it as UTF-8")
    wide = utf16_encoding(text) if isinstance(text, bytes) else None  # (UTF-16 with a byte order mark)
    chars = text.decode(wide or "utf-8", "replace") if isinstance(text, bytes) else text
    line = len(_LINE_BREAK_RE.findall(chars, 0, e.position)) + 1  # (as YAML counts: a lone CR too)
    code = e.character if isinstance(e.character, int) else ord(e.character)
    return ConfigError(f"{name} line {line}: the control character U+{code:04X} is not allowed in YAML; "
                       "remove it")


_UTF32_BOMS = (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")


def _utf32_without_bom(data: bytes) -> bool:
    """Whether ``data`` reads as UTF-32 text with no NUL character in it (UTF-16 and UTF-8
    text with NULs do not: their pairs of bytes make characters beyond U+10FFFF)."""
    head = data[:4096]
    if len(data) % 4 or b"\x00\x00" not in head:
        return False
    for encoding in ("utf-32-le", "utf-32-be"):
        try:
            chars = head.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" not in chars:
            return True
    return False


def _syntax_error(e: yaml.MarkedYAMLError, name: str) -> ConfigError:
    mark = e.problem_mark or e.context_mark
    if e.problem == "could not find expected ':'" and e.context_mark:
        mark = e.context_mark  # (the key that lacks it, not the line after: the next key, or the end)
    problem = e.problem or e.context or "syntax error"
    if e.context and e.problem:
        problem = f"{problem} ({e.context})"
    if "'\\t'" in problem:
        buffer = getattr(mark, "buffer", None) or ""
        before = buffer[buffer.rfind("\n", 0, mark.pointer) + 1:mark.pointer] if mark and buffer else ""
        problem += ("; write spaces, not tabs, between a key, its value and a comment" if before.strip()
                    else "; indent with spaces, not tabs")
    elif e.context == "while scanning an alias" or problem.startswith("found undefined alias"):
        # (`includes: [*.md]`, `- **/*.md`: YAML reads a "*" that starts a value as an alias's)
        problem += "; a value that starts with * names a YAML alias: quote a glob that starts with *, as '*.md'"
    elif mark and getattr(mark, "buffer", None) and (flow := _unclosed_hint(e, mark)):
        mark, hint = flow
        problem += hint
    elif mark and getattr(mark, "buffer", None):
        problem += _layout_hint(e.problem or "", mark)
    where = f" line {mark.line + 1}" if mark else ""
    return ConfigError(f"{name}{where}: invalid YAML: {problem}")


_CLOSERS = {"{": "}", "[": "]", '"': '"', "'": "'"}


def _unclosed_hint(e: yaml.MarkedYAMLError, mark) -> tuple | None:
    """``(mark, hint)`` for a YAML error that a bracket or a quote never closed causes
    (`includes: ["*.md"` on the last line), else None. YAML notices it where the file ends,
    the line after the last one with a final newline, a line the user never wrote; the mark
    returned is the bracket's or the quote's, and the hint says what to close it with. A
    bracket found open further on (a next section's name inside it) keeps YAML's line and
    names the bracket's. Values are never shown (an API key may be one)."""
    buffer = mark.buffer
    at_end = not buffer[mark.pointer:].strip("\0 \t\r\n")
    opened = e.context_mark
    if (e.context in ("while parsing a flow mapping", "while parsing a flow sequence", "while scanning a quoted scalar")
            and opened is not None and buffer[opened.pointer:opened.pointer + 1] in _CLOSERS):
        char = buffer[opened.pointer]
        what = "quote" if char in "'\"" else char
        close = f"end the value with {char}" if char in "'\"" else f"close it with {_CLOSERS[char]}"
        if at_end:
            return opened, f"; the {what} at column {opened.column + 1} is never closed: {close}"
        if opened.line == mark.line:
            return mark, f"; {close.replace('it', f'the {what} at column {opened.column + 1}', 1)}"
        items = "" if what == "quote" else ", or write a comma between its items"
        return mark, (f"; the {what} on line {opened.line + 1} (column {opened.column + 1}) is not closed before "
                      f"this line: {close}{items}")
    if at_end and e.context == "while parsing a flow node":  # (`includes: [` or `["*.md",` last)
        return _last_written(mark), "; the file ends inside a [ or { that is never closed: close it with ] or }"
    return None


def _last_written(mark):
    """A mark for the last line of ``mark.buffer`` with more than blanks or a comment on it."""
    buffer = mark.buffer
    end = len(buffer.rstrip("\0 \t\r\n"))
    while end > 0:
        start = max(buffer.rfind("\n", 0, end), buffer.rfind("\r", 0, end)) + 1
        if buffer[start:end].strip() and not buffer[start:end].lstrip().startswith("#"):
            break
        end = len(buffer[:start].rstrip("\0 \t\r\n"))
    return yaml.Mark(mark.name, end, len(_LINE_BREAK_RE.findall(buffer, 0, end)), 0, buffer, end)


def _layout_hint(problem: str, mark) -> str:
    """What to do about a YAML error that a key written with no space after its colon
    ("top_k:3", one string to YAML), a line indented unlike its neighbours, or a value holding
    ": " causes; YAML names only what it expected ("mapping values are not allowed here").
    "" when it is none of those. Keys are named, never values (an API key may be one)."""
    buffer, at = mark.buffer, mark.pointer
    start = buffer.rfind("\n", 0, at) + 1
    end = buffer.find("\n", at)
    line = buffer[start:end if end >= 0 else len(buffer)].rstrip("\0\r")
    above = next((x.rstrip("\r") for x in reversed(buffer[:start].split("\n"))
                  if x.strip() and not x.lstrip().startswith("#")), "")
    indent = len(line) - len(line.lstrip(" "))
    if problem.startswith(("expected <block end>", "expected '<document start>'")):
        return ("; indent alike: a section's name at the start of its line, its keys (and a list's items) each by "
                "the same number of spaces")
    if problem == "could not find expected ':'":
        if glued := _glued_key(line):
            return f"; write a space after the key's colon ({glued}: ...)"
        if _known_name(line.strip()):  # ("retrieve" on its line)
            return f"; write a colon after {line.strip()} ({line.strip()}:)"
        if above.lstrip().startswith("- "):  # ("    docs documentation" under "    - k8s kubernetes")
            return "; start each item of a list with '- ', as the one above it"
        return "; write each line of a section as key: value, with a space after the colon"
    if problem == "mapping values are not allowed here":
        if glued := _glued_key(above):  # (its value runs on into this line)
            return f"; the line above it has no space after its key's colon ({glued}: ...)"
        if _known_name(above.strip()):  # ("index" / "  chunk_tokens: 200")
            return f"; the line above it has no colon after {above.strip()} ({above.strip()}:)"
        if above and indent > len(above) - len(above.lstrip(" ")) and not above.rstrip().endswith(":"):
            return "; this line is indented more than the line above it: indent it as that line"
        return "; quote a value that holds ': ' ('a: b'), and write each key on a line of its own"
    return ""


def _validate(doc: yaml.Node | None, loader: yaml.SafeLoader, name: str) -> dict:
    cfg = default_config()
    if doc is None or _is_null(doc):  # empty file or only comments
        return cfg

    def fail(node: yaml.Node, message: str) -> ConfigError:
        return ConfigError(f"{name} line {node.start_mark.line + 1}: {message}")

    if not isinstance(doc, yaml.MappingNode):
        raise fail(doc, "the top level must be a mapping of sections "
                        f"({', '.join(SCHEMA)}), got {_not_a_mapping(None, doc)}")
    nodes: dict[str, yaml.Node] = {}  # "section.key" -> value node, for later checks
    porter = False
    for sec_node, body in _pairs(doc, loader):
        section = _key_name(sec_node, fail)
        if section not in SCHEMA:
            raise fail(sec_node, _unknown_section(section))
        if section in nodes:
            raise fail(sec_node, f"section '{section}' appears twice (first on line "
                                 f"{nodes[section].start_mark.line + 1})")
        nodes[section] = sec_node
        if _is_null(body):  # "index:" with everything commented out
            continue
        if not isinstance(body, yaml.MappingNode):
            raise fail(body, f"section '{section}' must be a mapping of keys, got {_not_a_mapping(section, body)}")
        for key_node, value_node in _pairs(body, loader):
            key = _key_name(key_node, fail)
            full = f"{section}.{key}"
            if key not in SCHEMA[section]:
                raise fail(key_node, _unknown_key(section, key))
            if full in nodes:
                raise fail(key_node, f"{full} appears twice (first on line "
                                     f"{nodes[full].start_mark.line + 1})")
            nodes[full] = value_node
            try:
                number = _plain_number(section, key, value_node, loader)
            except ValueError:  # (an integer of more than 4,300 digits)
                raise fail(value_node, f"{full} is a number too long to read "
                                       f"({len(str(value_node.value))} characters)") from None
            if number is not None:
                written, raw = number
                written = written[:SHOWN_CHARS] + ("..." if len(written) > SHOWN_CHARS else "")
                if raw is _BASE_60:
                    raise fail(value_node, f"{full} must be {_expected(section, key)}, got {written}, which "
                                           "YAML 1.1 reads as a base-60 number; write it in decimal")
                ok, value = _coerce(section, key, raw)
                if not ok:
                    raise fail(value_node, f"{full} must be {_expected(section, key)}, got {written}")
                cfg[section][key] = value
                continue
            try:
                raw = loader.construct_object(value_node, deep=True)
            except yaml.MarkedYAMLError as e:  # e.g. an unknown !!tag
                raise _syntax_error(e, name) from None
            except (ValueError, LookupError, AttributeError, TypeError, OverflowError) as e:
                bad = _unreadable_scalar(value_node, loader)  # (`!!bool maybe`, `!!timestamp x`)
                if bad is not None and not (isinstance(e, ValueError) and "digits" in str(e)):
                    raise fail(bad[0], f"{full}: {_show(bad[0].value)} cannot be read as !!{bad[1]}; "
                                       "write the value without the tag") from None
                if not isinstance(e, ValueError):
                    raise fail(value_node, f"{full} cannot be read ({type(e).__name__})") from None
                # (an integer of more than 4,300 digits)
                raise fail(value_node, f"{full} is a number too long to read "
                                       f"({len(str(value_node.value))} characters)") from None
            ok, value = _coerce(section, key, raw)
            if not ok:
                bad = _bad_list_item(value_node, raw) if SCHEMA[section][key][1] is list else None
                if bad is not None:
                    what = _expected(section, key).replace("a list of ", "")
                    raise fail(bad[0], f"{full} items must be {what}, got {_show(bad[1])}")
                raise fail(value_node, _type_message(section, key, raw))
            if full in ("index.includes", "index.excludes"):
                from .files import backslash_problem, glob_problem  # (files reads config's names)

                for item_node, item in zip(value_node.value, value):
                    if problem := glob_problem(item):
                        raise fail(item_node, f"{full} item {_show(item)} can match no file: it has {problem}")
                    if not item.strip():  # (as `--path ""`: a slip, and in includes it emptied the index)
                        raise fail(item_node, f"{full} item {_show(item)} is empty and can match no file: "
                                              "write a glob (such as '**/*.md') or delete the item")
                    if problem := backslash_problem(item):  # (a Windows path: no rule says so in git)
                        raise fail(item_node, f"{full} item {_show(item)} has {problem}")
                    if item.startswith("!"):  # (a gitignore habit: no glob here undoes another)
                        raise fail(item_node, f"{full} items cannot start with '!', got {_show(item)}: list only "
                                   + ("what to leave out (and narrow index.includes for the rest)"
                                      if key == "excludes" else "what to index (and use index.excludes to leave out)"))
            if full == "pack.synonyms" and (bad := _lone_synonym(value_node.value, value)):
                raise fail(bad[0], bad[1])
            porter = porter or (full == "index.stemming" and isinstance(raw, str))
            cfg[section][key] = value

    emb = cfg["embedding"]
    if problem := api_key_env_problem(emb["api_key_env"]):  # (whether embeddings are on or not: a key is in the file)
        raise fail(nodes.get("embedding.api_key_env", doc), "embedding.api_key_env " + problem)
    emb["api_key_env"] = variable_name(emb["api_key_env"])
    if emb["enabled"] and (problem := base_url_problem(emb["base_url"])):
        # (said before `rag index` builds the text index, not after)
        raise fail(nodes.get("embedding.base_url") or nodes["embedding.enabled"], "embedding.base_url " + problem)
    if cfg["retrieve"]["hybrid_enabled"] and not cfg["embedding"]["enabled"]:
        raise fail(nodes["retrieve.hybrid_enabled"], "retrieve.hybrid_enabled fuses BM25 with vector search, "
                   "which needs embedding.enabled: true (and an embedding provider)")
    if cfg["pack"]["synonyms"] and (bad := _idle_synonym(nodes["pack.synonyms"].value, cfg)):
        raise fail(bad[0], bad[1])
    index = cfg["index"]
    if porter and index["language"] != "english":
        raise fail(nodes["index.stemming"], "index.stemming 'porter' means English stemming, but "
                   f"index.language is '{index['language']}'; write stemming: true instead")
    if index["chunk_overlap"] >= index["chunk_tokens"]:
        if "index.chunk_overlap" not in nodes:  # (the user wrote only chunk_tokens: say the other is a default)
            raise fail(nodes["index.chunk_tokens"], f"index.chunk_tokens ({index['chunk_tokens']}) must be larger "
                       f"than index.chunk_overlap, whose default is {index['chunk_overlap']}; set "
                       f"index.chunk_overlap too (below {index['chunk_tokens']})")
        raise fail(nodes["index.chunk_overlap"], f"index.chunk_overlap ({index['chunk_overlap']}) must be smaller "
                   f"than index.chunk_tokens ({index['chunk_tokens']})")
    return cfg


def _idle_synonym(item_nodes: list, cfg: dict) -> tuple | None:
    """``(node, message)`` for the first group of ``pack.synonyms`` that is fewer than two
    terms as the index reads words (`ragweb.analysis.synonym_groups`): ``'the a'``, stopwords
    (English ones, with ``index.language: english``) and one-letter words no search looks for,
    or ``'run running'``, one word once stemmed, or ``'数据 数据库'``, whose words start with
    the same pair of characters, by which a word of a group is matched in a script written
    without spaces. It would do nothing; the message names every word that makes it so."""
    from .analysis import STOPWORDS, Analyzer, spaceless  # (config is read before analysis is needed)
    from .engine import analysis_settings

    analyzer = Analyzer.of(analysis_settings(cfg))
    for node, group in zip(item_nodes, cfg["pack"]["synonyms"]):
        words = analyzer.words(analyzer.normal(group))
        unsearched = list(dict.fromkeys(w for w in words if not analyzer.word_terms(w)))
        stems = {analyzer.word_terms(w)[0] for w in words if w not in unsearched}
        if len(stems) >= 2:
            continue
        stopwords = [w for w in unsearched if w.lower() in STOPWORDS and cfg["index"]["language"] == "english"]
        short = [w for w in unsearched if w not in stopwords]
        why = []
        if stopwords:
            why.append(f"{_listed(stopwords)} {'is an English stopword' if len(stopwords) == 1 else 'are English stopwords'}"
                       ", which no search looks for")
        if short:
            why.append(f"{_listed(short)} {'is' if len(short) == 1 else 'are'} too short to be searched")
        same = list(dict.fromkeys(w.lower() for w in words if w not in unsearched))
        if len(same) == 1 and why:  # ('we us': the word left has no other to match)
            why.append(f"{_show(same[0])} is left with no other word to match")
        elif len(same) == 1:  # ('ﬁle file': one word in its Unicode normal form)
            why.append(f"its words are all {_show(same[0])} as the index reads words")
        elif len(same) > 1 and any(map(spaceless, same)):  # (`synonym_groups` takes a word's first term)
            why.append(f"{_listed(same)} {'both' if len(same) == 2 else 'all'} start with {_show(next(iter(stems)))}: "
                       "Chinese, Japanese, Korean or Thai text is searched as pairs of characters, and a word "
                       "of a group is matched by its first pair")
        elif len(same) > 1:
            why.append(f"{_listed(same)} are one word once stemmed ({_show(next(iter(stems)))})")
        return node, (f"pack.synonyms item {_show(group)} would match nothing: {'; '.join(why)}; a group is two "
                      "or more words for the same thing, such as 'k8s kubernetes'")
    return None


def _listed(words: list[str]) -> str:
    """``'a', 'b' and 'c'``."""
    shown = [_show(w) for w in words]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} and {shown[-1]}"


def _lone_synonym(item_nodes: list, groups: list[str]) -> tuple | None:
    """``(node, message)`` for the first group of ``pack.synonyms`` that has fewer than two
    words (``'zap'``, ``''``): no word of it has another to match, so it would do nothing."""
    from .analysis import folded_words, spaceless  # (config is read before analysis is needed)

    for node, group in zip(item_nodes, groups):
        words = {w.lower() for w in folded_words(group)}
        if len(words) >= 2:
            continue
        if not words:
            return node, (f"pack.synonyms item {_show(group)} has no words: write a group of words for "
                          "the same thing in one string, such as 'k8s kubernetes', or delete the item")
        message = (f"pack.synonyms item {_show(group)} has one word: a group is two or more words for "
                   "the same thing in one string, such as 'k8s kubernetes'")
        if spaceless(group):  # ('数据资料': two words to a reader of Chinese)
            message += " (separate its words by spaces, Chinese and Japanese ones too: '数据 资料')"
        lone = [g.strip() for g in groups if len({w.lower() for w in folded_words(g)}) == 1]
        if len(lone) > 1 and len(lone) == len(groups):  # (`[k8s, kubernetes]`: one group meant)
            message += f" (to make {', '.join(lone[:-1])} and {lone[-1]} one group, write [{_show(' '.join(lone))}])"
        return node, message
    return None


_NOT_IN_A_URL_RE = re.compile(r"[\x00-\x20\x7f]")  # (http.client refuses them in a request's URL)
_ENV_VARIABLE_RE = re.compile(r"\$\{[^}]*\}?|\$[A-Z_][A-Z0-9_]*(?![a-z])")  # ${NAME}, $NAME (a path may hold a $)


_VARIABLE_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # what a shell can export
_DOLLAR_NAME_RE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


def variable_name(name: str) -> str:
    """The variable ``embedding.api_key_env`` names: ``$NAME`` and ``${NAME}``, a shell
    habit, name NAME; anything else is taken as written."""
    m = _DOLLAR_NAME_RE.fullmatch(name)
    return (m.group(1) or m.group(2)) if m else name


_KEY_RUN_CHARS = 20  # a run of letters and digits this long, mixed as a random string's are, is a key's
_KEY_MIXES = 4       # ... when its letters and digits change places this often (a hex token's: 20 in 40)
_KEY_PART_CHARS = 3  # ... or its case changes so often its words' mean length is below this (AbCdEf)
_CASE_PART_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")


def looks_like_a_key(name: str) -> bool:
    """Whether ``name``, a variable's name in form (letters, digits and ``_``), has a run of
    `_KEY_RUN_CHARS` or more letters and digits between its ``_``s that is mixed as a random
    string is: its letters and digits alternate at least `_KEY_MIXES` times, or its case
    changes so often that its camel-case words are shorter than `_KEY_PART_CHARS` letters on
    average. A key's random part is so ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", a 40-character
    hex token); a variable's name is not, however long its words run together
    (HUGGINGFACEHUB_API_TOKEN, myEmbeddingServiceApiKey, AZUREOPENAIAPIKEY2024PROD)."""
    for run in name.split("_"):
        if len(run) < _KEY_RUN_CHARS:
            continue
        mixes = sum(a.isdigit() != b.isdigit() for a, b in zip(run, run[1:]))
        words = _CASE_PART_RE.findall(run)
        if mixes >= _KEY_MIXES or (len(words) > 1 and sum(map(len, words)) / len(words) < _KEY_PART_CHARS):
            return True
    return False


def api_key_env_problem(name: str) -> str | None:
    """What is wrong with ``embedding.api_key_env``, as a message that follows
    "embedding.api_key_env ", or None: it names the variable that holds the key, so it is a
    variable's name, also written ``$NAME`` or ``${NAME}`` (`variable_name`), or empty (no
    key). Anything else is likely the key itself, and so is a name that `looks_like_a_key`:
    the message never quotes it (a 401 answer's hint printed it as "$sk-proj-...")."""
    name = variable_name(name)
    if not name:
        return None
    if not _VARIABLE_NAME_RE.fullmatch(name):
        why = "(letters, digits and _, such as OPENAI_API_KEY), not the key"
    elif looks_like_a_key(name):
        why = (f"(such as OPENAI_API_KEY), not the key, which this looks like: it has {_KEY_RUN_CHARS} or more "
               "letters and digits in a row, mixed as a random string's are, as a variable's name does not")
    else:
        return None
    return (f"must be the name of the environment variable that holds the API key {why}: put the key in that "
            "variable (export OPENAI_API_KEY=...) and its name here (the value is not shown, being maybe the key)")


def base_url_problem(url: str) -> str | None:
    """What keeps urllib from sending a request to the embedding provider at ``url``, as a
    message that follows "embedding.base_url ", or None when it can be sent: not http:// or
    https://, a space or control character, a user name or password (urllib sends none), a
    host that cannot be read ("http://[::1") or none, a port that is not 1 to 65535, a
    character beyond ASCII after the host (the request line is ASCII), or a fragment
    ("#v1": never sent, nor the endpoint's path rag adds after it), or an environment variable
    (``${OLLAMA_HOST}``: nothing in rag.yaml is expanded). Whether anything
    answers there is for the request to find out."""
    import urllib.parse  # (here: only a config that enables embeddings needs it)

    if (variable := _ENV_VARIABLE_RE.search(url)) is not None:  # (a shell habit: it was sent as written)
        return (f"{_show(shown_url(url))} holds {variable.group()}, an environment variable, which rag.yaml does "
                "not expand: write the address itself, such as http://localhost:11434")
    if not url.lower().startswith(("http://", "https://")):  # (urllib would read file: URLs)
        return f"must be an http:// or https:// URL, got {_show(shown_url(url))}"
    if (bad := _NOT_IN_A_URL_RE.search(url)) is not None:
        return (f"{_show(shown_url(url))} is not a usable URL: it holds {'a space' if bad.group() == ' ' else 'a control character'} "
                "(write one in a path as %20)")
    unusable = f"{_show(shown_url(url))} is not a usable URL: "
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as e:  # ("http://[::1": a bracket left open; "http://[zz]")
        return unusable + (f"{e} (an IPv6 address is written in brackets, with the port after them: "
                           "http://[::1]:11434)")
    if "@" in parts.netloc:
        return (f"{_show(shown_url(url))} holds a user name or password, which rag does not send; give an "
                "API key with embedding.api_key_env instead")
    if not parts.hostname:
        return unusable + "it names no host (such as http://localhost:11434)"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:  # (a port urllib cannot read, or one nothing can listen on)
        return unusable + f"its port {_show(parts.netloc.rpartition(':')[2])} is not a number from 1 to 65535"
    after_host = url[len(parts.scheme) + 3 + len(parts.netloc):]
    if not after_host.isascii():
        char = next(c for c in after_host if not c.isascii())
        return unusable + (f"it holds {_show(char)} after its host: write it percent-encoded, as "
                           f"{urllib.parse.quote(char)}")
    if "#" in after_host:  # (what follows it is never sent, the endpoint's path with it)
        return unusable + (f"it holds a fragment ({_show(after_host[after_host.index('#'):])}), which is never "
                           "sent to a server: write the URL without it")
    return None


def shown_url(url: str) -> str:
    """``url`` as a message shows it: a user name and password in it as ``***``."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc="***@" + parts.netloc.rsplit("@", 1)[1]))


# Plain scalars of a number key that YAML 1.1 (PyYAML) misreads or refuses, read here as
# written: a leading zero is decimal (YAML 1.2's reading: 01000 is 1000, not octal 512), an
# exponent needs no dot nor sign (5e6, 1e+09: PyYAML reads them as strings), and a number
# with ':' (1:00, base 60 in YAML 1.1) is refused.
_BASE_60_RE = re.compile(r"[-+]?[0-9][0-9_]*(?::[0-9_]*)+(?:\.[0-9_]*)?")
_LEADING_ZERO_RE = re.compile(r"[-+]?0[0-9_]+")
_EXPONENT_RE = re.compile(r"[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+")
_BASE_60 = object()
_RESOLVED_PLAIN = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float", "tag:yaml.org,2002:str")


def _unreadable_scalar(node: yaml.Node, loader: yaml.SafeLoader) -> tuple[yaml.ScalarNode, str] | None:
    """``(node, tag name)`` of the first scalar under ``node`` that its tag's constructor
    cannot read (`!!bool maybe`, `!!int x`, `!!timestamp x`: PyYAML's constructors raise a
    KeyError, a ValueError or an AttributeError for them), else None."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, yaml.ScalarNode):
            construct = loader.yaml_constructors.get(n.tag)
            if construct is None or not n.tag.startswith("tag:yaml.org,2002:"):
                continue
            try:
                construct(loader, n)
            except Exception:  # noqa: BLE001 - whatever it raises, this node is the one
                return n, n.tag.rsplit(":", 1)[1]
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
        elif isinstance(n, yaml.MappingNode):
            stack.extend(item for pair in reversed(n.value) for item in reversed(pair))
    return None


def _plain_number(section: str, key: str, node, loader) -> tuple[str, object] | None:
    """``(text as written, value)`` for the value of a number key written in one of the forms
    above (the value `_BASE_60` for one with ':'); None for any other value (PyYAML reads it)."""
    typ = SCHEMA[section][key][1]
    if typ not in (int, float) or not isinstance(node, yaml.ScalarNode) or node.style is not None:
        return None
    text = node.value
    # (a tag written out, `!!str 010`, is taken as written)
    if node.tag not in _RESOLVED_PLAIN or node.tag != loader.resolve(yaml.ScalarNode, text, (True, False)):
        return None
    if _BASE_60_RE.fullmatch(text):
        return text, _BASE_60
    if _LEADING_ZERO_RE.fullmatch(text):
        return text, int(text.replace("_", ""), 10)
    if _EXPONENT_RE.fullmatch(text):
        from decimal import Decimal  # (exact: 5e6 is 5000000, whatever the exponent)
        try:
            number = Decimal(text.replace("_", ""))
            float(number)
        except ArithmeticError:  # (an exponent past what a number holds: 1e99999999999999999999)
            return text, float("nan")  # (out of every range: refused, with the value as written)
        if typ is float:
            return text, float(number)
        lo, hi = SCHEMA[section][key][2]
        whole = lo <= number <= hi and number == number.to_integral_value()
        return text, int(number) if whole else float(number)  # (a float: refused for an int key)
    return None


def _coerce(section: str, key: str, value: object) -> tuple[bool, object]:
    """(valid?, normalised value) for one key, per SCHEMA."""
    _, typ, check, _ = SCHEMA[section][key]
    if section == "index" and key == "stemming":
        if isinstance(value, str) and value.lower() == "porter":
            return True, True
        return isinstance(value, bool), value
    if section == "index" and key == "language":
        if isinstance(value, str) and value.lower() in snowball_languages():
            return True, value.lower()
        return False, value
    if typ is list:
        ok = isinstance(value, list) and all(isinstance(item, str) for item in value)
        return ok, value
    if typ is bool:
        return isinstance(value, bool), value
    if typ is str and check is not None:  # (a choice, in any case: `JSON`, as `language: English`)
        if isinstance(value, str) and value.lower() in check:
            return True, value.lower()
        return False, value
    if typ is str:
        return isinstance(value, str), value
    # numbers: bool is an int subclass in Python but never a number here
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False, value
    if typ is int and not isinstance(value, int):
        # (a whole number written with a point, 2.0, is that number, as 2e0 is)
        if not (math.isfinite(value) and value.is_integer()):
            return False, value
        value = int(value)
    value = typ(value)
    lo, hi = check
    return lo <= value <= hi, value  # NaN fails this too


def _type_message(section: str, key: str, value: object) -> str:
    msg = f"{section}.{key} must be {_expected(section, key)}, got {_show(value)}"
    _, typ, check, _ = SCHEMA[section][key]
    choices = snowball_languages() if key == "language" else check
    if isinstance(value, str) and isinstance(choices, tuple) and typ is str:
        msg += _did_you_mean(value.lower(), choices)
    if key == "stemming" and isinstance(value, str) and value.lower() in snowball_languages():
        msg += f" (to stem {value}, write stemming: true and language: {value.lower()})"
    if value is None:
        msg += " (delete the line to use the default)"
    return msg


def _expected(section: str, key: str) -> str:
    """What a valid value looks like, in words: shared by errors and config_help()."""
    _, typ, check, _ = SCHEMA[section][key]
    if section == "index" and key == "stemming":
        return "true, false or 'porter'"
    if section == "index" and key == "language":
        return "one of: " + ", ".join(snowball_languages())
    if typ is list:
        return "a list of strings of words" if (section, key) == ("pack", "synonyms") else "a list of strings (globs)"
    if typ is bool:
        return "true or false"
    if typ is str:
        return "one of: " + ", ".join(check) if check else "a string"
    lo, hi = check
    if typ is int:
        return f"an integer between {lo} and {hi}"
    return f"a number between {_decimal(lo)} and {_decimal(hi)}"


def _decimal(number: float) -> str:
    """A bound as a user writes it: 1000000000, not 1e+09; 0.5; 10."""
    return str(int(number)) if float(number).is_integer() else format(number, "f").rstrip("0")


def snowball_languages() -> tuple[str, ...]:
    """Languages accepted by index.language (the installed Snowball algorithms)."""
    import snowballstemmer  # lazy: only needed when a language is checked

    return tuple(sorted(snowballstemmer.algorithms()))


def _unknown_section(name: str) -> str:
    if (glued := _GLUED_KEY_RE.match(name)) and glued.group(1) in SCHEMA:  # ("index:chunk_tokens: 200")
        return f"unknown section '{glued.group(1)}:...': {_SECTION_LINE}"
    owners = [s for s, keys in SCHEMA.items() if name in keys]
    if owners:
        hint = f" ({_show(name)} is a key of section '{owners[0]}'; put it under {owners[0]}:)"
    else:
        hint = _did_you_mean(name, SCHEMA)
    return f"unknown section {_show(name)}{hint}; valid sections: {', '.join(SCHEMA)}"


def _unknown_key(section: str, key: str) -> str:
    keys = SCHEMA[section]
    if (glued := _GLUED_KEY_RE.match(key)) and glued.group(1) in keys:  # (its value not shown: an API key, maybe)
        return (f"unknown key '{glued.group(1)}:...' in section '{section}': write a space after the key's colon "
                f"({glued.group(1)}: ...)")
    owners = [s for s, other in SCHEMA.items() if key in other]
    hint = (f" (it belongs in section '{owners[0]}')" if owners else _did_you_mean(key, keys))
    return f"unknown key {_show(key)} in section '{section}'{hint}; valid keys: {', '.join(keys)}"


def _did_you_mean(word: str, choices) -> str:
    import difflib  # (only for a mistake: its import is slow in Pyodide)
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean '{close[0]}'?)" if close else ""


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _pairs(node: yaml.MappingNode, loader: yaml.SafeLoader) -> list[tuple[yaml.Node, yaml.Node]]:
    """The (key, value) nodes of a mapping, YAML merge keys (``<<: *anchor``) resolved as
    PyYAML's loader reads them: a key the mapping sets itself overrides a merged one, and of
    the merged ones the last source's wins. Only the mapping's own keys can repeat."""
    own = sum(1 for k, _ in node.value if k.tag != _MERGE_TAG)
    loader.flatten_mapping(node)  # (the merged pairs first, the mapping's own after them)
    cut = len(node.value) - own
    merged, mine = node.value[:cut], node.value[cut:]
    if not merged:
        return mine
    named = {k.value for k, _ in mine if isinstance(k, yaml.ScalarNode)}
    kept: dict = {}
    for k, v in merged:  # (later ones win, as they do in the loader)
        name = k.value if isinstance(k, yaml.ScalarNode) else id(k)
        if name not in named:
            kept.pop(name, None)
            kept[name] = (k, v)
    return list(kept.values()) + mine


def _key_name(node: yaml.Node, fail) -> str:
    if not isinstance(node, yaml.ScalarNode):
        raise fail(node, f"keys must be plain names, got {_node_kind(node)}")
    return node.value


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


_GLUED_KEY_RE = re.compile(r"([A-Za-z_]\w*):\S")  # "top_k:3": a key and its value with no space between


def _glued_key(line: str) -> str | None:
    """The key of rag.yaml (a section's or a section's name) that ``line`` starts with, followed
    by its value with no space after the colon ("top_k:3"), else None ("http://x" is no key)."""
    glued = _GLUED_KEY_RE.match(line.strip())
    return glued.group(1) if glued and _known_name(glued.group(1)) else None


def _known_name(name: str) -> bool:
    """Whether ``name`` is a section's name or a key of one (a user's own word, which may be a
    value pasted there, is never shown in a hint)."""
    return name in SCHEMA or any(name in keys for keys in SCHEMA.values())


def _not_a_mapping(section: str | None, node: yaml.Node) -> str:
    """What a section (or, with ``section`` None, the file) holds that is no mapping
    (`_node_kind`), and what to do when it is a key and its value without a space after the
    colon ("top_k:3", which YAML reads as one string). The embedding section's value is not
    shown, nor one that may hold a key (`_may_hold_a_key`): "api_key_env:sk-..." would show it."""
    glued = _GLUED_KEY_RE.match(node.value) if isinstance(node, yaml.ScalarNode) else None
    kind = _node_kind(node)
    if isinstance(node, yaml.ScalarNode) and (section == "embedding" or _may_hold_a_key(node.value)):
        kind = "a value (not shown, being maybe the API key)"
    spaced = re.match(r"([A-Za-z_]\w*)[ \t]+\S", node.value) if isinstance(node, yaml.ScalarNode) else None
    if glued and section and glued.group(1) in SCHEMA[section]:
        kind += f"; write a space after the key's colon ({glued.group(1)}: ...)"
    elif spaced and section and spaced.group(1) in SCHEMA[section]:  # ("chunk_tokens 200")
        kind += f"; write a colon after the key ({spaced.group(1)}: ...)"
    elif glued and not section and glued.group(1) in SCHEMA:
        kind += f"; {_SECTION_LINE}"
    return kind


def _may_hold_a_key(value: str) -> bool:
    """Whether a value of rag.yaml that is shown in a message may hold an API key: it names
    one ("embedding:api_key_env:sk-...", "OPENAI_API_KEY=sk-...", a whole section glued on one
    line) or has a run of characters that `looks_like_a_key`."""
    return "api_key" in value.lower() or any(map(looks_like_a_key, re.findall(r"\w+", value)))


_SECTION_LINE = "a section's name ends its line (index:), its keys go on the lines below it, indented"


def _node_kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return f"the value {_show(node.value)}"


def _bad_list_item(node: yaml.Node, value: object) -> tuple[yaml.Node, object] | None:
    if isinstance(node, yaml.SequenceNode) and isinstance(value, list):
        for item_node, item in zip(node.value, value):
            if not isinstance(item, str):
                return item_node, item
    return None


def _show(value: object) -> str:
    """A value as the user wrote it in YAML terms."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 200:  # (repr refuses past 4,300 digits)
        return f"a number of {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, str):  # (as YAML quotes it when it can; a name's control and bidi characters escaped)
        cut = value[:SHOWN_CHARS] + ("..." if len(value) > SHOWN_CHARS else "")
        return f"'{cut}'" if cut.isprintable() and "'" not in cut else repr(cut)
    return repr(value)


SHOWN_CHARS = 80  # of a string an error message quotes (a key of 100,000 characters flooded the page's banner)


def _display_name(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def dump_config(cfg: dict) -> str:
    """The config as YAML, sections and keys in SCHEMA order, each key under its help."""
    _need_yaml()
    out = []
    for section, keys in SCHEMA.items():
        out.append(f"{section}:")
        for key, (_, _, _, help_text) in keys.items():
            out.append(f"  # {help_text}")
            # ASCII output: with allow_unicode, PyYAML writes U+0085 raw and reads it as a newline
            dumped = yaml.safe_dump({key: cfg[section][key]}, sort_keys=False,
                                    default_flow_style=False, width=10**9)
            out.extend("  " + line for line in dumped.splitlines())
    return "\n".join(out) + "\n"


def config_help() -> str:
    """A Markdown table of every key: name, default, valid values, meaning."""
    _need_yaml()
    rows = ["| key | default | valid values | meaning |", "|---|---|---|---|"]
    for section, keys in SCHEMA.items():
        for key, (default, _, _, help_text) in keys.items():
            shown = yaml.safe_dump(default, default_flow_style=True, width=10**9)
            shown = shown.removesuffix("\n...\n").strip()
            cells = [f"`{section}.{key}`", f"`{shown}`", _expected(section, key), help_text]
            rows.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(rows) + "\n"
