"""Trace replay: a production trace's requests, each at its own time (open loop).

llmload's installed scenario `trace`, run from the repository: its code and usage are in
src/llmload/scenarios/trace.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.trace import TraceShape, TraceUser

__all__ = ["TraceShape", "TraceUser"]
