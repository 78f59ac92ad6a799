"""A concurrency sweep: one stage per level, each with warm-up, measured window and drain.

    locust -f "$(llmload scenarios sweep)" --headless --host http://127.0.0.1:8000 \
        --levels 1,2,4,8,16,32,64,128 --stage-s 30 --max-tokens 256 --ignore-eos

With `--rates 1,2,5` the stages are open-loop request rates instead of concurrency levels.
`llmload sweep` runs this for you (and waits for the server first). Locust's -u/-t are ignored:
the shape sets the users of each stage and ends the run after the last one.
"""

from locust import events

from llmload.locust import ChatUser, OpenLoopUser, SweepShape, install

install(events)

# The shape picks the class per stage: ChatUser for --levels, OpenLoopUser for --rates.
__all__ = ["ChatUser", "OpenLoopUser", "SweepShape"]
