"""Running code written for LangChain on graphagent: ``install.py`` makes ``import
langchain.agents...`` resolve to graphagent (``install_as_langchain()``), and ``stand_in/`` is
the ``langchain`` package it puts in place where LangChain is not installed."""
