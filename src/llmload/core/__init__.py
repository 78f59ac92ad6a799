"""The pure per-request core: a request's record and its parsing, phases, stages, fail-fast, redaction."""
