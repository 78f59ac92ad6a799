"""An option that needs an extra says so in one line, also when the extra's package is absent."""

from __future__ import annotations

from llmload.config.settings import _installed


def test_a_missing_package_is_not_installed_rather_than_an_import_error() -> None:
    # find_spec of a submodule imports its parent: an absent parent used to raise instead
    assert _installed("no_such_package_here.sub") is False
    assert _installed("json", "json.decoder") is True
