"""llmload: a load tester for OpenAI-compatible LLM servers."""

__version__ = "0.1.0"
