"""Names from a pull request in Markdown and HTML (clusterforge.markup, used by `diff` and the review comment):
read back by a CommonMark parser with GFM tables (markdown-it-py, which rich already brings), a hostile name
(`-->`, backticks, `|`, a newline, HTML, a bidi override) is one code span, text or fence holding exactly that name
(control characters shown as escapes), and never closes the review marker, a code span, a fence or a table cell,
or adds markup."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile_fixtures import LAB_TEXT, run_cli, workdir
from markdown_it import MarkdownIt

from clusterforge import markup
from clusterforge.review_comment import comment

HOSTILE = ["inventory/lab.yaml", "x-->y.yaml", "a`b.yaml", "``", "`", "a ``` b", "--!>", "<!--x", "<b>bold</b>",
           "a|b|c", "line\nbreak", "x\r\n## heading", "*em* _em_ [link](http://x) ![i](x)", "&amp; &#60;",
           "\u202eevil", " padded ", "trailing\\", "x\t<script>y</script>"]
PARSER = MarkdownIt("commonmark").enable("table")


def _inline(source: str) -> list:
    """The children of the last inline token (a paragraph's, or a table's last cell's)."""
    tokens = PARSER.parse(source)
    inline = [t for t in tokens if t.type == "inline"]
    assert inline, [t.type for t in tokens]
    return inline[-1].children


@pytest.mark.parametrize("name", HOSTILE)
def test_a_code_span_holds_exactly_the_name(name: str):
    tokens = PARSER.parse(f"see {markup.code(name)} here")
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    children = tokens[1].children
    codes = [c for c in children if c.type == "code_inline"]
    assert len(codes) == 1 and codes[0].content == markup.one_line(name), children
    assert {c.type for c in children} <= {"text", "code_inline"}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_code_span_in_a_table_cell_keeps_the_row_to_its_cells(name: str):
    tokens = PARSER.parse(f"| file | change |\n|---|---|\n| {markup.code(name, table=True)} | added |\n")
    cells = [t for t in tokens if t.type == "inline"][2:]
    assert len(cells) == 2, [t.content for t in cells]
    assert [c.type for c in cells[0].children] == ["code_inline"]
    assert cells[0].children[0].content == markup.one_line(name) and cells[1].content == "added"


@pytest.mark.parametrize("name", HOSTILE)
def test_text_is_text_only(name: str):
    children = _inline(f"| a |\n|---|\n| {markup.text(name)} |\n")
    assert {c.type for c in children} <= {"text"}, [(c.type, c.content) for c in children]
    assert "".join(c.content for c in children) == markup.one_line(name).strip()


@pytest.mark.parametrize("name", HOSTILE)
def test_a_fence_holds_every_line(name: str):
    lines = [f"error: {name}", "```", "~~~", "````diff"]
    tokens = PARSER.parse("\n".join(markup.fenced(lines, "diff")) + "\nafter\n")
    assert tokens[0].type == "fence" and tokens[0].info == "diff"
    assert tokens[0].content == "\n".join(markup.one_line(line, tabs=True) for line in lines) + "\n"
    assert [t.type for t in tokens[1:]] == ["paragraph_open", "inline", "paragraph_close"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_comment_marker_stays_one_comment(name: str):
    marker = f"<!-- clusterforge-review: {markup.comment(name)} -->"
    body = marker[len("<!--"):-len("-->")]
    assert "-->" not in body and "--!>" not in body and "<!--" not in body and "\n" not in marker
    assert markup.comment(name) == markup.comment(name)  # the same name finds the same comment
    tokens = PARSER.parse(marker + "\n\nafter\n")
    assert tokens[0].type == "html_block" and tokens[0].content.strip() == marker


@pytest.mark.parametrize("name", HOSTILE)
def test_html_text_adds_no_markup(name: str):
    tokens = PARSER.parse(f"<summary>{markup.html(name)}</summary>\n")
    assert len(tokens) == 1 and tokens[0].type == "html_block"
    inner = tokens[0].content.strip()[len("<summary>"):-len("</summary>")]
    assert "<" not in inner and ">" not in inner and "\n" not in inner


@pytest.mark.parametrize("name", ["x-->y`z\n<b>.yaml", "a|b``c.yaml"])
def test_the_review_comment_escapes_every_name_from_the_pull_request(tmp_path: Path, name: str):
    shown = markup.one_line(name)  # a problem line shows a newline as \\n (model.errors.Problem)
    (tmp_path / "validate.err").write_text(f"{shown}:3:1: name: not a valid name\n```\n<!-- -->\n")
    (tmp_path / "diff.err").write_text(f"main:{shown}:1:1: YAML syntax\n")
    (tmp_path / "preview.err").write_text("error: the engine failed\n")
    text = comment(tmp_path, name, "main`<i>", {"validate": "failed", "diff": "failed", "preview": "failed"})
    first, *_ = text.split("\n", 1)
    assert first == f"<!-- clusterforge-review: {markup.comment(name)} -->"
    tokens = PARSER.parse(text)
    kinds = [t.type for t in tokens]
    assert kinds[0] == "html_block" and tokens[0].content.strip() == first
    assert kinds.count("html_block") == 1 and kinds.count("heading_open") == 1
    heading = tokens[kinds.index("heading_open") + 1].children
    assert [c.content for c in heading if c.type == "code_inline"] == [markup.one_line(name), "main`<i>"]
    fences = [t for t in tokens if t.type == "fence"]
    assert len(fences) == 3 and fences[0].content.startswith(shown + ":3:1:")
    assert "```\n<!-- -->\n" in fences[0].content


def test_diff_escapes_a_hostile_file_name_in_its_markdown(tmp_path: Path, capsys):
    good = workdir(tmp_path) / "lab.yaml"
    good.write_text(LAB_TEXT)
    hostile = tmp_path / "lab`-->\n<b>x|y.yaml"
    shutil.copy(good, hostile)
    outcome = run_cli(capsys, "diff", str(hostile), str(good))
    assert outcome.code == 0, outcome.err[-2000:]
    tokens = PARSER.parse(outcome.out)
    assert tokens[0].type == "heading_open"
    heading = [c for c in tokens[1].children if c.type == "code_inline"]
    assert [c.content for c in heading] == [markup.one_line(str(hostile)), str(good)]
    assert not [t for t in tokens if t.type == "html_block" and "<b>" in t.content]
