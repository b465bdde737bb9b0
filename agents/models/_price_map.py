"""Prices of OpenAI-compatible providers' models from litellm's offline price map, without
importing litellm.

litellm ships its price map as a JSON file inside its package
(`model_prices_and_context_window_backup.json`, about 3 MB). Importing litellm to read it
costs seconds; reading the file costs tens of milliseconds (benchmarks/price_map_load.py). So
the file is found with `importlib.util.find_spec("litellm")`, which locates the package
without importing it, and read once per process, on the first price asked for, in a worker
thread (a blocked event loop would stall every concurrent run). Only the prices of the
providers the native client serves are kept; the rest of the map is dropped at once.

Names, as litellm resolves them for these providers: `"openai/gpt-4o-mini"` and a bare
`"gpt-4o-mini"` are the map's `"gpt-4o-mini"` (an entry whose provider is `openai`), a
fine-tuned `"ft:gpt-4o-mini-2024-07-18:org::id"` its base's `"ft:gpt-4o-mini-2024-07-18"`;
another provider's model `"groq/<name>"` is the map's `"groq/<name>"` (an entry whose provider
is `groq`). A model the map does not have, or whose entry gives no per-token rates, has no
price (None; litellm would say 0 for the latter, which would read as free). Without litellm
installed nothing is priced. The map's content is outside data: an entry whose rates are not
numbers >= 0 is skipped, never trusted. DeepSeek's off-peak discounts are not applied: the
peak rate is an upper bound, the safe side for a cost cap. A long-prompt rate
(`..._above_272k_tokens`) is kept for the largest such size an entry lists (OpenAI's entries
list one).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio

from agents.models._providers import PROVIDERS, split_model
from agents.models.price import Price
from network.errors import ConfigurationError

MAP_FILE = "model_prices_and_context_window_backup.json"

_catalog: dict[str, Price] | None = None  # "<provider>/<name>" -> price, once loaded
_loading = threading.Lock()  # the first loads come from worker threads, possibly several


def map_path() -> Path | None:
    """Where litellm's price map is on this machine, found without importing litellm."""
    from importlib.util import find_spec  # noqa: PLC0415 (only when a price is first asked)

    try:
        spec = find_spec("litellm")
    except (ImportError, ValueError):
        return None
    locations = spec.submodule_search_locations if spec is not None else None
    for folder in locations or ():
        path = Path(folder) / MAP_FILE
        if path.is_file():
            return path
    return None


def price_of(model: str) -> Price | None:
    """The map's price of `model` (`"openai/gpt-4o-mini"`, `"gpt-4o-mini"`, `"groq/..."`);
    None when it has none. Reads the map on first use: call `price_of_async` on a loop."""
    prefix, name = split_model(model)
    catalog = _load()
    found = catalog.get(f"{prefix}/{name}")
    if found is None and name.startswith("ft:"):
        # A fine-tuned model ("ft:gpt-4o-mini-2024-07-18:org:suffix:id") is billed at its
        # base model's fine-tuned rates, keyed "ft:<base>" in the map (litellm does the same).
        found = catalog.get(f"{prefix}/ft:{name.split(':')[1]}")
    return found


async def price_of_async(model: str) -> Price | None:
    """`price_of`, reading the map in a worker thread the first time."""
    if _catalog is None:
        await anyio.to_thread.run_sync(_load)
    return price_of(model)


def _load() -> dict[str, Price]:
    global _catalog
    with _loading:
        if _catalog is None:
            path = map_path()
            _catalog = read_map(path) if path is not None else {}
        return _catalog


def read_map(path: Path) -> dict[str, Price]:
    """The prices in a litellm-format price map at `path`, keyed `"<provider>/<name>"`, for
    the providers the native client serves; an unreadable file or entry prices nothing."""
    try:
        entries = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):  # RecursionError: nested too deep
        return {}  # an unreadable map prices nothing, as no map does
    if not isinstance(entries, dict):
        return {}
    providers = set(PROVIDERS)
    catalog: dict[str, Price] = {}
    for key, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(key, str):
            continue
        provider = entry.get("litellm_provider")
        if not isinstance(provider, str) or provider not in providers:
            continue
        price = _price(entry)
        if price is None:
            continue
        # openai's entries are keyed by the bare name; the others carry their prefix already.
        name = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        catalog.setdefault(name, price)
    return catalog


def _price(entry: dict[str, Any]) -> Price | None:
    """An entry's per-token rates as a `Price`, or None when it has none or bad ones."""
    base_input = _rate(entry, "input_cost_per_token")
    base_output = _rate(entry, "output_cost_per_token")
    if base_input is None or base_output is None:
        return None
    base_cached = _rate(entry, "cache_read_input_token_cost")
    long_prompt, above = _long_prompt(entry, base_input, base_output, base_cached)
    try:
        return Price(
            input=base_input,
            output=base_output,
            cached_input=base_cached,
            long_prompt=long_prompt,
            long_prompt_above=above,
        )
    except ConfigurationError:
        return None


def _long_prompt(
    entry: dict[str, Any], base_input: float, base_output: float, base_cached: float | None
) -> tuple[Price | None, int | None]:
    """The rates past the entry's largest `input_cost_per_token_above_<N>[k]_tokens` size."""
    largest: tuple[int, str] | None = None
    for key in entry:
        if not (key.startswith("input_cost_per_token_above_") and key.endswith("_tokens")):
            continue
        size = key[len("input_cost_per_token_above_") : -len("_tokens")]
        tokens = _tokens(size)
        if (
            tokens is not None
            and _rate(entry, key) is not None
            and (largest is None or tokens > largest[0])
        ):
            largest = (tokens, size)
    if largest is None:
        return None, None
    tokens, size = largest
    tier_input = _rate(entry, f"input_cost_per_token_above_{size}_tokens")
    tier_output = _rate(entry, f"output_cost_per_token_above_{size}_tokens")
    tier_cached = _rate(entry, f"cache_read_input_token_cost_above_{size}_tokens")
    try:
        tier = Price(
            input=base_input if tier_input is None else tier_input,
            output=base_output if tier_output is None else tier_output,
            cached_input=base_cached if tier_cached is None else tier_cached,
        )
    except ConfigurationError:
        return None, None
    return tier, tokens


def _tokens(size: str) -> int | None:
    """`272000` from `"272k"`, `128000` from `"128000"`; None for anything else."""
    digits, thousands = (size[:-1], 1000) if size.endswith("k") else (size, 1)
    # ASCII only: str.isdigit() also accepts digits int() refuses ("²")
    return int(digits) * thousands if digits.isascii() and digits.isdigit() else None


def _rate(entry: dict[str, Any], key: str) -> float | None:
    """USD per million tokens from the entry's USD per token, when it is a number >= 0."""
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        return None
    per_million = float(value) * 1_000_000
    return per_million if per_million != float("inf") else None
