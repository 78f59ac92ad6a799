"""What a stage's server said about its speculative decoding, from the scrape of its /metrics."""

from __future__ import annotations

from collections.abc import Mapping

from llmload.protocol.jsonvalue import JSON
from llmload.results.summary_stage import Stage


def spec_decode(stage: Stage) -> tuple[float | None, float | None]:
    """The server's speculative-decoding (acceptance rate, mean acceptance length) of a stage.

    Looked up tolerantly: flat in ``stage.server`` or one level down (``spec_decode``), under
    vLLM's names or SGLang's accept-length gauge (target/scrape.py writes both).
    """
    server = stage.server
    if not isinstance(server, Mapping):
        return None, None
    places = [server, *(v for v in server.values() if isinstance(v, Mapping))]
    rate = _first(places, ("acceptance_rate", "spec_decode_acceptance_rate", "accept_rate"))
    length = _first(
        places,
        (
            "mean_acceptance_length",
            "acceptance_length",
            "accept_length",
            "spec_accept_length",
            "accept_length_gauge_mean",
        ),
    )
    return rate, length


def _first(places: list[Mapping[str, JSON]], keys: tuple[str, ...]) -> float | None:
    for place in places:
        for key in keys:
            value = place.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return float(value)
    return None
