"""Open loop: requests at a rate (constant, Poisson or gamma), not by a number of users.

llmload's installed scenario `rate`, run from the repository: its code and usage are in
src/llmload/scenarios/rate.py (`llmload scenarios` prints where it is installed).
"""

from llmload.scenarios.rate import OpenLoopUser

__all__ = ["OpenLoopUser"]
