"""The verdict cache of the range gates (SPEC §12): per-unit verdicts kept between runs.

A unit is what a gate judges on its own: for the message gates (``trailers``, ``style``) one
commit, judged in one way (strictly or by the cutover's lenient rules). Its verdict is what the
gate's judging filed for it, in order: ``(rule, message, line)`` per finding, before anything
that depends on more than the unit is applied (``rules:`` severities, ``trailers.exceptions``,
the merge hint), which the gate applies afterwards, cached or not.

Key. The sha256 of the tool's version, a digest of the source of the modules that judge (so
that code changed without a new version never reuses a verdict of the old code), the gate's
name, the digest of the config parts its judging reads (with what the command line adds, such
as ``--filled``, and the repository's ``i18n.*`` settings, by which ``git log`` may re-encode a
message), and the unit (a commit sha and how it is judged). A key names everything its verdict
depends on, so a cache folder may be carried from one machine or CI run to another.

Where. ``<git common dir>/tools/cache/<gate>/``: the git directory shared by every worktree
of the repository (a bare repository's own folder), never the judged tree. A folder on the way
that is a symbolic link turns the cache off for the run.

Format. A folder holds segments, ``seg-<time ns>-<pid>-<random>``: a header line
(:data:`HEADER`), then one entry per line, ``<key> <checksum> <payload>``, where the key and
the checksum are 64 hex digits, the checksum is the sha256 of ``<key> <payload>`` and the payload
is the verdict as ASCII JSON. A run reads every segment of its gate once (newer segments win),
and writes at most one: the entries it computed, through a temp file under
``<git common dir>/tools/tmp/`` renamed into place, so a reader sees a whole segment or none.

Verified reads. An entry is used only when its line is whole, its checksum matches its key and
payload, and its payload is a list of findings of rules the gate declares (in a cache opened
with a ``data`` reader, such as the links gate's in :mod:`tools.links_cache`, one that reader
accepts); anything else is a miss: the unit is judged again and its new entry (in a newer
segment) wins from then on.

Bound. Past :data:`MAX_SEGMENTS` segments or :data:`MAX_BYTES` bytes (``TOOLS_CACHE_MAX_BYTES``
overrides it) in a gate's folder, the run that notices compacts the folder into one segment of
at most half the bound: the entries it used first, then the others newest first; the oldest
are evicted. A cache that cannot be read or written only costs the run its work again: every
failure here is a miss.

Off. ``--no-cache`` (a global option), or the environment variable ``TOOLS_NO_CACHE`` set to
anything but ``""``, ``0`` or ``false``: nothing is read and nothing is written.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
import time
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tools.context import Context
    from tools.git import Git

HEADER = b"tools-verdicts/1\n"
# The bound of one gate's folder (bytes, segments). An entry of a commit without findings is
# 131 bytes, so the byte bound holds some 120,000 such verdicts.
# ``TOOLS_CACHE_MAX_BYTES`` (a whole number of bytes) replaces the byte bound.
MAX_BYTES = 16 * 1024 * 1024
MAX_SEGMENTS = 16
ENV_OFF = "TOOLS_NO_CACHE"
ENV_MAX_BYTES = "TOOLS_CACHE_MAX_BYTES"
_KEY = 64  # hex digits of a key, and of a checksum
_PAYLOAD = 2 * _KEY + 2  # where a line's payload starts
_TMP_SUFFIX = ".tools-tmp"  # what tools.fsio sweeps from the tmp folder once stale

# One finding as a gate's judging files it: (rule id, message, 1-based line or None).
Finding = tuple[str, str, int | None]
Emit = Callable[[str, str, int | None], None]


def off(no_cache: bool) -> bool:
    """Whether the cache is bypassed: ``--no-cache``, or ``TOOLS_NO_CACHE`` set."""
    if no_cache:
        return True
    value = os.environ.get(ENV_OFF, "").strip().lower()
    return value not in ("", "0", "false", "no")


def max_bytes() -> int:
    """The byte bound of one gate's folder: ``TOOLS_CACHE_MAX_BYTES``, else :data:`MAX_BYTES`."""
    value = os.environ.get(ENV_MAX_BYTES, "").strip()
    return int(value) if value.isdigit() else MAX_BYTES


_ENCODINGS: weakref.WeakKeyDictionary[Git, str] = weakref.WeakKeyDictionary()


def message_encoding(git: Git) -> str:
    """The ``i18n.*`` settings of ``git``'s repository: the encoding ``git log`` re-encodes a
    message into when its commit names another, so part of what a message gate reads. Asked
    once per repository object (both message gates of a preflight share the answer)."""
    found = _ENCODINGS.get(git)
    if found is None:
        items = git.config_items("i18n")  # the repository's one config listing
        found = _ENCODINGS[git] = "".join(f"{name} {value}\n" for name, value in items)
    return found


def read_entry(path: Path) -> bytes | None:
    """The bytes of a cache file: a regular file, not a link, a FIFO or a device planted in
    the folder (a read of which could block, or never end); None for anything else, or one
    that cannot be read."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return path.read_bytes()
    except OSError:
        return None


def common_dir(git_dir: Path) -> Path:
    """The git directory every worktree of the repository shares: a linked worktree's git
    directory names it in its ``commondir`` file (relative to itself, as git writes it)."""
    try:
        named = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    if not named:
        return git_dir
    found = Path(named)
    return (found if found.is_absolute() else git_dir / found).resolve()


_PACKAGE = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=16)
def source_digest(files: tuple[str, ...]) -> str:
    """sha256 of the package's own ``files`` (paths inside it: ``gates/trailers.py``,
    ``data/defaults.yaml``), read without importing them: what every cache key of the package
    names of the code and data that make its value. A file that cannot be read adds its name
    alone."""
    h = hashlib.sha256()
    for name in files:
        h.update(name.encode() + b"\0")
        with contextlib.suppress(OSError):
            h.update((_PACKAGE / name).read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def module_file(module: str) -> str:
    """The file of the package's module ``module`` (``tools.gates.trailers``), as a path
    inside the package (``gates/trailers.py``; a package's ``__init__.py``)."""
    inner = module.partition(".")[2].replace(".", "/")
    if inner and (_PACKAGE / f"{inner}.py").is_file():
        return f"{inner}.py"
    return f"{inner}/__init__.py" if inner else "__init__.py"


def code_digest(modules: tuple[str, ...]) -> str:
    """:func:`source_digest` of the package's ``modules`` (dotted names)."""
    return source_digest(tuple(module_file(name) for name in modules))


def digest(inputs: object) -> str:
    """sha256 of ``inputs`` (JSON data) as compact JSON, its mappings in their own order: the
    order of a mapping can be what a gate reads (``trailers.required`` orders its findings)."""
    text = json.dumps(inputs, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def open_for(
    ctx: Context,
    gate: str,
    inputs: object,
    modules: tuple[str, ...],
    rules: Iterable[str],
) -> VerdictCache | None:
    """The cache of ``gate`` in ``ctx``'s repository, its keys naming ``inputs`` (what of the
    config and the command line the gate's judging reads, as JSON data) and the source of
    ``modules``; None when the cache is off for this run."""
    if off(ctx.opts.no_cache):
        return None
    from tools import __version__

    tools_dir = common_dir(ctx.git.git_dir) / "tools"
    folder = tools_dir / "cache" / gate
    # Only ever the git directory's own folders: a link on the way could lead anywhere.
    for path in (tools_dir, tools_dir / "cache", folder):
        if path.is_symlink():
            return None
    config = digest({"gate": inputs, "git": message_encoding(ctx.git)})
    prefix = "\0".join(["tools-verdict/1", __version__, code_digest(modules), gate, config, ""])
    return VerdictCache(folder, tools_dir / "tmp", prefix.encode(), frozenset(rules))


class VerdictCache:
    """One gate's verdicts: read once when opened, new ones written by :meth:`save`."""

    def __init__(
        self,
        folder: Path,
        tmp: Path,
        prefix: bytes,
        rules: frozenset[str],
        data: Callable[[object], object | None] | None = None,
    ) -> None:
        self._folder = folder
        self._tmp = tmp
        self._hasher = hashlib.sha256(prefix)
        self._rules = rules
        # For a cache whose payloads are no findings (:meth:`get_data`): reads a payload's
        # JSON into what it stands for, None when it is not to be trusted.
        self._data = data
        self._lines: dict[bytes, bytes] = {}  # key -> its entry line, newest segment's
        self._segments: list[tuple[Path, int]] = []  # what was read: (path, size), oldest first
        self._new: dict[bytes, bytes] = {}  # entries computed by this run
        self._used: set[bytes] = set()
        self._load()

    # -- reading ----------------------------------------------------------------------------
    def _load(self) -> None:
        try:
            names = sorted(e.name for e in os.scandir(self._folder) if e.name.startswith("seg-"))
        except OSError:
            return
        lines = self._lines
        for name in names:
            path = self._folder / name
            data = read_entry(path)
            if data is None:
                continue  # removed by a concurrent compaction (its entries are elsewhere)
            self._segments.append((path, len(data)))
            if not data.startswith(HEADER):
                continue  # not a segment of this format: evicted at the next compaction
            # One comprehension per segment: a statement per line costs three times as much.
            lines.update({line[:_KEY]: line for line in data[len(HEADER) :].split(b"\n") if line})

    def key(self, unit: str) -> bytes:
        """The key of ``unit`` (hex, ASCII)."""
        h = self._hasher.copy()
        h.update(unit.encode("utf-8", "surrogateescape"))
        return h.hexdigest().encode("ascii")

    def get(self, key: bytes) -> list[Finding] | None:
        """The verdict stored under ``key``, verified; None: none, or one not to be trusted."""
        line = self._lines.get(key)
        if line is None:
            return None
        found = self._verified(key, line)
        if found is not None:
            self._used.add(key)
        return found

    def get_data(self, key: bytes) -> object | None:
        """What the payload stored under ``key`` stands for, as the ``data`` reader the cache
        was opened with reads it (its line whole and its checksum right first); None: none,
        or one not to be trusted."""
        line = self._lines.get(key)
        found = None if line is None else self._read_data(key, line)
        if found is not None:
            self._used.add(key)
        return found

    def _read_data(self, key: bytes, line: bytes) -> object | None:
        payload = self._payload(key, line)
        if payload is None or self._data is None:
            return None
        try:
            raw = json.loads(payload)
        except (ValueError, RecursionError):
            return None
        return self._data(raw)

    def _trusted(self, key: bytes, line: bytes) -> bool:
        if self._data is not None:
            return self._read_data(key, line) is not None
        return self._verified(key, line) is not None

    @staticmethod
    def _payload(key: bytes, line: bytes) -> bytes | None:
        """The payload of an entry line that is whole and whose checksum matches, else None."""
        if len(line) <= _PAYLOAD or line[_KEY] != 32 or line[_PAYLOAD - 1] != 32:  # b" "
            return None
        payload = line[_PAYLOAD:]
        check = hashlib.sha256(key + b" " + payload).hexdigest().encode("ascii")
        if line[_KEY + 1 : _PAYLOAD - 1] != check:
            return None
        return payload

    def _verified(self, key: bytes, line: bytes) -> list[Finding] | None:
        payload = self._payload(key, line)
        if payload is None:
            return None
        if payload == b"[]":
            return []
        try:
            raw = json.loads(payload)
        except (ValueError, RecursionError):
            return None
        return self._findings(raw)

    def _findings(self, raw: object) -> list[Finding] | None:
        if not isinstance(raw, list):
            return None
        out: list[Finding] = []
        for item in raw:
            if not (isinstance(item, list) and len(item) == 3):
                return None
            rule, message, line = item
            if not (isinstance(rule, str) and rule in self._rules and isinstance(message, str)):
                return None
            if line is not None and (type(line) is not int or line < 1):
                return None
            out.append((rule, message, line))
        return out

    # -- writing ----------------------------------------------------------------------------
    def put(self, key: bytes, found: list[Finding]) -> None:
        """Keep ``found`` as the verdict of ``key``, written by :meth:`save`."""
        self.put_data(key, found)

    def put_data(self, key: bytes, data: object) -> None:
        """Keep ``data`` (JSON data) as the payload of ``key``, written by :meth:`save`."""
        payload = json.dumps(data, separators=(",", ":"), ensure_ascii=True).encode("ascii")
        check = hashlib.sha256(key + b" " + payload).hexdigest().encode("ascii")
        line = key + b" " + check + b" " + payload
        self._new[key] = line
        self._lines[key] = line
        self._used.add(key)

    def save(self) -> None:
        """Write what this run computed (one new segment), compacting the folder when it is
        past its bound. Best effort: a failure only costs a later run its work again."""
        size = sum(s for _, s in self._segments)
        if self._new:
            size += len(HEADER) + sum(len(line) + 1 for line in self._new.values())
        if len(self._segments) + bool(self._new) > MAX_SEGMENTS or size > max_bytes():
            self._compact()
        elif self._new:
            self._write(list(self._new.values()))

    def _compact(self) -> None:
        budget = max_bytes() // 2 - len(HEADER)
        kept: list[bytes] = []

        def keep(line: bytes) -> bool:
            nonlocal budget
            if len(line) + 1 > budget:
                return False
            budget -= len(line) + 1
            kept.append(line)
            return True

        used = self._used
        for key in used:  # what this run used or computed first
            if not keep(self._lines[key]):
                break
        else:
            for key in reversed(self._lines):  # then the others, newest first
                if key in used:
                    continue
                line = self._lines[key]
                if self._trusted(key, line) and not keep(line):
                    break
        if self._write(kept):
            for path, _ in self._segments:
                with contextlib.suppress(OSError):
                    path.unlink()

    def _write(self, lines: list[bytes]) -> bool:
        """One new segment holding ``lines``, written whole or not at all."""
        import tempfile

        data = HEADER + b"".join(line + b"\n" for line in lines)
        name = f"seg-{time.time_ns():020d}-{os.getpid()}-{os.urandom(4).hex()}"
        try:
            self._folder.mkdir(parents=True, exist_ok=True)
            self._tmp.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=_TMP_SUFFIX, dir=self._tmp)
        except OSError:
            return False
        try:
            # No fsync: a segment cut short by a crash fails its checks and is recomputed.
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.chmod(tmp, 0o644)  # as tools.fsio gives new files (mkstemp's is 0o600)
            os.replace(tmp, self._folder / name)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            return False
        return True


def through(
    cache: VerdictCache | None,
    unit: str | None,
    judge: Callable[[Emit], None],
    emit: Emit,
) -> None:
    """Run ``judge(emit)`` for one unit, through ``cache``: a verified verdict of ``unit`` is
    filed through ``emit`` as it was computed; otherwise ``judge`` computes it and it is kept.
    ``unit`` None (a message file, not a commit), or no cache: ``judge`` files directly."""
    if cache is None or unit is None:
        judge(emit)
        return
    key = cache.key(unit)
    found = cache.get(key)
    if found is None:
        computed: list[Finding] = []

        def record(rule: str, message: str, line: int | None) -> None:
            computed.append((rule, message, line))

        judge(record)
        cache.put(key, computed)
        found = computed
    for rule, message, line in found:
        emit(rule, message, line)
