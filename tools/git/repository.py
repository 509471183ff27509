"""The questions gates ask a repository (:class:`Git`): refs, merge bases, a range in one
``git log`` pass, blobs through one persistent ``cat-file --batch``, the index, patches and
attributes, each through the runner (tools/git/runner.py) and read by the parsers
(tools/git/parsers.py)."""

from __future__ import annotations

import functools
import itertools
import os
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tools.background import Background
from tools.errors import UsageError
from tools.git.parsers import (
    MODE_FIELD,
    Change,
    Commit,
    FilePatch,
    IndexModes,
    IndexView,
    MergeTree,
    PathPatch,
    RawChange,
    TreeEntry,
    parse_added_lines,
    parse_log,
    parse_ls,
    parse_name_status,
    parse_patches,
    parse_path_patches,
)
from tools.git.runner import (
    Answer,
    CatFile,
    GitError,
    MergeTreeUnsupported,
    argv_chunks,
    batch_pipes,
    git_popen,
    read_answer,
    run_git,
)
from tools.git.text import decode, encode

if TYPE_CHECKING:
    from tempfile import TemporaryDirectory


# Options that make ``git log`` output independent of the user's git config.
_LOG_FIXED = ["--no-color", "--no-ext-diff", "--no-show-signature", "--no-notes"]


def _grep_threads() -> int:
    """Worker threads for ``git grep``: one less than the cores this process may use (git's
    default is all of them). The caller lists and matches the tree on its own thread
    meanwhile; on two cores git's second thread only contends for the object store
    (``--cached`` took 27 ms with one thread against 54 ms with two on 20,000 files)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity call on this platform
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


# Up to this many objects, Git.blobs asks the persistent cat-file (no process of their own).
_FEW_OBJECTS = 16


class Git:
    """A repository, opened once per invocation."""

    def __init__(
        self,
        path: Path | str | None = None,
        *,
        bare_ok: bool = False,
        staged_probe: str | None = None,
    ):
        """``staged_probe``: a path whose index entry the discovery asks for too (a hook's
        question whether the commit being made holds the protocol: one git process, not two);
        :meth:`staged_id` answers it."""
        start = Path(path) if path is not None else Path.cwd()
        if not start.exists():
            raise UsageError(f"not a git repository: {start} does not exist")
        found = _discover(start, top_only=path is not None, probe=staged_probe)
        self.root, self._git_dir, self.bare, self.hooks_dir, self._probed = found
        if self.bare and not bare_ok:
            raise UsageError(
                f"a bare repository has no working tree to judge: {start} (only the message "
                "gates, `tools trailers check` and `tools style check`, judge a bare repository)"
            )
        self._resolved: dict[str, str | None] = {}
        self._resolving = threading.Lock()
        self._empty_tree: str | None = None
        self._index_view: IndexView | None = None
        self._pending_index: Background[IndexView] | None = None
        self._batch = CatFile(self.root, check=False)
        self._batch_check = CatFile(self.root, check=True)
        # The commit whose `.gitattributes` git reads when it diffs or merges history (None:
        # the working tree's, as git does by itself); see use_attributes_from.
        self._attributes_from: str | None = None
        self._attribute_dir: TemporaryDirectory[str] | None = None  # made on first use
        self._config: dict[str, str] | None = None  # git config --list, read on first use
        self._pending_config: Background[dict[str, str]] | None = None

    # -- where git keeps its state ----------------------------------------------------------
    @property
    def git_dir(self) -> Path:
        """This working tree's git directory, absolute (in a linked worktree:
        ``.git/worktrees/<name>``, where its HEAD, index and MERGE_HEAD live)."""
        return self._git_dir

    def tools_dir(self) -> Path:
        """Where tools keeps caches and recovery records: ``<git dir>/tools``, never the
        working tree."""
        return self.git_dir / "tools"

    def in_merge(self) -> bool:
        """Whether a merge is in progress (``MERGE_HEAD`` exists in this worktree's git dir)."""
        return (self.git_dir / "MERGE_HEAD").is_file()

    def config_items(self, section: str) -> list[tuple[str, str]]:
        """(name, value) of every setting of ``section`` (lower case, as git lists names), in
        git's order, from the same one listing as :meth:`config_value`."""
        self.config_value(section)  # reads the listing once
        assert self._config is not None
        prefix = section.lower() + "."
        return [(k, v) for k, v in self._config.items() if k.startswith(prefix)]

    def config_value(self, key: str) -> str | None:
        """``git config --get KEY`` (None when unset), for the few keys the package reads:
        the whole configuration is listed once per repository and kept."""
        if self._config is None:
            pending = self._pending_config
            self._config = pending.result() if pending is not None else self._list_config()
        section, _, rest = key.partition(".")
        # Section and variable names are case-insensitive; a subsection keeps its case.
        base, dot, name = rest.rpartition(".")
        canonical = f"{section.lower()}.{base}{dot}{name.lower()}" if rest else key.lower()
        return self._config.get(canonical)

    def prefetch_objects(self) -> None:
        """Start the persistent ``cat-file --batch`` now, for a run that will read objects
        (a range run's ``protocol`` pseudo-gate reads the merge base's config)."""
        self._batch.start()

    def prefetch_config(self) -> None:
        """Start listing the configuration on a thread, for a run that will ask for a
        setting: git then works while the run loads its config and resolves its refs."""
        if self._config is None and self._pending_config is None:
            self._pending_config = Background(self._list_config)

    def _list_config(self) -> dict[str, str]:
        status, out = self.run("config", "--list", "-z", ok=(0, 1))
        found: dict[str, str] = {}
        for record in out.split(b"\0") if status == 0 else []:
            name, newline, value = decode(record).partition("\n")
            if name:  # a name without a value (``[core] x``) reads as "" here, as --get
                found[name] = value if newline else ""
        return found

    # -- running git ------------------------------------------------------------------------
    def run(
        self,
        *args: str,
        ok: Sequence[int] = (0,),
        input: bytes | None = None,
        attributes: bool = False,
    ) -> tuple[int, bytes]:
        """Run ``git args…`` in the repository (``input`` on its stdin); bytes out. A status
        outside ``ok`` raises. ``attributes``: git reads ``.gitattributes`` from the commit
        :meth:`use_attributes_from` names, if any (a diff or merge of history)."""
        cwd, env = self._attribute_place() if attributes else (self.root, None)
        status, out, _ = run_git(cwd, *args, input=input, ok=ok, repository=True, env=env)
        return status, out

    # -- whose attributes ---------------------------------------------------------------------
    def use_attributes_from(self, rev: str) -> None:
        """Have git read ``.gitattributes`` from ``rev``'s tree, not the working tree's, when
        it diffs or merges history for a gate (``--config-from base``: a pull request's
        checkout must not decide, through ``-diff`` or ``merge=…``, what git shows the gates
        or how git's own merge of two parents comes out)."""
        self._attributes_from = rev

    def _attribute_place(self) -> tuple[Path, dict[str, str] | None]:
        """Where git runs, and with which variables, to read the attributes of
        :meth:`use_attributes_from`'s commit: a folder holding only that tree's
        ``.gitattributes`` files, as the work tree, and an empty index: git reads attribute
        files from the work tree it runs in, then from the index, so nothing of the checkout
        is consulted."""
        if self._attributes_from is None:
            return self.root, None
        if self._attribute_dir is None:
            self._attribute_dir = self._materialise_attributes(self._attributes_from)
        holder = Path(self._attribute_dir.name)
        folder = holder / "tree"
        return folder, {
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(folder),
            # No index (an empty one): git falls back on the index for an attribute file
            # the work tree lacks, and the user's index holds the checkout's.
            "GIT_INDEX_FILE": str(holder / "no-index"),
        }

    def _materialise_attributes(self, rev: str) -> TemporaryDirectory[str]:
        import tempfile  # here, not at the top: most runs never need it

        from tools import file_reads

        cap = file_reads.current().max_file_bytes
        holder = tempfile.TemporaryDirectory(prefix="tools-attributes-")
        top = Path(holder.name) / "tree"
        top.mkdir()
        for entry in self.tree(rev):
            parts = entry.path.split("/")
            # As git reads them: regular files only (a linked .gitattributes is ignored).
            if parts[-1] != ".gitattributes" or entry.mode not in ("100644", "100755"):
                continue
            if any(part in ("", ".", "..", ".git") for part in parts):
                continue  # not a path git would check out
            header = self._batch_check.ask(entry.sha)
            if header is not None and header[2] > cap:
                raise UsageError(
                    f"is larger than limits.max_file_bytes ({cap:,} bytes): not read",
                    where=f"{rev[:12]}:{entry.path}",
                )
            target = top.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.object(entry.sha))
        return holder

    def out(self, *args: str, input: bytes | None = None, attributes: bool = False) -> bytes:
        return self.run(*args, input=input, attributes=attributes)[1]

    # -- refs ---------------------------------------------------------------------------------
    def resolve(self, ref: str) -> str | None:
        """The commit sha ``ref`` names, or None."""
        # Under a lock: the reads started ahead ask for HEAD from two threads at once.
        with self._resolving:
            if ref not in self._resolved:
                if ref.startswith("-"):
                    self._resolved[ref] = None
                else:
                    status, out = self.run(
                        "rev-parse",
                        "--verify",
                        "--quiet",
                        "--end-of-options",
                        f"{ref}^{{commit}}",
                        ok=(0, 1, 128),
                    )
                    self._resolved[ref] = out.decode().strip() if status == 0 else None
            return self._resolved[ref]

    def resolve_ahead(self, refs: Sequence[str]) -> None:
        """Resolve ``refs`` in one git process where one can, so that :meth:`resolve` answers
        them from memory (a range run asks for its base and its head: one start of git, not
        two). Only an answer of one commit id per ref, and a zero exit, is kept; anything else
        (a ref that does not resolve, a range like ``a..b``) is left to :meth:`resolve`, which
        asks for that ref alone as before."""
        todo = [r for r in dict.fromkeys(refs) if r and not r.startswith("-")]
        with self._resolving:
            todo = [r for r in todo if r not in self._resolved]
        if len(todo) < 2:
            return
        status, out = self.run(
            "rev-parse",  # no ref here starts with "-": read as a revision, never an option
            *(f"{r}^{{commit}}" for r in todo),
            "--",
            ok=(0, 1, 128),
        )
        # One line per ref, then the ``--`` that ends them, echoed.
        found = out.decode("ascii", "replace").split("\n")[:-2] if status == 0 else []
        if len(found) != len(todo) or not all(_commit_id(sha) for sha in found):
            return
        with self._resolving:
            for ref, sha in zip(todo, found, strict=True):
                self._resolved.setdefault(ref, sha)

    def head(self) -> str | None:
        return self.resolve("HEAD")

    def default_branch(self) -> str | None:
        """The branch a range gate's base should name: ``origin/HEAD``'s target, else the
        first of origin/main, origin/master, main, master that resolves, else the current
        branch (which resolves once it has a commit); None on a detached, unborn HEAD."""
        status, out = self.run("symbolic-ref", "-q", "refs/remotes/origin/HEAD", ok=(0, 1, 128))
        target = out.decode().strip()
        if status == 0 and target.startswith("refs/remotes/") and self.resolve(target):
            return target[len("refs/remotes/") :]
        for ref in ("origin/main", "origin/master", "main", "master"):
            if self.resolve(f"refs/{'remotes' if '/' in ref else 'heads'}/{ref}"):
                return ref
        status, out = self.run("symbolic-ref", "-q", "--short", "HEAD", ok=(0, 1, 128))
        return out.decode().strip() or None if status == 0 else None

    def merge_base(self, a: str, b: str) -> str | None:
        status, out = self.run("merge-base", a, b, ok=(0, 1, 128))
        return out.decode().strip() if status == 0 and out.strip() else None

    def merge_bases(self, a: str, b: str) -> list[str]:
        """Every merge base of ``a`` and ``b``: several after a criss-cross merge, none for
        unrelated histories."""
        return [found.decode("ascii") for found in self._merge_bases(a, b)]

    def ancestry(self, head: str, limit: int) -> list[tuple[str, tuple[str, ...]]]:
        """``head`` and its ancestors in the order git's walk lists them, at most ``limit``,
        each with its parents. With no negative revision git streams the walk, so a long
        history costs only the commits listed."""
        out = self.out("rev-list", "--parents", f"--max-count={limit}", head, "--")
        rows = []
        for line in out.decode("ascii").splitlines():
            sha, *parents = line.split()
            rows.append((sha, tuple(parents)))
        return rows

    def is_shallow(self) -> bool:
        return self.out("rev-parse", "--is-shallow-repository").strip() == b"true"

    def is_ancestor(self, a: str, b: str) -> bool:
        status, _ = self.run("merge-base", "--is-ancestor", a, b, ok=(0, 1, 128))
        return status == 0

    def empty_tree(self) -> str:
        if self._empty_tree is None:
            self._empty_tree = self.out("hash-object", "-t", "tree", os.devnull).decode().strip()
        return self._empty_tree

    def committer_time(self, rev: str) -> int:
        return int(self.out("show", "-s", "--format=%ct", rev, "--").strip() or 0)

    # -- history ------------------------------------------------------------------------------
    def log(
        self, revs: Sequence[str], *, paths: bool = True, max_count: int | None = None
    ) -> list[Commit]:
        """Read commits in one ``git log`` pass (newest first, as git lists them)."""
        args = ["log", *_LOG_FIXED, "-z", "--format=%x01%H%x00%P%x00%ct%x00%B%x00"]
        if paths:
            args += ["--name-status", "-M"]
        if max_count is not None:
            args.append(f"--max-count={max_count}")
        args += [*revs, "--"]
        return parse_log(self.out(*args))

    def log_from_merge_base(
        self, base: str, head: str, *, paths: bool = True
    ) -> tuple[str | None, list[Commit]]:
        """``merge-base(base, head)`` and the commits of ``merge_base..head`` (newest first),
        or (None, []) when the two share no history.

        Both walk the same history, so they run at once: ``git merge-base --all`` on a thread
        while ``git log base..head`` reads the commits. When the merge base is the only one,
        every commit both sides reach is reachable from it, so ``base..head`` is exactly
        ``merge_base..head``; with several (a criss-cross merge) the range is read again from
        the first, the one ``git merge-base`` prints."""
        bases = Background(functools.partial(self._merge_bases, base, head))
        commits = self.log([f"{base}..{head}"], paths=paths)
        found = bases.result()
        if not found:
            return None, []
        merge_base = found[0].decode("ascii")
        if len(found) > 1:
            commits = self.log([f"{merge_base}..{head}"], paths=paths)
        return merge_base, commits

    def _merge_bases(self, a: str, b: str) -> list[bytes]:
        status, out = self.run("merge-base", "--all", a, b, ok=(0, 1, 128))
        return out.split() if status == 0 else []

    def diff_tree(self, old: str, new: str) -> list[Change]:
        return parse_name_status(
            self.out(
                "diff-tree", "-r", "-z", "--name-status", "-M", "--no-ext-diff", old, new, "--"
            )
        )

    def added_lines(
        self, commits: Sequence[str], paths: Sequence[str]
    ) -> dict[str, dict[str, list[bytes]]]:
        """The lines each of ``commits`` adds to ``paths`` (commit -> path -> lines, without
        the ``+``), each non-merge commit against its parent and a root commit against the
        empty tree, read in one ``diff-tree --stdin`` pass (one more per 64 KiB of paths).

        Only ``paths`` are diffed, so a commit's unrelated changes cost nothing; a caller
        names both sides of a rename, so that git still pairs them."""
        found: dict[str, dict[str, list[bytes]]] = {}
        for raw in self._commit_diffs(commits, paths, "--root"):
            for sha, per_path in parse_added_lines(raw, commits=True).items():
                into = found.setdefault(sha or "", {})
                for path, lines in per_path.items():
                    into.setdefault(path, []).extend(lines)
        return found

    def commit_patches(self, commits: Sequence[str], paths: Sequence[str]) -> list[PathPatch]:
        """The ``-U0`` patch of ``paths`` in each of ``commits`` (non-merge) against its
        parent, renames paired among ``paths``, with the blob ids of both sides, in one
        ``diff-tree --stdin`` pass (one more per 64 KiB of paths). Hunks are never joined
        by context (``--inter-hunk-context=0``, whatever the user's config says)."""
        found: list[PathPatch] = []
        extra = ("--inter-hunk-context=0", "--full-index")
        for raw in self._commit_diffs(commits, paths, *extra):
            found.extend(parse_path_patches(raw))
        return found

    def _commit_diffs(
        self, commits: Sequence[str], paths: Sequence[str], *extra: str
    ) -> Iterator[bytes]:
        """The ``-U0`` patches of ``paths`` in ``commits``, renames paired: one ``diff-tree
        --stdin`` output per 64 KiB of paths (none when either is empty)."""
        if not commits or not paths:
            return
        stdin = "".join(f"{sha}\n" for sha in commits).encode("ascii")
        for chunk in argv_chunks(paths):
            yield self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "--stdin",
                "-r",
                "-M",
                "-p",
                "-U0",
                *extra,
                *_PATCH_FIXED,
                "--",
                *chunk,
                input=stdin,
                attributes=True,
            )

    def staged_added_lines(self, paths: Sequence[str]) -> dict[str, list[bytes]]:
        """The lines the index adds to ``paths`` relative to HEAD (or the empty tree)."""
        found: dict[str, list[bytes]] = {}
        base = self.head() or self.empty_tree()
        for chunk in argv_chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-index",
                "--cached",
                "-M",
                "-p",
                "-U0",
                *_PATCH_FIXED,
                base,
                "--",
                *chunk,
            )
            for path, lines in parse_added_lines(raw, commits=False).get(None, {}).items():
                found.setdefault(path, []).extend(lines)
        return found

    # -- contents -----------------------------------------------------------------------------
    def blob(self, rev: str, path: str) -> bytes | None:
        """The bytes of ``path`` at ``rev`` (``rev`` may be ``""`` for the index), or None."""
        spec = self._spec(rev, path)
        found = self._batch.ask(spec) if spec is not None else None
        return found[3] if found is not None and found[1] == b"blob" else None

    def _spec(self, rev: str, path: str) -> str | None:
        """How the batches name ``path`` at ``rev`` (the index for ``""``): ``rev:path``, or,
        for a name holding a newline (the batches take one request a line), its object id
        from the tree or index listing; None when no such entry exists."""
        if "\n" not in path:
            return f"{rev}:{path}" if rev else f":0:{path}"
        if rev:
            raw = self.out("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path)
            entries = list(parse_ls(raw, staged=False))
        else:
            raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", path)
            entries = list(parse_ls(raw, staged=True))
        return next((e.sha for e in entries if e.path == path), None)

    def entry(self, rev: str, path: str) -> TreeEntry | None:
        """``path``'s entry (mode, object id) at ``rev`` (the index for ``""``), or None."""
        if rev:
            raw = self.out("--literal-pathspecs", "ls-tree", "-z", "--full-tree", rev, "--", path)
        else:
            raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", path)
        return next((e for e in parse_ls(raw, staged=not rev) if e.path == path), None)

    def staged_id(self, path: str) -> str | None:
        """The object id of ``path``'s entry in the index (stage 0), or None when there is none:
        what the discovery read when ``path`` was its ``staged_probe``, else asked of the
        batch (a blob's only)."""
        if path in self._probed:
            return self._probed[path]
        found = self.blob_header("", path)
        return found[0] if found is not None else None

    def blob_header(self, rev: str, path: str) -> tuple[str, int] | None:
        """(object id, size) of ``path`` at ``rev`` without reading its content, or None."""
        spec = self._spec(rev, path)
        found = self._batch_check.ask(spec) if spec is not None else None
        if found is None or found[1] != b"blob":
            return None
        return found[0].decode("ascii"), found[2]

    def blobs(self, shas: Iterable[str]) -> Iterator[tuple[str, bytes | None]]:
        """The contents of many objects, in request order, from one ``git cat-file --batch
        --buffer`` process (never a process per object): (sha, bytes), or (sha, None) for an
        object that is missing."""
        for sha, found in self._objects(list(shas)):
            yield sha, found[3] if found is not None else None

    def blobs_at(self, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], bytes | None]:
        """What :meth:`blob` gives for each (revision, path), read in one batch."""
        specs = {pair: self._spec(*pair) for pair in dict.fromkeys(wanted)}
        asked = [spec for spec in specs.values() if spec is not None]
        answers = dict(self._objects(asked))
        out: dict[tuple[str, str], bytes | None] = {}
        for pair, spec in specs.items():
            found = answers.get(spec) if spec is not None else None
            out[pair] = found[3] if found is not None and found[1] == b"blob" else None
        return out

    def _objects(self, wanted: list[str]) -> Iterator[tuple[str, Answer | None]]:
        """(request, its answer) for each object named, in request order. A thread feeds the
        requests while this one reads, so neither side can block the other on a full pipe. A
        few objects are asked of the invocation's persistent ``cat-file --batch`` instead: a
        round trip each costs less than a process."""
        if not wanted:
            return
        if len(wanted) <= _FEW_OBJECTS:
            for sha in wanted:
                yield sha, self._batch.ask(sha)
            return
        proc = git_popen(self.root, "cat-file", "--batch", "--buffer", repository=True)
        stdin, stdout = batch_pipes(proc)

        def feed() -> None:
            try:
                stdin.write(encode("".join(f"{sha}\n" for sha in wanted)))
            except (BrokenPipeError, OSError):
                pass  # the reader reports what is missing
            finally:
                try:
                    stdin.close()
                except OSError:
                    pass

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for sha in wanted:
                yield sha, read_answer(stdout, sha, data=True)
        finally:
            stdout.close()
            writer.join()
            proc.wait()

    def tracked_modes(self, *, unmerged: bool = True) -> dict[str, str]:
        """Every path the index tracks, once, with its mode as git prints it: unmerged paths
        with the mode of their first stage, or left out with ``unmerged=False``."""
        view = self._index()
        if not unmerged or not view.unmerged:
            return {path: record[MODE_FIELD] for path, record in view.stage0.items()}
        modes: dict[str, str] = {}
        for mode, _, _, path in view.entries():
            modes.setdefault(path, mode.decode())
        return modes

    def index_special(self) -> dict[str, bytes]:
        """The index's stage-0 entries that are no regular file, path -> mode as git prints
        it: symlinks (``120000``) and submodules (``160000``)."""
        return dict(self._index().special)

    def index_regular_files(self) -> list[str]:
        """The paths of the index's stage-0 regular files (modes ``100644`` and ``100755``),
        in index order."""
        view = self._index()
        if not view.special:
            return list(view.stage0)
        return list(itertools.filterfalse(view.special.__contains__, view.stage0))

    def index_modes(self, paths: Iterable[str]) -> dict[str, str]:
        """The modes of those of ``paths`` the index holds at stage 0 (as git prints them)."""
        view = self._index()
        return {p: view.mode(p) for p in paths if p in view.stage0}

    def grep_files(
        self,
        literals: Sequence[str],
        *,
        rev: str | None = None,
        cached: bool = False,
        exclude: Sequence[str] = (),
        pathspecs: Sequence[str] = (),
    ) -> set[str]:
        """Paths of the files that contain any of ``literals`` (fixed strings, none holding a
        newline): in ``rev``'s tree, in the index (``cached``) or in the working tree's
        tracked files. One multi-threaded ``git grep -F``; every file is read as text
        (``-a``), so attributes cannot hide one. ``pathspecs`` (git pathspecs, magic
        allowed) limit the search; ``exclude``: literal paths left out."""
        if not literals:
            return set()
        args = ["grep", f"--threads={_grep_threads()}", "-a", "-l", "-z", "-F", "--no-color"]
        args.append("--full-name")
        for literal in literals:
            args += ["-e", literal]
        if rev:
            args.append(rev)
        elif cached:
            args.append("--cached")
        args.append("--")
        args += list(pathspecs)
        args += [f":(exclude,literal){path}" for path in exclude]
        prefix = f"{rev}:".encode() if rev else b""
        _, out = self.run(*args, ok=(0, 1))
        found: set[str] = set()
        for rec in out.split(b"\0"):
            if rec:
                found.add(decode(rec[len(prefix) :] if rec.startswith(prefix) else rec))
        return found

    def staged_blob(self, path: str) -> bytes | None:
        return self.blob("", path)

    def object(self, sha: str) -> bytes:
        """The bytes of the object ``sha`` (which must exist)."""
        found = self._batch.ask(sha)
        if found is None:
            raise GitError(f"git cat-file: object {sha} is missing")
        return found[3]

    def tree(self, rev: str) -> list[TreeEntry]:
        """Every file entry of ``rev``'s tree."""
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        return list(parse_ls(raw, staged=False))

    def file_modes(self, rev: str | None = None) -> Mapping[str, tuple[bytes, bytes]]:
        """path -> (mode, object id), both as git prints them, of every file entry of
        ``rev``'s tree, or of the index's stage-0 entries when ``rev`` is None (read-only:
        the index's is shared): the lean listing a whole-tree count needs."""
        if rev is None:
            view = self._index()
            return IndexModes(view.stage0, view.sha)
        out: dict[str, tuple[bytes, bytes]] = {}
        raw = self.out("ls-tree", "-r", "-z", "--full-tree", rev)
        for rec in raw.split(b"\0"):
            if rec:
                meta, _, name = rec.partition(b"\t")
                mode, kind, sha = meta.split(b" ")
                if kind == b"blob":
                    out[decode(name)] = (mode, sha)
        return out

    def prefetch_index(self) -> None:
        """Start reading the index on a thread, for a run whose gates will ask for it."""
        if self._index_view is None and self._pending_index is None:
            self._pending_index = Background(self._read_index)

    def _index(self) -> IndexView:
        """Every index entry, read once per invocation: every gate that asks for the index
        shares one ``git ls-files -s`` (nothing tools runs in the user's repository writes
        the index while a command judges it)."""
        if self._index_view is None:
            pending, self._pending_index = self._pending_index, None
            self._index_view = pending.result() if pending is not None else self._read_index()
        return self._index_view

    def _read_index(self) -> IndexView:
        return IndexView(self.out("ls-files", "-s", "-z"))

    def index_entries(self) -> list[TreeEntry]:
        """Every stage-0 entry of the index (what ``--staged`` judges)."""
        view = self._index()
        sha = view.sha
        return [TreeEntry(rec[MODE_FIELD], rec[sha], path) for path, rec in view.stage0.items()]

    def unmerged_paths(self) -> list[str]:
        """Paths with unmerged index entries (a merge, rebase or cherry-pick stopped on
        conflicts), each once, in index order."""
        return list(dict.fromkeys(path for _, _, _, path in self._index().unmerged))

    def untracked_files(self) -> list[str]:
        """Untracked files git does not ignore: what ``git add -A`` would add."""
        raw = self.out("ls-files", "-z", "--others", "--exclude-standard")
        return [decode(rec) for rec in raw.split(b"\0") if rec]

    def staged_changes(self) -> list[Change]:
        """What the index changes relative to HEAD (or the empty tree in a new repository)."""
        base = self.head() or self.empty_tree()
        return parse_name_status(
            self.out("diff-index", "--cached", "-z", "--name-status", "-M", base, "--")
        )

    def index_entries_under(self, folder: str) -> list[TreeEntry]:
        """The stage-0 index entries under ``folder`` (a repo-relative path)."""
        raw = self.out("--literal-pathspecs", "ls-files", "-s", "-z", "--", folder)
        return list(parse_ls(raw, staged=True))

    def worktree_files_under(self, folder: str) -> list[str]:
        """Paths under ``folder`` as the working tree holds them: tracked (conflicted ones
        included) and untracked files git does not ignore; sorted, each once."""
        raw = self.out(
            "--literal-pathspecs",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            folder,
        )
        return sorted({decode(p) for p in raw.split(b"\0") if p})

    def worktree_path(self, path: str) -> Path:
        return self.root / os.fsdecode(encode(path))

    # -- merges -------------------------------------------------------------------------------
    def version(self) -> tuple[int, ...] | None:
        """git's version as numbers (``git --version``), or None when it prints no version."""
        # Plain ``git --version``: nothing it does could run a hook.
        _, out, _ = run_git(self.root, "--version", hooks_off=False)
        words = decode(out).split()
        if len(words) < 3 or words[:2] != ["git", "version"]:
            return None
        nums = []
        for part in words[2].split("."):
            digits = "".join(itertools.takewhile(str.isdigit, part))
            if not digits:
                break
            nums.append(int(digits))
        return tuple(nums) or None

    def commit_trees(self, shas: Sequence[str]) -> dict[str, str]:
        """commit -> its tree, for many commits in one ``git log --no-walk --stdin``."""
        if not shas:
            return {}
        raw = self.out(
            "log",
            *_LOG_FIXED,
            "--no-walk=unsorted",
            "--stdin",
            "--format=%H %T",
            input="".join(f"{sha}\n" for sha in shas).encode("ascii"),
        )
        found: dict[str, str] = {}
        for line in raw.decode("ascii").splitlines():
            commit, _, tree = line.partition(" ")
            if tree:
                found[commit] = tree
        return found

    def merge_tree(self, ours: str, theirs: str, *, unrelated: bool = False) -> MergeTree | None:
        """git's own merge of two commits (``merge-tree --write-tree``, git >= 2.38), written
        to the object store only: the tree and the paths it left in conflict. Conflict hunks
        are written in the plain two-sided style whatever the user's ``merge.conflictStyle``,
        labelled with ``ours`` and ``theirs`` as given. None: the two commits share no history
        and ``unrelated`` was not given (git's refusal to merge unrelated histories).
        Raises :class:`MergeTreeUnsupported` when this git has no ``--write-tree``."""
        args = [
            "-c",
            "merge.conflictStyle=merge",
            "merge-tree",
            "--write-tree",
            "-z",
            "--name-only",
            "--no-messages",
        ]
        if unrelated:
            args.append("--allow-unrelated-histories")
        status, out, err = self._run_err(*args, ours, theirs)
        if status not in (0, 1):
            text = decode(err).strip()
            if "unrelated histories" in text and not unrelated:
                return None
            if status == 129 or "write-tree" in text:
                raise MergeTreeUnsupported(text.splitlines()[0] if text else f"exit {status}")
            raise GitError(f"git merge-tree failed ({status}): {text}")
        fields = out.split(b"\0")
        tree = fields[0].decode("ascii").strip()
        conflicted = [decode(f) for f in fields[1:] if f] if status == 1 else []
        return MergeTree(tree, list(dict.fromkeys(conflicted)))

    def _run_err(self, *args: str) -> tuple[int, bytes, bytes]:
        """``git args…`` over history, attributes as :meth:`use_attributes_from` says:
        (status, stdout, stderr), whatever the status."""
        cwd, env = self._attribute_place()
        return run_git(cwd, *args, ok=None, repository=True, env=env)

    def raw_diff(self, old: str, new: str) -> list[RawChange]:
        """Every file entry that differs between trees ``old`` and ``new``, path by path (no
        rename detection): ``diff-tree -r -z --raw --no-renames``."""
        raw = self.out("diff-tree", "-r", "-z", "--raw", "--no-renames", old, new, "--")
        tokens = raw.split(b"\0")
        changes: list[RawChange] = []
        i = 0
        while i + 1 < len(tokens):
            meta = tokens[i]
            if not meta.startswith(b":"):
                i += 1
                continue
            old_mode, new_mode, old_sha, new_sha, status = meta[1:].decode("ascii").split()
            changes.append(
                RawChange(old_mode, new_mode, old_sha, new_sha, status[0], decode(tokens[i + 1]))
            )
            i += 2
        return changes

    def patches(self, old: str, new: str, paths: Sequence[str]) -> dict[str, FilePatch]:
        """The ``-U0`` patch of each of ``paths`` from tree ``old`` to tree ``new``, path by
        path (no rename detection, no textconv): its hunks, or that git sees it as binary."""
        found: dict[str, FilePatch] = {}
        for chunk in argv_chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "-r",
                "-p",
                "-U0",
                "--no-renames",
                *_PATCH_FIXED,
                old,
                new,
                "--",
                *chunk,
                attributes=True,
            )
            for path, patch in parse_patches(raw).items():
                into = found.setdefault(path, FilePatch())
                into.binary = into.binary or patch.binary
                into.hunks.extend(patch.hunks)
        return found

    def numstat(
        self, old: str, new: str, paths: Sequence[str]
    ) -> dict[str, tuple[int, int] | None]:
        """(lines added, lines removed) of each of ``paths`` from commit or tree ``old`` to
        ``new``, path by path; None for a file git sees as binary. Paths equal on both sides
        are absent."""
        found: dict[str, tuple[int, int] | None] = {}
        for chunk in argv_chunks(paths):
            raw = self.out(
                *_DIFF_FIXED,
                "diff-tree",
                "-r",
                "-z",
                "--numstat",
                "--no-renames",
                "--no-textconv",
                old,
                new,
                "--",
                *chunk,
                attributes=True,
            )
            tokens = raw.split(b"\0")
            for tok in tokens:
                added, _, rest = tok.partition(b"\t")
                removed, _, path = rest.partition(b"\t")
                if not path:
                    continue
                name = decode(path)
                if added == b"-" or removed == b"-":
                    found[name] = None
                    continue
                prev = found.get(name, (0, 0)) or (0, 0)
                found[name] = (prev[0] + int(added), prev[1] + int(removed))
        return found

    def attributes_at(self, rev: str, attr: str, paths: Sequence[str]) -> dict[str, str]:
        """The value of attribute ``attr`` for each of ``paths`` as the ``.gitattributes``
        files of ``rev``'s tree set it (with ``info/attributes`` and the user's global file,
        as git applies them): git's own ``check-attr --cached`` over a throwaway index of
        that tree, so the user's index and working tree are never read or written.
        ``unspecified`` paths are absent; a set or unset attribute reads ``set`` / ``unset``."""
        if not paths:
            return {}
        import tempfile  # here, not at the top: the commands that never need it skip ~2 ms

        with tempfile.TemporaryDirectory(prefix="tools-attr-") as tmp:
            index = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            run_git(self.root, "read-tree", rev, env=index, repository=True)
            _, out, _ = run_git(
                self.root,
                "check-attr",
                "--cached",
                "-z",
                "--stdin",
                attr,
                input=b"".join(encode(p) + b"\0" for p in paths),
                env=index,
                repository=True,
            )
        tokens = out.split(b"\0")
        values: dict[str, str] = {}
        for i in range(0, len(tokens) - 2, 3):
            value = decode(tokens[i + 2])
            if value != "unspecified":
                values[decode(tokens[i])] = value
        return values


# Plumbing diffs independent of the user's config: literal paths, names unquoted but for
# control characters, no external diff or textconv, fixed a/ b/ prefixes.
_DIFF_FIXED = ("--literal-pathspecs", "-c", "core.quotePath=false")


_PATCH_FIXED = (
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def _commit_id(text: str) -> bool:
    return len(text) in (40, 64) and not text.strip("0123456789abcdef")


def _discover(
    start: Path, *, top_only: bool, probe: str | None = None
) -> tuple[Path, Path, bool, Path, dict[str, str | None]]:
    """(root, git directory, bare, hooks folder, probed) of the repository at ``start``: its
    top, or its git directory when bare; the hooks folder as git runs hooks from it
    (``core.hooksPath`` as configured: this one question runs with the user's hooks setting).
    ``top_only``: ``start`` must be that top (a folder below it, or one that is no repository,
    is refused); else ``start`` may lie anywhere inside it. ``probe``: a path whose index
    entry is asked for last, in the same process (``probed`` maps it to its object id or
    None; it is left out when git could not answer, a bare repository's case)."""
    if not start.is_dir():
        raise UsageError(f"not a git repository: {start}")
    asked = [] if probe is None or "\n" in probe else ["--verify", "-q", f":0:{probe}"]
    status, out, err = run_git(
        start,
        "rev-parse",
        "--absolute-git-dir",
        "--is-bare-repository",
        "--git-path",
        "hooks",
        "--show-toplevel",
        *asked,
        ok=None,
        repository=bool(asked),  # the index git commits from (``commit -a``'s own)
        hooks_off=False,  # rev-parse runs no hook; the configured hooks folder is asked for
    )
    lines = decode(out).split("\n")
    probed: dict[str, str | None] = {}
    if asked and probe is not None and len(lines) >= 5 and lines[1] == "false":
        # ``--verify -q`` on the last query: its id on a fifth line, or exit 1 without one.
        if status == 0 and lines[4]:
            probed[probe] = lines[4]
        elif status == 1 and lines[3] and not lines[4]:
            probed[probe] = None
            status = 0
    if len(lines) < 4 or lines[1] not in ("true", "false"):
        fatal = decode(err).strip().splitlines()
        if fatal and "not a git repository" not in fatal[-1]:
            raise UsageError(f"not a git repository: {start}: {fatal[-1]}")
        raise UsageError(f"not a git repository: {start}")
    git_dir = Path(lines[0]).resolve()
    bare = lines[1] == "true"
    if bare:
        root = git_dir
    elif status == 0 and lines[3]:
        root = Path(lines[3]).resolve()
    elif git_dir.name == ".git":
        root = git_dir.parent  # asked from inside the git directory of a work tree
    else:
        raise UsageError(f"not a git repository: {start}")
    here = start.resolve()
    if top_only and here != root:
        if here != git_dir:
            raise UsageError(f"not a git repository: {start}")
        raise UsageError(f"not the top of a git repository: {start} (its top is {root})")
    hooks = Path(os.path.normpath(start.absolute() / lines[2]))  # relative to ``start``
    return root, git_dir, bare, hooks, probed
