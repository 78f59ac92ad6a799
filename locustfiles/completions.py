"""The legacy text-completions endpoint, /v1/completions, with the same options as chat.py.

llmload's installed scenario `completions`, run from the repository: its code and usage are in
src/llmload/scenarios/completions.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.completions import CompletionsUser

__all__ = ["CompletionsUser"]
