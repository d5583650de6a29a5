"""The docs site as a reader meets it (mkdocs_hooks.py): notebooks are pages with their outputs,
links to them lead to those pages, and no code span in a table shows the ``\\|`` GitHub needs.

Each page goes through the hooks and Python-Markdown as ``mkdocs build`` runs them, without a
whole build.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import markdown
import pytest

import mkdocs_hooks
from tests.test_docs import DOCS, ROOT

PAGES = sorted(DOCS.rglob("*.md"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
EXTENSIONS = ["tables", "pymdownx.superfences", "admonition"]
ESCAPED_PIPE = re.compile(r"<code>[^<]*\\\|[^<]*</code>")


def _html(text: str) -> str:
    return markdown.markdown(mkdocs_hooks.on_page_markdown(text), extensions=EXTENSIONS)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_no_code_span_shows_a_backslash_before_a_pipe(page: Path) -> None:
    shown = ESCAPED_PIPE.findall(_html(page.read_text(encoding="utf-8")))
    assert not shown, (
        f"{page.name} shows {shown}: in a table write `\\|` inside a code span (GitHub needs "
        "it, and the site's hook takes it out); elsewhere write a bare `|`"
    )


def test_a_pipe_in_a_tables_code_span_stays_in_its_cell() -> None:
    table = "| hook | signature |\n|---|---|\n| `before_model` | `(state) -> dict \\| None` |\n"
    html = _html(table)

    assert "<td><code>(state) -&gt; dict | None</code></td>" in html
    assert html.count("<td>") == 2
    fenced = "```text\n| `a \\| b` |\n```\n"
    assert mkdocs_hooks.on_page_markdown(fenced) == fenced  # code blocks are left as written


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[n.stem for n in NOTEBOOKS])
def test_each_notebook_is_a_page_with_its_outputs(notebook: Path) -> None:
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    page = mkdocs_hooks.notebook_page(notebook)
    html = _html(page)

    title = "".join(cells[0]["source"]).splitlines()[0]
    assert page.startswith(title + "\n")
    assert f'<a href="{notebook.name}">Download the notebook</a>' in html
    code = [c for c in cells if c["cell_type"] == "code"]
    assert len(re.findall(r"^`{3,}python$", page, re.M)) == len(code)
    pictures = sum(
        1
        for c in code
        for o in c.get("outputs", [])
        if set(o.get("data", {})) & set(mkdocs_hooks.PICTURES)
    )
    assert html.count('<img alt="output" src="data:image/') == pictures
    printed = [o for c in code for o in c.get("outputs", []) if o["output_type"] == "stream"]
    if printed:
        assert "".join(printed[0]["text"]).rstrip() in page
    assert "](../docs/" not in page, "links to the docs lead to the site's pages"


def test_every_notebook_page_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    listed = re.findall(r"notebooks/([\w-]+)\.md", config)
    assert listed == [n.stem for n in NOTEBOOKS]


def test_links_to_a_notebook_lead_to_its_page() -> None:
    linking = [p for p in PAGES if "](../notebooks/" in p.read_text(encoding="utf-8")]
    assert linking, "the docs link the notebooks"
    for page in linking:
        text = mkdocs_hooks.on_page_markdown(page.read_text(encoding="utf-8"))
        assert ".ipynb)" not in text
        for stem in re.findall(r"\]\(notebooks/([\w-]+)\.md", text):
            assert (ROOT / "notebooks" / f"{stem}.ipynb").exists(), f"{page.name}: {stem}"


TABLE_RULE = re.compile(r"^\|[\s:|-]+\|$")


def _table_rows(text: str) -> int:
    """The rows of the tables in ``text`` as written: the lines starting with ``|`` outside code
    blocks, less each table's rule line."""
    rows, fence = 0, ""
    for line in (line.strip() for line in text.splitlines()):
        if fence:
            fence = "" if line.startswith(fence) else fence
        elif line.startswith(("```", "~~~")):
            fence = line[:3]
        elif line.startswith("|") and not TABLE_RULE.match(line):
            rows += 1
    return rows


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(DOCS)) for p in PAGES])
def test_every_table_row_is_shown(page: Path) -> None:
    """A blank line inside a table ends it there: the rows after it show as a paragraph of
    pipes."""
    text = page.read_text(encoding="utf-8")
    shown = _html(text).count("<tr>")
    assert shown == _table_rows(text), (
        f"{page.name} writes {_table_rows(text)} table rows and the site shows {shown}: look for a "
        "blank line inside a table, or a table row without its header and rule line"
    )


def test_a_blank_line_inside_a_table_is_caught() -> None:
    table = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n"

    assert _html(table).count("<tr>") == 2
    assert _table_rows(table) == 3
