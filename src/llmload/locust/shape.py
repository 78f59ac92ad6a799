"""``SweepShape``: a LoadTestShape that runs the concurrency sweep's stages (master only)."""

from __future__ import annotations

from locust import LoadTestShape

from llmload.locust.plugin import conductor_of
from llmload.stages import StagePhase


class SweepShape(LoadTestShape):
    """Holds each level's users through warm-up, window and drain, then moves on."""

    def tick(self) -> tuple[int, float] | None:
        assert self.runner is not None, "Locust sets the runner before ticking the shape"
        conductor = conductor_of(self.runner.environment)
        conductor.tick()
        plan = conductor.controller.current
        if plan is None or conductor.controller.phase is StagePhase.DONE:
            return None
        # Start a level's users at once: warm-up, not the ramp, absorbs the cold start.
        return plan.concurrency, float(plan.concurrency)
