"""The sweep's load shape alone: `llmload sweep` and `search` add it to a scenario without one.

    locust -f "$(llmload scenarios agent),$(llmload scenarios shape)" --headless \
        --host http://127.0.0.1:8000 --levels 1,2,4,8 --stage-s 30

A scenario of plain users (agent, conversation, your own) makes a run that lasts `-t`; a sweep
or a search needs its stages, which this shape runs with the users the other file declares.
"""

from locust import events

from llmload.locust import SweepShape, install

install(events)

__all__ = ["SweepShape"]
