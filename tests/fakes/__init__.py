"""Servers shared by the test suite: a fake OpenAI-compatible HTTP server, and a real one
(llama-cpp-python serving a small model, `tests.fakes.llama_server`).

Test modules enable its pytest fixture with `pytest_plugins = ["tests.fakes.openai_server"]`.
"""

import pytest

# The module is also a pytest plugin (its fixture): have it assertion-rewritten when first
# imported, so pytest does not warn that it was imported before it could be rewritten.
pytest.register_assert_rewrite("tests.fakes.openai_server", "tests.fakes.llama_server")

from tests.fakes.openai_server import FakeOpenAIServer, FakeToolCall, Reply  # noqa: E402

__all__ = ["FakeOpenAIServer", "FakeToolCall", "Reply"]
