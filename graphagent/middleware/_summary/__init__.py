"""The parts of ``SummarizationMiddleware``: the private methods of LangChain's that libraries
built on it call (``internals``) and what the summary model reads and the summary becomes
(``text``). The middleware itself, and every public name, are in
``graphagent.middleware.summarization``."""
