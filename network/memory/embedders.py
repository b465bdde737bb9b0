"""Embedders: text in, vectors out, for search by meaning.

- `WordLlamaEmbedder()` (the default): offline. The `wordllama` wheel carries its 256-dimension
  model (`l2_supercat`) and tokenizer, so nothing is downloaded; loading takes about a second
  once per process, and 1,000 short texts embed in about 0.1 s on one core.
  Workaround: `WordLlama.load()` looks for the tokenizer it ships in `wordllama/tokenizer/`,
  but the wheel puts it in `wordllama/tokenizers/`, so the plain call tries to download it.
  We pass the package's own folder as `cache_dir` (where `tokenizers/` and `weights/` are the
  subfolders it looks in) with `disable_download=True`: it loads from the wheel, and can never
  reach the network. And `import wordllama` configures the root logger
  (`logging.basicConfig(level=INFO)` in its `__init__`), which a library must never do: the
  import is made with the root logger's handlers and level put back as they were after it.
- `LiteLLMEmbedder(model, dimensions)`: any provider's embeddings through litellm
  (`"openai/text-embedding-3-small"`, a local OpenAI-compatible server with `api_base=`).
- Your own: anything with `name`, `dimensions` and `async embed(texts)` (`Embedder`).

A store records the embedder's `name` and `dimensions` with its vectors: opening it with
another embedder is a `ConfigurationError`, since vectors of two models do not compare.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import anyio

from network.errors import ConfigurationError, EmbeddingError
from network.numbers import check_number

__all__ = ["Embedder", "LiteLLMEmbedder", "WordLlamaEmbedder"]

_INLINE = 256  # texts embedded on the event loop's thread; more go to a worker thread


@runtime_checkable
class Embedder(Protocol):
    """What a memory store embeds with.

    Attributes:
        name: names the model (stored with the vectors: another name is refused later).
        dimensions: the length of each vector.
    """

    name: str
    dimensions: int

    async def embed(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text, in order."""
        ...


_loaded: dict[tuple[str, int], Any] = {}
_loading = threading.Lock()


def _wordllama(config: str, dim: int) -> Any:
    """The WordLlama model `config` at `dim`, loaded from the wheel once per process."""
    found = _loaded.get((config, dim))
    if found is not None:
        return found
    with _loading:
        found = _loaded.get((config, dim))
        if found is None:
            try:
                wordllama = _import_wordllama()
            except ImportError as missing:
                raise ConfigurationError(
                    "the offline embedder needs the `wordllama` package: "
                    "pip install 'agent-network[memory]'"
                ) from missing
            package = Path(wordllama.__file__).parent
            try:  # the package folder as cache_dir: see the module docstring
                found = wordllama.WordLlama.load(
                    config, cache_dir=package, dim=dim, disable_download=True
                )
            except (FileNotFoundError, ValueError, AttributeError) as error:
                raise ConfigurationError(
                    f"WordLlama model {config!r} at {dim} dimensions is not in the installed "
                    f"wordllama wheel: {error}"
                ) from error
            _loaded[(config, dim)] = found
    return found


def _import_wordllama() -> Any:
    """`import wordllama`, leaving the root logger as it was (see the module docstring)."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama  # noqa: PLC0415 (numpy, tokenizers: loaded when first used)
    finally:
        for added in [handler for handler in root.handlers if handler not in handlers]:
            root.removeHandler(added)
        root.setLevel(level)
    return wordllama


class WordLlamaEmbedder:
    """Offline embeddings from the model the `wordllama` wheel ships (see the module).

    `config` and `dimensions` pick the model (`"l2_supercat"`, 256: the one in the wheel;
    64 and 128 truncate it, as Matryoshka embeddings allow)."""

    def __init__(self, config: str = "l2_supercat", dimensions: int = 256) -> None:
        check_number("WordLlamaEmbedder: dimensions", dimensions, integer=True, minimum=1)
        self.config = config
        self.dimensions = dimensions
        self.name = f"wordllama/{config}" + ("" if dimensions == 256 else f"@{dimensions}")

    def load(self) -> Any:
        """The model, loaded now (else on the first `embed`)."""
        model = _wordllama(self.config, 256)
        return model

    def _embed_now(self, texts: list[str]) -> Any:
        vectors = self.load().embed(texts, norm=False)
        return vectors[:, : self.dimensions]

    async def embed(self, texts: Sequence[str]) -> Any:
        batch = list(texts)
        if not batch:
            return []
        if len(batch) <= _INLINE and (self.config, 256) in _loaded:
            return self._embed_now(batch)
        return await anyio.to_thread.run_sync(self._embed_now, batch)

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self.config!r}, dimensions={self.dimensions})"


class LiteLLMEmbedder:
    """Any provider's embeddings through litellm: `LiteLLMEmbedder("openai/text-embedding-3-
    small", dimensions=1536)`; extra keyword arguments (`api_base`, `api_key`, `dimensions`
    for models that shorten their vectors, ...) go to `litellm.aembedding`."""

    def __init__(self, model: str, dimensions: int, **params: Any) -> None:
        if not isinstance(model, str) or not model:
            raise ConfigurationError(f"LiteLLMEmbedder: model must be a model name, got {model!r}")
        check_number("LiteLLMEmbedder: dimensions", dimensions, integer=True, minimum=1)
        self.model = model
        self.dimensions = dimensions
        self.name = f"litellm/{model}"
        self.params = params

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        batch = list(texts)
        if not batch:
            return []
        import litellm  # noqa: PLC0415 (litellm is imported only when used)

        try:
            response = await litellm.aembedding(model=self.model, input=batch, **self.params)
        except Exception as error:
            raise EmbeddingError(
                f"embedding model {self.model!r} failed: {type(error).__name__}"
            ) from error
        data = sorted(response.data, key=lambda row: _field(row, "index", 0))
        return [list(_field(row, "embedding", [])) for row in data]

    def __repr__(self) -> str:
        return f"LiteLLMEmbedder({self.model!r}, dimensions={self.dimensions})"


def _field(row: Any, name: str, default: Any) -> Any:
    return row.get(name, default) if isinstance(row, dict) else getattr(row, name, default)
