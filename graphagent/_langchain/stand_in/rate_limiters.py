"""``langchain.rate_limiters`` without LangChain: langchain-core's rate limiters."""

from langchain_core.rate_limiters import BaseRateLimiter, InMemoryRateLimiter

__all__ = ["BaseRateLimiter", "InMemoryRateLimiter"]
