"""``langchain.embeddings`` without LangChain: langchain-core's ``Embeddings``.

``init_embeddings`` is LangChain's own code, which graphagent does not re-implement: asking for
it says to install ``langchain``, whose module is then used instead of this one.
"""

from langchain_core.embeddings import Embeddings

__all__ = ["Embeddings"]


def __getattr__(name: str) -> object:
    if name == "init_embeddings":
        raise ImportError(
            "langchain.embeddings.init_embeddings is LangChain's own code, which graphagent does "
            "not stand in for; install langchain (pip install langchain) and "
            "install_as_langchain() leaves langchain.embeddings to it, or build the embeddings "
            "class of your provider package directly (langchain_openai.OpenAIEmbeddings, ...).",
            name=__name__,
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
