from hypothesis import given, settings, strategies as st

from ragweb.chunking import (chunk_lines, code_outline, indented_is_literal, is_asciidoc, line_headings, outline,
                             split_lines)
from ragweb.tokens import count_tokens


def test_small_text_is_one_chunk():
    (c,) = chunk_lines("a\nb\nc\n", 512, 50)
    assert (c.start, c.end) == (1, 3)


def test_empty_and_blank_text_have_no_chunks():
    assert chunk_lines("", 512, 50) == []
    assert chunk_lines("\n\n  \n", 512, 50) == []


def test_nearest_heading_recorded_and_fences_ignored():
    text = "# Top\nintro\n```\n# not a heading\n```\n## Sub\nbody\n"
    headings, starts, where = line_headings(split_lines(text), markdown=True)
    assert headings == ["Top", "Top", "Top", "Top", "Top", "Sub", "Sub"]
    assert starts == {0, 5}
    assert where == [0, 0, 0, 0, 0, 5, 5]


def test_context_is_the_heading_above_a_continuation_chunk():
    text = "# Guide\n" + "".join(f"line {i} of the guide\n" for i in range(40))
    chunks = chunk_lines(text, 32, 0, markdown=True)
    assert len(chunks) > 1 and all(c.context == "Guide" for c in chunks[1:])
    assert chunks[0].start == 1 and chunks[0].context == ""


def test_python_comments_are_not_headings():
    assert chunk_lines("# comment\nx = 1\n", 512, 50, markdown=False)[0].heading == ""


def test_overlong_line_is_split_into_pieces():
    line = "word " * 1000
    chunks = chunk_lines(line, 64, 8)
    assert len(chunks) > 1
    assert all(c.start == c.end == 1 for c in chunks)
    assert "".join(line[c.col_start:c.col_end] for c in chunks) == line.rstrip("\n")[: chunks[-1].col_end]
    assert all(count_tokens(line[c.col_start:c.col_end]) <= 64 for c in chunks)


def test_a_line_over_the_budget_only_by_its_newline_is_a_whole_line_not_a_piece():
    for width in (2045, 2048):  # (its 512 tokens fit the budget; with the newline's 1 they do not)
        line = ("walrus " * 400)[:width - 1] + "x"
        chunks = chunk_lines(f"intro line\n{line}\nend\n", 512, 50)
        assert [(c.start, c.end, c.col_start, c.col_end) for c in chunks] == [
            (1, 1, None, None), (2, 2, None, None), (3, 3, None, None)]
    pieces = chunk_lines("x" * 2049 + "\n", 512, 50)  # (one character more is cut)
    assert [(c.col_start, c.col_end) for c in pieces] == [(0, 2048), (2048, 2049)]


def test_consecutive_chunks_overlap():
    text = "\n".join(f"line number {i} with some words" for i in range(200))
    chunks = chunk_lines(text, 64, 16)
    assert len(chunks) > 3
    for a, b in zip(chunks, chunks[1:]):
        assert b.start <= a.end and b.start > a.start


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab #\n", max_size=120), max_size=60),
       st.integers(16, 80), st.integers(0, 30), st.booleans())
def test_chunks_cover_every_nonblank_line_within_budget(lines, size, overlap, md):
    text = "\n".join(lines)
    chunks = chunk_lines(text, size, overlap, markdown=md)
    all_lines = split_lines(text)
    covered = set()
    for c in chunks:
        assert 1 <= c.start <= c.end <= len(all_lines)
        body = "\n".join(all_lines[c.start - 1:c.end])
        if c.col_start is not None:
            body = body[c.col_start:c.col_end]
        assert count_tokens(body) <= size
        covered.update(range(c.start, c.end + 1))
    for i, line in enumerate(all_lines, 1):
        if line.strip():
            assert i in covered


def test_underlined_headings_start_chunks_and_name_them():
    text = "Guide\n=====\n\n" + "".join(f"line {i} of the intro\n" for i in range(20)) + \
        "\n=======\nOptions\n=======\n\n" + "".join(f"line {i} about options\n" for i in range(20))
    lines = split_lines(text)
    headings, starts, where = line_headings(lines, markdown=True)
    over = lines.index("Options") - 1
    assert starts == {0, over}  # an overlined title starts at its overline
    assert headings[over + 3] == "Options" and headings[5] == "Guide"
    chunks = chunk_lines(text, 64, 0, markdown=True)
    assert any(c.start > over + 2 and c.heading == "Options" == c.context for c in chunks)
    # not in code: the same text indexed as a program has no headings
    assert line_headings(lines, markdown=False)[1] == set()


def test_asciidoc_section_titles_are_headings_and_block_attributes_are_not():
    text = ("= Guide\n\nintro\n\n== Install ==\n\nsteps\n\n[source,java]\n----\nint x = 1;\n----\n\n"
            "=== Options\nbody\n  == indented is not a title\n==no space is not a title\n")
    lines = split_lines(text)
    headings, starts, _ = line_headings(lines, markdown=True)
    assert starts == {0, 4, 13}  # not "[source,java]" above the "----" block delimiter
    assert headings[6] == "Install" and headings[10] == "Install" and headings[16] == "Options"
    assert outline(lines, True).heads[13][:2] == (3, "Options")  # its level is its number of "="


def test_an_asciidoc_titles_inline_anchor_is_not_part_of_its_title():
    # git's manual pages (git-push.txt) write "OPTIONS[[OPTIONS]]" over its underline: the
    # anchor names a link target, the built page shows "OPTIONS"
    text = ("git-push(1)\n===========\n\nOPTIONS[[OPTIONS]]\n------------------\n\nbody\n\n"
            "Configured remote-tracking branches[[CRTB]]\n-------------------------------------------\n\n"
            "== Setup [[setup,Set-up]]\n\nbody\n\nA [[x]] in the middle\n---------------------\n\n"
            "## Slots [[Prototype]]\n\nbody\n")
    heads = outline(split_lines(text), True, asciidoc=True).heads
    assert [title for _, title, _, _ in heads.values()] == [
        "git-push(1)", "OPTIONS", "Configured remote-tracking branches", "Setup", "A [[x]] in the middle",
        "Slots [[Prototype]]"]  # (Markdown's ATX titles are not AsciiDoc's: kept as written)


def test_a_markdown_titles_closing_wiki_link_stays_in_its_title():
    # AsciiDoc's rule for a title's closing anchor ("OPTIONS[[OPTIONS]]") was applied to
    # Markdown too: "See also [[Home]]" / "---" was titled "See also", the link lost
    text = ("Notes [[Index]]\n===============\n\nbody\n\nSee also [[Home]]\n-----------------\n\nbody\n\n"
            "## Links [[Home]]\n\nbody\n\n= Doc [[Home]]\n\nbody\n")
    lines = split_lines(text)
    heads = outline(lines, True, asciidoc=is_asciidoc("notes.md", lines)).heads
    assert [title for _, title, _, _ in heads.values()] == [
        "Notes [[Index]]", "See also [[Home]]", "Links [[Home]]", "Doc [[Home]]"]
    assert "See also [[Home]]" in {c.heading for c in chunk_lines(text, 16, 0, markdown=True)}


# git-stash.txt's EXAMPLES, gittutorial.txt, rev-list-description.txt and git-config.txt, cut short
GIT_DOC = ("git-stash(1)\n============\n\nEXAMPLES\n--------\n\nPulling into a dirty tree::\n\n"
           "----------------------------------------------------------------\n$ git pull\n # ...\n"
           "# ... hack hack hack ...\n$ git stash\n"
           "----------------------------------------------------------------\n\n"
           "Record it:\n\n------------------------------------------------\n$ git commit\n"
           "------------------------------------------------\n\nThus, the following command:\n\n"
           "ifdef::git-rev-list[]\n-----------------------------------------------------------------------\n"
           "$ git rev-list foo bar ^baz\n-----------------------------------------------------------------------\n"
           "endif::git-rev-list[]\n\nA literal block:\n\n....\n# Core variables\n[core]\n....\n\n"
           "[[OPTIONS]]\nOPTIONS\n-------\n\nSelecting patches\n~~~~~~~~~~~~~~~~~\nSee linkgit:git-log[1].\n")


def test_asciidoc_listing_and_literal_blocks_are_code():
    # a shell or ini comment in git's examples read as a level-1 heading ("... hack hack
    # hack ..." cut git-stash.txt's EXAMPLES into sections), a one-line "----" block as an
    # overlined title ("$ git commit"), "ifdef::git-rev-list[]" above a "----" as a title
    lines = split_lines(GIT_DOC)
    ol = outline(lines, True, asciidoc=True)
    assert [(lines[i], level) for i, (level, *_rest) in sorted(ol.heads.items())] == [
        ("git-stash(1)", 1), ("EXAMPLES", 2), ("OPTIONS", 2), ("Selecting patches", 3)]
    for code in ("# ... hack hack hack ...", " # ...", "$ git commit", "$ git rev-list foo bar ^baz", "# Core variables"):
        assert lines.index(code) in ol.code, code
    opened = [i for i, opens in ol.fence.items() if opens]
    assert [lines[i + 1] for i in opened] == ["$ git pull", "$ git commit", "$ git rev-list foo bar ^baz", "# Core variables"]
    assert len(ol.fence) == 8
    headings = line_headings(lines, True, asciidoc=True)[0]
    assert headings[lines.index("# ... hack hack hack ...")] == "EXAMPLES"


def test_an_asciidoc_preprocessor_line_is_never_a_title():
    # "ifdef::git-log[]" over a "----" line as long as it read as a title (the view the
    # chunks come from blanks it, `markup.mask_directives`: there the "----" opened a block)
    from ragweb.markup import mask_directives
    text = "Intro\n\nifdef::git-log[]\n----------------\n$ git log\n----------------\nendif::git-log[]\n"
    for view in (text, mask_directives(text)):
        lines = split_lines(view)
        ol = outline(lines, True, asciidoc=True)
        assert ol.heads == {} and ol.code == {4}, view


def test_an_asciidoc_literal_paragraphs_comment_is_no_heading():
    # an indented line starts a literal paragraph in AsciiDoc (gitsubmodules.txt's
    # "  # Add a submodule" / "  git submodule add <URL> <path>"): it read as a level-1 heading
    text = ("Workflow for a third party library\n----------------------------------\n\n"
            "  # Add a submodule\n  git submodule add <URL> <path>\n\n# A title\n\nbody\n")
    lines = split_lines(text)
    assert [h[1] for h in outline(lines, True, asciidoc=True).heads.values()] == [
        "Workflow for a third party library", "A title"]
    assert [h[1] for h in outline(lines, True).heads.values()] == [  # (Markdown: as it was)
        "Workflow for a third party library", "Add a submodule", "A title"]


def test_an_indented_comment_of_a_plain_text_example_is_no_heading():
    # Postfix's POSTSCREEN_README as text: "   # Denylist 192.168.* except 192.168.0.1." in an
    # indented example read as a level-1 heading, and it headed every chunk to the file's end
    text = ("Access list\n===========\n\n/etc/postfix/postscreen_access.cidr:\n"
            "   # Rules are evaluated in the order as specified.\n   192.168.0.1   permit\n\n"
            "The pregreet test finds zombies that speak before their turn.\n\n# A title\n\nbody\n")
    lines = split_lines(text)
    assert [h[1] for h in outline(lines, True, literal=True).heads.values()] == ["Access list", "A title"]
    assert [h[1] for h in outline(lines, True).heads.values()] == [  # (Markdown: CommonMark's title)
        "Access list", "Rules are evaluated in the order as specified.", "A title"]
    # (the pregreet sentence's chunk is headed by the section it is in)
    assert [c.heading for c in chunk_lines(text, 24, 0, True, literal=True)] == ["Access list"] * 3 + ["A title"]
    assert "Rules are evaluated in the order as specified." in [c.heading for c in chunk_lines(text, 24, 0, True)]
    for path in ("notes.txt", "guide.rst", "_sources/deploy.rst.txt", "TLS_README", "README", "x.txt.gz"):
        assert indented_is_literal(path), path
    for path in ("README.md", "docs/guide.markdown", "page.mdx", "report.Rmd", "intro.qmd", "a.md.gz"):
        assert not indented_is_literal(path), path


def test_text_that_is_not_asciidoc_keeps_reading_rules_and_setext_titles():
    # in Markdown "----" under text underlines a title and one after a blank is a rule: the
    # text between two rules is not a listing block
    text = "Intro\n\n----\n\n# Usage\n\nrun it\n\n----\n\nEnd\n----\n\nbody\n"
    heads = outline(split_lines(text), True).heads
    assert [h[1] for h in heads.values()] == ["Usage", "End"]
    heads = outline(split_lines(text), True, asciidoc=True).heads  # (what AsciiDoc reads: a block)
    assert [h[1] for h in heads.values()] == ["End"]
    assert not is_asciidoc("notes.txt", text) and not is_asciidoc("README.md", GIT_DOC)
    assert is_asciidoc("guide.adoc", text) and is_asciidoc("docs/guide.asciidoc.gz", text)
    assert is_asciidoc("git-stash.txt", GIT_DOC)
    for sign in ("ifdef::git-log[]", "include::fetch-options.txt[]", "[[OPTIONS]]", "[source,sh]", "[NOTE]",
                 "see linkgit:git-log[1]", "Content-type: text/asciidoc"):
        assert is_asciidoc("a.txt", f"Title\n=====\n\n{sign}\n"), sign
    for plain in ("Example::", ":Author: me", "= Title", "[1] a footnote", "[[Wiki Page]]", "a::b"):
        assert not is_asciidoc("a.txt", f"Title\n=====\n\n{plain}\n"), plain
    # (an AsciiDoc "----" with no closing line is as before: not code)
    lines = split_lines("Intro\n\n----\n# Usage\n")
    assert outline(lines, True, asciidoc=True).heads == outline(lines, True).heads


def test_an_asciidoc_file_is_indexed_and_packed_as_asciidoc():
    from ragweb.engine import Engine
    eng = Engine.memory()
    eng.add_document("git-stash.txt", GIT_DOC)
    eng.flush()
    rows = eng.conn.execute("SELECT heading FROM chunks").fetchall()
    assert {r[0] for r in rows} <= {"git-stash(1)", "EXAMPLES", "OPTIONS", "Selecting patches"}
    lines = split_lines(GIT_DOC)
    ol = eng.file_outline(1, lines, True, "git-stash.txt")
    assert lines.index("# ... hack hack hack ...") in ol.code


def test_an_underlined_title_of_long_blank_runs_stays_linear():
    # the anchor pattern, tried from each blank of an underlined title's run of them, took
    # 9 s on a title of 80,000 (an HTML page's view blanks its tags to spaces)
    import time
    blank = " " * 200_000
    title = "Title" + blank + "x[[T]]"
    lines = [title, "-" * len(title), "", "body"]  # (AsciiDoc's: as long as its title)
    started = time.perf_counter()
    assert outline(lines, True, asciidoc=True).heads[0][1] == "Title x"
    assert time.perf_counter() - started < 5  # (quadratic: about a minute)


def test_atx_titles_lose_only_a_closing_sequence_and_long_blank_runs_stay_linear():
    # an HTML page's view has heading lines that are mostly masked markup (spaces): a title
    # pattern that backtracks over them made a page of API entries quadratic
    blank = " " * 60_000
    lines = ["## Usage ##", "# C#", "### Tips #3 ###  ", "#### " + blank + "entry(x)" + blank + "#",
             "= Doc =", "== A " + blank + "b" + blank]
    heads = outline(lines, True).heads
    assert [heads[i][:2] for i in range(len(lines))] == [
        (2, "Usage"), (1, "C#"), (3, "Tips #3"), (4, "entry(x)"), (1, "Doc"), (2, "A b")]


def test_titles_are_one_line_of_words():
    # an HTML heading's view blanks its tags: "<h2>DEP0164: <code>x</code></h2>"
    lines = ["##     DEP0164:       process.exit(code)      coercion", "", "Setext   title\t here", "=====",
             "", ".. function::   open(file,   mode)"]
    heads = outline(lines, True).heads
    assert [h[1] for _, h in sorted(heads.items())] == [
        "DEP0164: process.exit(code) coercion", "Setext title here", "open(file, mode)"]


def test_code_outline_finds_comments_and_docstrings():
    src = '''#!/usr/bin/env python3
"""Module docstring
over two lines."""
import glob
# a comment
#   and its second line
files = glob.glob("src/*.py")  # trailing comments stay code
x = 1
/* a C block
   comment */
#include <stdio.h>
// a line comment
-- an SQL comment
y = "*/"
'''
    lines = split_lines(src)
    ol = code_outline(lines)
    kinds = {i: ol.prose_at(i) for i in range(len(lines))}
    assert [i for i, k in kinds.items() if k == '"'] == [1, 2]
    assert [i for i, k in kinds.items() if k == "#"] == [4, 5, 8, 9, 11, 12]
    # not comments: the shebang, code with a trailing comment, a glob's "/*", a C include
    assert kinds[0] is kinds[6] is kinds[10] is kinds[13] is None


def test_sphinx_object_descriptions_are_entries_below_every_section():
    text = ("json\n====\n\nIntro.\n\nBasic Usage\n-----------\n\n"
            ".. function:: dumps(obj, *, indent=None)\n\n   Serialize *obj*.\n\n"
            ".. class:: JSONEncoder(*, sort_keys=False)\n\n   Extensible encoder.\n\n"
            "   .. method:: encode(o)\n\n      Return a string.\n\n"
            ".. note::\n\n   Not an entry.\n\n.. versionadded:: 3.2\n")
    lines = split_lines(text)
    heads = outline(lines, True).heads
    assert [heads[i][:2] for i in sorted(heads) if heads[i][0] > 6] == [
        (7, "dumps(obj, *, indent=None)"), (7, "JSONEncoder(*, sort_keys=False)"), (10, "encode(o)")]
    headings = line_headings(lines, True)[0]
    assert headings[lines.index("      Return a string.")] == "encode(o)"
    assert not any(lines[i].startswith((".. note", ".. versionadded")) for i in heads)  # not entries


FRONT = """---
title: "Configure probes"
weight: 140
---

Intro text about probes.

## Define a liveness command

A command probe runs inside the container.
"""


def test_a_front_matter_title_is_the_page_title_above_every_heading():
    lines = split_lines(FRONT)
    ol = outline(lines, True)
    assert ol.heads[1] == (0, "Configure probes", 0, 1)
    assert ol.heads[7][:2] == (2, "Define a liveness command")
    assert len(ol.heads) == 2  # "weight: 140" above the closing "---" is not a setext title
    assert chunk_lines(FRONT, markdown=True)[0].heading == "Configure probes"
    from ragweb.compact import file_context
    assert file_context(lines, 10, True, ol)[1] == ((0, "Configure probes"), (2, "Define a liveness command"))
    headings = line_headings(lines, True)[0]
    assert headings[0] == headings[5] == "Configure probes" and headings[9] == "Define a liveness command"
    # long pages too: the first chunk is named by the title, later ones by their sections
    long_page = FRONT + "\n".join(f"Line {i} of filler text about probes." for i in range(400)) + "\n"
    chunks = chunk_lines(long_page, 120, 10, markdown=True)
    assert chunks[0].heading == "Configure probes" and chunks[-1].heading == "Define a liveness command"


def test_front_matter_variants_and_look_alikes():
    title = lambda text: {v[1] for v in outline(split_lines(text), True).heads.values() if v[0] == 0}
    assert title('+++\ntitle = "Hugo page"\ndraft = false\n+++\n\nBody.\n') == {"Hugo page"}
    assert title("---\nlayout: post\ntitle: Jekyll's post\n...\nBody.\n") == {"Jekyll's post"}
    assert title("---\nlayout: post\n---\n\nNo title here.\n") == set()
    assert title("---\ntitle: never closed\n\nBody.\n") == set()
    assert title("Intro.\n\n---\ntitle: a thematic break, not front matter\n---\n") == set()
    assert title("---\ntitle:\n---\n") == set()
    assert not outline(split_lines("---\ntitle: x\n---\n"), False).heads  # code: no outline


def test_a_bare_or_numbered_heading_takes_the_line_below_as_its_title_only_when_it_stands_alone():
    lines = ["# ", "Manual Page", "", "## 4.1.", "  Composite Keys", "", "text",
             "## API", "First line", "", "# ", "two", "lines", "", "## 2.", "- an item", ""]
    heads = outline(lines, True).heads
    assert heads[0] == (1, "Manual Page", 0, 1) and heads[3] == (2, "4.1. Composite Keys", 3, 4)
    assert heads[7] == (2, "API", 7, 7)        # a real title keeps its line
    assert heads[10] == (1, "", 10, 10)        # a paragraph below is not a title
    assert heads[14] == (2, "2.", 14, 14)      # nor is a list item
    headings, starts, _ = line_headings(lines, markdown=True)
    assert headings[6] == "4.1. Composite Keys" and 4 not in starts
