"""The Locust adapter: the only subpackage that imports locust.

Importing locust monkey-patches the whole process, so this package imports it only when a user
class is asked for (``from llmload.locust import ChatUser``); ``llmload.locust.options`` and the
other pure helpers stay importable in a plain process (tests, the CLI).
"""

from typing import Any

__all__ = ["ChatUser", "CompletionsUser", "OpenLoopUser", "SweepShape", "install"]


def __getattr__(name: str) -> Any:
    if name in ("ChatUser", "CompletionsUser"):
        from llmload.locust import user

        return getattr(user, name)
    if name == "OpenLoopUser":
        from llmload.locust.openloop import OpenLoopUser

        return OpenLoopUser
    if name == "SweepShape":
        from llmload.locust.shape import SweepShape

        return SweepShape
    if name == "install":
        from llmload.locust.plugin import install

        return install
    raise AttributeError(name)
