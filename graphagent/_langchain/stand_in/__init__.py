"""What ``install_as_langchain()`` puts in place of the ``langchain`` package where it is not
installed: the package itself and the modules LangChain only re-exports from langchain-core and
langgraph (``langchain.messages``, ``langchain.tools``, ``langchain.embeddings``,
``langchain.rate_limiters``). Where ``langchain`` is installed, its own modules are used instead.
"""
