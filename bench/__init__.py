"""Benchmarks: graphagent against LangChain 1.5 on the same workloads (``python -m bench``).

Not part of the test suite: it needs ``langchain``, which only the bench venv installs.
"""
