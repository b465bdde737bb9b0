"""`check_tool_name`: the tool names model providers accept, `^[A-Za-z0-9_-]{1,64}$`."""

from __future__ import annotations

import pytest

from network.errors import ConfigurationError
from network.run.tool_names import check_tool_name


@pytest.mark.parametrize("name", ["a", "lookup", "transfer_to_x", "A-b_9", "x" * 64])
def test_a_name_providers_accept_is_kept(name: str) -> None:
    assert check_tool_name("tool 'x': name", name) == name


@pytest.mark.parametrize(
    "name", ["", "two words", "web.search", "caf\u00e9", "x" * 65, "a\n", None, 3, b"lookup"]
)
def test_a_name_providers_refuse_is_refused_naming_the_owner(name: object) -> None:
    with pytest.raises(ConfigurationError, match=r"^agent 'a': as_tool name .* must be 1 to 64"):
        check_tool_name("agent 'a': as_tool name", name)


def test_a_long_name_is_shown_cut() -> None:
    with pytest.raises(ConfigurationError) as caught:
        check_tool_name("tool 'x': name", "y" * 10_000)
    assert len(str(caught.value)) < 250
