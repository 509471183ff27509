"""``tools init --adopt`` learns what the history shows (SPEC §9.3): doc checkpoints from
co-change and from lifecycle moves, the spec folder, subject length, bodies and a marker ending
the message, the device layer, programs and declarations a ratchet must not count, the allow
marker in use and the matrix holding its tags, each with its evidence; and the learned config
then judges the next commit as the history would."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.adoption_history import MARKER, PLAIN, build
from tests.conftest import Repo
from tools.adopt.learn_docs import learn_docs
from tools.adopt.learn_specs import learn_specs
from tools.adopt.learn_style import learn_style
from tools.git import Change, Commit

TRAILERS = f"Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: {PLAIN}\n"
ADOPTION = f"Adopt the protocol gates\n\nToday's findings are debt.\n\n{MARKER}\n{TRAILERS}"


@pytest.fixture(scope="module")
def habits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The adopted habits history, built and adopted once; each test copies it."""
    repo = Repo(build(tmp_path_factory.mktemp("habits") / "engine", 300, habits=True), init=False)
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    repo.git("add", "-A")
    repo.git("commit", "-q", "-F", "-", input=ADOPTION.encode())
    return repo.path


@pytest.fixture
def adopted(habits: Path, tmp_path: Path) -> Repo:
    clone = tmp_path / "clone"
    Repo(tmp_path, init=False).git("clone", "-q", str(habits), str(clone))
    repo = Repo(clone, init=False)
    repo.git("config", "user.name", "Agent")
    repo.git("config", "user.email", "agent@example.com")
    # The config's base is main: the clone's main is the adoption commit.
    return repo


def test_adoption_prints_each_learned_choice_with_its_evidence(tmp_path: Path) -> None:
    repo = Repo(build(tmp_path / "engine", 300, habits=True), init=False)
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    out = run.stdout
    readme = "README.md changed with src/** in 150 of 190 commits → docs rule readme-md"
    assert readme in out
    assert "docs/BENCHMARKS.md changed with src/** in 130 of 190 commits" in out
    assert "scripts/**: fewer than 10 commits" in out
    assert ".agents/specs/ holds 2 specs" in out
    assert "→ subject_max: 113" in out
    assert "165 of 200 commits have a body" in out and "require_body: false" in out
    assert "19 of 182 marked commits end with the bare" in out
    side = "10 of 10 side-branch commits carry no marker, 182 of 190 first-parent commits carry it"
    assert f"{side} → trailers.first_parent: true" in out
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    assert cfg["style"] == {"subject_max": 113, "require_body": False}
    assert cfg["specs"] == {"dir": ".agents/specs"}
    assert cfg["rules"] == {"marker-last": "off"}
    assert cfg["trailers"]["first_parent"] is True
    assert "a bot, 8 commits; rules most of them break: framing 8, marker-missing 8" in out
    bot = "49699333+dependabot[bot]@users.noreply.github.com"
    assert {(e["author"], e["rule"]) for e in cfg["trailers"]["exceptions"]} == {
        (bot, "framing"),
        (bot, "marker-missing"),
        (bot, "trailer-missing"),
    }
    # The matrix: its State column, the states its rows use (not a row's key written there),
    # and links to the specs as written from its folder.
    (entry,) = cfg["docs"]["spec_now"]
    assert entry["matrix"] == ".agents/roadmap.md" and entry["state_column"] == "State"
    assert entry["states"] == ["ACTIVE", "PLANNED"]
    assert ".agents/roadmap.md: 1 table(s) whose rows carry a state in State" in out
    ratchet = cfg["ratchets"]["device-leakage"]
    assert ratchet["exclude"][-2:] == ["src/kern/**", "src/core/cuda_helpers.cc"]
    assert ratchet["buckets"]["cuda_include"]["outside_guards"] == ["ENGINE_FAST_PATH"]
    assert "outside_guards" not in ratchet["buckets"]["kcuda"]
    assert "src/kern/ holds device-named folders: a per-device library, 2 file(s)" in out
    # The library's dispatch, the device-named file and the guarded include are not counted;
    # the shared loader's unguarded include is. The interface's enumerator declares the
    # device and is exempt; the kCUDA in its inline function's body branches and counts.
    assert "kcuda 1, is_cuda 12, cuda_include 1, vt_macro 0" in out
    assert "1 site(s) on 1 line(s) outside every function body declare a device" in out
    assert ratchet["exempt_files"] == {"src/platforms/interface.h": {"kcuda": 1}}
    assert [r["require_changed"] for r in cfg["docs"]["rules"]] == [
        ["README.md"],
        ["docs/BENCHMARKS.md"],
    ]
    assert repo.tools("config", "validate").exit_code == 0
    assert repo.tools("preflight").exit_code == 0


def test_a_plain_history_learns_nothing_beyond_the_defaults(tmp_path: Path) -> None:
    repo = Repo(build(tmp_path / "engine", 300), init=False)
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "(the default covers 95%) → subject_max: 72" in run.stdout
    assert "src/** (195 commits): no documentation file changes with it" in run.stdout
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    assert not {"style", "docs", "specs", "rules"} & set(cfg)
    # Its side branches are marked like main: every commit is judged.
    assert "→ trailers.first_parent: false" in run.stdout
    assert "first_parent" not in cfg["trailers"]


def _commit(repo: Repo, subject: str, files: dict[str, str | bytes], *, body: bool = True) -> None:
    text = "Why it changed.\n\n" if body else ""
    repo.branch("agent/next")
    repo.commit(f"{subject}\n\n{text}{MARKER}\n{TRAILERS}", files)


def _failing(repo: Repo) -> dict[str, set[str]]:
    run = repo.tools("preflight", "--format", "json")
    report = run.json()
    return {
        g["gate"]: {f["rule"] for f in g["findings"] if f["severity"] == "error"}
        for g in report["gates"]
        if g["status"] == "fail"
    }


def test_code_without_its_docs_fails_the_learned_checkpoint(adopted: Repo) -> None:
    engine = adopted.read("src/core/engine_0.cc").decode()
    _commit(adopted, "Speed up the engine", {"src/core/engine_0.cc": engine + "int z;\n"})
    assert _failing(adopted) == {"docs": {"checkpoint-missed"}}


def test_code_with_its_docs_passes_with_the_habits_the_history_has(adopted: Repo) -> None:
    engine = adopted.read("src/core/engine_0.cc").decode()
    files: dict[str, str | bytes] = {
        "src/core/engine_0.cc": engine + "int z;\n",
        "README.md": "# engine\n\nFaster.\n",
        "docs/BENCHMARKS.md": "# Benchmarks\n\n0.9 ms.\n",
    }
    # A long subject and no body, as a fifth of the history has; then the marker glued last.
    subject = "Speed up the engine " + "x" * 80
    _commit(adopted, subject, files, body=False)
    adopted.commit(f"Note the speed-up\n\nWhy.\n\n{TRAILERS}{MARKER}\n", {"docs/x.md": "# X\n"})
    assert _failing(adopted) == {}


def _commit_record(paths: list[str]) -> Commit:
    return Commit("0" * 40, ["1" * 40], b"", 0, [Change("M", p) for p in paths])


def test_docs_rules_need_the_share_and_the_count() -> None:
    # 10 of 16 (62.5 %) and 10 commits: a rule; 9 of 15 (60 %) but only 9: none.
    commits = [_commit_record(["lib/a.c", "NOTES.md"]) for _ in range(10)]
    commits += [_commit_record(["lib/a.c"]) for _ in range(6)]
    commits += [_commit_record(["app/m.c", "APP.md"]) for _ in range(9)]
    commits += [_commit_record(["app/m.c"]) for _ in range(6)]
    learned = learn_docs(commits, {"NOTES.md", "APP.md"})
    assert learned.rules == [
        {"name": "notes-md", "when_changed": ["lib/**"], "require_changed": ["NOTES.md"]}
    ]
    # A file that no longer exists is never required.
    assert learn_docs(commits, {"APP.md"}).rules == []
    # At the boundary of the share: 6 of 10 is 60 %, 10 of 17 is under it.
    edge = [_commit_record(["lib/a.c", "NOTES.md"]) for _ in range(10)]
    assert learn_docs(edge + [_commit_record(["lib/a.c"])] * 6, {"NOTES.md"}).rules
    assert not learn_docs(edge + [_commit_record(["lib/a.c"])] * 7, {"NOTES.md"}).rules


def test_areas_and_documentation_files() -> None:
    from tools.adopt.learn_docs import area_of, is_doc

    areas = {
        "src/core/a.cc": "src/**",
        "CMakeLists.txt": "CMakeLists.txt",
        ".github/workflows/ci.yml": ".github/workflows/**",
        ".agents/state.md": ".agents/state.md",  # the agents' record, not documentation
        ".gitignore": None,
        "docs/a.txt": None,
        "G.md": None,
        "src/core/NOTES.rst": None,
    }
    assert {p: area_of(p) for p in areas} == areas
    assert is_doc("README.md") and is_doc("doc/x.png") and not is_doc(".agents/specs/a.md")
    # A documentation file is never its own trigger; a record in a hidden folder is one.
    commits = [_commit_record([".agents/state.md", "G.md", "docs/a.txt"])] * 12
    rules = learn_docs(commits, {"G.md", "docs/a.txt"}).rules
    assert [(r["when_changed"], r["require_changed"]) for r in rules] == [
        ([".agents/state.md"], ["G.md"]),
        ([".agents/state.md"], ["docs/a.txt"]),
    ]


def test_the_spec_folder_is_the_one_holding_most_specs() -> None:
    assert learn_specs(["specs/a.md", ".agents/specs/b.md"], "specs").dir is None
    found = learn_specs([".agents/specs/a.md", ".agents/specs/b.md", "x/spec/c.md"], "specs")
    assert found.dir == ".agents/specs"
    assert "also x/spec/ 1" in found.evidence
    assert learn_specs(["specs/a.txt", "README.md"], "specs").dir is None


def test_style_thresholds_are_the_documented_ones() -> None:
    short = [f"Fix {i}\n\nBody.\n" for i in range(19)]
    # 1 long subject in 20 is 5 %: the default still covers 95 %.
    assert learn_style([*short, "L" * 90 + "\n\nBody.\n"], None, 72).style == {}
    two = learn_style([*short[:18], *["L" * 90 + "\n\nBody.\n"] * 2], None, 72)
    assert two.style == {"subject_max": 90}
    # 9 of 10 with a body keeps body-missing; 8 of 10 does not.
    nine = [*short[:9], "Fix\n"]
    assert learn_style(nine, None, 72).style == {}
    assert learn_style([*short[:8], "Fix\n", "Fix\n"], None, 72).style == {"require_body": False}
    # One marked message ending with the marker decides nothing; 2 of 20 (10 %) do.
    marked = [f"Fix {i}\n\nBody.\n\n{MARKER}\n{TRAILERS}" for i in range(20)]
    last = f"Fix\n\nBody.\n\n{TRAILERS}{MARKER}\n"
    assert learn_style([*marked[:19], last], MARKER, 72).rules == {}
    assert learn_style([*marked[:18], last, last], MARKER, 72).rules == {"marker-last": "off"}


def test_a_repository_without_protocol_files_or_c_gets_none(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    for i in range(12):
        repo.commit(f"Change {i}\n\nBody {i}.\n", {"app/main.py": f"x = {i}\n"})
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "no NOW.md in the tree → gate now left out of preflight.gates" in run.stdout
    assert "ratchets: {} (`--with ratchet` keeps them)" in run.stdout
    assert "app/** (12 commits): no documentation file changes with it" in run.stdout
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    assert "now" not in cfg["preflight"]["gates"] and "index" not in cfg["preflight"]["gates"]
    assert cfg["ratchets"] == {}
    written = {p.name for p in (repo.path / ".agents").rglob("*")}
    assert not {"NOW.md", "issue-index.md", "device-leakage.json"} & written
    assert repo.tools("preflight").exit_code == 0


def test_with_keeps_the_files_the_tree_lacks(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {"app/main.py": "x = 1\n", "NOTES/NOW.md": "# Now\n"})
    run = repo.tools("init", "--adopt", "--with", "index,ratchet")
    assert run.exit_code == 0, run.stdout + run.stderr
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    # The digest the tree has, where it has it; the index because it was asked for.
    assert cfg["now"] == {"path": "NOTES/NOW.md"}
    assert "--with index → .agents/issue-index.md written" in run.stdout
    assert (repo.path / ".agents/issue-index.md").exists()
    assert "ratchets" not in cfg
    assert {"now", "index", "ratchet"} <= set(cfg["preflight"]["gates"])
    bad = repo.tools("init", "--adopt", "--with", "now,bogus", "--force")
    assert bad.exit_code == 2 and "--with: unknown bogus" in bad.stderr
    assert repo.tools("init", "--with", "now").exit_code == 2


def _side_branch_history(repo: Repo) -> str:
    """main with marked commits and a merged side branch of two unmarked ones; returns the
    base sha (the range is base..HEAD)."""
    marked = f"Step\n\nWhy.\n\n{MARKER}\n\n{TRAILERS}"
    base = repo.commit(marked, {"a.txt": "0\n"})
    repo.branch("side")
    repo.commit("Contributor fix\n\nNo protocol here.\n", {"b.txt": "1\n"})
    repo.commit("Contributor test\n\nNone here either.\n", {"c.txt": "1\n"})
    repo.checkout("main")
    repo.commit(marked, {"a.txt": "1\n"})
    repo.git("merge", "-q", "--no-ff", "--no-edit", "side")
    repo.commit(marked, {"a.txt": "2\n"})
    return base


@pytest.mark.parametrize("first_parent", [False, True])
def test_first_parent_judges_the_chain_only(make_repo, first_parent: bool) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    base = _side_branch_history(repo)
    repo.write(
        ".agents/protocol.yaml",
        f"trailers:\n  first_parent: {str(first_parent).lower()}\n  merges: skip\n",
    )
    run = repo.tools("trailers", "check", "--base", base, "--format", "json")
    gate = next(g for g in run.json()["gates"] if g["gate"] == "trailers")
    missing = [f for f in gate["findings"] if f["rule"] == "marker-missing"]
    if first_parent:
        assert run.exit_code == 0, run.stdout
        assert gate["stats"]["side_commits"] == 2 and not missing
    else:
        assert run.exit_code == 1
        assert len(missing) == 2 and "side_commits" not in gate["stats"]


def test_first_parent_keeps_a_range_without_one_head_whole() -> None:
    from tools.commit_messages import Subject, first_parent_chain
    from tools.report import GateResult

    # Two commits neither of which names the other: no single head, nothing left out.
    subjects = [
        Subject("a", Commit("0" * 40, ["1" * 40], b"a", 0, [])),
        Subject("b", Commit("2" * 40, ["1" * 40], b"b", 0, [])),
    ]
    result = GateResult("trailers")
    assert first_parent_chain(subjects, result) == subjects
    assert "side_commits" not in result.stats


def test_first_parent_needs_enough_unmarked_side_commits() -> None:
    from tools.adopt.learn_branches import learn_first_parent

    marked = f"S\n\nB.\n\n{MARKER}\n{TRAILERS}".encode()
    chain = [Commit(f"{i:040x}", [], marked, 0, []) for i in range(10)]
    side = [Commit(f"{i + 100:040x}", [], b"Side\n\nB.\n", 0, []) for i in range(5)]
    shas = [c.sha for c in chain]
    assert learn_first_parent(chain + side, shas, MARKER).first_parent
    assert not learn_first_parent(chain + side[:4], shas, MARKER).first_parent
    one_marked = [*side[:4], Commit(side[4].sha, [], marked, 0, [])]
    assert not learn_first_parent(chain + one_marked, shas, MARKER).first_parent
    assert not learn_first_parent(chain + side, shas, None).first_parent


def test_the_device_layer_is_read_from_the_tree() -> None:
    from tools.adopt.learn_ratchets import learn_ratchets
    from tools.config import defaults

    texts = {
        "lib/gpu/xpu/k.cc": b"int k;\n",
        "lib/gpu/sycl/k.cc": b"int k;\n",
        "lib/gpu/pick.cc": b"kCUDA;\n",
        "app/ops.cu": b"kCUDA;\n",
        "app/run_hip.cc": b"kCUDA;\n",
        "app/main.cc": b"#if defined(HAVE_ROCM_BLAS) && X\nint a;\n#endif\n"
        b'#ifndef PLAIN\n#else\n#include "k/cuda/a.h"\n#endif\n',
        "app/other.cc": b"#ifdef FEATURE\nint b;\n#endif\n",
    }
    learned = learn_ratchets(defaults()["ratchets"], texts, texts.get)
    assert learned.ratchets is not None
    ratchet = learned.ratchets["device-leakage"]
    # Two device legs make lib/gpu a library; a .cu file and a device-named file are devices.
    assert ratchet["exclude"][-3:] == ["lib/gpu/**", "app/ops.cu", "app/run_hip.cc"]
    # HAVE_ROCM_BLAS names a device; PLAIN encloses a device include; FEATURE does neither.
    assert ratchet["buckets"]["cuda_include"]["outside_guards"] == ["HAVE_ROCM_BLAS", "PLAIN"]
    plain = {"app/main.cc": b"int main() { return 0; }\n"}
    assert learn_ratchets(defaults()["ratchets"], plain, plain.get).ratchets is None


def test_a_row_moving_without_its_spec_fails_the_learned_matrix(adopted: Repo) -> None:
    matrix = adopted.read(".agents/roadmap.md").decode()
    moved = matrix.replace("| paged attention | `PLANNED`", "| paged attention | `ACTIVE`")
    _commit(adopted, "Start the paged path", {".agents/roadmap.md": moved})
    assert _failing(adopted) == {"docs": {"spec-now-missing"}}
    spec = adopted.read(".agents/specs/paged.md").decode().replace("Planned.", "Started.")
    adopted.commit(
        f"Say where the paged path stands\n\nWhy.\n\n{MARKER}\n{TRAILERS}",
        {".agents/specs/paged.md": spec, ".agents/roadmap.md": matrix},
    )
    # The earlier commit is still refused: the obligation is per commit.
    assert _failing(adopted) == {"docs": {"spec-now-missing"}}


def test_matrices_need_a_repeating_state_and_spec_links() -> None:
    from tools.adopt.learn_matrices import learn_matrices

    def rows(states: list[str], link: str = "[s](specs/a.md)") -> bytes:
        body = "".join(f"| `K{i}` | `{s}` | {link} |\n" for i, s in enumerate(states))
        return f"| Key | State | Spec |\n|---|---|---|\n{body}".encode()

    files = {
        "m.md": rows(["A", "B", "A"]),
        "ids.md": rows(["X1", "X2", "X3"]),  # no token repeats: keys, not a lifecycle
        "nolinks.md": rows(["A", "B", "A"], link="none"),
        "two.md": rows(["A", "B"]),  # fewer rows than decide
        "specs/s.md": rows(["A", "B", "A"]),  # a spec's own tables are no matrix
    }
    learned = learn_matrices(files, files.get, "specs")
    assert [e["matrix"] for e in learned.entries] == ["m.md"]
    assert learned.entries[0]["states"] == ["A", "B"]
    none = learn_matrices({"n.md": b"# N\n"}, {"n.md": b"# N\n"}.get, "specs")
    assert none.entries == [] and "docs.spec_now: []" in none.evidence[0]


def test_the_bot_keeps_committing_as_debt_and_an_agent_does_not(adopted: Repo) -> None:
    adopted.branch("agent/next")
    bump = "Bump numlib\n\nBumps numlib.\n\n---\nupdated-dependencies:\n- numlib\n"
    bot = {
        "GIT_AUTHOR_NAME": "dependabot[bot]",
        "GIT_AUTHOR_EMAIL": "49699333+dependabot[bot]@users.noreply.github.com",
    }
    subprocess.run(
        ["git", "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-m", bump],
        cwd=adopted.path,
        env={**os.environ, **bot},
        check=True,
    )
    run = adopted.tools("trailers", "check", "--format", "json")
    gate = next(g for g in run.json()["gates"] if g["gate"] == "trailers")
    assert run.exit_code == 0, run.stdout
    assert {f["rule"] for f in gate["findings"]} == {"framing", "marker-missing", "trailer-missing"}
    assert all(f["severity"] == "warning" for f in gate["findings"])
    # The same message from anyone else is refused.
    adopted.commit(bump)
    assert _failing(adopted) == {"trailers": {"framing", "marker-missing", "trailer-missing"}}


def test_a_bot_needs_enough_commits_and_bulk_breakage() -> None:
    from tools.adopt.learn_bots import is_bot, learn_bots

    marked = f"Fix\n\nWhy.\n\n{MARKER}\n{TRAILERS}"
    bump = "Bump\n\n---\nx\n"
    bot = ("renovate[bot]", "r@bots.example")
    cfg = {"marker_placement": "line"}
    three = learn_bots([(*bot, bump)] * 3, cfg)
    assert {e["rule"] for e in three.exceptions} >= {"framing", "marker-missing"}
    assert learn_bots([(*bot, bump)] * 2, cfg).exceptions == []
    # One broken of three is no habit; a person is never set aside.
    assert learn_bots([(*bot, bump), (*bot, marked), (*bot, marked)], cfg).exceptions == []
    assert learn_bots([("Ann", "ann@example.com", bump)] * 5, cfg).exceptions == []
    assert is_bot("x", "1+dependabot[bot]@users.noreply.github.com") and not is_bot("Bo", "b@x")


@pytest.mark.parametrize(
    "entry",
    [
        '{author: "not-an-email", rule: framing, reason: r}',
        '{author: "a@b", commit: "abcd", rule: framing, reason: r}',
        "{rule: framing, reason: r}",
    ],
)
def test_an_exception_names_a_commit_or_an_author(make_repo, entry: str) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    repo.write(".agents/protocol.yaml", f"trailers:\n  exceptions:\n    - {entry}\n")
    run = repo.tools("config", "validate")
    assert run.exit_code == 2 and run.stderr.startswith("error:"), run.stderr
    repo.write(
        ".agents/protocol.yaml",
        "trailers:\n  exceptions:\n    - {author: a@b, rule: framing, reason: r}\n",
    )
    assert repo.tools("config", "validate").exit_code == 0


# -- allow markers, programs and declarations, row moves ---------------------------------------
SEAM_PLAN = (
    "# Seam plan\n\n| # | Row | Work | State |\n|---|---|---|---|\n"
    "| **1** | `S1` | the ratchet | `DONE` |\n| **2** | `S2` | the priority walk | `ACTIVE` |\n"
    "| **3** | `S3` | the registry | `PLANNED` |\n"
)


def _ratchet_cfg(repo: Repo) -> dict[str, object]:
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    ratchet: dict[str, object] = cfg["ratchets"]["device-leakage"]
    return ratchet


def test_an_allow_marker_in_use_is_adopted_with_the_matrix_holding_its_tags(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    files: dict[str, str | bytes] = {
        "src/engine.cc": "int run(const T& t) { return t.is_cuda() ? 1 : 0; }\n",
        "checks/test_seam.py": 'SRC = "// SEAM-ALLOW(S2): pending"\nDOC = "SEAM-ALLOW(<row>)"\n',
        "docs/seam-plan.md": SEAM_PLAN,
        "docs/other.md": "| Key | Note |\n|---|---|\n| `S9` | no |\n",
    }
    repo.commit("Start\n\nBody.\n", files)
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    marker = r"SEAM-ALLOW\((?P<tag>[^()]+)\)"
    assert (
        "SEAM-ALLOW(<tag>) is written 1 time(s) in 1 file(s) of the tree (tags S2) → " in run.stdout
    )
    assert "1 of 1 tag(s) (S2) are keys of column 2 of a table of docs/seam-plan.md" in run.stdout
    ratchet = _ratchet_cfg(repo)
    assert ratchet["allow_marker"] == marker
    assert ratchet["allow_tags_from"] == [{"matrix": "docs/seam-plan.md", "key_column": 2}]
    # The next marked site names a row of the plan: exempt; a tag of no row: refused.
    repo.commit("Adopt\n\nBody.\n")
    src = "int run(const T& t) { return t.is_cuda() ? 1 : 0; }\n"
    repo.write(
        "src/engine.cc",
        src + "// SEAM-ALLOW(S3): the registry row\nbool g(T t) { return t.is_cuda(); }\n",
    )
    checked = repo.tools("--format", "json", "ratchet", "check")
    assert checked.exit_code == 0, checked.stdout
    repo.write("src/engine.cc", src + "// SEAM-ALLOW(S7)\nbool g(T t) { return t.is_cuda(); }\n")
    refused = repo.tools("--format", "json", "ratchet", "check")
    found = {f["rule"] for f in refused.json()["gates"][0]["findings"]}
    assert refused.exit_code == 1 and "allow-tag-unknown" in found


def test_no_marker_in_use_keeps_the_shipped_marker(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    repo.commit("Start\n\nBody.\n", {"src/engine.cc": "int f() { return kCUDA; }\n"})
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "-ALLOW(<tag>)" not in run.stdout
    assert "allow_tags_from" not in yaml.safe_load(
        (repo.path / ".agents/protocol.yaml").read_text()
    )


def test_programs_with_their_own_build_and_declarations_are_not_counted() -> None:
    from tools.adopt.learn_ratchets import learn_ratchets
    from tools.config import defaults

    texts = {
        "CMakeLists.txt": b"add_subdirectory(examples)\n",
        "examples/CMakeLists.txt": b"add_executable(cli cli/main.cc)\n",
        "examples/cli/main.cc": b"int main() { return kCUDA; }\n",
        "examples/serve/main.cpp": b"#include <x.h>\nint main(int c, char** v) { return kCUDA; }\n",
        "examples/serve/util.h": b"inline int u() { return kCUDA; }\n",
        # A build of its own, but one folder is a library: not programs.
        "plugins/CMakeLists.txt": b"add_library(p a/p.cc)\n",
        "plugins/a/p.cc": b"int p() { return kCUDA; }\n",
        "plugins/b/main.cc": b"int main() { return 0; }\n",
        "src/device.h": (
            b"namespace vt {\nenum class Device : int { kCPU = 0, kCUDA = 1 };\n"
            b"struct Platform {\n  bool is_cuda() const { return type() == Device::kCUDA; }\n"
            b"  int f() const {\n    if (type() == Device::kCUDA) { return 1; }\n"
            b"    return 0;\n  }\n};\n}  // namespace vt\n"
        ),
        "src/registry.cc": (
            b"namespace {\nconstexpr Device kOrder[] = {\n    Device::kCUDA, Device::kCPU};\n"
            b'const Registrar kFooCuda{Device::kCUDA, "FOO",\n'
            b"    []() -> int { return pick(Device::kCUDA); }};\n}  // namespace\n"
            b"#ifdef VT_FAST\nint fast() { return 1; }\n#endif\n"
        ),
        # A C block and a member initializer declare; a constructor after its member
        # initializers and a lambda without parameters are function bodies.
        "src/more.cc": (
            b'extern "C" {\nint dev = kCUDA;\n}\nstruct Foo {\n  Foo() : a_{1}, b_(2) {\n'
            b"    x = kCUDA;\n  }\n  int a_{kCUDA};\n};\nauto f = [] { return kCUDA; };\n"
        ),
    }
    learned = learn_ratchets(defaults()["ratchets"], texts, texts.get)
    assert learned.ratchets is not None
    ratchet = learned.ratchets["device-leakage"]
    assert "examples/**" in ratchet["exclude"] and "plugins/**" not in ratchet["exclude"]
    assert any("examples/ has a build of its own and 2 program(s)" in e for e in learned.evidence)
    # The enumerator, the predicate's own line, the table and the registration key are
    # declarations; the branch in f() and the lambda's call are not, nor the #ifdef.
    assert ratchet["exempt_files"] == {
        "src/device.h": {"kcuda": 2, "is_cuda": 1},
        "src/registry.cc": {"kcuda": 2},
        "src/more.cc": {"kcuda": 2},
    }
    line = "7 site(s) on 6 line(s) outside every function body declare a device"
    assert any(line in e for e in learned.evidence), learned.evidence


MOVES_MATRIX = "# Status\n\n| Key | Claim | State | Spec |\n| --- | --- | --- | --- |\n"


def _row(key: str, state: str) -> str:
    return f"| `{key}` | claim {key} | `{state}` | [spec](specs/a.md) |\n"


def test_rows_moving_with_a_doc_become_a_when_row_moves_rule(make_repo) -> None:  # type: ignore[no-untyped-def]
    repo = make_repo()
    rows = _row("K0", "PLANNED") + _row("K1", "PLANNED") + _row("K2", "PLANNED")
    spec = "# A\n\n## Now\n\nPlanned.\n"
    repo.commit("Start\n\nBody.\n", {"STATUS.md": MOVES_MATRIX + rows, "specs/a.md": spec})
    for i in range(12):  # each row that appears ACTIVE comes with the README
        rows += _row(f"N{i}", "ACTIVE")
        files: dict[str, str | bytes] = {
            "STATUS.md": MOVES_MATRIX + rows,
            "README.md": f"# Engine\n\nStep {i}.\n",
            "specs/a.md": spec + f"Step {i}.\n",
        }
        repo.commit(f"Start N{i}\n\nBody.\n", files)
    run = repo.tools("init", "--adopt")
    assert run.exit_code == 0, run.stdout + run.stderr
    evidence = (
        "README.md changed with the commits moving a row of STATUS.md (12 of 12 into ACTIVE; "
        "key column 1, state in State) → docs rule status-moves-readme-md (when_row_moves)"
    )
    assert evidence in run.stdout
    cfg = yaml.safe_load((repo.path / ".agents/protocol.yaml").read_text())
    assert cfg["docs"]["rules"] == [
        {
            "name": "status-moves-readme-md",
            "when_row_moves": {
                "matrix": "STATUS.md",
                "to": ["ACTIVE"],
                "key_column": 1,
                "state_column": "State",
            },
            "require_changed": ["README.md"],
        }
    ]
    repo.commit("Adopt\n\nBody.\n")
    moved = MOVES_MATRIX + rows.replace(_row("K0", "PLANNED"), _row("K0", "ACTIVE"))
    repo.commit("Start K0\n\nBody.\n", {"STATUS.md": moved, "specs/a.md": spec + "K0.\n"})
    judged = repo.tools("--format", "json", "docs", "check", "--commit", "HEAD")
    missed = [f for f in judged.json()["gates"][0]["findings"] if f["rule"] == "checkpoint-missed"]
    assert len(missed) == 1 and "status-moves-readme-md" in missed[0]["message"]


def test_moves_need_the_share_and_the_count() -> None:
    from tools.adopt.learn_moves import learn_moves

    entry: dict[str, object] = {
        "matrix": "m.md",
        "spec_link": "x",
        "states": ["ACTIVE", "PLANNED"],
        "key_column": 1,
    }
    texts: dict[str, str] = {}
    commits: list[Commit] = []
    table = "| Key | State |\n|---|---|\n"
    for i in range(12):
        texts[f"c{i}"] = table + "".join(f"| k{j} | `ACTIVE` |\n" for j in range(i + 1))
        paths = ["m.md"] + (["README.md"] if i < 7 else []) + (["NEWS.md"] if i < 8 else [])
        commits.append(
            Commit(f"c{i}", [f"c{i - 1}"] if i else [], b"", 0, [Change("M", p) for p in paths])
        )

    def read(rev: str, path: str) -> bytes | None:
        return texts[rev].encode() if rev in texts else None

    learned = learn_moves([entry], commits, read, {"README.md", "NEWS.md", "m.md"}, "specs")
    # NEWS.md changed with 8 of 12 moves into ACTIVE (67 %), README.md with 7 (58 %).
    assert [r["require_changed"] for r in learned.rules] == [["NEWS.md"]]
    assert learned.rules[0]["when_row_moves"] == {
        "matrix": "m.md",
        "to": ["ACTIVE"],
        "key_column": 1,
    }
    few = learn_moves([entry], commits[:9], read, {"README.md", "NEWS.md"}, "specs")
    assert few.rules == [] and "9 commit(s) move a row" in few.evidence[0]
