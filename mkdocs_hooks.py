"""What the docs site (``mkdocs build``, configured in mkdocs.yml) needs beyond mkdocs itself.

- The notebooks, kept beside ``docs/``, become pages of the site (``notebooks/NAME/``): their
  text, their code and the outputs stored with them, pictures included; each page links the
  ``.ipynb`` file to download, which ships beside it. The docs link them as
  ``../notebooks/NAME.ipynb``, which works when reading the repository; on the site those links
  lead to the pages.
- A ``|`` inside a code span in a table is written ``\\|``, as GitHub needs it; Python-Markdown
  would show the backslash, and takes a bare ``|`` inside backticks as part of the span, so table
  rows get the bare one.
- ``SiteDocstrings``, a griffe extension for the API reference: a docstring that is built when
  its module is imported (the hook decorators') is read from the imported object, and Sphinx
  roles (``:class:`X```) render as code.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import json
import re
from pathlib import Path
from typing import Any

import griffe
from mkdocs.structure.files import File, Files

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
ROLE = re.compile(r":(?:class|func|meth|attr|data|exc|mod|obj):`~?([^`]+)`")
NOTEBOOK_LINK = re.compile(r"\]\(\.\./notebooks/([\w-]+)\.ipynb")
CODE_SPAN = re.compile(r"`[^`\n]*`")
FENCE = re.compile(r"^\s*(```|~~~)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
PICTURES = ("image/svg+xml", "image/png")


def on_files(files: Files, config: Any) -> Files:
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        files.append(File.generated(config, f"notebooks/{notebook.name}", abs_src_path=notebook))
        page = notebook_page(notebook)
        files.append(File.generated(config, f"notebooks/{notebook.stem}.md", content=page))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return bare_table_pipes(NOTEBOOK_LINK.sub(r"](notebooks/\1.md", markdown))


def bare_table_pipes(markdown: str) -> str:
    """``markdown`` with each ``\\|`` inside a code span of a table row written ``|``."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and line.lstrip().startswith("|"):
            line = CODE_SPAN.sub(lambda span: span.group(0).replace("\\|", "|"), line)
        lines.append(line)
    return "\n".join(lines)


def notebook_page(path: Path) -> str:
    """A notebook as a Markdown page: its text, its code, and the outputs stored with it."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    parts: list[str] = []
    for cell in cells:
        source = _joined(cell["source"])
        if cell["cell_type"] == "markdown":
            parts.append(source.replace("](../docs/", "](../"))
        elif cell["cell_type"] == "code":
            parts += [_fenced("python", source), *_outputs(cell.get("outputs", []))]
    download = (
        f"[Download the notebook]({path.name}) to run it yourself (`make notebooks-lab` opens "
        "the notebooks in JupyterLab)."
    )
    return "\n\n".join([*parts[:1], download, *parts[1:]]) + "\n"


def _outputs(outputs: list[dict[str, Any]]) -> list[str]:
    shown: list[str] = []
    printed = ""  # consecutive printed output reads as one block
    for output in outputs:
        if output["output_type"] == "stream":
            printed += _joined(output["text"])
            continue
        if printed:
            shown.append(_fenced("text", printed))
            printed = ""
        if output["output_type"] == "error":
            shown.append(_fenced("text", ANSI.sub("", "\n".join(output["traceback"]))))
        else:
            shown.append(_rich(output.get("data", {})))
    if printed:
        shown.append(_fenced("text", printed))
    return shown


def _rich(data: dict[str, Any]) -> str:
    """A displayed value: its picture inline, if it has one, else its text."""
    for kind in PICTURES:
        if kind in data:
            payload = _joined(data[kind])
            if kind == "image/svg+xml":
                payload = base64.b64encode(payload.encode()).decode()
            return f"![output](data:{kind};base64,{payload.replace(chr(10), '')})"
    return _fenced("text", _joined(data.get("text/plain", "")))


def _fenced(language: str, text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _joined(text: str | list[str]) -> str:
    return text if isinstance(text, str) else "".join(text)


class SiteDocstrings(griffe.Extension):
    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if isinstance(obj, griffe.Attribute) and obj.docstring is None:
            value = _built_callable(obj)
            if value is not None:
                function = _as_function(obj, value)
                obj.module.set_member(obj.name, function)
                obj = function
        if obj.docstring is not None:
            obj.docstring.value = ROLE.sub(r"``\1``", obj.docstring.value)


def _built_callable(attribute: griffe.Attribute) -> Any:
    """What the attribute holds, if that is a callable object of graphagent's that was given a
    docstring of its own when it was built (``before_model = _hook_decorator(...)``)."""
    if not (attribute.is_public and isinstance(attribute.value, griffe.ExprCall)):
        return None
    value = getattr(importlib.import_module(attribute.module.path), attribute.name, None)
    kind = type(value)
    home = getattr(value, "__module__", None) if callable(value) else None
    ours = isinstance(home, str) and home.startswith("graphagent")
    return value if ours and value.__doc__ not in (None, kind.__doc__) else None


def _as_function(attribute: griffe.Attribute, value: Any) -> griffe.Function:
    """The attribute as the function it is to its callers: its signature and docstring."""
    signature = inspect.signature(value)
    parameters = [
        griffe.Parameter(
            p.name,
            annotation=_shown(p.annotation),
            kind=griffe.ParameterKind(p.kind.description),
            default=None if p.default is p.empty else repr(p.default),
        )
        for p in signature.parameters.values()
    ]
    return griffe.Function(
        attribute.name,
        lineno=attribute.lineno,
        endlineno=attribute.endlineno,
        parameters=griffe.Parameters(*parameters),
        returns=_shown(signature.return_annotation),
        docstring=griffe.Docstring(inspect.cleandoc(value.__doc__)),
    )


def _shown(annotation: Any) -> str | None:
    if annotation is inspect.Parameter.empty:
        return None
    return annotation if isinstance(annotation, str) else inspect.formatannotation(annotation)
