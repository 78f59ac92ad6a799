"""``SweepShape``: a LoadTestShape that runs the concurrency sweep's stages (master only)."""

from __future__ import annotations

from locust import LoadTestShape, User
from locust.runners import MasterRunner

from llmload.core.phases import Phase
from llmload.locust.openloop import OpenLoopUser
from llmload.locust.plugin import conductor_of


class SweepShape(LoadTestShape):
    """Holds each level's users through warm-up, window and drain, then moves on."""

    def tick(self) -> tuple[int, float, list[type[User]]] | None:
        assert self.runner is not None, "Locust sets the runner before ticking the shape"
        environment = self.runner.environment
        conductor = conductor_of(environment)
        conductor.tick()
        plan = conductor.controller.current
        if plan is None or conductor.controller.phase is Phase.DONE:
            return None
        classes: list[type[User]] = list(environment.user_classes)
        open_loop = [u for u in classes if issubclass(u, OpenLoopUser)]
        closed = [u for u in classes if not issubclass(u, OpenLoopUser)]
        if plan.rate is not None:
            # One open-loop user per process; it sends the stage's share of the schedule.
            opts = environment.parsed_options
            processes = 1
            if isinstance(self.runner, MasterRunner) and opts is not None:
                processes = int(opts.expect_workers or 1)
            return processes, float(processes), list(open_loop)
        # Start a level's users at once: warm-up, not the ramp, absorbs the cold start.
        return plan.concurrency, float(plan.concurrency), closed


class TraceShape(SweepShape):
    """The replay's one stage: one ``TraceUser`` per process while it lasts, and the end of the
    run once its drain is over. Locust leaves ``-t`` to a shape: this one keeps it, so that a
    looped replay ends then (and an unlooped one, if sooner, ends there cut short)."""

    use_common_options = True

    def tick(self) -> tuple[int, float, list[type[User]]] | None:
        assert self.runner is not None, "Locust sets the runner before ticking the shape"
        limit = getattr(self.runner.environment.parsed_options, "run_time", None)
        if limit and self.get_run_time() >= limit:  # type: ignore[no-untyped-call]
            return None
        return super().tick()
