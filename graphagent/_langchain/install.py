"""``install_as_langchain()``: make ``import langchain.agents...`` resolve to graphagent.

A meta-path finder, put first on ``sys.meta_path``, answers for the LangChain module names in
:data:`ALIASES`. Its loader imports the graphagent module and puts that very module object under
the LangChain name in ``sys.modules``, so ``langchain.agents.middleware.AgentMiddleware is
graphagent.middleware.AgentMiddleware`` and both names share one set of classes; graphagent's
modules keep their own ``__name__`` and ``__spec__``. A finder (rather than filling
``sys.modules`` up front) imports nothing until a module is asked for, covers every built-in
module without listing them, and refuses a LangChain module graphagent has no counterpart for
with a message saying so, instead of loading a graphagent file a second time under a LangChain
name.

The LangChain modules graphagent does not re-implement (``langchain.messages``,
``langchain.tools``, ...) are left to the installed ``langchain`` package when there is one;
without it they resolve to the stand-in package next to this module, which re-exports what
LangChain re-exports from langchain-core and langgraph.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import logging
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import NoReturn

from graphagent.errors import LangChainImportedError

_log = logging.getLogger("graphagent")

ENV_VAR = "GRAPHAGENT_AS_LANGCHAIN"
"""Set to ``1`` to install graphagent as ``langchain`` when Python starts: the wheel's ``.pth``
file reads it and runs ``_graphagent_as_langchain`` (beside this package), which imports nothing
of graphagent's until a ``langchain`` module is first imported."""


@dataclass(frozen=True, slots=True)
class Alias:
    """One LangChain module name and the module that stands in for it."""

    langchain: str
    graphagent: str
    children: bool = False
    """Also stand in for each public submodule: ``langchain.X.name`` is ``graphagent.Y.name``."""
    fallback: bool = False
    """Only where the ``langchain`` package is not installed (else the real module is used)."""


ALIASES: tuple[Alias, ...] = (
    Alias("langchain.agents", "graphagent"),
    Alias("langchain.agents.factory", "graphagent.factory"),
    Alias("langchain.agents.middleware", "graphagent.middleware", children=True),
    Alias("langchain.agents.structured_output", "graphagent.structured_output"),
    Alias("langchain.agents._subagent_transformer", "graphagent._core.subagents"),
    Alias("langchain.chat_models", "graphagent.models"),
    Alias("langchain.mcp", "graphagent.mcp", children=True),
    Alias("langchain", "graphagent._langchain.stand_in", fallback=True),
    Alias("langchain.messages", "graphagent._langchain.stand_in.messages", fallback=True),
    Alias("langchain.tools", "graphagent._langchain.stand_in.tools", children=True, fallback=True),
    Alias("langchain.embeddings", "graphagent._langchain.stand_in.embeddings", fallback=True),
    Alias("langchain.rate_limiters", "graphagent._langchain.stand_in.rate_limiters", fallback=True),
)
"""What stands in for what. An alias whose graphagent module does not exist (``graphagent.mcp``
in a version without it) is no alias: the real ``langchain`` module is used, where installed."""

_OWNED = ("langchain.agents", "langchain.chat_models")
"""The LangChain packages graphagent replaces whole: nothing below them comes from LangChain."""


def install_as_langchain() -> None:
    """Make every later ``import langchain.agents...`` in this process resolve to graphagent.

    After it, ``langchain.agents``, ``langchain.agents.middleware`` (with ``.types`` and each
    built-in's module), ``langchain.agents.structured_output`` and ``langchain.chat_models`` are
    graphagent's modules, in your code and in the libraries you use (deepagents, for one), so an
    app written for LangChain runs on graphagent unchanged. ``langchain.messages``,
    ``langchain.tools``, ``langchain.embeddings`` and ``langchain.rate_limiters`` come from the
    installed ``langchain`` package; without one, from what LangChain re-exports of langchain-core
    and langgraph. It imports nothing itself (``langchain`` least of all), and calling it again
    does nothing. Setting the environment variable ``GRAPHAGENT_AS_LANGCHAIN=1`` does the same
    when Python starts, without changing any code.

    Raises:
        LangChainImportedError: ``langchain.agents`` or ``langchain.chat_models`` was already
            imported from LangChain, so some code holds LangChain's classes; call this first,
            before importing the app or the libraries that import LangChain.
    """
    if any(isinstance(finder, LangChainFinder) for finder in sys.meta_path):
        return
    _refuse_imported()
    sys.meta_path.insert(0, LangChainFinder())
    _log.debug("install_as_langchain: langchain.agents and langchain.chat_models are graphagent's")


def _refuse_imported() -> None:
    replaced = _OWNED + tuple(
        a.langchain
        for a in ALIASES
        if not a.fallback and not _owned(a.langchain) and _exists(a.graphagent)
    )
    imported = sorted(
        (name for name, module in list(sys.modules.items()) if not _is_graphagent(module)),
        key=len,
    )
    for name in imported:
        owned = next((p for p in replaced if name == p or name.startswith(p + ".")), None)
        if owned is None:
            continue
        where = getattr(sys.modules.get(name), "__file__", None) or "an unknown place"
        raise LangChainImportedError(
            f"install_as_langchain() was called after {name} was imported from LangChain "
            f"({where}), so code already holds LangChain's classes and mixing them with "
            "graphagent's cannot work. Call graphagent.install_as_langchain() first, at the "
            "top of the program's entry point, before importing the app or any library that "
            f"imports {owned}; or set {ENV_VAR}=1 in the environment to install it when "
            "Python starts."
        )


def _is_graphagent(module: object) -> bool:
    name = getattr(module, "__name__", "")
    return isinstance(name, str) and (name == "graphagent" or name.startswith("graphagent."))


class LangChainFinder(importlib.abc.MetaPathFinder):
    """Finds graphagent's module for each LangChain name of :data:`ALIASES`."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "langchain" and not fullname.startswith("langchain."):
            return None
        found = _stand_in(fullname)
        if found is None:
            return None
        alias, module = found
        if alias.fallback and _real_langchain(self):
            return None
        if module is None:
            return _refuse(fullname) if _owned(fullname) else None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module))


def _stand_in(fullname: str) -> tuple[Alias, str | None] | None:
    """The alias that answers for ``fullname`` and the graphagent module standing in for it
    (``None`` when there is none), or ``None`` when graphagent has nothing to say about it."""
    for alias in ALIASES:
        if fullname == alias.langchain:
            return alias, alias.graphagent if _exists(alias.graphagent) else None
    parent, _, child = fullname.rpartition(".")
    for alias in ALIASES:
        if parent == alias.langchain and alias.children and _exists(alias.graphagent):
            module = f"{alias.graphagent}.{child}"
            return alias, module if not child.startswith("_") and _exists(module) else None
    return (Alias(fullname, ""), None) if _owned(fullname) else None


def _owned(fullname: str) -> bool:
    return any(fullname.startswith(prefix + ".") for prefix in _OWNED)


def _exists(module: str) -> bool:
    if module in sys.modules:
        return True
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


def _real_langchain(finder: LangChainFinder) -> bool:
    """Whether the ``langchain`` package is installed (found by the other finders, not
    imported), or already imported as itself."""
    loaded = sys.modules.get("langchain")
    if loaded is not None:
        return not _is_graphagent(loaded)
    others = (f for f in sys.meta_path if f is not finder and hasattr(f, "find_spec"))
    return any(f.find_spec("langchain", None) is not None for f in others)


def _refuse(fullname: str) -> NoReturn:
    parent = fullname.rpartition(".")[0]
    owner = getattr(sys.modules.get(parent), "__name__", parent)
    raise ModuleNotFoundError(
        f"No module named {fullname!r}: with install_as_langchain(), {parent} is {owner}, "
        "which has no counterpart of this module. Import the names from the parent package "
        "instead; docs/langchain-apps.md lists what graphagent stands in for.",
        name=fullname,
    )


class _AliasLoader(importlib.abc.Loader):
    """Puts an existing graphagent module in ``sys.modules`` under a LangChain name.

    The import system creates a placeholder module for the name, then takes whatever
    ``sys.modules`` holds for it after ``exec_module``: the graphagent module, untouched.
    """

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        sys.modules[module.__name__] = importlib.import_module(self.target)
