"""The ``GRAPHAGENT_AS_LANGCHAIN=1`` start-up hook, which the wheel's
``graphagent_as_langchain.pth`` calls in every Python process started while the variable is set.

It imports nothing beyond what Python itself has loaded at start: it puts a finder first on
``sys.meta_path`` that waits for the first import of a ``langchain`` module, and only then
imports graphagent and runs ``install_as_langchain()``. A process that never imports
``langchain`` (pip, a tool, a subprocess) starts as fast as without the variable, and modules a
test runner rewrites (pytest's plugins, anyio among them) are not imported before it starts.

This module sits beside the ``graphagent`` package, not in it: importing anything inside the
package first runs ``graphagent/__init__.py``, which loads the whole engine.
"""

from __future__ import annotations

import _thread
import os
import sys

TYPE_CHECKING = False  # not typing's: importing typing at every start is what this module avoids
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

ENV_VAR = "GRAPHAGENT_AS_LANGCHAIN"


def wanted() -> bool:
    """Whether the environment asks for graphagent as ``langchain`` (set, and not ``0``)."""
    return os.environ.get(ENV_VAR, "").strip() not in ("", "0")


class DeferredInstall:
    """A meta-path finder that answers nothing itself: at the first ``langchain`` import it
    installs graphagent's finder (first on ``sys.meta_path``, so ahead of this one from then on)
    and passes the question on to it. It stays on the path, answering nothing: removing a finder
    while the import system walks the path would make it skip the next one. A second thread
    importing ``langchain`` meanwhile waits for the install; the install itself asks the finders
    whether ``langchain`` is installed, which this one, already done, answers with ``None``."""

    def __init__(self) -> None:
        self.installed = False
        self._lock = _thread.RLock()

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "langchain" and not fullname.startswith("langchain."):
            return None
        with self._lock:
            if self.installed:
                return None
            self.installed = True
            from graphagent._langchain.install import LangChainFinder, install_as_langchain

            install_as_langchain()
        finder = next(f for f in sys.meta_path if isinstance(f, LangChainFinder))
        return finder.find_spec(fullname, path, target)


def install() -> None:
    """Put the deferred finder first on ``sys.meta_path`` when the environment asks for it
    (once, however often it is called)."""
    if wanted() and not any(isinstance(f, DeferredInstall) for f in sys.meta_path):
        sys.meta_path.insert(0, DeferredInstall())
