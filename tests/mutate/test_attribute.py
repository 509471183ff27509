"""``tools attribute``: bisection in a worktree, then the two-way proof at ``bad``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import Repo
from tests.mutate.conftest import (
    HEX40,
    HEX64,
    LEDGER,
    PY_CALC,
    PY_TEST,
    fingerprint,
    ledger_records,
    no_worktrees_left,
)
from tools.attribute import judge

LIB = "/* scaler */\n\nint scale(int x) {\n    return 2 * x;\n}\n\n/* end of scaler */\n"
MAIN = (
    "#include <stdio.h>\n"
    "int scale(int x);\n"
    "int main(void) {\n"
    '    printf("scale(3) = %d\\n", scale(3));\n'
    "    return scale(3) == 6 ? 0 : 1;\n"
    "}\n"
)
BUILD = "cc -o prog src/main.c src/lib.c"


def _need_cc() -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) on this machine")


def _attribute(repo: Repo, *args: str) -> tuple[int, dict, str]:
    run = repo.tools("--format", "json", "attribute", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, json.loads(run.stdout)["attribution"], run.stderr


def _check_record(r: dict) -> None:
    assert r["kind"] == "attribution"
    for key in ("good", "bad"):
        assert HEX40.fullmatch(r[key])
    assert r["plan"] == f"attribute:{r['good'][:12]}..{r['bad'][:12]}"
    assert r["first_bad"] is None or HEX40.fullmatch(r["first_bad"])
    assert isinstance(r["test"], str) and isinstance(r["paths"], list)
    for phase in ("revert", "restore"):
        assert set(r[phase]) >= {"run_rc", "targets"}
        for t in r[phase]["targets"]:
            assert set(t) >= {"path", "sha256_before", "sha256_mutated", "sha256_after"}
            for k in ("sha256_before", "sha256_mutated", "sha256_after"):
                assert t[k] is None or HEX64.fullmatch(t[k])
    assert r["verdict"] in ("ATTRIBUTED", "NOT-ATTRIBUTED")
    assert (r["reason"] is None) == (r["verdict"] == "ATTRIBUTED")
    assert "spec" in r and "build" in r


def test_commit_four_of_six_breaks_the_test_and_is_attributed(repo: Repo) -> None:
    _need_cc()
    shas = [repo.commit("One\n\nBody.\n", {"src/lib.c": LIB, "src/main.c": MAIN})]
    shas.append(repo.commit("Two\n\nBody.\n", {"README": "scaler\n"}))
    shas.append(repo.commit("Three\n\nBody.\n", {"src/main.c": "/* main */\n" + MAIN}))
    shas.append(repo.commit("Four\n\nBody.\n", {"src/lib.c": LIB.replace("2 * x", "3 * x")}))
    lib5 = LIB.replace("2 * x", "3 * x") + "int other(void) { return 1; }\n"
    shas.append(repo.commit("Five\n\nBody.\n", {"src/lib.c": lib5}))
    shas.append(repo.commit("Six\n\nBody.\n", {"README": "scaler, now faster\n"}))
    before = fingerprint(repo)
    code, r, stderr = _attribute(
        repo, "--good", shas[0], "--bad", "HEAD", "--build", BUILD, "--test", "./prog"
    )
    _check_record(r)
    assert code == 0 and r["verdict"] == "ATTRIBUTED", r["reason"]
    assert r["first_bad"] == shas[3]
    assert r["paths"] == ["src/lib.c"]
    assert r["revert"]["run_rc"] == 0 and r["restore"]["run_rc"] == 1
    assert r["revert"]["method"] == "reverse-patch"  # commit five's later change is kept
    (t,) = r["restore"]["targets"]
    assert t["sha256_before"] == t["sha256_after"] != t["sha256_mutated"]
    (rt,) = r["revert"]["targets"]
    assert rt["sha256_mutated"] == t["sha256_mutated"]
    assert any(s.get("check") == "good" for s in r["steps"])
    assert "bisect:" in stderr
    (rec,) = ledger_records(repo)
    assert rec["id"] == r["id"] and rec["kind"] == "attribution"
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    no_worktrees_left(repo)


def test_a_break_needing_two_commits_is_attributed_to_neither(repo: Repo) -> None:
    """Commit three changes the function's signature (the callers no longer build: a skip),
    commit four adapts the caller and the result is wrong: bisection cannot separate them."""
    _need_cc()
    header = "int scale(int x);\n"
    lib = '#include "lib.h"\n' + LIB
    main = MAIN.replace("int scale(int x);\n", '#include "lib.h"\n')
    good = repo.commit(
        "One\n\nBody.\n", {"src/lib.h": header, "src/lib.c": lib, "src/main.c": main}
    )
    repo.commit("Two\n\nBody.\n", {"README": "scaler\n"})
    three = repo.commit(
        "Three\n\nBody.\n",
        {
            "src/lib.h": "int scale(int x, int k);\n",
            "src/lib.c": lib.replace("int scale(int x)", "int scale(int x, int k)").replace(
                "2 * x", "k * x"
            ),
        },
    )
    four = repo.commit("Four\n\nBody.\n", {"src/main.c": main.replace("scale(3)", "scale(3, 3)")})
    repo.commit("Five\n\nBody.\n", {"NOTES": "five\n"})
    repo.commit("Six\n\nBody.\n", {"NOTES": "six\n"})
    code, r, _ = _attribute(
        repo, "--good", good, "--bad", "HEAD", "--build", BUILD, "--test", "./prog"
    )
    _check_record(r)
    assert code == 1 and r["verdict"] == "NOT-ATTRIBUTED"
    assert r["first_bad"] is None
    assert set(r["candidates"]) == {three, four}
    assert "cannot separate" in r["reason"]
    assert [s["label"] for s in r["steps"] if s["commit"] == three] == ["skip"]
    no_worktrees_left(repo)


def test_two_independent_breaks_fail_the_revert_direction(repo: Repo) -> None:
    test = "python3 tests/test_calc.py"
    good = repo.commit("One\n\nBody.\n", {"src/calc.py": PY_CALC, "tests/test_calc.py": PY_TEST})
    repo.commit("Two\n\nBody.\n", {"README": "x\n"})
    three = repo.commit("Three\n\nBody.\n", {"src/calc.py": PY_CALC.replace("a + b", "a - b")})
    repo.commit("Four\n\nBody.\n", {"README": "y\n"})
    repo.commit(
        "Five\n\nBody.\n",
        {"src/calc.py": PY_CALC.replace("a + b", "a - b").replace("2 * x", "3 * x")},
    )
    code, r, _ = _attribute(repo, "--good", good, "--bad", "HEAD", "--test", test)
    _check_record(r)
    assert code == 1 and r["first_bad"] == three
    assert r["verdict"] == "NOT-ATTRIBUTED"
    assert r["reason"].startswith("revert direction failed")
    assert r["revert"]["run_rc"] == 1 and r["restore"]["run_rc"] == 1


def test_named_paths_limit_the_revert(repo: Repo) -> None:
    test = "python3 tests/test_calc.py"
    good = repo.commit("One\n\nBody.\n", {"src/calc.py": PY_CALC, "tests/test_calc.py": PY_TEST})
    bad = repo.commit(
        "Two\n\nBody.\n", {"src/calc.py": PY_CALC.replace("a + b", "a - b"), "README": "r\n"}
    )
    code, r, _ = _attribute(
        repo, "--good", good, "--bad", bad, "--test", test, "--path", "src/calc.py"
    )
    assert code == 0 and r["verdict"] == "ATTRIBUTED" and r["paths"] == ["src/calc.py"]
    # Naming only a path the break does not live in: the revert direction fails.
    code, r, _ = _attribute(repo, "--good", good, "--bad", bad, "--test", test, "--path", "README")
    assert code == 1 and r["reason"].startswith("revert direction failed")


def test_a_test_that_passes_at_bad_is_not_attributed(repo: Repo) -> None:
    good = repo.commit("One\n\nBody.\n", {"a": "1\n"})
    bad = repo.commit("Two\n\nBody.\n", {"a": "2\n"})
    code, r, _ = _attribute(repo, "--good", good, "--bad", bad, "--test", "true")
    assert code == 1 and r["verdict"] == "NOT-ATTRIBUTED"
    assert "does not fail at bad" in r["reason"]
    code, r, _ = _attribute(repo, "--good", good, "--bad", bad, "--test", "false")
    assert "does not pass at good" in r["reason"]


def test_a_status_outside_the_protocol_stops_bisection(repo: Repo) -> None:
    shas = [repo.commit(f"C{i}\n\nBody.\n", {"n": f"{i}\n"}) for i in range(5)]
    # 0 at the good end, 1 at the bad end, 200 in between.
    test = "n=$(cat n); [ $n -eq 0 ] && exit 0; [ $n -eq 4 ] && exit 1; exit 200"
    code, r, _ = _attribute(repo, "--good", shas[0], "--bad", shas[-1], "--test", test)
    assert code == 1 and r["first_bad"] is None
    assert "outside the bisect protocol" in r["reason"]


def test_bad_arguments_exit_2(repo: Repo) -> None:
    a = repo.commit("One\n\nBody.\n", {"a": "1\n"})
    b = repo.commit("Two\n\nBody.\n", {"a": "2\n"})
    for args, needle in [
        (["--good", "nope", "--bad", b], "--good"),
        (["--good", a, "--bad", "nope^^"], "--bad"),
        (["--good", b, "--bad", a], "not an ancestor"),
        (["--good", a, "--bad", a], "same commit"),
        (["--good", a, "--bad", b, "--path", "../x"], "--path"),
        (["--good", a, "--bad", b, "--spec", "specs/none.md"], "--spec"),
    ]:
        run = repo.tools("attribute", *args, "--test", "true")
        assert run.exit_code == 2, (args, run.stdout, run.stderr)
        assert run.stderr.startswith("error:") and "internal error" not in run.stderr
        assert needle in run.stderr
    assert not (repo.path / LEDGER).exists()


def test_judge_needs_both_directions() -> None:
    c = "a" * 40
    ok = {"compile_rc": None, "run_rc": 0}
    red = {"compile_rc": None, "run_rc": 1, "verified": True}
    assert judge(ok, red, changed=True, first_bad=c) == ("ATTRIBUTED", None)
    v, why = judge({"compile_rc": None, "run_rc": 1}, red, changed=True, first_bad=c)
    assert v == "NOT-ATTRIBUTED" and why.startswith("revert direction failed")
    v, why = judge(ok, {**red, "run_rc": 0}, changed=True, first_bad=c)
    assert v == "NOT-ATTRIBUTED" and why.startswith("restore direction failed")
    v, why = judge(ok, {**red, "verified": False}, changed=True, first_bad=c)
    assert "sha256" in why
    v, why = judge({"compile_rc": 2, "run_rc": None}, red, changed=True, first_bad=c)
    assert "build fails" in why
    v, why = judge(ok, red, changed=False, first_bad=c)
    assert v == "NOT-ATTRIBUTED" and "changed no file" in why


# -- the machine verdicts in a bisection: a step that proves nothing is a skip (125) ------------
# Commit n holds `n`; commit 1 breaks the test; commits 2-4 misbehave in the way each case
# names (without the verdicts they would abort the bisection, or be read good or bad).
MISBEHAVE = {
    "KILLED": "kill -KILL $$",
    "EMPTY": "echo 'No tests ran'; exit 0",
    "ENV-FAULT": "echo 'writing results: No space left on device'; exit 1",
}


def _history(repo: Repo, misbehave: str, script: Path) -> list[str]:
    shas = [repo.commit(f"C{i}\n\nBody.\n", {"n": f"{i}\n"}) for i in range(6)]
    script.write_text(
        "n=$(cat n)\n"
        f'if [ "$n" -ge 2 ] && [ "$n" -le 4 ]; then {misbehave}; fi\n'
        '[ "$n" -ge 1 ] && exit 1\nexit 0\n'
    )
    return shas


@pytest.mark.parametrize("verdict", sorted(MISBEHAVE))
def test_a_step_that_proves_nothing_is_a_skip(repo: Repo, verdict: str, tmp_path: Path) -> None:
    script = tmp_path / "t.sh"
    shas = _history(repo, MISBEHAVE[verdict], script)
    before = fingerprint(repo)
    code, r, stderr = _attribute(
        repo, "--good", shas[0], "--bad", shas[5], "--test", f"sh {script}"
    )
    _check_record(r)
    assert code == 0 and r["verdict"] == "ATTRIBUTED", r["reason"]
    assert r["first_bad"] == shas[1]
    odd = [s for s in r["steps"] if s.get("verdict") == verdict]
    assert odd and all(s["label"] == "skip" for s in odd), r["steps"]
    assert f"is skip ({verdict})" in stderr
    assert fingerprint(repo, skip=(LEDGER,)) == {k: v for k, v in before.items() if k != LEDGER}
    no_worktrees_left(repo)


def test_a_crash_in_a_bisection_step_is_bad(repo: Repo) -> None:
    shas = [repo.commit(f"C{i}\n\nBody.\n", {"n": f"{i}\n"}) for i in range(4)]
    test = 'n=$(cat n); [ "$n" -ge 2 ] && kill -SEGV $$; exit 0'
    code, r, _ = _attribute(repo, "--good", shas[0], "--bad", shas[3], "--test", test)
    assert code == 0 and r["first_bad"] == shas[2], r["reason"]
    crashes = [s for s in r["steps"] if s.get("signal") == "SIGSEGV"]
    assert crashes and all(s["label"] == "bad" and s["run_rc"] == 139 for s in crashes)


def test_no_quiet_window_in_attribute(repo: Repo) -> None:
    shas = [repo.commit(f"C{i}\n\nBody.\n", {"n": f"{i}\n"}) for i in range(3)]
    test = 'n=$(cat n); [ "$n" -ge 1 ] && exit 1; exit 0'
    args = ["--good", shas[0], "--bad", shas[2], "--test", test, "--quiet-wait", "0"]
    code, r, _ = _attribute(repo, *args, "--max-load", "-1")
    assert code == 1 and r["verdict"] == "NOT-ATTRIBUTED"
    assert "is NO-QUIET-WINDOW" in r["reason"]
    assert r["steps"][0]["quiet"]["quiet"] is False
    # The clean twin: a limit every machine meets.
    code, r, _ = _attribute(repo, *args, "--max-load", "100000")
    assert code == 0 and r["first_bad"] == shas[1], r["reason"]


def test_a_build_that_does_not_rebuild_is_stale(repo: Repo) -> None:
    _need_cc()
    good = repo.commit("One\n\nBody.\n", {"src/lib.c": LIB, "src/main.c": MAIN})
    bad = repo.commit("Two\n\nBody.\n", {"src/lib.c": LIB.replace("2 * x", "3 * x")})
    # `prog` is left from the step before and never rebuilt: the bad check runs good's binary.
    lazy = f"test -f prog || {BUILD}"
    code, r, _ = _attribute(
        repo, "--good", good, "--bad", bad, "--build", lazy, "--test", "./prog",
        "--artifact", "prog",
    )  # fmt: skip
    assert code == 1 and r["verdict"] == "NOT-ATTRIBUTED"
    assert "the bad check" in r["reason"] and "STALE" in r["reason"], r["reason"]
    assert r["steps"][1]["verdict"] == "STALE" and r["steps"][1]["run_rc"] is None
    # The clean twin: a build that always rebuilds.
    code, r, _ = _attribute(
        repo, "--good", good, "--bad", bad, "--build", BUILD, "--test", "./prog",
        "--artifact", "prog",
    )  # fmt: skip
    assert code == 0 and r["verdict"] == "ATTRIBUTED", r["reason"]
    assert r["revert"]["artifacts"] != r["restore"]["artifacts"]
