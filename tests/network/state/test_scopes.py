"""Key scopes by prefix: `user:`, `app:`, `temp:`, or the thread's; and a key's JSON pointer."""

from __future__ import annotations

import pytest

from network.state.scopes import is_persistent, json_pointer, key_of_path, keys_held, scope_of


@pytest.mark.parametrize(
    ("key", "scope"),
    [
        ("notes", "thread"),
        ("user:name", "user"),
        ("app:motto", "app"),
        ("temp:draft", "temp"),
        ("username", "thread"),  # a prefix is the whole word and its colon
        ("User:name", "thread"),  # prefixes are case-sensitive
        ("temp", "thread"),
    ],
)
def test_the_prefix_tells_the_scope(key: str, scope: str) -> None:
    assert scope_of(key) == scope


def test_only_temp_keys_never_leave_the_run() -> None:
    assert not is_persistent("temp:draft")
    assert all(is_persistent(key) for key in ("notes", "user:name", "app:motto"))


def test_a_json_pointer_escapes_tilde_before_slash() -> None:
    assert json_pointer("notes") == "/notes"
    assert json_pointer("a/b") == "/a~1b"
    assert json_pointer("a~b") == "/a~0b"
    assert json_pointer("~1") == "/~01"  # not "/~1", which would read back as "/"


def test_a_pointer_names_its_top_level_key() -> None:
    assert key_of_path("/a~1b~0c/0/x") == ("a/b~c", False)
    assert key_of_path("/user:name") == ("user:name", True)
    assert keys_held(
        [
            {"op": "add", "path": "/a", "value": 1},
            {"op": "remove", "path": "/a"},
            {"op": "remove", "path": "/b/0"},
        ]
    ) == {"a": False, "b": True}
