"""``SweepShape``: a LoadTestShape that runs the concurrency sweep's stages (master only)."""

from __future__ import annotations

from locust import LoadTestShape, User

from llmload.core.phases import Phase
from llmload.locust.load import users_of
from llmload.locust.openloop import OpenLoopUser
from llmload.locust.plugin import conductor_of

Load = tuple[int, float, list[type[User]]]  # a shape tick's answer: users, spawn rate, classes


class SweepShape(LoadTestShape):
    """Holds each level's users through warm-up, window and drain, then moves on."""

    def tick(self) -> Load | None:
        assert self.runner is not None, "Locust sets the runner before ticking the shape"
        conductor = conductor_of(self.runner.environment)
        conductor.tick()
        plan = conductor.controller.current
        if plan is None or conductor.controller.phase is Phase.DONE:
            return None
        users = users_of(self.runner, plan)
        open_loop = plan.rate is not None
        everyone = self.runner.environment.user_classes
        classes = [u for u in everyone if issubclass(u, OpenLoopUser) is open_loop]
        # Start a level's users at once: warm-up, not the ramp, absorbs the cold start.
        return users, float(users), classes


class TraceShape(SweepShape):
    """The replay's one stage: one ``TraceUser`` per process while it lasts, and the end of the
    run once its drain is over. Locust leaves ``-t`` to a shape: this one keeps it, so that a
    looped replay ends then (and an unlooped one, if sooner, ends there cut short)."""

    use_common_options = True

    def tick(self) -> Load | None:
        assert self.runner is not None, "Locust sets the runner before ticking the shape"
        limit = getattr(self.runner.environment.parsed_options, "run_time", None)
        if limit and self.get_run_time() >= limit:  # type: ignore[no-untyped-call]
            return None
        return super().tick()
