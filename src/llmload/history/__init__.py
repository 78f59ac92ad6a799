"""The results store: every run remembered (docs/history.md).

``location.py`` says where the store is, ``schema.py`` what it holds and how an older store is
brought up to date, ``store.py`` reads and writes it (SQLite, in the standard library), and
``recording.py`` records a run when it ends. What a record holds is read from the summary by
the pure ``llmload.results.runrecord``; which runs compare, by ``llmload.results.comparable``.
"""
