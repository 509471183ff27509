"""The ratchet's escape hatches (SPEC §4.5 "Sites and escape hatches") on real repositories
through the CLI: ``exempt_files`` allowances and a bucket's ``outside_guards``."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Repo
from tests.gates.test_ratchet import IDX, INDEX, check, counts, error_line, findings, gate, rules

CFG = ".agents/protocol.yaml"
BASE = ".agents/baselines/dl.json"

ESCAPES = """\
ratchets:
  dl:
    kind: pattern
    include: ["**/*.h", "**/*.cc"]
    strip: c
    buckets:
      kcuda: 'kCUDA\\b'
      cuda_include:
        regex: '#\\s*include\\s*[<"][^>"]*cuda_runtime'
        examples: ['#include <cuda_runtime.h>']
        outside_guards: ['VT_\\w+', 'USE_CUDA']
    exempt_files:
      platforms/interface.h: {kcuda: 1}
      platforms/all.h: {kcuda: "*"}
"""


def counted(repo: Repo, *args: str) -> dict[str, int]:
    return counts(check(repo, *args), "dl")


def exempt_lines(run) -> list[tuple[str, int]]:
    return [(f["path"], f["line"]) for f in findings(run, "ratchet-exempt")]


def setup(repo: Repo, files: dict[str, str | bytes], cfg: str = ESCAPES) -> None:
    repo.commit("Start\n\nBody.\n", {CFG: cfg, IDX: INDEX, **files})


# -- exempt_files -------------------------------------------------------------------------------
def test_an_allowance_of_n_exempts_the_first_n_sites_of_its_file(repo: Repo) -> None:
    setup(
        repo,
        {
            "platforms/interface.h": "auto a = kCUDA;\nint x;\nauto b = kCUDA;\n",
            "src/other.h": "auto a = kCUDA;\n",  # same text, no allowance: counted
        },
    )
    run = check(repo, "--report")
    assert counts(run, "dl")["kcuda"] == 2
    (ex,) = findings(run, "ratchet-exempt")
    assert (ex["path"], ex["line"], ex["severity"]) == ("platforms/interface.h", 1, "info")
    assert "exempt_files" in ex["message"] and "{kcuda: 1}" in ex["message"]
    per_file = gate(run)["stats"]["ratchets"]["dl"]["per_file"]
    assert per_file == {"platforms/interface.h": {"kcuda": 1}, "src/other.h": {"kcuda": 1}}
    assert gate(run)["stats"]["ratchets"]["dl"]["exempt"] == 1


def test_a_star_exempts_every_site_of_its_file(repo: Repo) -> None:
    setup(repo, {"platforms/all.h": "kCUDA;\nkCUDA;\nkCUDA;\n"})
    run = check(repo)
    assert run.exit_code == 0, run.stdout  # every bucket at zero: no baseline needed
    assert counts(run, "dl")["kcuda"] == 0
    assert exempt_lines(run) == [("platforms/all.h", n) for n in (1, 2, 3)]


def test_only_the_named_bucket_and_file_are_exempt(repo: Repo) -> None:
    # interface.h's allowance is for kcuda: its CUDA include still counts.
    setup(repo, {"platforms/interface.h": "#include <cuda_runtime.h>\nkCUDA;\n"})
    assert counted(repo) == {"kcuda": 0, "cuda_include": 1}
    assert [f["line"] for f in findings(check(repo), "ratchet-exempt")] == [2]


def test_a_site_beyond_the_allowance_is_a_regression_naming_it(repo: Repo) -> None:
    setup(repo, {"platforms/interface.h": "auto a = kCUDA;\n"})
    assert repo.tools("ratchet", "tighten").exit_code == 0
    assert json.loads(repo.read(BASE))["buckets"] == {"kcuda": 0, "cuda_include": 0}
    repo.commit("Baseline\n\nBody.\n")
    assert check(repo).exit_code == 0
    repo.branch("topic")
    repo.commit("More\n\nBody.\n", {"platforms/interface.h": "auto a = kCUDA;\nauto b = kCUDA;\n"})
    for args in ((), ("--rev", "HEAD"), ("--staged",)):
        run = check(repo, "--base", "main", *args)
        assert run.exit_code == 1, args
        (reg,) = findings(run, "ratchet-regression")
        assert reg["path"] == "platforms/interface.h" and reg["line"] == 2
        assert exempt_lines(run) == [("platforms/interface.h", 1)]
    # tighten counts the same way: it refuses the rise and writes nothing.
    assert repo.tools("ratchet", "tighten").exit_code == 1
    assert json.loads(repo.read(BASE))["buckets"]["kcuda"] == 0


def test_a_marker_exemption_does_not_use_up_the_allowance(repo: Repo) -> None:
    cfg = ESCAPES + "    allow_marker: 'ALLOW\\((?P<tag>[^()]+)\\)'\n"
    src = "// ALLOW(F1)\nkCUDA;\nkCUDA;\nkCUDA;\n"
    setup(repo, {"platforms/interface.h": src}, cfg)
    run = check(repo)
    assert counts(run, "dl")["kcuda"] == 1  # line 2 by the marker, line 3 by the allowance
    msgs = {f["line"]: f["message"] for f in findings(run, "ratchet-exempt")}
    assert set(msgs) == {2, 3}
    assert "allow marker 'F1'" in msgs[2] and "exempt_files" in msgs[3]


def test_an_allowance_of_zero_exempts_nothing(repo: Repo) -> None:
    cfg = ESCAPES.replace("{kcuda: 1}", "{kcuda: 0}")
    setup(repo, {"platforms/interface.h": "kCUDA;\n"}, cfg)
    assert counted(repo)["kcuda"] == 1
    assert findings(check(repo), "ratchet-exempt") == []


def test_an_allowance_follows_its_path_not_the_text(repo: Repo) -> None:
    # A rename takes the file out of its allowance: its sites count.
    setup(repo, {"platforms/interface.h": "kCUDA;\n"})
    assert counted(repo)["kcuda"] == 0
    repo.git("mv", "platforms/interface.h", "platforms/renamed.h")
    assert counted(repo, "--staged")["kcuda"] == 1
    assert counted(repo, "--rev", "HEAD")["kcuda"] == 0


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("{nope: 1}", "exempt_files.platforms/interface.h"),
        ("{kcuda: -1}", "exempt_files"),
        ("{kcuda: all}", "exempt_files"),
        ("{kcuda: true}", "exempt_files"),
        ("{}", "exempt_files"),
    ],
)
def test_a_bad_allowance_is_exit_2_naming_the_key(repo: Repo, value: str, key: str) -> None:
    setup(repo, {}, ESCAPES.replace("{kcuda: 1}", value))
    line = error_line(repo.tools("ratchet", "check"))
    assert CFG in line and f"ratchets.dl.{key}" in line


def test_an_allowance_for_a_path_outside_the_repository_is_exit_2(repo: Repo) -> None:
    setup(repo, {}, ESCAPES.replace("platforms/interface.h:", "../outside.h:"))
    line = error_line(repo.tools("ratchet", "check"))
    assert CFG in line and "ratchets.dl.exempt_files" in line


# -- outside_guards -----------------------------------------------------------------------------
INC = "#include <cuda_runtime.h>\n"


def include_count(repo: Repo, src: str | bytes, *args: str) -> int:
    repo.commit("Change\n\nBody.\n", {IDX: INDEX, CFG: ESCAPES, "src/a.cc": src})
    run = check(repo, *args)
    assert run.exit_code in (0, 1), run.stdout
    return counts(run, "dl")["cuda_include"]


@pytest.mark.parametrize(
    "opening",
    [
        "#ifdef VT_CUDA",
        "#if defined(USE_CUDA)",
        "#if defined USE_CUDA",
        "#if VT_CUDA",
        "  #  if  defined ( VT_ROCM )",
        "#if defined(VT_CUDA) && defined(HAVE_STREAMS)",
        "#if HAVE_STREAMS && (VT_CUDA)",
        "#if (defined(A) || defined(B)) && defined(VT_CUDA)",
        "#if defined(VT_CUDA) && \\\n    !defined(NO_X)",
    ],
)
def test_a_site_inside_a_guard_is_not_counted(repo: Repo, opening: str) -> None:
    assert include_count(repo, f"{opening}\n{INC}#endif\n") == 0
    # and neither listed: no finding names it
    assert findings(check(repo)) == []


@pytest.mark.parametrize(
    "opening",
    [
        "#if defined(VT_CUDA) || defined(USE_HIP)",
        "#if !defined(VT_CUDA)",
        "#ifndef VT_CUDA",
        "#if VT_CUDA > 2",
        "#if defined(USE_CUDAX)",  # the regex must match the whole name
        "#if defined(MY_VT_CUDA)",
        "#ifdef HAVE_STREAMS",
        "#if FOO(VT_CUDA)",
        "#if (VT_CUDA",  # malformed: guards nothing
    ],
)
def test_a_site_outside_any_guard_counts(repo: Repo, opening: str) -> None:
    assert include_count(repo, f"{opening}\n{INC}#endif\n") == 1


def test_the_else_of_ifndef_and_the_elif_branches(repo: Repo) -> None:
    src = (
        "#ifndef VT_CUDA\n" + INC  # 1-2: not guarded
        + "#else\n" + INC  # 3-4: taken only if VT_CUDA is defined
        + "#endif\n"
        + "#ifdef VT_CUDA\n" + "int x;\n"
        + "#else\n" + INC  # 9: the #else of #ifdef guards nothing
        + "#endif\n"
        + "#if defined(A)\n" + INC  # 12: counted
        + "#elif defined(B) && defined(USE_CUDA)\n" + INC  # 14: guarded
        + "#elif defined(C)\n" + INC  # 16: counted
        + "#else\n" + INC  # 18: counted
        + "#endif\n"
    )  # fmt: skip
    base = {"ratchet": "dl", "buckets": {"kcuda": 0, "cuda_include": 0}}
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, CFG: ESCAPES, BASE: json.dumps(base)})
    repo.branch("topic")
    repo.commit("Add\n\nBody.\n", {"src/a.cc": src})
    run = check(repo, "--base", "main", "--report")
    assert counts(run, "dl")["cuda_include"] == 5
    assert gate(run)["stats"]["ratchets"]["dl"]["per_file"] == {"src/a.cc": {"cuda_include": 5}}
    (reg,) = findings(run, "ratchet-regression")
    assert [s["line"] for s in reg["sites"]] == [2, 9, 12, 16, 18]


def test_nested_guards_hold_until_their_endif(repo: Repo) -> None:
    src = (
        "#ifdef VT_CUDA\n"  # 1
        "#if defined(A) || defined(B)\n"  # 2: inside the VT_CUDA guard still
        + INC  # 3: guarded by the outer branch
        + "#endif\n"  # 4
        + INC  # 5: guarded
        + "#endif\n"  # 6
        + INC  # 7: counted
        + "#ifndef X\n#ifdef USE_CUDA\n#else\n"  # 8-10
        + INC  # 11: the #else of #ifdef USE_CUDA: counted
        + "#endif\n#endif\n"
    )  # fmt: skip
    assert include_count(repo, src) == 2


def test_an_elif_of_ifndef_is_guarded(repo: Repo) -> None:
    src = "#ifndef VT_CUDA\nint a;\n#elif defined(Z)\n" + INC + "#endif\n"
    assert include_count(repo, src) == 0


def test_a_guard_in_a_comment_or_a_string_guards_nothing(repo: Repo) -> None:
    src = (
        "// #ifdef VT_CUDA\n" + INC
        + "/* #ifdef VT_CUDA */\n" + INC
        + "/*\n#ifdef VT_CUDA\n*/\n" + INC
        + 'const char* s = "\\\n#ifdef VT_CUDA";\n' + INC
        + "#endif\n"
    )  # fmt: skip
    assert include_count(repo, src) == 4
    # A comment after the condition is blanked: the guard still holds.
    assert include_count(repo, "#ifdef VT_CUDA // the CUDA path\n" + INC + "#endif\n") == 0
    assert include_count(repo, "#if /* x */ defined(VT_CUDA)\n" + INC + "#endif\n") == 0


def test_crlf_and_non_utf8_files_are_tracked_the_same(repo: Repo) -> None:
    src = (
        "#ifdef VT_CUDA\r\n" + INC.replace("\n", "\r\n") + "#endif\r\n" + INC.replace("\n", "\r\n")
    )
    assert include_count(repo, src) == 1
    raw = b"// \xff\xfe\n#if defined(VT_CUDA) \\\r\n && 1\r\n" + INC.encode() + b"#endif\n"
    assert include_count(repo, raw) == 0  # continued across a CRLF splice: still guarded
    assert include_count(repo, raw.replace(b"&&", b"||")) == 1


def test_an_unbalanced_endif_or_an_unclosed_if_is_no_crash(repo: Repo) -> None:
    assert include_count(repo, "#endif\n#else\n" + INC) == 1
    assert include_count(repo, "#ifdef VT_CUDA\n" + INC) == 0  # runs to the end of the file


def test_a_directive_line_is_judged_outside_its_own_group(repo: Repo) -> None:
    # A bucket that counts the directives themselves: the guard's own lines are not inside it.
    cfg = ESCAPES.replace(
        "      kcuda: 'kCUDA\\b'\n",
        "      kcuda: 'kCUDA\\b'\n      vt: {regex: '\\bVT_\\w+', outside_guards: ['VT_CUDA']}\n",
    )
    src = "#ifdef VT_CUDA\n#if VT_X\n#endif\n#elif VT_Y\n#endif\n"
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, CFG: cfg, "src/a.cc": src})
    run = check(repo, "--report")
    # line 1 (outside), 4 (the #elif line itself is outside the VT_CUDA branch): 2 and 3 guarded
    assert counts(run, "dl")["vt"] == 2


def test_guarded_sites_agree_across_trees_and_tighten(repo: Repo) -> None:
    src = "#ifdef VT_CUDA\n" + INC + "#endif\n" + INC
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, CFG: ESCAPES, "src/a.cc": src})
    assert repo.tools("ratchet", "tighten").exit_code == 0
    assert json.loads(repo.read(BASE))["buckets"] == {"kcuda": 0, "cuda_include": 1}
    repo.commit("Baseline\n\nBody.\n")
    repo.branch("topic")
    # Moving the unguarded include inside the guard is a decrease: stale until tightened.
    repo.write("src/a.cc", "#ifdef VT_CUDA\n" + INC + INC + "#endif\n")
    assert rules(check(repo)) == ["ratchet-stale"]
    repo.git("add", "-A")
    assert rules(check(repo, "--staged")) == ["ratchet-stale"]
    repo.commit("Guard\n\nBody.\n")
    assert rules(check(repo, "--rev", "HEAD")) == ["ratchet-stale"]
    # Taking a guarded one out of its guard is a regression naming the line.
    repo.write("src/a.cc", "#ifdef VT_CUDA\n" + INC + "#endif\n" + INC + INC)
    run = check(repo, "--base", "main")
    (reg,) = findings(run, "ratchet-regression")
    assert reg["line"] in (4, 5)


def test_outside_guards_needs_strip_c(repo: Repo) -> None:
    setup(repo, {}, ESCAPES.replace("    strip: c\n", ""))
    line = error_line(repo.tools("ratchet", "check"))
    assert "ratchets.dl.buckets.cuda_include.outside_guards" in line and "strip" in line


def test_a_bad_guard_regex_is_exit_2(repo: Repo) -> None:
    setup(repo, {}, ESCAPES.replace("'USE_CUDA'", "'USE_(CUDA'"))
    line = error_line(repo.tools("ratchet", "check"))
    assert CFG in line and "outside_guards" in line


def test_deep_nesting_is_counted_without_recursion(repo: Repo) -> None:
    depth = 200_000
    src = "#ifdef VT_CUDA\n" * depth + INC + "#endif\n" * depth + INC
    assert include_count(repo, src) == 1


# -- allow_tags_from ----------------------------------------------------------------------------
PLAN = ".agents/specs/seam.md"
SEAM = (
    "# Seam plan\n\n| # | Row | Work | State |\n|---|---|---|---|\n"
    "| **1** | `S1` | the ratchet | `DONE` |\n| **2** | **S2** | the priority walk | `ACTIVE` |\n"
)
TAGGED = """\
ratchets:
  dl:
    kind: pattern
    include: ["**/*.cc"]
    strip: c
    buckets:
      kcuda: 'kCUDA\\b'
    allow_marker: 'DSR-ALLOW\\((?P<tag>[^()]+)\\)'
    allow_tags_from:
      - {matrix: .agents/specs/seam.md, key_column: 2}
"""


def test_allow_tags_from_makes_a_matrix_key_a_known_tag(repo: Repo) -> None:
    src = (
        "auto a = kCUDA;  // DSR-ALLOW(S1): the ratchet's own row\n"
        "// DSR-ALLOW(S2)\nauto b = kCUDA;\n"
        "int x;\n"
        "auto c = kCUDA;  // DSR-ALLOW(F1)\n"  # a row id of the index: still known
        "int y;\n"
        "auto d = kCUDA;  // DSR-ALLOW(1)\n"  # column 1 is not the key column
    )
    setup(repo, {PLAN: SEAM, "src/a.cc": src}, TAGGED)
    run = check(repo)
    unknown = findings(run, "allow-tag-unknown")
    assert [(f["line"], f["severity"]) for f in unknown] == [(7, "error")]
    assert f"nor a key of {PLAN}" in unknown[0]["message"]
    assert exempt_lines(run) == [("src/a.cc", 1), ("src/a.cc", 3), ("src/a.cc", 5)]
    assert counts(run, "dl")["kcuda"] == 1


def test_allow_tags_from_reads_the_matrix_of_the_tree_being_counted(repo: Repo) -> None:
    setup(repo, {PLAN: SEAM, "src/a.cc": "int x;\n"}, TAGGED)
    repo.write("src/a.cc", "auto a = kCUDA;  // DSR-ALLOW(S3)\n")
    repo.write(PLAN, SEAM + "| **3** | `S3` | next | `PLANNED` |\n")
    assert rules(check(repo)) == ["ratchet-exempt"]  # the working tree's matrix knows S3
    repo.git("add", "src/a.cc")
    assert "allow-tag-unknown" in rules(check(repo, "--staged"))  # the staged one does not


def test_allow_tags_from_needs_a_matrix_path_inside_the_repository(repo: Repo) -> None:
    bad = TAGGED.replace(".agents/specs/seam.md", "../seam.md")
    setup(repo, {"src/a.cc": "int x;\n"}, bad)
    assert "allow_tags_from" in error_line(check(repo))
