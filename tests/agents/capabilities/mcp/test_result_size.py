"""`result_size`: the text an MCP tool result would give the model, as `max_result_bytes`
counts it (the limit itself is tested against a real server in test_stdio.py)."""

from __future__ import annotations

import mcp.types as types

from agents.capabilities.mcp.content import result_size


def test_blocks_count_their_text_data_and_uris_in_utf8() -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="é"),  # 2 bytes
            types.ImageContent(type="image", data="QUJD", mime_type="image/png"),  # 4
            types.ResourceLink(type="resource_link", uri="file:///a", name="a"),  # 9
        ]
    )
    assert result_size(result) == 15


def test_structured_content_counts_as_its_json_the_blocks_beside_it_not_at_all() -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="x" * 100)], structured_content={"a": "é"}
    )
    assert result_size(result) == len('{"a": "é"}'.encode())


def test_structured_content_with_no_json_form_counts_its_blocks() -> None:
    # an int past Python's 4,300 digits has no text: the dispatch makes that the tool's failure
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="abc")], structured_content={"n": 10**5000}
    )
    assert result_size(result) == 3
