"""The end of a batch run: keep its final numbers where Prometheus can still read them.

A batch run ends, and its exporter with it, possibly before Prometheus scraped the last numbers.
Two remedies, both optional (``ExporterConfig``): keep serving for ``linger_s`` seconds, and push
the final snapshot to a Pushgateway (deleting the group afterwards on request, so a finished
run does not haunt the dashboards). A Pushgateway that cannot be reached costs one warning line,
never the run's results.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping

from prometheus_client import CollectorRegistry, delete_from_gateway, push_to_gateway

from llmload.config.settings import ExporterConfig
from llmload.export.prometheus import ExporterHandle

JOB = "llmload"
_log = logging.getLogger(__name__)


def push_final(
    url: str, job: str, grouping: Mapping[str, str], registry: CollectorRegistry, *, timeout_s: float = 10.0
) -> bool:
    """PUT the registry's current exposition as the group ``job`` + ``grouping``; False on error."""
    try:
        push_to_gateway(url, job=job, registry=registry, grouping_key=dict(grouping), timeout=timeout_s)
    except (OSError, ValueError) as exc:  # unreachable, refused, non-2xx, malformed URL
        _log.warning("llmload: could not push the final metrics to %s: %s", url, exc)
        return False
    return True


def delete_group(url: str, job: str, grouping: Mapping[str, str], *, timeout_s: float = 10.0) -> bool:
    """DELETE the group ``job`` + ``grouping``; False (and one warning line) on error."""
    try:
        delete_from_gateway(url, job=job, grouping_key=dict(grouping), timeout=timeout_s)
    except (OSError, ValueError) as exc:
        _log.warning("llmload: could not delete the metrics group at %s: %s", url, exc)
        return False
    return True


def finish(
    config: ExporterConfig, handle: ExporterHandle, run_id: str, sleep: Callable[[float], None] = time.sleep
) -> None:
    """Push the final snapshot (if asked), linger, delete the pushed group (if asked), close."""
    grouping = {"run_id": run_id}
    pushed = config.pushgateway_url is not None and push_final(
        config.pushgateway_url, JOB, grouping, handle.registry
    )
    if config.linger_s > 0:
        sleep(config.linger_s)  # scrapes keep being answered meanwhile, by the server's thread
    if pushed and config.pushgateway_delete and config.pushgateway_url is not None:
        delete_group(config.pushgateway_url, JOB, grouping)
    handle.close()
