"""Writing the files a model generates, only inside one output folder.

A model names file paths, and a model's output is hostile: `../../etc/x`, `/abs/x`,
`a/../../x` or a path through a symlink planted inside the folder must never land outside it.
Two entry points share one checked writer:

- `write_files_tool(folder)`: a ready tool. Each call checks every path, then writes the files
  (atomically: temp file + rename) and merges them into a state key (`files` by default). A
  call with any refused path writes nothing at all and the model gets an error result that
  names each refused path and why; the run goes on. With `folder=None` the files are checked
  by name and kept in state only, for `files_to_disk` to write when the run is over.
- `files_to_disk(files_or_state, folder)`: the same checks and writes for a mapping, a
  `State`, or a `RunResult`; all or nothing, `FileWriteError` when any path is refused.

The rules: a path is relative, `/`-separated, non-empty, with no NUL, control character or
backslash; `.` and `..` may appear only where they stay inside the folder; no name in it is
`.git` (a repository's config and hooks name commands git runs); the writer never
goes through a symlink (a symlink anywhere on the path, or at the file itself, is refused,
and directories are opened with `O_NOFOLLOW` so one swapped in between check and write is
refused too); a name cannot be both a file and a folder (in one batch, against files already
in state, or against what is on disk); and the batch stays within the caller's limits on file
count and size. POSIX only (directory file descriptors).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, cast

from agents.tools.tool import Tool, tool
from agents.tools.tool_context import ToolContext
from network.errors import ConfigurationError, ToolError
from network.numbers import check_number
from network.state.handlers import merge_dicts

DEFAULT_MAX_FILES = 200
DEFAULT_MAX_BYTES = 1_000_000
DEFAULT_MAX_TOTAL_BYTES = 20_000_000
_MAX_NAME_BYTES = 255  # the longest file name most file systems take
_ALL = "(all files)"  # the key of a refusal that concerns the whole batch
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)


class FileWriteError(ToolError):
    """Some file paths were refused; nothing of the batch was written.

    `refused` maps each refused path (as given) to the reason.
    """

    def __init__(self, message: str, *, refused: dict[str, str], tool: str | None = None) -> None:
        super().__init__(message, tool=tool)
        self.refused = refused


class FileLimits:
    """How much one batch (or, for the tool, the run's whole set of files) may hold."""

    __slots__ = ("max_bytes", "max_files", "max_total_bytes")

    def __init__(
        self,
        max_files: int = DEFAULT_MAX_FILES,
        max_bytes: int = DEFAULT_MAX_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        *,
        owner: str = "",
        error: type[Exception] = ValueError,
    ) -> None:
        for label, limit in (
            ("max_files", max_files),
            ("max_bytes", max_bytes),
            ("max_total_bytes", max_total_bytes),
        ):
            check_number(owner + label, limit, integer=True, minimum=1, error=error)
        self.max_files = max_files
        self.max_bytes = max_bytes
        self.max_total_bytes = max_total_bytes


def clean_path(name: Any) -> str:
    """`name` as a normalized relative path, or `ValueError` saying why it is refused."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("the path is empty")
    if "\x00" in name:
        raise ValueError("the path holds a NUL byte")
    if any(ord(char) < 32 or ord(char) == 127 for char in name):
        raise ValueError("the path holds a control character")
    if "\\" in name:
        raise ValueError("the path holds a backslash (use / between folders)")
    if name.startswith("/") or (len(name) > 1 and name[0].isalpha() and name[1] == ":"):
        raise ValueError("the path is absolute (give it relative to the output folder)")
    if name.endswith("/"):
        raise ValueError("the path names a folder, not a file")
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise ValueError("the path leaves the output folder")
            parts.pop()
            continue
        try:
            encoded = part.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("the path is not valid text (a lone surrogate)") from None
        if len(encoded) > _MAX_NAME_BYTES:
            raise ValueError(f"a name in the path is longer than {_MAX_NAME_BYTES} bytes")
        if part.casefold() == ".git":  # casefold: file systems that ignore case (macOS)
            # a repository's own folder: its config and hooks name commands git runs, so a
            # model writing there could run code on the next `git status` in the folder
            raise ValueError("the path goes into .git, a repository's own folder")
        parts.append(part)
    if not parts:
        raise ValueError("the path names the output folder itself")
    return "/".join(parts)


def check_files(
    files: Mapping[Any, Any],
    limits: FileLimits,
    *,
    existing: Mapping[str, str] | None = None,
    folder: Path | None = None,
) -> tuple[dict[str, bytes], dict[str, str]]:
    """Check a batch: (the accepted files as clean path -> bytes, the refused path -> reason).

    `existing` are files already written in this run (their names count against the limits
    and the file-or-folder rule); `folder` adds the checks against what is on disk.
    """
    refused: dict[str, str] = {}
    accepted: dict[str, bytes] = {}
    given: dict[str, Any] = {}
    for name, content in files.items():
        try:
            path = clean_path(name)
        except ValueError as exc:
            refused[str(name)] = str(exc)
            continue
        if not isinstance(content, str):
            refused[str(name)] = f"the content is a {type(content).__name__}, not text"
            continue
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            refused[str(name)] = "the content is not valid text (a lone surrogate)"
            continue
        if len(data) > limits.max_bytes:
            refused[str(name)] = f"the file is {len(data)} bytes, over {limits.max_bytes}"
            continue
        if path in accepted:
            refused[str(name)] = f"the batch names {path!r} twice"
            continue
        accepted[path] = data
        given[path] = name
    _check_files_against_folders(accepted, given, existing or {}, refused)
    if folder is not None:
        for path in list(accepted):
            problem = _disk_problem(folder, path)
            if problem is not None:
                refused[str(given[path])] = problem
                del accepted[path]
    kept = {path: text for path, text in (existing or {}).items() if path not in accepted}
    count = len(kept) + len(accepted)
    if count > limits.max_files:
        refused[_ALL] = f"{count} files in all, over the limit of {limits.max_files}"
    total = sum(len(str(text).encode("utf-8", "replace")) for text in kept.values())
    total += sum(len(data) for data in accepted.values())
    if total > limits.max_total_bytes:
        refused[_ALL] = f"{total} bytes in all, over the limit of {limits.max_total_bytes}"
    return accepted, refused


def _check_files_against_folders(
    accepted: dict[str, bytes],
    given: dict[str, Any],
    existing: Mapping[str, str],
    refused: dict[str, str],
) -> None:
    """Refuse names that are a file in one place and a folder in another."""
    files = set(existing) | set(accepted)
    folders = {path.rsplit("/", i)[0] for path in files for i in range(1, path.count("/") + 1)}
    for path in list(accepted):
        if path in folders:
            refused[str(given[path])] = f"{path!r} is both a file and a folder"
            del accepted[path]
            continue
        prefixes = [path.rsplit("/", i)[0] for i in range(1, path.count("/") + 1)]
        clash = next((prefix for prefix in prefixes if prefix in files), None)
        if clash is not None:
            refused[str(given[path])] = f"{clash!r} is both a file and a folder"
            del accepted[path]


def _disk_problem(folder: Path, path: str) -> str | None:
    """Why writing `path` under `folder` is refused on disk, or None (nothing is changed)."""
    current = folder
    parts = path.split("/")
    for index, part in enumerate(parts):
        current = current / part
        try:
            info = os.lstat(current)
        except FileNotFoundError:
            return None  # the rest is created: nothing there to go through
        if stat.S_ISLNK(info.st_mode):
            where = "/".join(parts[: index + 1])
            return f"{where!r} is a symlink; the writer never goes through one"
        last = index == len(parts) - 1
        if not last and not stat.S_ISDIR(info.st_mode):
            return f"{'/'.join(parts[: index + 1])!r} is a file, so it cannot be a folder"
        if last and not stat.S_ISREG(info.st_mode):
            return f"{path!r} exists and is not a regular file"
    return None


def _write_one(root_fd: int, path: str, data: bytes) -> None:
    """Write one checked file atomically, opening each folder without following symlinks."""
    *folders, name = path.split("/")
    fds: list[int] = []
    fd = root_fd
    try:
        for part in folders:
            with contextlib.suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=fd)
            fd = os.open(part, _DIR_FLAGS, dir_fd=fd)  # a symlink here fails: ELOOP/ENOTDIR
            fds.append(fd)
        temp = f".{name[:200]}.{os.urandom(6).hex()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        out = os.open(temp, flags, 0o644, dir_fd=fd)
        try:
            with os.fdopen(out, "wb") as handle:
                handle.write(data)
            os.replace(temp, name, src_dir_fd=fd, dst_dir_fd=fd)  # replaces a link, never follows
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=fd)
            raise
    finally:
        for opened in reversed(fds):
            os.close(opened)


def write_checked(folder: str | os.PathLike[str], files: Mapping[str, bytes]) -> list[str]:
    """Write already-checked files (clean path -> bytes) under `folder`; the paths written."""
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    root_fd = os.open(root, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))
    try:
        for path, data in files.items():
            _write_one(root_fd, path, data)
    finally:
        os.close(root_fd)
    return sorted(files)


def _refusal(tool_name: str | None, refused: dict[str, str], count: int) -> FileWriteError:
    reasons = "; ".join(f"{path!r}: {reason}" for path, reason in refused.items())
    who = f"{tool_name} refused" if tool_name else "refused"
    return FileWriteError(
        f"{who} {len(refused)} of {count} file paths, so nothing was written: {reasons}. "
        "Give every path relative to the project folder, without '..' leaving it.",
        refused=refused,
        tool=tool_name,
    )


def files_to_disk(
    files: Any,
    folder: str | os.PathLike[str],
    *,
    key: str = "files",
    max_files: int = DEFAULT_MAX_FILES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> list[str]:
    """Write `files` under `folder`, all or nothing; returns the (clean) paths written.

    `files` is a mapping of path to text, or a `State` / `RunResult` whose `key` holds one.
    Any refused path raises `FileWriteError` naming each one, and nothing is written.
    """
    if not isinstance(files, Mapping):
        kv = getattr(getattr(files, "state", files), "kv", None)
        if kv is None:
            raise TypeError(f"files_to_disk needs a mapping, a State or a RunResult: {files!r}")
        files = kv.get(key) or {}
    limits = FileLimits(max_files, max_bytes, max_total_bytes)
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    accepted, refused = check_files(files, limits, folder=root.resolve())
    if refused:
        raise _refusal(None, refused, len(files))
    try:
        return write_checked(root, accepted)
    except OSError as exc:
        raise FileWriteError(
            f"writing under {str(folder)!r} failed: {exc}", refused={_ALL: str(exc)}
        ) from exc


def write_files_tool(
    folder: str | os.PathLike[str] | None,
    *,
    name: str = "write_files",
    state_key: str | None = "files",
    max_files: int = DEFAULT_MAX_FILES,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
) -> Tool:
    """A `write_files(files: {path: content})` tool that writes only inside `folder`.

    Every call is checked whole first: any refused path (see the module docstring) makes the
    call an error result naming each refused path and why, and writes nothing. Accepted
    files are written atomically and merged into `state_key` (`merge_dicts`; None keeps
    state out of it). The limits count the run's files in `state_key` plus the new ones
    (per call when `state_key` is None). `folder=None` writes nothing to disk: files are
    checked by name and kept in state, for `files_to_disk` after the run.
    """
    # checked where the tool is defined, not at each of its calls
    owner = f"write_files_tool {name!r}: "
    limits = FileLimits(
        max_files, max_bytes, max_total_bytes, owner=owner, error=ConfigurationError
    )
    if folder is not None and not isinstance(folder, str | os.PathLike):
        raise ConfigurationError(
            f"{owner}folder must be a path or None, got {type(folder).__name__}"
        )
    if state_key is not None and (not isinstance(state_key, str) or not state_key):
        raise ConfigurationError(
            f"{owner}state_key must be a state key (a non-empty string) or None, got {state_key!r}"
        )
    root = None if folder is None else Path(folder)

    def write_files(
        files: Annotated[dict[str, str], "file path (relative, / between folders) -> content"],
        ctx: ToolContext,
    ) -> dict[str, Any]:
        """Write (or overwrite) files in the project; paths are relative to its folder."""
        existing: dict[str, str] = {}
        if state_key is not None:
            existing = dict(ctx.kv.view(state_key) or {})
        if root is not None:
            root.mkdir(parents=True, exist_ok=True)
        resolved = None if root is None else root.resolve()
        accepted, refused = check_files(files, limits, existing=existing, folder=resolved)
        if refused:
            raise _refusal(name, refused, len(files))
        texts = {path: data.decode("utf-8") for path, data in accepted.items()}
        if state_key is not None:  # first: a failed disk write then rolls this back too
            ctx.kv.set(state_key, texts, merge_dicts)
        if root is not None:
            write_checked(root, accepted)
        return {"written": sorted(texts)}

    return cast(Tool, tool(write_files, name=name))
