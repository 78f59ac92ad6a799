"""The run engine: everything a load-test run does that is not Locust's business.

Per process, a ``ProcessRun`` (stages, windows, folding, records, health); per request,
``send_request``; in the master, a ``Fleet`` (merged deltas, progress, finals, lost-worker
bounds) fed by each worker's ``Shipper``; the ``Conductor`` that decides phases; the fold into
``summary.json`` (``summarize``) and the end of a run (``finish``: the verdict, the report); the
target's own view (``server_watch``) and what the exporter reads (``export_source``).

None of it imports locust (a test holds it to that): ``llmload.locust`` wires Locust's events,
users and messages to it, so the engine runs, and is tested, in a plain process.
"""
