"""A concurrency sweep: one stage per level, each with warm-up, measured window and drain.

llmload's installed scenario `sweep`, run from the repository: its code and usage are in
src/llmload/scenarios/sweep.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.sweep import ChatUser, OpenLoopUser, SweepShape

__all__ = ["ChatUser", "OpenLoopUser", "SweepShape"]
