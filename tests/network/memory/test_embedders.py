"""Embedders: WordLlama from its wheel with the network unreachable, and litellm's embeddings
against an OpenAI-compatible server on loopback."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from network.errors import ConfigurationError, EmbeddingError
from network.memory import LiteLLMEmbedder, Memories, WordLlamaEmbedder
from tests.fakes.openai_server import FakeOpenAIServer

pytest_plugins = ["tests.fakes.openai_server"]
pytestmark = [pytest.mark.anyio, pytest.mark.litellm]


def test_wordllama_loads_from_its_wheel_with_no_network() -> None:
    """In a fresh process whose sockets cannot connect and whose HF cache is empty."""
    script = textwrap.dedent(
        """
        import socket, anyio, numpy as np

        def refuse(*args, **kwargs):
            raise OSError("network disabled by the test")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        import logging
        from network.memory import WordLlamaEmbedder

        async def main():
            vectors = np.asarray(await WordLlamaEmbedder().embed(
                ["I drink green tea", "she likes coffee", "the train leaves Lisbon"]))
            print(vectors.shape)
            unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            print(bool(unit[0] @ unit[1] > unit[0] @ unit[2]))
            root = logging.getLogger()  # wordllama's basicConfig undone
            print(len(root.handlers), root.level)

        anyio.run(main)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "HF_HOME": "/nonexistent-hf-home", "HOME": "/tmp"},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["(3,", "256)", "True", "0", "30"]
    assert done.stderr == ""


async def test_wordllama_truncates_to_fewer_dimensions() -> None:
    full = np.asarray(await WordLlamaEmbedder().embed(["green tea"]))
    short = np.asarray(await WordLlamaEmbedder(dimensions=64).embed(["green tea"]))
    assert short.shape == (1, 64)
    assert np.allclose(short[0], full[0, :64])
    assert WordLlamaEmbedder(dimensions=64).name == "wordllama/l2_supercat@64"
    assert await WordLlamaEmbedder().embed([]) == []


@pytest.mark.parametrize("bad", [0, -1, math.nan, 1.5, True])
def test_bad_dimensions_are_refused(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="dimensions"):
        WordLlamaEmbedder(dimensions=bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="dimensions"):
        LiteLLMEmbedder("openai/x", dimensions=bad)  # type: ignore[arg-type]


def test_an_unknown_wordllama_model_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="not in the installed wordllama wheel"):
        WordLlamaEmbedder("no_such_model").load()


def test_litellm_needs_a_model_name() -> None:
    with pytest.raises(ConfigurationError, match="model"):
        LiteLLMEmbedder("", dimensions=8)


def _litellm(server: FakeOpenAIServer) -> LiteLLMEmbedder:
    return LiteLLMEmbedder(
        "openai/fake-embedder", dimensions=8, api_base=server.base_url, api_key="sk-test"
    )


async def test_litellm_embeds_through_the_server(openai_server: FakeOpenAIServer) -> None:
    vectors = await _litellm(openai_server).embed(["tea", "coffee"])
    assert [list(np.float32(v)) for v in vectors] == [
        list(np.float32(openai_server.embedding_of(text))) for text in ("tea", "coffee")
    ]
    assert openai_server.embedding_requests[0]["input"] == ["tea", "coffee"]


async def test_memories_search_with_litellm_embeddings(openai_server: FakeOpenAIServer) -> None:
    openai_server.embeddings.update(
        {
            "tea": [1, 0, 0, 0, 0, 0, 0, 0],
            "lisbon": [0, 1, 0, 0, 0, 0, 0, 0],
            "a hot drink": [0.9, 0.1, 0, 0, 0, 0, 0, 0],
        }
    )
    memories = Memories("memory://", embedder=_litellm(openai_server))
    await memories.put(("u",), "t", "tea")
    await memories.put(("u",), "l", "lisbon")
    found = await memories.search(("u",), "a hot drink", limit=2)
    assert [item.key for item in found] == ["t", "l"]


async def test_a_failing_provider_is_an_embedding_error_and_writes_nothing(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.embedding_status = 400
    memories = Memories("memory://", embedder=_litellm(openai_server))
    with pytest.raises(EmbeddingError, match="fake-embedder") as failed:
        await memories.put(("u",), "t", "tea")
    assert failed.value.__cause__ is not None
    openai_server.embedding_status = None
    assert await memories.namespaces() == []


async def test_vectors_of_the_wrong_size_are_an_embedding_error(
    openai_server: FakeOpenAIServer,
) -> None:
    openai_server.embedding_dimensions = 5
    memories = Memories("memory://", embedder=_litellm(openai_server))
    with pytest.raises(EmbeddingError, match="shape"):
        await memories.put(("u",), "t", "tea")
