"""`token_file_authorize`: bearer tokens from a file, each naming its principal; a bad file
is a `ConfigurationError` naming the line, never the token."""

from __future__ import annotations

import hmac
from pathlib import Path
from types import SimpleNamespace

import pytest

import network.serving.tokens as tokens
from network.errors import ConfigurationError
from network.serving.principals import Unauthorized
from network.serving.tokens import token_file_authorize

GOOD = "alice  alice-token-0123456789  # the first\n\nbob bob-token-0123456789ab\n"


def request(header: str | None) -> SimpleNamespace:
    return SimpleNamespace(headers={"authorization": header} if header else {})


def test_a_token_names_its_principal(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(GOOD)
    authorize = token_file_authorize(path)
    assert authorize(request("Bearer alice-token-0123456789"), None) == "alice"
    assert authorize(request("bearer bob-token-0123456789ab"), "t-1") == "bob"
    for header in (None, "Bearer", "Basic alice-token-0123456789", "Bearer nobody-0123456789"):
        with pytest.raises(Unauthorized):
            authorize(request(header), None)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("alice\n", "line 1: expected 'PRINCIPAL TOKEN'"),
        ("alice short\n", "line 1: a token needs 16 characters"),
        ("alice same-token-0123456789\nbob same-token-0123456789\n", "line 2: this token is"),
        ("# nothing\n", "holds no token"),
        # a client sends its token as bytes: one with é (or a control character) never
        # matched, and the server started with every request refused as "unknown token"
        ("alice token-é-0123456789\n", "line 1: a token is printable ASCII characters only"),
        ("alice token-\x7f-0123456789\n", "line 1: a token is printable ASCII characters only"),
    ],
)
def test_a_bad_token_file_names_the_line_not_the_token(
    tmp_path: Path, text: str, error: str
) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(text)
    with pytest.raises(ConfigurationError, match=error) as caught:
        token_file_authorize(path)
    assert "0123456789" not in str(caught.value)


def test_a_missing_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="token file"):
        token_file_authorize(tmp_path / "none.txt")


def test_a_file_not_in_utf8_names_the_line_not_the_token(tmp_path: Path) -> None:
    """docs/deploying.md: a bad file stops the server with one line naming it (it was a
    UnicodeDecodeError's traceback)."""
    path = tmp_path / "tokens.txt"
    path.write_bytes(b"alice alice-token-0123456789\nbob bob-token-\xff0123456789\n")
    with pytest.raises(ConfigurationError, match=r"tokens.txt, line 2: not UTF-8 text$") as caught:
        token_file_authorize(path)
    assert "0123456789" not in str(caught.value)


def test_a_hash_inside_a_token_is_part_of_it(tmp_path: Path) -> None:
    # `#` starts a comment at the start of a word only: inside a token it was taken for one,
    # and the token cut at it (a shorter secret granted, the one given refused)
    path = tmp_path / "tokens.txt"
    path.write_text("alice alice-token#0123456789  # her laptop\n#bob bob-token-0123456789ab\n")
    authorize = token_file_authorize(path)
    assert authorize(request("Bearer alice-token#0123456789"), None) == "alice"
    for header in ("Bearer alice-token", "Bearer bob-token-0123456789ab"):
        with pytest.raises(Unauthorized):
            authorize(request(header), None)


def test_a_byte_order_mark_is_not_part_of_the_first_principal(tmp_path: Path) -> None:
    # a file saved by an editor that writes one (Windows Notepad): the first principal was
    # "\ufeffalice", a different owner from "alice" for every thread and budget
    path = tmp_path / "tokens.txt"
    path.write_bytes("alice alice-token-0123456789\n".encode("utf-8-sig"))
    assert token_file_authorize(path)(request("Bearer alice-token-0123456789"), None) == "alice"


def test_tokens_are_compared_as_equal_length_digests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/deploying.md: compared in constant time. compare_digest on the raw tokens returned
    at once on a length mismatch (a short offered token told the file's tokens' lengths)."""
    lengths: list[tuple[int, int]] = []
    real = hmac.compare_digest

    def compare(a: bytes, b: bytes) -> bool:
        lengths.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", compare)
    path = tmp_path / "tokens.txt"
    path.write_text(GOOD)
    authorize = token_file_authorize(path)
    with pytest.raises(Unauthorized):
        authorize(request("Bearer x"), None)
    assert authorize(request("Bearer alice-token-0123456789"), None) == "alice"
    assert lengths and all(a == b == 32 for a, b in lengths)
