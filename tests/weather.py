"""The tool and the schema the tests that drive a real provider client ask the model for."""

from __future__ import annotations

from langchain_core.tools import tool
from pydantic import BaseModel


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


class Weather(BaseModel):
    """A weather report."""

    city: str
    degrees: int
