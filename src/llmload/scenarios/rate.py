"""Open loop: requests at a rate (constant, Poisson or gamma), not by a number of users.

    locust -f "$(llmload scenarios rate)" --headless -u 1 -t 2m --host http://127.0.0.1:8000 \
        --rate 5 --arrival poisson --max-in-flight 256

Run one user per process (-u 1, or -u N with N worker processes): each takes its share of one
global seeded schedule. Client queue time and E2E from `scheduled` show server saturation.
"""

from locust import events

from llmload.locust import OpenLoopUser, install

install(events)

__all__ = ["OpenLoopUser"]
