"""The one error a request body can raise in the simulator: answered with HTTP 400."""

from __future__ import annotations


class BadRequest(Exception):
    """The body cannot be served; answered with HTTP 400 and this message."""

    def __init__(self, message: str, param: str | None = None) -> None:
        self.message = message
        self.param = param
        super().__init__(message)
