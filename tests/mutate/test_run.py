"""``tools mutate run`` in worktrees: every verdict on a real pure-Python project and a real C
project, the records' contract, expectations and exit codes, and the user's tree untouched."""

from __future__ import annotations

import hashlib
import json
import os
import signal
from pathlib import Path

from tests.conftest import Repo
from tests.mutate.conftest import (
    C_BUILD_CMD,
    C_TEST_CMD,
    LEDGER,
    PY_CALC,
    PY_TEST_CMD,
    c_project,
    check_arm_record,
    check_run_record,
    fingerprint,
    ledger_records,
    no_worktrees_left,
    py_project,
    write_plan,
)


def _sha(data: str | bytes) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _run(repo: Repo, plan: str, *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "mutate", "run", plan, *args)
    assert run.exit_code in (0, 1), run.stderr
    data = json.loads(run.stdout)
    return run.exit_code, data


def _by_arm(data: dict) -> dict[str, dict]:
    return {r["arm"]: r for r in data["arms"]}


def test_python_project_green_red_not_applied_and_records(repo: Repo) -> None:
    py_project(repo)
    repo.write("specs/patches/sub.diff", _patch_sub())
    repo.write("specs/patches/stale.diff", _patch_stale())
    plan = write_plan(
        repo,
        {
            "test": PY_TEST_CMD,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
                {"name": "P", "patch": "specs/patches/sub.diff"},
                {"name": "S", "patch": "specs/patches/stale.diff"},
                {"name": "N", "replace": {"path": "src/calc.py", "old": "nowhere", "new": "x"}},
                {"name": "R", "revert": {"path": "src/calc.py", "to": "HEAD"}},
            ],
            "expect": {
                "control": "GREEN",
                "B": "RED",
                "P": "RED",
                "S": "NOT-APPLIED",
                "N": "NOT-APPLIED",
                "R": "NOT-APPLIED",
            },
        },
    )
    before = fingerprint(repo)
    code, data = _run(repo, plan, "-j", "3")
    assert code == 0, data["failures"]
    arms = _by_arm(data)
    assert {k: v["verdict"] for k, v in arms.items()} == {
        "control": "GREEN",
        "B": "RED",
        "P": "RED",
        "S": "NOT-APPLIED",
        "N": "NOT-APPLIED",
        "R": "NOT-APPLIED",
    }
    for r in data["arms"]:
        check_arm_record(r)
    check_run_record(data["run"])
    # The run lists its arms in plan order, by id, with their verdicts.
    assert data["run"]["arms"] == [r["id"] for r in data["arms"]]
    assert [r["arm"] for r in data["arms"]] == ["control", "B", "P", "S", "N", "R"]
    assert data["run"]["verdicts"]["B"] == "RED"
    b = arms["B"]
    assert b["mutation"] == "replace 'a + b'→'a - b' in src/calc.py"
    assert b["mutations"] == [
        {"kind": "replace", "path": "src/calc.py", "old": "a + b", "new": "a - b"}
    ]
    assert b["applied"] is True and b["restored"] is True
    assert b["numstat"] == [{"path": "src/calc.py", "added": 1, "deleted": 1}]
    (t,) = b["targets"]
    assert t["sha256_before"] == _sha(PY_CALC) == t["sha256_after"]
    assert t["sha256_mutated"] == _sha(PY_CALC.replace("a + b", "a - b"))
    assert b["run_rc"] == 1 and b["run_rcs"] == [1] and b["compile_rc"] is None
    assert "add is broken" in b["tails"]["test"][0]
    assert arms["P"]["mutation"] == "patch specs/patches/sub.diff"
    assert arms["P"]["mutations"][0]["sha256"] == _sha(_patch_sub())
    assert arms["control"]["mutation"] == "none" and arms["control"]["applied"] is True
    assert arms["control"]["restored"] is None and arms["control"]["targets"] == []
    assert arms["S"]["applied"] is False and "git apply" in arms["S"]["reason"]
    assert arms["S"]["run_rc"] is None and arms["S"]["restored"] is None
    assert "does not occur" in arms["N"]["reason"]
    assert "already has its content" in arms["R"]["reason"]
    # Ledger: one record per arm and one per run, as printed.
    ids = [r["id"] for r in ledger_records(repo)]
    assert ids == [*data["run"]["arms"], data["run"]["id"]]
    # The user's tree, index and untracked files (the plan, the patches) are untouched.
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    no_worktrees_left(repo)


def _patch_sub() -> str:
    return (
        "diff --git a/src/calc.py b/src/calc.py\n"
        "--- a/src/calc.py\n"
        "+++ b/src/calc.py\n"
        "@@ -1,3 +1,3 @@\n"
        " def add(a, b):\n"
        "-    return a + b\n"
        "+    return a + b + 1\n"
        " \n"
    )


def _patch_stale() -> str:
    return (
        "diff --git a/src/calc.py b/src/calc.py\n"
        "--- a/src/calc.py\n"
        "+++ b/src/calc.py\n"
        "@@ -1,3 +1,3 @@\n"
        " def add(a, b):\n"
        "-    return a * b\n"
        "+    return a ** b\n"
        " \n"
    )


def test_c_project_build_verdicts(repo: Repo) -> None:
    c_project(repo)
    plan = write_plan(
        repo,
        {
            "build": C_BUILD_CMD,
            "test": C_TEST_CMD,
            "timeout": 60,
            "arms": [
                {"name": "control"},
                {
                    "name": "B",
                    "replace": {"path": "src/lib.c", "old": "2 * x", "new": "3 * x", "count": 1},
                },
                {"name": "NB", "replace": {"path": "src/lib.c", "old": "return", "new": "retrun"}},
                {
                    "name": "M",
                    "mutations": [
                        {"replace": {"path": "src/lib.c", "old": "2 * x", "new": "x"}},
                        {"replace": {"path": "src/main.c", "old": "== 6", "new": "== 3"}},
                    ],
                },
            ],
            "expect": {"control": "GREEN", "B": "RED", "NB": "NO-BUILD", "M": "GREEN"},
        },
    )
    before = fingerprint(repo)
    code, data = _run(repo, plan, "-j", "2")
    assert code == 0, data["failures"]
    arms = _by_arm(data)
    assert arms["control"]["compile_rc"] == 0 and arms["control"]["run_rc"] == 0
    assert arms["B"]["compile_rc"] == 0 and arms["B"]["run_rc"] == 1
    assert arms["B"]["mutation"] == "replace '2 * x'→'3 * x' ×1 in src/lib.c"
    assert arms["NB"]["compile_rc"] not in (0, None) and arms["NB"]["run_rc"] is None
    assert arms["NB"]["tails"]["build"]
    m = arms["M"]
    assert m["mutation"] == "replace '2 * x'→'x' in src/lib.c; replace '== 6'→'== 3' in src/main.c"
    assert [t["path"] for t in m["targets"]] == ["src/lib.c", "src/main.c"]
    assert all(t["sha256_before"] == t["sha256_after"] != t["sha256_mutated"] for t in m["targets"])
    assert m["restored"] is True
    # Build outputs stay in the arms' worktrees: nothing new in the user's tree.
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    assert not (repo.path / "prog").exists()
    no_worktrees_left(repo)


def test_build_command_not_found_is_no_build_with_its_tail(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "build": "no-such-build-tool-xyz --all",
            "test": PY_TEST_CMD,
            "arms": [{"name": "control"}],
        },
    )
    code, data = _run(repo, plan)
    (r,) = data["arms"]
    assert r["verdict"] == "NO-BUILD" and r["compile_rc"] == 127 and r["run_rc"] is None
    assert "no-such-build-tool-xyz" in r["tails"]["build"] and "not found" in r["tails"]["build"]
    assert code == 0  # NO-BUILD is a verdict, not a failure of the run


def test_flaky_with_repeat_three(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    counter = tmp_path / "counter"  # outside the worktree, shared by the runs
    test = (
        f"n=$(cat {counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {counter}; "
        "[ $((n % 2)) -eq 1 ]"
    )
    plan = write_plan(repo, {"test": test, "repeat": 3, "arms": [{"name": "control"}]})
    code, data = _run(repo, plan)
    (r,) = data["arms"]
    assert r["verdict"] == "FLAKY"
    assert r["run_rcs"] == [0, 1, 0] and r["run_rc"] == 0
    assert counter.read_text().strip() == "3"
    assert code == 0  # FLAKY alone is not an error


def test_red_every_run_is_red_not_flaky(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(repo, {"test": "exit 3", "repeat": 2, "arms": [{"name": "control"}]})
    code, data = _run(repo, plan)
    assert data["arms"][0]["verdict"] == "RED" and data["arms"][0]["run_rcs"] == [3, 3]


def test_unanchored_when_the_control_is_not_green(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "test": "grep -q 'a - b' src/calc.py",  # red on the bare tree
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
            ],
        },
    )
    code, data = _run(repo, plan)
    arms = _by_arm(data)
    assert arms["control"]["verdict"] == "RED"
    assert arms["B"]["verdict"] == "UNANCHORED" and arms["B"]["observed"] == "GREEN"
    assert "control" in arms["B"]["reason"]
    assert data["run"]["verdicts"] == {"control": "RED", "B": "UNANCHORED"}
    assert code == 1
    assert any("UNANCHORED" in f for f in data["failures"])


def test_an_arm_run_alone_is_never_unanchored(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "test": "grep -q 'a - b' src/calc.py",
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "a + b", "new": "a - b"}},
            ],
        },
    )
    code, data = _run(repo, plan, "--arm", "B")
    assert [r["verdict"] for r in data["arms"]] == ["GREEN"]
    assert code == 0


def test_expect_mismatch_exits_1(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "test": PY_TEST_CMD,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "README", "old": "calc", "new": "calculator"}},
            ],
            "expect": {"control": "GREEN", "B": "RED"},
        },
    )
    run = repo.tools("mutate", "run", plan)
    assert run.exit_code == 1
    assert "expected RED, got GREEN" in run.stdout
    assert "expect RED: UNMET" in run.stdout


def test_timeout_kills_the_whole_process_group(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    pids = tmp_path / "pids"
    test = f"sleep 30 & echo $! >> {pids}; echo $$ >> {pids}; sleep 30"
    plan = write_plan(repo, {"test": test, "timeout": 0.5, "arms": [{"name": "control"}]})
    code, data = _run(repo, plan)
    (r,) = data["arms"]
    assert r["verdict"] == "TIMEOUT" and r["run_rc"] is None and r["run_rcs"] == []
    assert code == 1
    for pid in pids.read_text().split():
        assert not _alive(int(pid)), pid
    no_worktrees_left(repo)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes; read its state.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_overlay_applies_to_every_arm_and_is_recorded(repo: Repo) -> None:
    py_project(repo)
    repo.write("specs/patches/fix.diff", _patch_sub())
    plan = write_plan(
        repo,
        {
            "test": "grep -q 'a + b + 1' src/calc.py",  # green only with the overlay
            "overlay": [{"patch": "specs/patches/fix.diff"}],
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "src/calc.py", "old": "+ 1", "new": "+ 2"}},
            ],
        },
    )
    code, data = _run(repo, plan)
    arms = _by_arm(data)
    assert arms["control"]["verdict"] == "GREEN" and arms["B"]["verdict"] == "RED"
    assert data["run"]["overlay"] == [{"patch": "specs/patches/fix.diff"}]
    for r in data["arms"]:
        assert r["overlay"] == [{"patch": "specs/patches/fix.diff"}]
    # The control's restore undoes the overlay; its targets are the overlay's files.
    assert arms["control"]["restored"] is True
    assert [t["path"] for t in arms["control"]["targets"]] == ["src/calc.py"]


def test_overlay_that_does_not_apply_is_an_error(repo: Repo) -> None:
    py_project(repo)
    repo.write("specs/patches/stale.diff", _patch_stale())
    plan = write_plan(
        repo,
        {
            "test": PY_TEST_CMD,
            "overlay": [{"patch": "specs/patches/stale.diff"}],
            "arms": [{"name": "control"}],
        },
    )
    code, data = _run(repo, plan)
    (r,) = data["arms"]
    assert r["verdict"] == "ERROR" and "overlay" in r["reason"]
    assert code == 1


def test_a_path_through_a_symlink_out_of_the_tree_is_an_error(repo: Repo, tmp_path: Path) -> None:
    py_project(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me\n")
    os.symlink(outside, repo.path / "link")
    repo.commit("Add a link\n\nBody.\n")
    plan = write_plan(
        repo,
        {
            "test": "true",
            "arms": [
                {"name": "X", "replace": {"path": "link/victim.txt", "old": "keep", "new": "lose"}}
            ],
        },
    )
    # The plan loader refuses it in the user's tree already.
    run = repo.tools("mutate", "run", plan)
    assert run.exit_code == 2
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    assert "symbolic link" in run.stderr
    assert (outside / "victim.txt").read_text() == "keep me\n"


def test_revert_to_a_revision_where_the_file_is_absent_deletes_it(repo: Repo) -> None:
    first = repo.commit("Start\n\nBody.\n", {"README": "x\n"})
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "test": PY_TEST_CMD,
            "arms": [{"name": "gone", "revert": {"path": "src/calc.py", "to": first}}],
        },
    )
    code, data = _run(repo, plan)
    (r,) = data["arms"]
    assert r["verdict"] == "RED" and r["mutation"] == f"revert src/calc.py to {first}"
    (t,) = r["targets"]
    assert t["sha256_mutated"] is None and t["sha256_before"] == t["sha256_after"]
    assert r["numstat"] == [{"path": "src/calc.py", "added": 0, "deleted": 6}]
    assert r["mutations"][0]["commit"] == first


def test_revert_to_an_older_content(repo: Repo) -> None:
    old = repo.commit("Start\n\nBody.\n", {"src/calc.py": PY_CALC.replace("a + b", "a - b")})
    py_project(repo)
    plan = write_plan(
        repo,
        {
            "test": PY_TEST_CMD,
            "arms": [{"name": "B", "revert": {"path": "src/calc.py", "to": "HEAD~1"}}],
            "expect": {"B": "RED"},
        },
    )
    code, data = _run(repo, plan)
    assert code == 0
    assert data["arms"][0]["mutations"][0]["commit"] == old


def test_base_other_than_head(repo: Repo) -> None:
    py_project(repo)
    repo.commit("Break it\n\nBody.\n", {"src/calc.py": PY_CALC.replace("2 * x", "3 * x")})
    plan = write_plan(repo, {"base": "HEAD~1", "test": PY_TEST_CMD, "arms": [{"name": "c"}]})
    code, data = _run(repo, plan)
    assert data["arms"][0]["verdict"] == "GREEN"
    assert data["arms"][0]["base"] == repo.head("HEAD~1")


def test_text_report_and_sigterm_free_run(repo: Repo) -> None:
    py_project(repo)
    plan = write_plan(repo, {"test": PY_TEST_CMD, "arms": [{"name": "control"}]})
    run = repo.tools("mutate", "run", plan)
    assert run.exit_code == 0, run.stderr
    assert "control  GREEN" in run.stdout
    assert "result: ok" in run.stdout
    assert "mutate: control: GREEN" in run.stderr  # plain progress lines off a terminal
    # Our handlers are gone once the command returns.
    assert signal.getsignal(signal.SIGTERM) in (signal.SIG_DFL, signal.default_int_handler)


def test_many_arms_at_once_register_their_worktrees_safely(repo: Repo) -> None:
    """git reads every worktree's records while it adds one: adds made at the same time once
    failed on each other's half-written records."""
    py_project(repo)
    arms = [{"name": "control"}] + [
        {"name": f"M{i}", "replace": {"path": "README", "old": "calc", "new": f"m{i}"}}
        for i in range(7)
    ]
    plan = write_plan(repo, {"test": "true", "arms": arms})
    for _ in range(3):
        code, data = _run(repo, plan, "-j", "8")
        assert code == 0, data["failures"]
        assert {r["verdict"] for r in data["arms"]} == {"GREEN"}
    no_worktrees_left(repo)


def test_a_worktree_goes_back_reset_only_for_an_arm_still_to_come(repo: Repo) -> None:
    """The pool resets a worktree given back clean while an announced arm will take it; the
    last one is removed at once (resetting it would be work thrown away)."""
    from tools.git import Git
    from tools.mutate.worktree import Pool, Worktrees

    py_project(repo)
    git = Git(repo.path)
    with Worktrees(git.root, git.tools_dir()) as wts:
        pool = Pool(wts, git.resolve("HEAD") or "")
        pool.expect(2)
        first, reused = pool.take("control")
        assert not reused
        (first / "stray.txt").write_text("left by an arm\n")
        pool.give_back(first, reusable=True)
        second, reused = pool.take("B")
        assert reused and second == first and not (second / "stray.txt").exists()
        pool.give_back(second, reusable=True)
        assert not second.exists()  # no arm to come: removed, not reset
    no_worktrees_left(repo)


def test_a_reused_worktree_starts_each_arm_from_exactly_base(repo: Repo) -> None:
    """-j 1: the second and later arms take the worktree the first gave back; each must find
    base and nothing else (no build output, no file an earlier arm changed or made)."""
    py_project(repo)
    repo.write(".gitignore", "out/\n")
    repo.commit("Ignore build outputs\n\nBody.\n")
    # The build leaves an ignored output and an untracked file behind; the test fails when
    # an earlier arm's leftovers are there.
    build = "mkdir -p out && echo built > out/artifact && echo x > stray.txt"
    check = (
        f"test ! -e out/old && test ! -e stray.old && {PY_TEST_CMD} && "
        "mv out/artifact out/old && mv stray.txt stray.old"
    )
    plan = write_plan(
        repo,
        {
            "build": build,
            "test": check,
            "arms": [
                {"name": "control"},
                {"name": "B", "replace": {"path": "README", "old": "calc", "new": "calculator"}},
                {"name": "C", "replace": {"path": "README", "old": "calc", "new": "abacus"}},
            ],
            "expect": {"control": "GREEN", "B": "GREEN", "C": "GREEN"},
        },
    )
    code, data = _run(repo, plan, "-j", "1")
    assert code == 0, data["failures"]
    arms = _by_arm(data)
    assert {k: v["verdict"] for k, v in arms.items()} == {
        "control": "GREEN",
        "B": "GREEN",
        "C": "GREEN",
    }
    assert [arms[a]["worktree"] for a in ("control", "B", "C")] == ["new", "reused", "reused"]
    # Each arm proved its own change against base: README's sha256 before is base's each time.
    befores = {arms[a]["targets"][0]["sha256_before"] for a in ("B", "C")}
    assert len(befores) == 1
