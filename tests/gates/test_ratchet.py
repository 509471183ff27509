"""ratchet gate and `tools ratchet check|tighten` on real repositories: every rule fires and
its clean twin stays quiet; trees (working tree, index, commit), symlinks, encodings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import Repo
from tools.config import defaults
from tools.config_model import protocol_config
from tools.git import Git
from tools.ratchets import engine
from tools.ratchets.tree import Tree

IDX = ".agents/issue-index.md"
INDEX = (
    "# Issue index\n\n| Issue | Row | Title | Kind |\n|---|---|---|---|\n"
    "| #2 | F1 | Foundation | foundation |\n| #7 | — | Other | bug |\n"
)
BASELINE = ".agents/baselines/device-leakage.json"
CLEAN = "#include <vector>\nint f() { return 0; }\n"


def check(repo: Repo, *args: str):
    return repo.tools("--format", "json", "ratchet", "check", *args)


def gate(run) -> dict:
    return run.json()["gates"][0]


def findings(run, rule: str | None = None) -> list[dict]:
    return [f for f in gate(run)["findings"] if rule is None or f["rule"] == rule]


def rules(run) -> list[str]:
    return sorted({f["rule"] for f in gate(run)["findings"]})


def counts(run, name: str = "device-leakage") -> dict[str, int]:
    return gate(run)["stats"]["ratchets"][name]["counts"]


def baseline_of(repo: Repo, path: str = BASELINE) -> dict:
    return json.loads(repo.read(path))


def error_line(run) -> str:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    assert "internal error" not in run.stderr
    return lines[0]


def start(repo: Repo, files: dict[str, str | bytes], *, tighten: bool = True) -> str:
    """Commit ``files`` with the index, and (by default) a tightened baseline, on main."""
    repo.commit("Start\n\nBody.\n", {IDX: INDEX, **files})
    if tighten:
        assert repo.tools("ratchet", "tighten").exit_code == 0
        repo.commit("Baseline\n\nBody.\n")
    return repo.head()


# -- counting -------------------------------------------------------------------------------
def test_tokens_in_comments_and_strings_are_not_counted_and_lines_stay_right(repo: Repo) -> None:
    src = (
        "// kCUDA in a line comment\n"  # 1
        "/* kCUDA in a block\n"  # 2
        "   comment kCUDA */ int a;\n"  # 3
        'const char* s = "kCUDA is_cuda(";\n'  # 4
        "char c = 'k'; long n = 1'000;\n"  # 5
        "auto d = at::Device(at::kCUDA);\n"  # 6
        'auto r = R"x(kCUDA\n'  # 7
        'kCUDA)x";\n'  # 8
        "bool g = t.is_cuda();  // kCUDA\n"  # 9
    )
    repo.commit("Base\n\nBody.\n", {IDX: INDEX})
    repo.git("branch", "base")
    repo.commit("Add\n\nBody.\n", {"src/a.cc": src})
    run = check(repo)
    assert counts(run) == {"kcuda": 1, "is_cuda": 1, "cuda_include": 0, "vt_macro": 0}
    # Lines named by a regression: every site is new since the base.
    repo.write(
        BASELINE,
        json.dumps(
            {
                "ratchet": "device-leakage",
                "buckets": {"kcuda": 0, "is_cuda": 0, "cuda_include": 0, "vt_macro": 0},
            }
        ),
    )
    run = check(repo, "--base", "base")
    regs = {f["message"].split(":")[0]: f for f in findings(run, "ratchet-regression")}
    assert regs["device-leakage.kcuda"]["line"] == 6
    assert "src/a.cc:6" in regs["device-leakage.kcuda"]["message"]
    assert regs["device-leakage.is_cuda"]["line"] == 9


def test_every_preprocessor_form_naming_a_vt_macro_counts(repo: Repo) -> None:
    src = (
        "#ifdef VT_CUDA\n#endif\n"
        "#ifndef VT_X\n#endif\n"
        "#if A\n#elif defined(VT_X)\n#endif\n"
        "#if VT_X && Y\n#endif\n"
        "  #  if !defined(Z) || VT_ROCM > 2\n#endif\n"
        "#define VT_CUDA 1\n#ifdef HAVE_VT_X\n#endif  // VT_CUDA\n"
        "/* #ifdef VT_CUDA */\n"
    )
    start(repo, {"src/a.h": src}, tighten=False)
    run = check(repo, "--report")
    assert counts(run)["vt_macro"] == 5
    per_file = gate(run)["stats"]["ratchets"]["device-leakage"]["per_file"]
    assert per_file == {"src/a.h": {"vt_macro": 5}}


def test_include_operands_count_quoted_and_angled(repo: Repo) -> None:
    src = (
        "#include <cuda_runtime.h>\n"
        '#include "vt/cuda/launch.h"  // a comment\n'
        "// #include <cuda_runtime.h>\n"
        '#include "vt/cpu/ops.h"\n'
    )
    start(repo, {"src/a.cc": src}, tighten=False)
    assert counts(check(repo))["cuda_include"] == 2


def test_include_and_exclude_globs_select_files(repo: Repo) -> None:
    start(
        repo,
        {
            "src/a.cc": "kCUDA;\n",
            "src/cuda/b.cc": "kCUDA;\n",
            "third_party/x/c.h": "kCUDA;\n",
            "tests/t.cc": "kCUDA;\n",
            "src/notes.txt": "kCUDA\n",
        },
        tighten=False,
    )
    run = check(repo)
    assert counts(run)["kcuda"] == 1
    assert gate(run)["stats"]["ratchets"]["device-leakage"]["files"] == 1


def test_crlf_and_non_utf8_files_are_counted_on_the_right_lines(repo: Repo) -> None:
    crlf = "int a;\r\n// kCUDA\r\nauto d = kCUDA;\r\n#ifdef VT_X\r\n#endif\r\n"
    latin = b"// caf\xe9 \xff\xfe\nauto d = kCUDA; /* \xe9 */\n"
    start(repo, {"src/crlf.cc": crlf, "src/latin.cc": latin}, tighten=False)
    repo.write(BASELINE, json.dumps({"ratchet": "device-leakage", "buckets": {"kcuda": 0}}))
    run = check(repo, "--base", "HEAD")
    reg = findings(run, "ratchet-regression")[0]
    assert "src/crlf.cc:3" in reg["message"] and "src/latin.cc:2" in reg["message"]
    assert counts(run)["vt_macro"] == 1


def test_binary_files_are_skipped(repo: Repo) -> None:
    start(repo, {"src/blob.cc": b"\0kCUDA\n", "src/a.cc": CLEAN}, tighten=False)
    run = check(repo)
    assert counts(run)["kcuda"] == 0


# -- trees --------------------------------------------------------------------------------------
def test_staged_reads_the_index_not_the_working_tree(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    repo.write("src/a.cc", "auto d = kCUDA;\n")  # unstaged: changes nothing for --staged
    run = check(repo, "--staged")
    assert run.exit_code == 0, run.stdout
    assert counts(run)["kcuda"] == 0
    assert check(repo).exit_code == 1  # the working tree does hold it
    repo.git("add", "src/a.cc")
    staged = check(repo, "--staged")
    assert staged.exit_code == 1 and counts(staged)["kcuda"] == 1
    repo.write("src/a.cc", CLEAN)  # an unstaged fix does not hide the staged site
    assert counts(check(repo, "--staged"))["kcuda"] == 1


def test_rev_counts_that_commit_tree(repo: Repo) -> None:
    first = start(repo, {"src/a.cc": CLEAN})
    repo.commit("Add a site\n\nBody.\n", {"src/a.cc": "auto d = kCUDA;\n"})
    repo.write("src/a.cc", CLEAN)  # the working tree is clean again
    run = check(repo, "--rev", "HEAD")
    assert run.exit_code == 1 and counts(run)["kcuda"] == 1
    assert gate(run)["stats"]["tree"].startswith("the tree of ")
    assert counts(check(repo, "--rev", first))["kcuda"] == 0
    assert check(repo).exit_code == 0


def test_a_symlink_to_a_file_outside_the_repository_is_never_read(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.cc").write_text("auto d = kCUDA;\n")
    (outside / "kCUDA.cc").write_text("auto d = kCUDA;\n")
    repo.write(IDX, INDEX)
    os.symlink(outside / "secret.cc", repo.path / "link.cc")
    # A link whose target text holds the token: a reader of the blob would count it.
    os.symlink(outside / "kCUDA.cc", repo.path / "named.cc")
    repo.commit("Links\n\nBody.\n", {"src/a.cc": CLEAN})
    for args in ((), ("--staged",), ("--rev", "HEAD")):
        run = check(repo, *args)
        assert run.exit_code == 0, (args, run.stdout)
        assert counts(run)["kcuda"] == 0, args


def test_a_submodule_and_a_symlink_in_the_index_are_not_read(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    (repo.path / "src/link.cc").symlink_to("a.cc")
    repo.git("add", "src/link.cc")
    # A gitlink whose path the ratchet includes: its object is a commit, not a file here.
    commit = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{commit},src/kCUDA.cc")
    repo.git("commit", "-q", "-m", "Special entries\n\nBody.")
    for args in (("--staged",), ("--rev", "HEAD"), ()):
        run = check(repo, *args)
        assert run.exit_code == 0, (args, run.stdout, run.stderr)
        assert counts(run)["kcuda"] == 0, args
        if args:  # from git's objects: the two entries are not in the ratchet's scope
            assert gate(run)["stats"]["ratchets"]["device-leakage"]["files"] == 1, args


def test_a_tracked_file_under_a_symlinked_folder_is_not_read(repo: Repo, tmp_path: Path) -> None:
    start(repo, {"src/d/a.cc": CLEAN, "src/b.cc": CLEAN})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "a.cc").write_text("auto d = kCUDA;\n")
    for entry in (repo.path / "src/d").iterdir():
        entry.unlink()
    (repo.path / "src/d").rmdir()
    os.symlink(outside, repo.path / "src/d")
    # and a tracked regular file replaced by a link on disk
    (repo.path / "src/b.cc").unlink()
    os.symlink(outside / "a.cc", repo.path / "src/b.cc")
    run = check(repo)
    assert run.exit_code == 0, run.stdout
    assert counts(run)["kcuda"] == 0


def test_the_fast_path_counts_what_the_plain_path_counts(repo: Repo) -> None:
    files: dict[str, str | bytes] = {
        f"src/f{i}.cc": (
            f"// file {i}\n"
            + ("auto d = kCUDA;\n" if i % 3 == 0 else "")
            + ("/* kCUDA */ int x;\n" if i % 4 == 0 else "")
            + ("#if VT_X && Y\n#endif\n" if i % 5 == 0 else "")
            + ("t.is_cuda();  // DSR-ALLOW(F1)\n" if i % 7 == 0 else "")
            + ("x();  // DSR-ALLOW(nope)\n" if i % 11 == 0 else "")
            + ('#include "a/cuda/b.h"\n' if i % 6 == 0 else "")
        )
        for i in range(60)
    }
    repo.commit("Tree\n\nBody.\n", {IDX: INDEX, **files})
    repo.write("src/f1.cc", "kCUDA;\n")
    repo.git("add", "src/f1.cc")
    repo.write("src/f2.cc", "kCUDA; is_cuda(x);\n")
    git = Git(repo.path)
    ratchets = engine.load(protocol_config(defaults()), None)

    def summary(tree: Tree, prefilter: bool):
        res, _ = engine.count(tree, ratchets, IDX, prefilter=prefilter)
        r = res["device-leakage"]
        return r.counts, r.sites, r.exempt, r.unknown_tags, r.files

    for make in (
        lambda: Tree(git),
        lambda: Tree(git, staged=True),
        lambda: Tree(git, rev=git.head()),
    ):
        assert summary(make(), True) == summary(make(), False)
    fast = summary(Tree(git), True)
    assert fast[0]["kcuda"] == 22 and fast[0]["vt_macro"] == 12


# -- baselines and the rules against them -------------------------------------------------------
def test_at_its_baseline_the_gate_passes_quietly(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto d = kCUDA;\n#ifdef VT_X\n#endif\n"})
    run = check(repo)
    assert run.exit_code == 0, run.stdout
    assert gate(run)["status"] == "pass" and rules(run) == []
    assert baseline_of(repo)["buckets"] == {
        "kcuda": 1,
        "is_cuda": 0,
        "cuda_include": 0,
        "vt_macro": 1,
    }


def test_regression_names_the_new_sites_relative_to_the_merge_base(repo: Repo) -> None:
    start(repo, {"src/a.cc": "int a;\nauto d = kCUDA;\n"})
    repo.branch("topic")
    # The old site moves down two lines; one new site is added in another file.
    repo.commit(
        "Add a site\n\nBody.\n",
        {"src/a.cc": "int z;\nint y;\nint a;\nauto d = kCUDA;\n", "src/b.cc": "x(kCUDA);\n"},
    )
    run = check(repo, "--base", "main")
    assert run.exit_code == 1
    (reg,) = findings(run, "ratchet-regression")
    assert reg["severity"] == "error"
    assert "counts 2, above its baseline 1 (+1)" in reg["message"]
    assert "src/b.cc:1" in reg["message"] and "src/a.cc" not in reg["message"]
    assert (reg["path"], reg["line"]) == ("src/b.cc", 1)
    # The same through the commit's tree, as CI runs it.
    assert "src/b.cc:1" in findings(check(repo, "--rev", "HEAD", "--base", "main"))[0]["message"]


def test_a_regression_carries_every_new_site_in_every_format(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    repo.branch("topic")
    body = "".join(f"auto d{i} = kCUDA;\n" for i in range(25))
    repo.commit("Add sites\n\nBody.\n", {"src/many.cc": body})
    run = check(repo, "--base", "main")
    (reg,) = findings(run, "ratchet-regression")
    assert reg["sites"] == [{"path": "src/many.cc", "line": i} for i in range(1, 26)]
    assert (reg["path"], reg["line"]) == ("src/many.cc", 1)
    github = repo.tools("--format", "github", "ratchet", "check", "--base", "main").stdout
    marked = [ln for ln in github.splitlines() if "ratchet/ratchet-regression" in ln]
    assert [ln.split(",")[1] for ln in marked] == [f"line={i}" for i in range(1, 26)]
    sarif = repo.tools("--format", "sarif", "ratchet", "check", "--base", "main").sarif()
    (result,) = [r for r in sarif["runs"][0]["results"] if r["ruleId"].endswith("regression")]
    lines = [loc["physicalLocation"]["region"]["startLine"] for loc in result["locations"]]
    assert lines == list(range(1, 26))
    # The text report caps the list in the message and says how many more there are.
    text = repo.tools("ratchet", "check", "--base", "main").stdout
    assert "src/many.cc:20 … and 5 more" in text and "src/many.cc:21" not in text


def test_regression_with_a_base_that_does_not_resolve_still_fails_and_says_why(
    repo: Repo,
) -> None:
    start(repo, {"src/a.cc": CLEAN})
    repo.write("src/a.cc", "auto d = kCUDA;\n")
    run = check(repo)  # config base origin/main: absent here
    assert run.exit_code == 1 and gate(run)["status"] == "fail"
    (reg,) = findings(run, "ratchet-regression")
    assert "new sites unknown" in reg["message"] and "origin/main" in reg["message"]


def test_an_explicit_base_that_does_not_resolve_is_exit_2(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    assert "nope" in error_line(repo.tools("ratchet", "check", "--base", "nope"))


def test_stale_fires_until_tightened_and_tighten_shrinks_the_baseline(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto d = kCUDA;\nauto e = kCUDA;\n"})
    assert baseline_of(repo)["buckets"]["kcuda"] == 2
    repo.write("src/a.cc", "auto d = kCUDA;\n")
    run = check(repo)
    assert run.exit_code == 1
    (stale,) = findings(run, "ratchet-stale")
    assert "counts 1, below its baseline 2" in stale["message"]
    assert stale["path"] == BASELINE
    tight = repo.tools("ratchet", "tighten")
    assert tight.exit_code == 0, tight.stdout
    assert "kcuda 2 -> 1" in tight.stdout
    assert baseline_of(repo)["buckets"]["kcuda"] == 1
    after = check(repo)
    assert after.exit_code == 0 and rules(after) == []
    again = repo.tools("ratchet", "tighten")
    assert again.exit_code == 0 and "already tight" in again.stdout


def test_tighten_refuses_when_a_bucket_rose_while_another_fell(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto d = kCUDA;\n#ifdef VT_X\n#endif\n"})
    before = repo.read(BASELINE)
    repo.write("src/a.cc", "auto d = kCUDA;\nauto e = kCUDA;\n")  # kcuda rose, vt_macro fell
    run = repo.tools("ratchet", "tighten")
    assert run.exit_code == 1
    assert "kcuda would rise from 1 to 2" in run.stdout
    assert "nothing written" in run.stdout.lower()
    assert repo.read(BASELINE) == before
    as_json = repo.tools("--format", "json", "ratchet", "tighten")
    assert as_json.exit_code == 1
    assert json.loads(as_json.stdout)["status"] == "refused"


def test_baseline_missing_fires_only_when_a_bucket_counts(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN}, tighten=False)
    quiet = check(repo)
    assert quiet.exit_code == 0 and rules(quiet) == []
    repo.write("src/a.cc", "auto d = kCUDA;\n")
    run = check(repo)
    assert run.exit_code == 1
    (missing,) = findings(run, "baseline-missing")
    assert "kcuda 1" in missing["message"] and "tools ratchet tighten" in missing["message"]
    created = repo.tools("ratchet", "tighten", "device-leakage")
    assert created.exit_code == 0 and "created" in created.stdout
    assert check(repo).exit_code == 0


def test_a_bucket_missing_from_the_baseline_file(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto d = kCUDA;\n"}, tighten=False)
    repo.write(BASELINE, json.dumps({"ratchet": "device-leakage", "buckets": {"is_cuda": 0}}))
    run = check(repo)
    (missing,) = findings(run, "baseline-missing")
    assert "no entry for this bucket" in missing["message"]
    assert repo.tools("ratchet", "tighten").exit_code == 0
    assert baseline_of(repo)["buckets"]["kcuda"] == 1


def test_the_baseline_is_read_from_the_tree_being_counted(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto d = kCUDA;\n"})
    repo.write(BASELINE, json.dumps({"ratchet": "device-leakage", "buckets": {"kcuda": 5}}))
    assert "ratchet-stale" in rules(check(repo))
    assert check(repo, "--rev", "HEAD").exit_code == 0
    assert check(repo, "--staged").exit_code == 0


# -- allow markers ------------------------------------------------------------------------------
def test_an_allow_marker_exempts_its_line_and_the_next(repo: Repo) -> None:
    src = (
        "auto a = kCUDA;  // DSR-ALLOW(F1)\n"  # exempt (its own line)
        "auto b = kCUDA;\n"  # exempt (the next line)
        "auto c = kCUDA;\n"  # counted
        "// DSR-ALLOW(#7) a justified one below\n"
        "if (t.is_cuda()) {}\n"  # exempt by issue number
        "// DSR-ALLOW(2)\n"
        "#ifdef VT_X\n"  # exempt by issue number without #
        "#endif\n"
    )
    start(repo, {"src/a.cc": src})
    run = check(repo)
    assert run.exit_code == 0, run.stdout
    assert counts(run) == {"kcuda": 1, "is_cuda": 0, "cuda_include": 0, "vt_macro": 0}
    exempt = findings(run, "ratchet-exempt")
    assert [(f["line"], f["severity"]) for f in exempt] == [
        (1, "info"),
        (2, "info"),
        (5, "info"),
        (7, "info"),
    ]
    assert "'F1'" in exempt[0]["message"] and "marker on line 1" in exempt[1]["message"]
    assert findings(run, "allow-tag-unknown") == []


def test_an_allow_marker_with_an_unknown_tag_fails_and_exempts_nothing(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto a = kCUDA;\n"})
    repo.write("src/a.cc", "auto a = kCUDA;  // DSR-ALLOW(Z9)\n/* DSR-ALLOW(#99) */\n")
    run = check(repo)
    assert run.exit_code == 1
    unknown = findings(run, "allow-tag-unknown")
    assert [(f["line"], f["severity"]) for f in unknown] == [(1, "error"), (2, "error")]
    assert "'Z9'" in unknown[0]["message"]
    assert counts(run)["kcuda"] == 1  # still counted
    assert findings(run, "ratchet-exempt") == []


def test_allow_tags_are_checked_against_the_index_of_the_same_tree(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    repo.write("src/a.cc", "auto a = kCUDA;  // DSR-ALLOW(N9)\n")
    repo.write(IDX, INDEX + "| #9 | N9 | New | gate |\n")
    assert check(repo).exit_code == 0  # the working tree's index knows N9
    repo.git("add", "src/a.cc")
    assert "allow-tag-unknown" in rules(check(repo, "--staged"))  # the staged index does not


# -- armed detectors ----------------------------------------------------------------------------
UNARMED = """\
ratchets:
  dl:
    kind: pattern
    include: ["**/*.cc"]
    strip: c
    buckets:
      good: {regex: 'kCUDA\\b', examples: ["x = kCUDA;"], counter_examples: ["kCUDAx"]}
      broken:
        regex: 'is_cuda\\(\\)'
        examples: ["if (x.is_cuda ()) {"]
      loose: {regex: 'VT_', counter_examples: ["int NOT_VT_X;"]}
"""


def test_a_detector_that_misses_an_example_or_hits_a_counter_example_is_unarmed(
    repo: Repo,
) -> None:
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": UNARMED, "a.cc": CLEAN})
    run = check(repo)
    assert run.exit_code == 1
    unarmed = findings(run, "ratchet-unarmed")
    assert len(unarmed) == 2 and {f["severity"] for f in unarmed} == {"error"}
    text = " ".join(f["message"] for f in unarmed)
    assert "dl.broken does not count its example" in text
    assert "dl.loose counts its counter example" in text
    assert "ratchets.dl.buckets.broken" in text
    assert {f["path"] for f in unarmed} == {".agents/protocol.yaml"}
    # No silent zero: tighten refuses to write from an unarmed detector.
    tight = repo.tools("ratchet", "tighten")
    assert tight.exit_code == 1 and "unarmed" in tight.stdout
    assert not (repo.path / ".agents/baselines/dl.json").exists()


def test_the_default_buckets_are_armed(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN}, tighten=False)
    assert findings(check(repo), "ratchet-unarmed") == []


# -- absent -------------------------------------------------------------------------------------
def test_absent_when_nothing_is_in_scope_and_no_baseline(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"README.md": "# hi\n"})
    run = check(repo)
    assert run.exit_code == 0
    (absent,) = findings(run, "ratchet-absent")
    assert absent["severity"] == "info" and "device-leakage" in absent["message"]


def test_absent_when_no_ratchet_is_configured(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": "ratchets: {}\n"})
    assert rules(check(repo)) == ["ratchet-absent"]


def test_a_scope_that_emptied_below_a_baseline_is_stale_not_absent(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto a = kCUDA;\n"})
    repo.git("rm", "-q", "src/a.cc")
    run = check(repo)
    assert rules(run) == ["ratchet-stale"]


# -- the markdown kind --------------------------------------------------------------------------
MD_CONFIG = """\
ratchets:
  readme:
    kind: markdown
    path: README.md
    paragraph_max: 60
    cell_max: 10
"""


def test_markdown_kind_counts_and_ratchets_its_four_buckets(repo: Repo) -> None:
    text = "# T\n\n## A\n\nshort\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": MD_CONFIG, "README.md": text})
    assert repo.tools("ratchet", "tighten").exit_code == 0
    assert baseline_of(repo, ".agents/baselines/readme.json")["buckets"] == {
        "chars": len(text),
        "h2_sections": 1,
        "long_paragraphs": 0,
        "oversized_cells": 0,
    }
    repo.commit("Baseline\n\nBody.\n")
    repo.branch("topic")
    grown = text + "\n## B\n\n" + "word " * 20 + "\n\n| " + "x" * 11 + " | y |\n|---|---|\n"
    repo.commit("Grow\n\nBody.\n", {"README.md": grown})
    run = check(repo, "--base", "main")
    assert run.exit_code == 1
    regs = {f["message"].split(":")[0]: f for f in findings(run, "ratchet-regression")}
    assert set(regs) == {
        "readme.chars",
        "readme.h2_sections",
        "readme.long_paragraphs",
        "readme.oversized_cells",
    }
    assert "README.md:11" in regs["readme.h2_sections"]["message"]
    assert regs["readme.long_paragraphs"]["line"] == 13


def test_markdown_file_absent_is_absent(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": MD_CONFIG})
    assert rules(check(repo)) == ["ratchet-absent"]


# -- bad input ----------------------------------------------------------------------------------
def test_a_bucket_regex_that_does_not_compile_is_exit_2(repo: Repo) -> None:
    bad = UNARMED.replace("'kCUDA\\b'", "'kCUDA('")
    assert bad != UNARMED
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": bad})
    line = error_line(repo.tools("ratchet", "check"))
    assert ".agents/protocol.yaml" in line and "ratchets.dl.buckets.good" in line


def test_a_baseline_not_in_the_format_is_exit_2(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    repo.write(BASELINE, '{"ratchet": "device-leakage", "buckets": {"kcuda": "3"}}')
    line = error_line(repo.tools("ratchet", "check"))
    assert BASELINE in line and "buckets.kcuda" in line
    assert BASELINE in error_line(repo.tools("ratchet", "tighten"))


@pytest.mark.parametrize("glob", ["../outside/**", "/etc/**", "!../x"])
def test_an_include_glob_that_escapes_the_repository_is_exit_2(repo: Repo, glob: str) -> None:
    cfg = f'ratchets:\n  dl:\n    kind: pattern\n    include: ["{glob}"]\n    buckets: {{a: x}}\n'
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": cfg})
    line = error_line(repo.tools("ratchet", "check"))
    assert ".agents/protocol.yaml" in line and "ratchets.dl.include[0]" in line


def test_bad_arguments_are_exit_2(repo: Repo) -> None:
    start(repo, {"src/a.cc": CLEAN})
    assert "no ratchet named 'nope'" in error_line(repo.tools("ratchet", "check", "nope"))
    assert "--rev" in error_line(repo.tools("ratchet", "check", "--rev", "nope"))
    assert "--staged" in error_line(repo.tools("ratchet", "check", "--rev", "HEAD", "--staged"))


# -- output and integration ---------------------------------------------------------------------
def test_names_select_ratchets_and_report_adds_a_per_file_table(repo: Repo) -> None:
    cfg = MD_CONFIG + (
        "  dl:\n    kind: pattern\n    include: ['**/*.cc']\n    strip: c\n"
        "    buckets: {k: 'kCUDA'}\n"
    )
    repo.commit(
        "Start\n\nBody.\n",
        {".agents/protocol.yaml": cfg, "README.md": "# x\n", "a.cc": "kCUDA;\nkCUDA;\n"},
    )
    run = check(repo, "dl")
    assert list(gate(run)["stats"]["ratchets"]) == ["dl"]
    text = repo.tools("ratchet", "check", "dl", "--report")
    assert "a.cc: k 2" in text.stdout
    assert "FAIL ratchet" in text.stdout  # no baseline while k counts 2


def test_preflight_runs_the_ratchet_gate(repo: Repo) -> None:
    start(repo, {"src/a.cc": "auto a = kCUDA;\n"})
    run = repo.tools("--format", "json", "preflight", "--gate", "ratchet")
    assert run.exit_code == 0, run.stdout
    assert run.json()["gates"][0]["gate"] == "ratchet"
    repo.write("src/a.cc", "auto a = kCUDA;\nauto b = kCUDA;\n")
    assert repo.tools("preflight", "--gate", "ratchet").exit_code == 1
    assert repo.tools("preflight", "--staged", "--gate", "ratchet").exit_code == 0


def test_this_repository_passes_its_own_ratchets() -> None:
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    from tests.conftest import run_cli

    run = run_cli(["--repo", str(root), "--format", "json", "ratchet", "check"])
    assert run.exit_code == 0, run.stdout
    names = set(run.json()["gates"][0]["stats"]["ratchets"])
    assert {"torch-import", "device-leakage"} <= names


NO_LITERAL = """\
ratchets:
  calls:
    kind: pattern
    include: ["**/*.py"]
    buckets:
      bare_call: {regex: '^\\w+\\(\\)$', examples: ["run()"], counter_examples: ["x = run()"]}
    allow_marker: '(?P<tag>[A-Z][0-9]+)!'
"""


def test_a_bucket_without_literals_is_matched_on_every_line(repo: Repo) -> None:
    repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": NO_LITERAL,
            IDX: INDEX,
            "a.py": "run()\nx = run()\n# F1!\ngo()\n",
            "b.py": "stop()\n",
        },
    )
    run = check(repo, "--rev", "HEAD")
    assert counts(run, "calls") == {"bare_call": 2}
    assert [f["line"] for f in findings(run, "ratchet-exempt")] == [4]


def test_the_index_of_a_repository_without_commits(repo: Repo) -> None:
    repo.write("src/a.cc", "auto d = kCUDA;\n")
    repo.git("add", "src/a.cc")
    run = check(repo, "--staged")
    assert run.exit_code == 1
    assert rules(run) == ["baseline-missing"]
    repo.write(BASELINE, json.dumps({"ratchet": "device-leakage", "buckets": {"kcuda": 0}}))
    repo.git("add", BASELINE)
    (reg,) = findings(check(repo, "--staged"), "ratchet-regression")
    assert "new sites unknown" in reg["message"]


def test_a_failing_prefilter_falls_back_to_reading_every_file(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tools.git import GitError

    start(repo, {"src/a.cc": "auto d = kCUDA;\n", "src/b.cc": CLEAN})

    def broken(*args: object, **kwargs: object) -> set[str]:
        raise GitError("git grep failed")

    monkeypatch.setattr(Git, "grep_files", broken)
    for args in ((), ("--rev", "HEAD")):
        run = check(repo, *args)
        assert run.exit_code == 0, run.stdout
        assert counts(run)["kcuda"] == 1
        assert gate(run)["stats"]["files_read"] == 2


def test_counting_no_ratchet_reads_nothing(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {"src/a.cc": "auto d = at::Device(at::kCUDA);\n"})
    git = Git(repo.path)
    for tree in (Tree(git), Tree(git, staged=True), Tree(git, rev=git.head())):
        counts, stats = engine.count(tree, [], IDX)
        assert counts == {} and stats.files == 0
