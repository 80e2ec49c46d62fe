"""The one seam to language models: OpenAI-compatible chat and embeddings endpoints
(hosted, Ollama, llama.cpp server, vLLM) through the ``openai`` client.

Only the explicit commands (``propose``, ``verify``, ``select``, ``analyse``, ``ask``) import
this package; ``build`` never does. Every answer comes back validated
against a flat schema with its :class:`Provenance`, or a :class:`LLMError` is raised
and nothing is written (INV-15). An answer is untrusted input: its size and the model
name are bounded here; what each item may say is checked by the caller against its
request (:mod:`generator.llm.schema` has the shared checks).
"""

from generator.llm.client import (
    MAX_ANSWER_CHARS,
    MAX_MODEL_CHARS,
    LLMClient,
    Provenance,
    ToolCall,
    ToolTurn,
    redacted_endpoint,
)
from generator.llm.config import LLMSettings, llm_settings
from generator.llm.errors import LLMAnswerError, LLMConfigError, LLMError, LLMTransportError, ToolsRefused

__all__ = ["MAX_ANSWER_CHARS", "MAX_MODEL_CHARS", "LLMAnswerError", "LLMClient", "LLMConfigError", "LLMError",
           "LLMSettings", "LLMTransportError", "Provenance", "ToolCall", "ToolTurn", "ToolsRefused", "llm_settings",
           "redacted_endpoint"]
