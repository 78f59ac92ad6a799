"""The API key, read from the environment variable the user names: the one place that reads it.

The key is never a flag, so it never lands in shell history, ``ps`` output or a report. Which
variable holds it is an option, ``--api-key-env`` (``LLMLOAD_API_KEY_ENV``), so a team that keeps
its key in ``TEAM_LLM_KEY`` need not copy it into ``OPENAI_API_KEY``. Every step that talks to
the server reads the key here (the run's config, the readiness wait, ``--processes auto``'s pace
probe, ``llmload tune``'s wait, fingerprint and cache reset): one that read the default variable
itself would stop a sweep at its readiness wait with a 401 the run itself would never get.
"""

from __future__ import annotations

from collections.abc import Mapping

DEFAULT_ENV = "OPENAI_API_KEY"  # the OpenAI SDK's own variable: what most users already set
# ``--api-key-env``'s own variable (its Option's ``env``; a test holds the two equal): commands
# that parse with plain argparse read it here, as Locust's parser reads every LLMLOAD_* variable
ENV_OF_ENV = "LLMLOAD_API_KEY_ENV"


def key_env(given: str | None, environ: Mapping[str, str]) -> str:
    """The variable that holds the key: ``--api-key-env``'s value where given, else
    ``LLMLOAD_API_KEY_ENV``'s, else ``OPENAI_API_KEY``."""
    return given or environ.get(ENV_OF_ENV) or DEFAULT_ENV


def read_api_key(given: str | None, environ: Mapping[str, str]) -> str | None:
    """The key in the variable ``key_env`` picks; None where it is unset or empty."""
    return environ.get(key_env(given, environ)) or None
