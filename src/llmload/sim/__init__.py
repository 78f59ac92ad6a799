"""The simulated OpenAI-compatible server (``llmload sim``), llmload's ground truth.

Importing this package imports nothing else: the server (``server``, ``cli``) runs in its own
process on asyncio/uvloop and never imports gevent or Locust. What the rest of llmload uses:

- ``llmload.sim.process``: ``start_sim(args)`` -> ``SimProcess`` (a child process, its URL, and
  its ground truth over HTTP);
- ``llmload.sim.model``: ``ModelParams``, ``stage_output_tok_per_s``,
  ``per_stream_decode_tok_per_s``: what the batching model predicts, analytically;
- ``llmload.sim.profiles``: ``get_profile(name).params()``.

See ``docs/sim.md``.
"""
