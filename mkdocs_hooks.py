"""What the docs site (``mkdocs build``, configured in mkdocs.yml) needs beyond mkdocs itself.

- The notebooks, kept beside ``docs/``, ship with the site as files to download: the pages link
  them as ``../notebooks/NAME.ipynb``, which works when reading the repository, and on the site
  the same files sit at ``notebooks/NAME.ipynb``.
- ``SiteDocstrings``, a griffe extension for the API reference: a docstring that is built when
  its module is imported (the hook decorators') is read from the imported object, and Sphinx
  roles (``:class:`X```) render as code.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import griffe
from mkdocs.structure.files import File, Files

NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"
ROLE = re.compile(r":(?:class|func|meth|attr|data|exc|mod|obj):`~?([^`]+)`")


def on_files(files: Files, config: Any) -> Files:
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        files.append(File.generated(config, f"notebooks/{notebook.name}", abs_src_path=notebook))
    return files


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    return markdown.replace("](../notebooks/", "](notebooks/")


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
