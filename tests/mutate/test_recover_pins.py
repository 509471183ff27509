"""The boundaries of ``inplace.recover`` (SPEC §10, "In-place runs never lose an edit"), as
plain calls on a real repository: a conflict an earlier restore recorded is judged again even
when no mutant is pending for its file, a restore that errors stops the recovery (the record
stays), and a restore that does not verify is an error, never a silent drop of the record."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Repo
from tools.errors import UsageError
from tools.mutate import inplace, inplace_record
from tools.mutate.apply import read_state

ORIGINAL = "int scale(int x) { return 2 * x; }\n"
MUTANT = "int scale(int x) { return 3 * x; }\n"
USERS = "int scale(int x) { return 2 * x; } /* the user's edit */\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _pending(repo: Repo, path: str) -> tuple[Path, inplace.InPlace]:
    """A run that wrote the mutant of ``path`` and died (its record pending, lock free)."""
    repo.commit("Add the scaler\n\nBody.\n", {path: ORIGINAL})
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, [path], "plans/p.yml")
    run.begin()
    run.expect("M1", {path: [_sha(MUTANT)]})
    repo.write(path, MUTANT)
    run.abandon()  # the process is gone: its lock with it
    return tools_dir, run


def test_a_recorded_conflict_is_judged_again_without_a_pending_mutant(repo: Repo) -> None:
    tools_dir, run = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", USERS)
    # The arm's restore met the user's edit; a later arm that does not touch the file
    # leaves no mutant of it pending, only the conflict.
    run.settle(
        [inplace.Conflict("src/lib.c", _sha(ORIGINAL), _sha(MUTANT), _sha(USERS), "saved/x", ())],
        [],
    )
    run.expect("M2", {})
    done = inplace.recover(repo.path, tools_dir)
    assert [c.path for c in done.conflicts] == ["src/lib.c"]
    assert done.conflicts[0].mutated == _sha(MUTANT)  # from the conflict recorded before
    assert done.conflicts[0].now == _sha(USERS)
    assert inplace_record(tools_dir).exists()  # kept until the user decides
    assert repo.read("src/lib.c").decode() == USERS  # the edit left as it is
    assert not done.notices


def test_a_restore_error_stops_the_recovery_and_keeps_the_record(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    # The target's folder is now a link: a restore must not write through it.
    os.rename(repo.path / "src", repo.path / "real")
    os.symlink("real", repo.path / "src")
    with pytest.raises(UsageError) as caught:
        inplace.recover(repo.path, tools_dir)
    assert "src/lib.c" in caught.value.render()
    assert inplace_record(tools_dir).exists()
    assert (repo.path / "real" / "lib.c").read_text() == MUTANT


def test_a_restore_that_does_not_verify_is_an_error(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    # A mode the file system cannot give back (the type bits): the original cannot be
    # staged as recorded, so nothing may be called restored.
    where = inplace_record(tools_dir)
    record = json.loads(where.read_bytes())
    record["files"][0]["mode"] = 0o100644
    where.write_text(json.dumps(record))
    with pytest.raises(UsageError) as caught:
        inplace.recover(repo.path, tools_dir)
    assert "did not verify for src/lib.c" in caught.value.render()
    assert where.exists()
    assert read_state(repo.path, "src/lib.c").data == MUTANT.encode()


# -- the rest of recover's and discard's decisions -------------------------------------------------


def test_a_pending_restore_is_completed_and_said(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    assert inplace.pending_paths(tools_dir) == ["src/lib.c"]
    done = inplace.recover(repo.path, tools_dir)
    assert (done.restored, done.conflicts, done.busy) == (["src/lib.c"], [], False)
    pid = os.getpid()
    assert done.notices == [
        f"completed a pending in-place restore of plan plans/p.yml (process {pid} stopped "
        "mid-run): 1 file(s) restored, sha256 verified"
    ]
    assert repo.read("src/lib.c").decode() == ORIGINAL
    assert not inplace_record(tools_dir).exists()
    assert not (inplace_record(tools_dir).parent / "blobs").exists()
    assert inplace.pending_paths(tools_dir) is None
    assert inplace.recover(repo.path, tools_dir).notices == []  # nothing pending now


def test_a_record_with_nothing_left_to_restore_is_dropped_and_said(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", ORIGINAL)
    done = inplace.recover(repo.path, tools_dir)
    assert done.restored == [] and done.conflicts == []
    assert done.notices == [
        f"dropped the in-place recovery record of plan plans/p.yml (process {os.getpid()}): "
        "no file held a mutant any more"
    ]
    assert not inplace_record(tools_dir).exists()


def test_a_live_run_holds_its_files(repo: Repo) -> None:
    path = "src/lib.c"
    repo.commit("Add the scaler\n\nBody.\n", {path: ORIGINAL})
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, [path], "plans/p.yml")
    run.begin()
    run.expect("M1", {path: [_sha(MUTANT)]})
    try:
        with pytest.raises(UsageError, match="another --in-place run"):
            inplace.InPlace(repo.path, tools_dir, [path], "plans/p.yml").begin()
        repo.write(path, MUTANT)
        done = inplace.recover(repo.path, tools_dir)
        assert done.busy and done.restored == [] and done.notices == []
        assert inplace.discard(repo.path, tools_dir).busy
        assert repo.read(path).decode() == MUTANT
    finally:
        run.abandon()


def test_a_conflict_keeps_the_edit_the_record_and_the_original(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", USERS)
    done = inplace.recover(repo.path, tools_dir)
    (c,) = done.conflicts
    assert (c.path, c.before, c.mutated, c.now) == (
        "src/lib.c",
        _sha(ORIGINAL),
        _sha(MUTANT),
        _sha(USERS),
    )
    assert c.saved == f".git/tools/mutate/inplace/saved/{_sha(ORIGINAL)}"
    assert (repo.path / c.saved).read_text() == ORIGINAL
    assert done.restored == [] and done.notices == []
    record = json.loads(inplace_record(tools_dir).read_bytes())
    assert record["schema"] == inplace.SCHEMA
    assert record["conflicts"] == [c.record()]
    assert inplace.conflicts(tools_dir) == [c]
    assert inplace.pending_paths(tools_dir) == []  # the file in conflict is not listed
    # Again: the same conflict, the record as it was.
    assert inplace.recover(repo.path, tools_dir).conflicts == [c]


def test_discard_keeps_the_tree_and_says_where_the_original_is(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    done = inplace.discard(repo.path, tools_dir)
    saved = f".git/tools/mutate/inplace/saved/{_sha(ORIGINAL)}"
    assert done.notices == [
        f"discarded the in-place recovery record of plan plans/p.yml (process {os.getpid()}); "
        f"the working tree was not touched; kept as they are: src/lib.c (original at {saved})"
    ]
    assert repo.read("src/lib.c").decode() == MUTANT
    assert (repo.path / saved).read_text() == ORIGINAL
    assert inplace.pending_paths(tools_dir) is None
    assert inplace.discard(repo.path, tools_dir).notices == []


def test_discard_of_a_tree_already_back_keeps_nothing(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", ORIGINAL)
    (notice,) = inplace.discard(repo.path, tools_dir).notices
    assert notice.endswith("the working tree was not touched")


def test_an_unreadable_record_is_an_error_that_keeps_it(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    blobs = inplace_record(tools_dir).parent / "blobs"
    (blobs / _sha(ORIGINAL)).write_text("not the original\n")
    with pytest.raises(UsageError, match="cannot complete the pending in-place restore"):
        inplace.recover(repo.path, tools_dir)
    with pytest.raises(UsageError, match="cannot read the in-place recovery record"):
        inplace.discard(repo.path, tools_dir)
    assert inplace_record(tools_dir).exists()
    inplace_record(tools_dir).write_text("[1, 2]")
    assert inplace.pending_paths(tools_dir) == []  # pending, no path named
    assert inplace.conflicts(tools_dir) == []
    inplace_record(tools_dir).write_text("{not json")
    assert inplace.pending_paths(tools_dir) == []


def test_pending_paths_by_schema(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    where = inplace_record(tools_dir)
    record = json.loads(where.read_bytes())
    record["files"].append({**record["files"][0], "path": "other.c", "mutated": []})
    where.write_text(json.dumps(record))
    assert inplace.pending_paths(tools_dir) == ["src/lib.c"]
    where.write_text(json.dumps({**record, "conflicts": [{"path": "other.c"}]}))
    assert inplace.pending_paths(tools_dir) == ["src/lib.c"]
    assert [c.path for c in inplace.conflicts(tools_dir)] == ["other.c"]
    no_key = {k: v for k, v in record.items() if k != "conflicts"}
    where.write_text(json.dumps(no_key))
    assert inplace.pending_paths(tools_dir) == ["src/lib.c"]
    assert inplace.conflicts(tools_dir) == []
    # Before the mutated sha256 were kept: every file may hold a mutant.
    where.write_text(json.dumps({**record, "schema": "tools.mutate-inplace/1"}))
    assert inplace.pending_paths(tools_dir) == ["src/lib.c", "other.c"]


def test_a_conflict_says_everything_and_round_trips() -> None:
    c = inplace.Conflict("a.c", "1" * 64, None, "3" * 64, "saved/x", ("saved/y",))
    assert c.message() == (
        f"a.c changed since tools wrote its mutant (sha256 before {'1' * 64}, mutated "
        f"(absent), now {'3' * 64}): left as it is, not restored; the original is saved at "
        "saved/x; also kept, found in the way: saved/y; once decided, run "
        "`tools mutate recover --discard`"
    )
    assert inplace.Conflict.from_record(c.record()) == c
    fresh = inplace.Conflict("n.c", None, "2" * 64, None, None, ("s/1", "s/2"))
    assert fresh.message() == (
        f"n.c changed since tools wrote its mutant (sha256 before (absent), mutated {'2' * 64}, "
        "now (absent)): left as it is, not restored; the file did not exist before the run; "
        "also kept, found in the way: s/1, s/2; once decided, run "
        "`tools mutate recover --discard`"
    )
    fresh = fresh._replace(kept=())
    assert fresh.message() == (
        f"n.c changed since tools wrote its mutant (sha256 before (absent), mutated {'2' * 64}, "
        "now (absent)): left as it is, not restored; the file did not exist before the run; "
        "once decided, run `tools mutate recover --discard`"
    )
    assert "kept" not in fresh.record()
    assert inplace.Conflict.from_record(fresh.record()) == fresh


def test_dirty_paths_are_those_git_would_show(repo: Repo) -> None:
    repo.commit("Files\n\nBody.\n", {"a.c": "a\n", "b.c": "b\n", ".gitignore": "*.o\n"})
    assert inplace.dirty_paths(repo.path, []) == []
    assert inplace.dirty_paths(repo.path, ["a.c", "b.c"]) == []
    repo.write("a.c", "changed\n")
    repo.write("new.c", "new\n")
    repo.write("x.o", "obj\n")
    got = inplace.dirty_paths(repo.path, ["a.c", "b.c", "new.c", "x.o"])
    assert sorted(got) == ["a.c", "new.c", "x.o"]
    tools_dir = repo.path / ".git" / "tools"
    with pytest.raises(UsageError, match="a.c are not clean"):
        inplace.InPlace(repo.path, tools_dir, ["a.c"], "p").begin()
    assert not inplace_record(tools_dir).exists()


def test_settle_and_finish(repo: Repo) -> None:
    tools_dir, run = _pending(repo, "src/lib.c")
    c = inplace.Conflict("src/lib.c", _sha(ORIGINAL), _sha(MUTANT), _sha(USERS), None)
    run.settle([c], [])
    run.settle([c], [])
    record = json.loads(inplace_record(tools_dir).read_bytes())
    assert record["conflicts"] == [c.record()] and run.conflicts == [c]
    assert record["files"][0]["mutated"] == [_sha(MUTANT)]
    run.settle([], ["src/lib.c"])
    assert json.loads(inplace_record(tools_dir).read_bytes())["files"][0]["mutated"] == []
    run.also({"src/lib.c": _sha(USERS)})
    assert run.mutants("src/lib.c") == [_sha(USERS)]
    assert run.mutants("nope.c") == []
    run.finish()
    assert not inplace_record(tools_dir).exists()


def test_a_place_outside_the_repository_is_shown_whole(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    assert inplace._shown(root, root / "a" / "b") == "a/b"
    assert inplace._shown(root, tmp_path / "git" / "saved") == str(tmp_path / "git" / "saved")


# -- more files, older records, odd states ------------------------------------------------

WORK = ".git/tools/mutate/inplace"


def _run_of(repo: Repo, files: dict[str, str], mutants: dict[str, str]) -> tuple[Path, Path]:
    """A run over ``files`` (committed) that wrote ``mutants`` and died; (tools dir, folder)."""
    repo.commit("Files\n\nBody.\n", files)
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, list(files), "plans/p.yml")
    run.begin()
    run.expect("M1", {p: [_sha(text)] for p, text in mutants.items()})
    for p, text in mutants.items():
        repo.write(p, text)
    run.abandon()
    return tools_dir, inplace_record(tools_dir).parent


def _record(tools_dir: Path) -> dict[str, Any]:
    return dict(json.loads(inplace_record(tools_dir).read_bytes()))


def test_only_files_with_a_pending_mutant_are_restored(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"x.c": ORIGINAL, "a.c": ORIGINAL}, {"a.c": MUTANT})
    repo.write("x.c", USERS)  # never mutated: the user's to change
    done = inplace.recover(repo.path, tools_dir)
    assert (done.restored, done.conflicts) == (["a.c"], [])
    assert repo.read("a.c").decode() == ORIGINAL and repo.read("x.c").decode() == USERS
    assert not (repo.path / WORK / "work").exists()  # the restore's work folder goes too


def test_restored_files_leave_the_record_that_a_conflict_keeps(repo: Repo) -> None:
    files = {"a.c": ORIGINAL, "b.c": ORIGINAL, "c.c": ORIGINAL}
    tools_dir, _ = _run_of(repo, files, {"a.c": MUTANT, "b.c": MUTANT, "c.c": MUTANT})
    repo.write("b.c", USERS)
    repo.write("c.c", ORIGINAL)
    done = inplace.recover(repo.path, tools_dir)
    assert done.restored == ["a.c"] and [c.path for c in done.conflicts] == ["b.c"]
    mutated = {f["path"]: f["mutated"] for f in _record(tools_dir)["files"]}
    assert mutated == {"a.c": [], "b.c": [_sha(MUTANT)], "c.c": []}
    # The file in conflict is held; the others have nothing pending.
    assert inplace.pending_paths(tools_dir) == []


def test_a_legacy_record_is_recovered_conservatively(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"a.c": ORIGINAL, "b.c": ORIGINAL}, {"a.c": MUTANT})
    where = inplace_record(tools_dir)
    old = _record(tools_dir)
    old["schema"] = "tools.mutate-inplace/1"  # it kept no mutated sha256 and no conflicts
    del old["conflicts"]
    for item in old["files"]:
        del item["mutated"]
    where.write_text(json.dumps(old))
    repo.write("b.c", USERS)
    done = inplace.recover(repo.path, tools_dir)
    # Without the mutants' sha256 no changed file can be told from an edit: both are kept.
    got = {c.path: (c.mutated, c.now) for c in done.conflicts}
    assert got == {"a.c": (None, _sha(MUTANT)), "b.c": (None, _sha(USERS))}
    record = _record(tools_dir)
    assert record["schema"] == inplace.SCHEMA
    assert [c["path"] for c in record["conflicts"]] == ["a.c", "b.c"]
    assert inplace.pending_paths(tools_dir) == []


def test_what_a_killed_restore_left_aside_is_kept_with_the_conflict(repo: Repo) -> None:
    tools_dir, run = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", USERS)
    run.settle(
        [inplace.Conflict("src/lib.c", _sha(ORIGINAL), _sha(MUTANT), _sha(USERS), None, ("k",))],
        [],
    )
    key = hashlib.sha256(b"src/lib.c").hexdigest()[:32]
    aside = inplace_record(tools_dir).parent / "work" / f"{key}.aside"
    aside.parent.mkdir(parents=True, exist_ok=True)
    aside.write_text("a save found in the way\n")
    (c,) = inplace.recover(repo.path, tools_dir).conflicts
    assert c.kept == (f"{WORK}/saved/{_sha('a save found in the way' + chr(10))}", "k")
    assert not aside.exists()
    # The same content again: kept once.
    aside.write_text("a save found in the way\n")
    (again,) = inplace.recover(repo.path, tools_dir).conflicts
    assert again.kept[0] == c.kept[0] and not aside.exists()


def test_a_file_the_arm_created_goes_with_its_folders(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.c": ORIGINAL})
    path = "new/deep/f.c"
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, [path], "plans/p.yml")
    run.begin()
    assert _record(tools_dir)["files"][0]["missing_dirs"] == ["new/deep", "new"]
    run.expect("M1", {path: [_sha(MUTANT)]})
    repo.write(path, MUTANT)
    run.abandon()
    assert inplace.recover(repo.path, tools_dir).restored == [path]
    assert not (repo.path / "new").exists()
    assert not inplace_record(tools_dir).exists()


def test_a_folder_someone_else_uses_stays(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.c": ORIGINAL})
    path = "new/f.c"
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, [path], "plans/p.yml")
    run.begin()
    run.expect("M1", {path: [_sha(MUTANT)]})
    repo.write(path, MUTANT)
    repo.write("new/mine.txt", "the user's\n")
    run.abandon()
    # A folder outside the tree in the record (hand-edited) is never removed, nor an error.
    edited = _record(tools_dir)
    edited["files"][0]["missing_dirs"] = ["new", "../outside"]
    inplace_record(tools_dir).write_text(json.dumps(edited))
    (repo.path.parent / "outside").mkdir()
    assert inplace.recover(repo.path, tools_dir).restored == [path]
    assert not (repo.path / path).exists()
    assert (repo.path / "new" / "mine.txt").read_text() == "the user's\n"
    assert (repo.path.parent / "outside").is_dir()


def test_a_link_comes_back_as_a_link(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"target.c": ORIGINAL})
    os.symlink("target.c", repo.path / "link.c")
    repo.git("add", "link.c")
    repo.git("commit", "-q", "-m", "Link\n\nBody.")
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, ["link.c"], "plans/p.yml")
    run.begin()
    run.expect("M1", {"link.c": [_sha(MUTANT)]})
    os.unlink(repo.path / "link.c")
    repo.write("link.c", MUTANT)
    run.abandon()
    assert inplace.recover(repo.path, tools_dir).restored == ["link.c"]
    assert os.readlink(repo.path / "link.c") == "target.c"


def test_errors_name_the_record_and_what_is_wrong(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"a.c": ORIGINAL, "b.c": ORIGINAL}, {"a.c": MUTANT, "b.c": MUTANT})
    where = inplace_record(tools_dir)
    good = _record(tools_dir)
    for item in good["files"]:
        item["mode"] = 0o100644
    where.write_text(json.dumps(good))
    with pytest.raises(UsageError) as caught:
        inplace.recover(repo.path, tools_dir)
    assert caught.value.message == (
        "the pending in-place restore did not verify for a.c, b.c; the snapshot stays for "
        "another try"
    )
    assert caught.value.where == str(where)
    for schema, said in (("tools.mutate-inplace/9", "'tools.mutate-inplace/9'"), (None, "None")):
        where.write_text(json.dumps({**good, "schema": schema}))
        with pytest.raises(UsageError) as caught:
            inplace.recover(repo.path, tools_dir)
        assert caught.value.message == (
            f"cannot complete the pending in-place restore: schema {said}"
        )
        assert caught.value.where == str(where)
    where.write_text("[1]")
    with pytest.raises(UsageError) as caught:
        inplace.discard(repo.path, tools_dir)
    assert caught.value.message == "cannot read the in-place recovery record: schema None"
    assert caught.value.where == str(where)
    where.write_text(json.dumps(good))
    blob = where.parent / "blobs" / _sha(ORIGINAL)
    blob.write_text("not the original\n")
    with pytest.raises(UsageError) as caught:
        inplace.recover(repo.path, tools_dir)
    assert caught.value.message == (
        "cannot complete the pending in-place restore: the snapshot of a.c does not match "
        "its sha256"
    )


def test_discard_keeps_what_a_killed_restore_left_and_a_file_now_a_folder(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"a.c": ORIGINAL, "b.c": ORIGINAL}, {"a.c": MUTANT})
    key = hashlib.sha256(b"a.c").hexdigest()[:32]
    work = inplace_record(tools_dir).parent / "work"
    work.mkdir(parents=True, exist_ok=True)
    (work / f"{key}.aside").write_text(MUTANT)
    (work / f"{key}.stage").write_text(ORIGINAL)
    os.unlink(repo.path / "b.c")
    (repo.path / "b.c").mkdir()
    (notice,) = inplace.discard(repo.path, tools_dir).notices
    saved = f"{WORK}/saved"
    assert notice.endswith(
        f"kept as they are: a.c (original at {saved}/{_sha(ORIGINAL)}), "
        f"a.c (as a restore stopped mid-way found it: {saved}/{_sha(MUTANT)}), "
        f"b.c (original at {saved}/{_sha(ORIGINAL)})"
    )
    assert not (work / f"{key}.aside").exists() and not (work / f"{key}.stage").exists()
    assert (repo.path / saved / _sha(MUTANT)).read_text() == MUTANT
    assert repo.read("a.c").decode() == MUTANT


def test_many_dirty_files_are_named_five_and_counted(repo: Repo) -> None:
    names = [f"f{i}.c" for i in range(7)]
    repo.commit("Files\n\nBody.\n", dict.fromkeys(names, "x\n"))
    tools_dir = repo.path / ".git" / "tools"
    for count, tail in ((5, ""), (6, " and 1 more"), (7, " and 2 more")):
        for name in names[:count]:
            repo.write(name, "changed\n")
        with pytest.raises(UsageError) as caught:
            inplace.InPlace(repo.path, tools_dir, names, "p").begin()
        shown = ", ".join(names[:5])
        assert caught.value.message == (
            f"--in-place refused: the affected file(s) {shown}{tail} are not clean"
        )
        assert caught.value.expected == "commit or stash them first, or run without --in-place"


def test_dirty_paths_reads_paths_literally_and_whole(repo: Repo) -> None:
    repo.commit("Files\n\nBody.\n", {"a*.c": "a\n", "ab.c": "b\n", "-dash.c": "d\n", "m.c": "m\n"})
    repo.write("ab.c", "changed\n")
    assert inplace.dirty_paths(repo.path, ["a*.c", "-dash.c"]) == []
    repo.write("-dash.c", "changed\n")
    assert inplace.dirty_paths(repo.path, ["-dash.c"]) == ["-dash.c"]
    repo.write("newdir/n.c", "new\n")
    repo.write("z", "one letter\n")
    assert sorted(inplace.dirty_paths(repo.path, ["newdir/n.c", "z"])) == ["newdir/n.c", "z"]
    repo.git("mv", "m.c", "moved.c")
    assert sorted(inplace.dirty_paths(repo.path, ["m.c", "moved.c"])) == ["m.c", "moved.c"]


def test_an_in_place_run_before_it_begins_and_after_it_ends(repo: Repo) -> None:
    tools_dir = repo.path / ".git" / "tools"
    fresh = inplace.InPlace(repo.path, tools_dir, ["a.c"], "p")
    assert fresh.mutants("a.c") == []
    fresh.abandon()  # nothing held: nothing to release
    path = "src/lib.c"
    tools_dir, run = _pending(repo, path)
    assert _record(tools_dir)["arm"] == "M1"
    saved = run.save(path)
    assert saved == f"{WORK}/saved/{_sha(ORIGINAL)}"
    assert (repo.path / saved).read_text() == ORIGINAL
    where = inplace_record(tools_dir)
    seen = where.stat().st_ino
    run.also({})
    run.also({path: _sha(ORIGINAL)})
    run.also({path: _sha(MUTANT)})
    assert where.stat().st_ino == seen  # nothing new: not rewritten
    assert _record(tools_dir)["files"][0]["mutated"] == [_sha(MUTANT)]
    run.also({path: _sha(USERS)})
    assert _record(tools_dir)["files"][0]["mutated"] == [_sha(MUTANT), _sha(USERS)]
    before = read_state(repo.path, path)
    blobs = where.parent / "blobs"
    inplace.restore_file(
        repo.path,
        path,
        inplace.FileState(ORIGINAL.encode(), before.mode),
        [_sha(MUTANT)],
        folder=where.parent,
    )
    assert (where.parent / "work").is_dir()
    run.finish()
    run.finish()  # again: nothing left to drop
    assert not where.exists() and not blobs.exists() and not (where.parent / "work").exists()
    assert repo.read(path).decode() == ORIGINAL


# -- the steps of one restore ------------------------------------------------------------


def _one_file(tmp_path: Path) -> tuple[Path, Path, inplace.FileState]:
    """A tree with ``a.c`` holding the mutant, its folder, and the original's state."""
    root, folder = tmp_path / "tree", tmp_path / "folder"
    root.mkdir()
    folder.mkdir()
    (root / "a.c").write_text(MUTANT)
    os.chmod(root / "a.c", 0o644)
    return root, folder, inplace.FileState(ORIGINAL.encode(), 0o644)


def test_a_new_name_for_the_aside_file_after_its_check_is_a_conflict(tmp_path: Path) -> None:
    root, folder, original = _one_file(tmp_path)
    key = hashlib.sha256(b"a.c").hexdigest()[:32]

    def at(step: str) -> None:
        if step == "placed":  # only the ctime changes: someone holds the file now
            os.link(folder / "work" / f"{key}.aside", tmp_path / "another-name")

    got = inplace.restore_file(root, "a.c", original, [_sha(MUTANT)], folder=folder, between=at)
    assert got.outcome == "conflict"
    assert (root / "a.c").read_text() == MUTANT


def test_a_name_that_vanishes_once_placed_is_a_conflict(tmp_path: Path) -> None:
    root, folder, original = _one_file(tmp_path)

    def at(step: str) -> None:
        if step == "placed":
            os.unlink(root / "a.c")

    got = inplace.restore_file(root, "a.c", original, [_sha(MUTANT)], folder=folder, between=at)
    assert (got.outcome, got.now) == ("conflict", inplace.FileState(None))


def test_a_link_gives_a_second_name_never_a_copy_of_what_a_symlink_names(tmp_path: Path) -> None:
    (tmp_path / "t.c").write_text("t\n")
    os.symlink("t.c", tmp_path / "s.c")
    assert inplace._link(tmp_path / "s.c", tmp_path / "s2.c")
    assert os.readlink(tmp_path / "s2.c") == "t.c"
    assert not inplace._link(tmp_path / "t.c", tmp_path / "s2.c")  # never replaces
    (tmp_path / "aside").write_text("aside\n")
    assert not inplace._put_back(tmp_path / "aside", tmp_path / "t.c")
    assert (tmp_path / "aside").exists() and (tmp_path / "t.c").read_text() == "t\n"
    assert inplace._put_back(tmp_path / "aside", tmp_path / "free.c")
    assert not (tmp_path / "aside").exists() and (tmp_path / "free.c").read_text() == "aside\n"


@pytest.mark.parametrize("code", [errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK])
def test_without_hard_links_a_copy_is_made_that_never_replaces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    def no_links(*args: object, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "link", no_links)
    (tmp_path / "src.c").write_text("bytes\n")
    os.chmod(tmp_path / "src.c", 0o751)
    assert inplace._link(tmp_path / "src.c", tmp_path / "copy.c")
    assert (tmp_path / "copy.c").read_text() == "bytes\n"
    assert stat.S_IMODE(os.lstat(tmp_path / "copy.c").st_mode) == 0o751
    os.symlink("src.c", tmp_path / "sym.c")
    assert inplace._link(tmp_path / "sym.c", tmp_path / "sym2.c")
    assert os.readlink(tmp_path / "sym2.c") == "src.c"
    (tmp_path / "taken.c").write_text("mine\n")
    assert not inplace._link(tmp_path / "src.c", tmp_path / "taken.c")
    assert not inplace._link(tmp_path / "sym.c", tmp_path / "taken.c")
    assert (tmp_path / "taken.c").read_text() == "mine\n"


def test_another_link_error_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def denied(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EACCES, "denied")

    monkeypatch.setattr(os, "link", denied)
    (tmp_path / "src.c").write_text("bytes\n")
    with pytest.raises(PermissionError):
        inplace._link(tmp_path / "src.c", tmp_path / "copy.c")
    assert not (tmp_path / "copy.c").exists()


def test_the_record_a_run_begins_with(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.c": ORIGINAL})
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, ["a.c"], "plans/p.yml")
    run.begin()
    try:
        record = _record(tools_dir)
        assert {k: v for k, v in record.items() if k != "files"} == {
            "schema": inplace.SCHEMA,
            "pid": os.getpid(),
            "root": str(repo.path),
            "plan": "plans/p.yml",
            "arm": None,
            "conflicts": [],
        }
        assert record["files"] == [
            {
                "path": "a.c",
                "sha256": _sha(ORIGINAL),
                "mode": 0o644,
                "link": False,
                "missing_dirs": [],
                "mutated": [],
            }
        ]
        # A mutant found before any arm said what it would write is still recorded.
        run.also({"a.c": _sha(MUTANT)})
        assert run.mutants("a.c") == [_sha(MUTANT)]
        with pytest.raises(UsageError) as caught:
            inplace.InPlace(repo.path, tools_dir, ["a.c"], "p").begin()
        assert caught.value.message == "another --in-place run is in progress in this tree"
    finally:
        run.abandon()


def test_an_older_record_of_a_file_that_was_absent_has_no_folders_to_remove(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.c": ORIGINAL})
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, ["n/f.c"], "p")
    run.begin()
    run.expect("M1", {"n/f.c": [_sha(MUTANT)]})
    repo.write("n/f.c", MUTANT)
    run.abandon()
    edited = _record(tools_dir)
    del edited["files"][0]["missing_dirs"]
    inplace_record(tools_dir).write_text(json.dumps(edited))
    assert inplace.recover(repo.path, tools_dir).restored == ["n/f.c"]
    assert not (repo.path / "n" / "f.c").exists() and (repo.path / "n").is_dir()


class _Stop(Exception):
    """Stands for an interrupt in the middle of a restore."""


def test_an_interrupt_after_the_file_went_aside_puts_it_back(tmp_path: Path) -> None:
    root, folder, original = _one_file(tmp_path)

    def at(step: str) -> None:
        if step == "aside":
            raise _Stop()

    with pytest.raises(_Stop):
        inplace.restore_file(root, "a.c", original, [_sha(MUTANT)], folder=folder, between=at)
    assert (root / "a.c").read_text() == MUTANT


def test_the_same_bytes_in_another_file_are_not_the_file_that_was_checked(tmp_path: Path) -> None:
    root, folder, original = _one_file(tmp_path)

    def at(step: str) -> None:
        if step == "checked":  # an editor's save by rename, of the very same bytes
            (tmp_path / "saved.c").write_text(MUTANT)
            os.chmod(tmp_path / "saved.c", 0o644)
            os.rename(tmp_path / "saved.c", root / "a.c")

    got = inplace.restore_file(root, "a.c", original, [_sha(MUTANT)], folder=folder, between=at)
    assert got.outcome == "conflict" and (root / "a.c").read_text() == MUTANT


def test_a_file_the_arm_removed_with_its_folders_comes_back(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"d1/d2/f.c": ORIGINAL}, {})
    run_record = _record(tools_dir)
    run_record["files"][0]["mutated"] = [None]  # the arm deleted it
    inplace_record(tools_dir).write_text(json.dumps(run_record))
    shutil.rmtree(repo.path / "d1")
    assert inplace.recover(repo.path, tools_dir).restored == ["d1/d2/f.c"]
    assert repo.read("d1/d2/f.c").decode() == ORIGINAL


def test_an_original_that_cannot_be_staged_for_a_removed_file_is_an_error(repo: Repo) -> None:
    tools_dir, _ = _run_of(repo, {"f.c": ORIGINAL}, {})
    run_record = _record(tools_dir)
    run_record["files"][0]["mutated"] = [None]
    run_record["files"][0]["mode"] = 0o100644
    inplace_record(tools_dir).write_text(json.dumps(run_record))
    os.unlink(repo.path / "f.c")
    with pytest.raises(UsageError, match="did not verify for f.c"):
        inplace.recover(repo.path, tools_dir)
    assert not (repo.path / "f.c").exists()


def test_only_the_permission_bits_changed_are_put_back_without_a_rewrite(repo: Repo) -> None:
    tools_dir, _ = _pending(repo, "src/lib.c")
    repo.write("src/lib.c", ORIGINAL)
    os.chmod(repo.path / "src/lib.c", 0o755)
    inode = os.lstat(repo.path / "src/lib.c").st_ino
    done = inplace.recover(repo.path, tools_dir)
    assert done.restored == [] and done.conflicts == []
    st = os.lstat(repo.path / "src/lib.c")
    assert stat.S_IMODE(st.st_mode) == 0o644 and st.st_ino == inode
    assert not inplace_record(tools_dir).exists()


def test_folders_left_by_a_file_the_arm_created_go_once_it_is_gone(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"a.c": ORIGINAL})
    tools_dir = repo.path / ".git" / "tools"
    run = inplace.InPlace(repo.path, tools_dir, ["n/m/f.c"], "p")
    run.begin()
    run.expect("M1", {"n/m/f.c": [_sha(MUTANT)]})
    (repo.path / "n" / "m").mkdir(parents=True)
    run.abandon()
    assert inplace.recover(repo.path, tools_dir).restored == []
    assert not (repo.path / "n").exists()


def test_a_restore_that_found_foreign_content_in_its_way_is_a_conflict(tmp_path: Path) -> None:
    root, folder, original = _one_file(tmp_path)
    key = hashlib.sha256(b"a.c").hexdigest()[:32]
    (folder / "work").mkdir()
    (folder / "work" / f"{key}.aside").write_text("someone's\n")
    got = inplace.restore_file(root, "a.c", original, [_sha(MUTANT)], folder=folder)
    assert got.outcome == "conflict"  # restored, but someone's content had to be moved
    assert got.now == read_state(root, "a.c") and got.now.data == ORIGINAL.encode()
    assert got.kept == (str(folder / "saved" / _sha("someone's\n")),)
