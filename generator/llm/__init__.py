"""The one seam to language models: OpenAI-compatible chat and embeddings endpoints
(hosted, Ollama, llama.cpp server, vLLM) through the ``openai`` client.

Only the explicit commands (``propose`` now; ``verify``, ``select``, ``analyse``
later) import this package; ``build`` never does. Every answer comes back validated
against a flat schema with its :class:`Provenance`, or a :class:`LLMError` is raised
and nothing is written (INV-15).
"""

from generator.llm.client import LLMClient, Provenance
from generator.llm.config import LLMSettings, llm_settings
from generator.llm.errors import LLMAnswerError, LLMConfigError, LLMError, LLMTransportError

__all__ = ["LLMAnswerError", "LLMClient", "LLMConfigError", "LLMError", "LLMSettings", "LLMTransportError",
           "Provenance", "llm_settings"]
