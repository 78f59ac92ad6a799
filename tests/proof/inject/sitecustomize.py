"""A slower client, for the proof that the timing judge still fails (tests/proof): loaded only
where ``tests/proof/inject`` is on PYTHONPATH and ``LLMLOAD_INJECT_READ_DELAY_MS`` is set.

The lean transport reads a readable socket in the event loop's own callback
(``llmload.transport.delivery.Delivery``) and stamps the read as ``recv`` returns. Here that
callback waits the delay on the loop's timer before it reads: every read is taken, and stamped,
that much after its bytes arrived, as in a client whose read path got slower. The loop is never
blocked, so the client's own loop lag does not see it: only a judge whose noise is measured apart
from the client can. Nothing in ``src/`` knows of this file.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any

TARGET = "llmload.transport.delivery"
DELAY_ENV = "LLMLOAD_INJECT_READ_DELAY_MS"


def _slow_down(module: ModuleType, delay_s: float) -> None:
    import gevent

    delivery: Any = module.Delivery

    def read_now(self: Any) -> None:  # Delivery._on_readable's own steps, once the delay is over
        try:
            ended = self._read()
        except BaseException as exc:  # noqa: BLE001 (raised in the waiting greenlet, as there)
            self._waiter.throw(exc)
            return
        if ended is not None:
            self._waiter.switch(ended)
        else:
            self._watcher.start(self._on_readable)

    def read_later(self: Any) -> None:
        self._watcher.stop()
        timer = gevent.get_hub().loop.timer(delay_s)

        def fire() -> None:
            timer.close()
            read_now(self)

        timer.start(fire)

    delivery._on_readable = read_later


class _AfterImport(importlib.abc.MetaPathFinder):
    def __init__(self, delay_s: float) -> None:
        self.delay_s = delay_s

    def find_spec(self, name: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        loader: Any = spec.loader
        execute = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _slow_down(module, self.delay_s)

        loader.exec_module = exec_module
        return spec


if os.environ.get(DELAY_ENV):
    sys.meta_path.insert(0, _AfterImport(float(os.environ[DELAY_ENV]) / 1e3))
