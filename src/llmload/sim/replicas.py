"""``--replicas N``: N independent engines behind the router, seen by the server as one engine.

Each replica has its own batch, KV budget and prefix cache (the same model parameters each), as N
vLLM instances behind a load balancer do; nothing is shared between them. The server reads the
sums (running, waiting, KV tokens, prefix cache counters), so a scraper of ``/metrics`` sees one
server whatever N is; the ground truth names the replica that served each request.
"""

from __future__ import annotations

from collections.abc import Sequence

from llmload.sim.engine import Engine
from llmload.sim.generation import Generation
from llmload.sim.prefix_cache import PrefixCacheStats
from llmload.sim.router import Router


class Replicas:
    """An ``Engine`` that hands each generation to the replica its router picks."""

    def __init__(self, engines: Sequence[Engine], router: Router) -> None:
        if len(engines) != router.replicas:
            raise ValueError("one engine per replica")
        self.engines = tuple(engines)
        self.router = router

    def submit(self, generation: Generation) -> None:
        index = self.router.pick(generation.session)
        generation.replica = index
        self.engines[index].submit(generation)

    def close(self) -> None:
        for engine in self.engines:
            engine.close()

    @property
    def running_count(self) -> int:
        return sum(engine.running_count for engine in self.engines)

    @property
    def waiting_count(self) -> int:
        return sum(engine.waiting_count for engine in self.engines)

    @property
    def kv_tokens(self) -> int:
        return sum(engine.kv_tokens for engine in self.engines)

    @property
    def cache_stats(self) -> PrefixCacheStats:
        if len(self.engines) == 1:
            return self.engines[0].cache_stats
        each = [engine.cache_stats for engine in self.engines]
        return PrefixCacheStats(
            queries=sum(s.queries for s in each),
            hits=sum(s.hits for s in each),
            # SGLang's gauge is per scheduler; the mean of the replicas' stands for the server
            batch_hit_rate=sum(s.batch_hit_rate for s in each) / len(each),
            decode_batches=sum(s.decode_batches for s in each),
        )

    def replica_cache_stats(self) -> list[PrefixCacheStats]:
        """Each replica's prefix cache counters, in replica order."""
        return [engine.cache_stats for engine in self.engines]

    def reset_prefix_cache(self) -> int:
        return sum(engine.reset_prefix_cache() for engine in self.engines)
