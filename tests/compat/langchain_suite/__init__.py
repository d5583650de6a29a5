"""LangChain 1.5.2's own agent tests, run against graphagent: ``make langchain-suite``.

Not part of ``make test``: it downloads LangChain's sdist (for its tests only; ``langchain``
itself is never installed) and two pytest plugins its tests use. ``__main__`` lays the tests out
beside ``shim_conftest.py`` (which installs graphagent as ``langchain`` and gives LangChain-private
names placeholders), runs them in a subprocess of this interpreter, and sorts each failure into
LangChain-private names, a deliberate difference (``deliberate.py``, one row of
docs/migrating-from-langchain.md each) or a real one.
"""
