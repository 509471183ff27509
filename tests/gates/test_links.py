"""The links gate (SPEC §4.10) on real repositories, through the real CLI, and the link
finder on hostile input."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import Repo, run_cli
from tools import markdown, mdlinks

TARGET = """# Guide

## 6. Now
Text.

## Usage
One.

## Usage
Two.

## `tools` & friends!
<a name="custom-spot"></a>
"""

FILES = {
    "docs/guide.md": TARGET,
    "docs/sub/deep.md": "# Deep\n",
    "src/tool.py": "".join(f"line {i}\n" for i in range(1, 11)),  # 10 lines
    "data/a b.txt": "spaced\n",
    "README.md": "# Readme\n",
}


def make(repo: Repo, doc: str, files: dict[str, str | bytes] | None = None, **cfg: Any) -> Repo:
    config = {"links": cfg} if cfg else {}
    repo.commit(
        "Start\n\nBody.\n",
        {
            ".agents/protocol.yaml": yaml.safe_dump(config),
            **FILES,
            **(files or {}),
            "docs/page.md": doc,
        },
    )
    return repo


def check(repo: Repo, *args: str) -> tuple[int, dict]:
    run = repo.tools("--format", "json", "links", "check", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.exit_code, run.json()["gates"][0]


def found(gate: dict) -> list[tuple[str, str, int]]:
    return [(f["rule"], f["path"], f["line"]) for f in gate["findings"]]


# -- link-broken -------------------------------------------------------------------------------
GOOD_LINKS = """# Page

- sibling [guide](guide.md), [deep](sub/deep.md), [up](../README.md)
- from the root [guide](/docs/guide.md) and [readme](/README.md)
- folders [docs](../docs), [sub](sub/), [root](/) and [here](./)
- titled [guide](guide.md "The guide") and [guide]( guide.md 'x' ) and [t](guide.md (t))
- an image ![shot](../data/a%20b.txt) and an angle target [spaced](<../data/a b.txt>)
- a query [raw](../src/tool.py?raw=1) and parentheses [p](../data/p(1).txt)
- external [web](https://example.com/x.md), [mail](mailto:a@example.com),
  [proto](//example.com/y.md), <https://example.com/z.md>, <a@example.com>
- same page [top](#page) and [empty]()
- a link whose text spans
  lines [wrapped
  text](guide.md)

[ref]: guide.md "title"
[ref2]: <../data/a b.txt>
[ref3]:
  sub/deep.md
"""


def test_good_links_are_quiet(repo: Repo) -> None:
    make(repo, GOOD_LINKS, {"data/p(1).txt": "p\n"})
    code, gate = check(repo)
    assert (code, gate["status"], gate["findings"]) == (0, "pass", [])
    assert gate["stats"]["links"] >= 20 and gate["stats"]["external"] == 3


BROKEN = """# Page

See [missing](missing.md) and ![img](img/none.png).
Up too far [out](../../outside.md) and [root out](/../x.md).
[ref]: nowhere.md
Case matters: [readme](../readme.md).
"""


def test_link_broken_fires_with_its_line(repo: Repo) -> None:
    make(repo, BROKEN + "\n[ref]: nowhere.md\n")
    code, gate = check(repo)
    assert code == 1
    assert found(gate) == [
        ("link-broken", "docs/page.md", 3),
        ("link-broken", "docs/page.md", 3),
        ("link-broken", "docs/page.md", 4),
        ("link-broken", "docs/page.md", 4),
        ("link-broken", "docs/page.md", 6),
        ("link-broken", "docs/page.md", 8),
    ]
    messages = [f["message"] for f in gate["findings"]]
    assert "docs/missing.md does not exist" in messages[0]
    assert "climbs out of the repository" in messages[2]


def test_code_spans_fences_and_comments_hold_no_links(repo: Repo) -> None:
    doc = (
        "# Page\n\nInline `[a](missing1.md)` and ``[b `x`](missing2.md)``.\n\n"
        "```md\n[c](missing3.md)\n```\n\n~~~~\n[d](missing4.md)\n~~~~\n\n"
        "    ```\n    [still a fence](missing5.md)\n    ```\n\n"
        "<!-- [e](missing6.md)\n[f](missing7.md) -->\n\nText <!-- [g](missing8.md) --> end.\n\n"
        "Escaped \\[h](missing9.md) and <https://x.example/[i](missing10.md)>.\n\n"
        "Real [ok](guide.md).\n\n"
        "- a list item\n\n    its indented paragraph [real](missing11.md)\n\n"
        "After the list.\n\n        indented code [j](missing12.md)\n"
    )
    make(repo, doc)
    code, gate = check(repo)
    # Four spaces make no fence but an indented code block (lines 13-15): no links there.
    # Inside a list the indent belongs to the item: its link is judged.
    assert [f["line"] for f in gate["findings"]] == [28]


def test_a_definition_whose_target_is_on_the_next_line(repo: Repo) -> None:
    """``[x]:`` then the target on the next line is one definition; a broken target is
    reported on the target's line."""
    make(repo, "# P\n\n[x]:\n  missing.md\n\n[y]:\n  guide.md\n")
    assert found(check(repo)[1]) == [("link-broken", "docs/page.md", 4)]


def test_directory_links_and_percent_encoding(repo: Repo) -> None:
    doc = "# P\n[d](../data/) [e](../data/a%20b.txt) [f](../data/a%2Fb.txt)\n"
    make(repo, doc)
    assert found(check(repo)[1]) == [("link-broken", "docs/page.md", 2)]


def test_non_utf8_names_and_files(repo: Repo) -> None:
    doc = b"# P\ncaf\xe9 [x](../data/caf%E9.txt) [y](../data/caf%C3%A9.txt)\n"
    make(repo, doc, {"data/caf\xe9.txt": "utf-8 name\n"})  # type: ignore[arg-type]
    code, gate = check(repo)
    # %E9 is the byte 0xE9 (not a UTF-8 name); %C3%A9 is the UTF-8 name that exists.
    assert found(gate) == [("link-broken", "docs/page.md", 2)]
    assert "../data/caf%E9.txt" in gate["findings"][0]["message"]


def test_crlf_files(repo: Repo) -> None:
    doc = "# P\r\n\r\n[a](guide.md#6-now)\r\n[b](missing.md)\r\n[c](../src/tool.py#L11)\r\n"
    crlf_target = "line\r\n" * 3
    make(repo, doc, {"src/crlf.txt": crlf_target})
    code, gate = check(repo)
    assert [(f["rule"], f["line"]) for f in gate["findings"]] == [
        ("link-broken", 4),
        ("line-anchor-out-of-range", 5),
    ]


# -- anchor-missing ----------------------------------------------------------------------------
def test_heading_anchors_numbered_duplicated_and_explicit(repo: Repo) -> None:
    doc = (
        "# Page\n\n## Local part\n\n"
        "[a](guide.md#6-now) [b](guide.md#usage) [c](guide.md#usage-1) "
        "[d](guide.md#tools--friends) [e](guide.md#custom-spot) [f](#local-part) "
        "[g](guide.md#guide) [h](#page) [i](guide.md#6-n%6Fw)\n"
    )
    make(repo, doc)
    assert check(repo)[1]["findings"] == []


def test_anchor_missing_fires(repo: Repo) -> None:
    doc = (
        "# Page\n\n[a](guide.md#now) [b](guide.md#usage-2) [c](#nope)\n"
        "[d](guide.md#6%20Now) [e](sub/deep.md#deep-down)\n"
    )
    make(repo, doc)
    code, gate = check(repo)
    assert code == 1
    assert found(gate) == [
        ("anchor-missing", "docs/page.md", 3),
        ("anchor-missing", "docs/page.md", 3),
        ("anchor-missing", "docs/page.md", 3),
        ("anchor-missing", "docs/page.md", 4),
        ("anchor-missing", "docs/page.md", 4),
    ]
    assert "did you mean #6-now?" in gate["findings"][3]["message"]


def test_a_fragment_resolves_as_github_resolves_it_lowercased(repo: Repo) -> None:
    # GitHub resolves a fragment that matches an anchor once both are lowercased (SPEC §9.3):
    # `[R](#R)` to `### R`, and Cyrillic headings linked with capitals.
    doc = (
        "# Page\n\n### R\n\n## Привет мир\n\n"
        "[a](#R) [b](#Привет-Мир) [c](guide.md#6-NOW) [d](#ПРИВЕТ-МИР)\n[e](#Q)\n"
    )
    make(repo, doc)
    code, gate = check(repo)
    assert found(gate) == [("anchor-missing", "docs/page.md", 8)]
    assert "#Q" in gate["findings"][0]["message"]


def test_anchors_in_non_markdown_and_folders_are_not_judged(repo: Repo) -> None:
    make(repo, "# P\n[a](../src/tool.py#main) [b](sub#x) [c](../data/a%20b.txt#top)\n")
    assert check(repo)[1]["findings"] == []


def test_headings_in_fences_are_no_anchors(repo: Repo) -> None:
    doc = "# P\n\n```\n## Hidden\n```\n\n[a](#hidden)\n"
    make(repo, doc)
    assert found(check(repo)[1]) == [("anchor-missing", "docs/page.md", 7)]


# -- line-anchor-out-of-range ------------------------------------------------------------------
def test_line_anchors(repo: Repo) -> None:
    doc = (
        "# P\n"
        "[a](../src/tool.py#L1) [b](../src/tool.py#L10) [c](../src/tool.py#L2-L10) "
        "[d](../src/tool.py#L3C2-L4C1) [e](guide.md#L2)\n"
        "[f](../src/tool.py#L11) [g](../src/tool.py#L0) [h](../src/tool.py#L5-L11) "
        "[i](../src/tool.py#L9-L3)\n"
    )
    make(repo, doc)
    code, gate = check(repo)
    assert code == 1
    assert [(f["rule"], f["line"]) for f in gate["findings"]] == [
        ("line-anchor-out-of-range", 3)
    ] * 4
    assert "(10 lines)" in gate["findings"][0]["message"]


# -- which files, which tree -------------------------------------------------------------------
def test_staged_uses_the_staged_files_and_tree(repo: Repo) -> None:
    make(repo, "# P\n[a](guide.md)\n")
    repo.git("rm", "-q", "--cached", "docs/guide.md")  # still in the working tree
    code, gate = check(repo, "--staged")
    assert found(gate) == [("link-broken", "docs/page.md", 2)]
    assert check(repo)[1]["findings"] == []  # the working tree still has it (untracked)
    repo.git("add", "docs/guide.md")
    # An unstaged edit breaks the page; the staged page is judged, so nothing changes.
    repo.write("docs/page.md", "# P\n[a](gone.md)\n")
    assert check(repo, "--staged")[1]["findings"] == []
    assert found(check(repo)[1]) == [("link-broken", "docs/page.md", 2)]


def test_staged_reads_staged_anchors(repo: Repo) -> None:
    make(repo, "# P\n[a](guide.md#new-part)\n")
    repo.write("docs/guide.md", TARGET + "\n## New part\n")
    assert check(repo)[1]["findings"] == []
    assert found(check(repo, "--staged")[1]) == [("anchor-missing", "docs/page.md", 2)]
    repo.git("add", "docs/guide.md")
    assert check(repo, "--staged")[1]["findings"] == []


def test_ignored_files_are_not_targets_and_untracked_ones_are(repo: Repo) -> None:
    make(repo, "# P\n[a](../build/out.md) [b](../notes/new.md)\n", {".gitignore": "build/\n"})
    repo.write("build/out.md", "# Out\n")
    repo.write("notes/new.md", "# New\n[c](nope.md)\n")
    code, gate = check(repo)
    assert found(gate) == [
        ("link-broken", "docs/page.md", 2),
        ("link-broken", "notes/new.md", 2),
    ]


def test_a_deleted_file_is_no_target(repo: Repo) -> None:
    make(repo, "# P\n[a](guide.md)\n")
    (repo.path / "docs/guide.md").unlink()
    assert found(check(repo)[1]) == [("link-broken", "docs/page.md", 2)]


def test_paths_and_exclude(repo: Repo) -> None:
    make(
        repo,
        "# P\n[a](missing.md)\n",
        {"docs/old/x.md": "[b](missing.md)\n", "top.markdown": "[c](missing.md)\n"},
        paths=["docs/**/*.md", "*.markdown"],
        exclude=["docs/old/**"],
    )
    code, gate = check(repo)
    assert sorted(f["path"] for f in gate["findings"]) == ["docs/page.md", "top.markdown"]


def test_links_absent(repo: Repo) -> None:
    make(repo, "# P\n", paths=["nothing/**/*.md"])
    code, gate = check(repo)
    assert code == 0 and gate["status"] == "pass"
    assert [(f["rule"], f["severity"]) for f in gate["findings"]] == [("links-absent", "info")]


def test_symlinks_are_not_followed(repo: Repo) -> None:
    make(repo, "# P\n[a](link.md) [b](link.md#L400)\n")
    (repo.path / "docs/link.md").symlink_to("/etc/hostname")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "Link\n\nBody.")
    for args in ((), ("--staged",)):
        code, gate = check(repo, *args)
        assert (code, gate["findings"]) == (0, [])


def test_a_link_into_a_submodule_is_not_judged_and_one_beside_it_is(repo: Repo) -> None:
    make(repo, "# P\n[in](../vendor/lib/README.md) [beside](../vendor/libx/README.md)\n")
    # A submodule as a gitlink entry: its files are in another repository, never read here.
    sub = repo.head()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/lib")
    repo.git("commit", "-q", "-m", "Submodule\n\nBody.")
    for args in ((), ("--staged",)):
        code, gate = check(repo, *args)
        assert code == 1, args
        assert [(f["rule"], f["line"]) for f in gate["findings"]] == [("link-broken", 2)], args
        assert "vendor/libx/README.md" in gate["findings"][0]["message"], args


def test_bad_config_is_exit_2(repo: Repo) -> None:
    make(repo, "# P\n", paths=["../**/*.md"])
    run = repo.tools("links", "check")
    assert run.exit_code == 2
    assert run.stderr.startswith("error:") and "internal error" not in run.stderr
    assert "links.paths" in run.stderr


def test_text_report_names_file_and_line(repo: Repo) -> None:
    make(repo, "# P\n\n[a](missing.md)\n")
    run = repo.tools("links", "check")
    assert run.exit_code == 1
    assert "docs/page.md:3" in run.stdout and "link-broken" in run.stdout


# -- the link finder ---------------------------------------------------------------------------
def targets(doc: str) -> list[str]:
    return [link.target for link in markdown.parse(doc).links]


@pytest.mark.parametrize(
    ("doc", "want"),
    [
        ("[a](b.md)", ["b.md"]),
        ("[a](b.md 'title with [x](y.md)')", ["b.md"]),
        ('[a](<b c.md> "t")', ["b c.md"]),
        ("[a](b(c)d.md)", ["b(c)d.md"]),
        ("[a](b\\)c.md)", ["b)c.md"]),
        ("[a](b(c.md)", []),
        ("[a] (b.md)", []),
        ("[outer [inner](in.md) text](out.md)", ["in.md"]),
        ("[![img](i.png)](l.md)", ["l.md", "i.png"]),
        ("`[a](b.md)` [c](d.md)", ["d.md"]),
        ("`` a ` [x](y.md) ``", []),
        ("\\`[a](b.md)`", ["b.md"]),
        ("[a `]` b](c.md)", ["c.md"]),
        ("[x]: <a b.md>\n[y]: c.md 'title'", ["a b.md", "c.md"]),
        ("text\n[x]: mid-paragraph.md", []),
        ("[x]: a.md trailing words", []),
        ("<!-- [a](b.md) -->", []),
        ("<https://e.com/[a](b.md)>", []),
        ("[a](\nb.md)", ["b.md"]),
        ("[a]\n\n(b.md)", []),
    ],
)
def test_link_finder(doc: str, want: list[str]) -> None:
    assert targets(doc) == want


MIB = 1 << 20

ADVERSARIAL = [
    "[" * MIB,
    "]" * MIB,
    "](" * (MIB // 2),
    "[a](" * (MIB // 4),
    "[a](" + "(" * MIB,
    "[a](" + "()" * (MIB // 2),
    "[a](b " + '"' * MIB,
    '[a](b "x' * (MIB // 8),
    "[a](b '[a](b \"" * (MIB // 14),
    "[a](<" * (MIB // 5),
    "![" * (MIB // 2),
    "`" * MIB,
    "` `` ``` " * (MIB // 9),
    "\\`" * (MIB // 2),
    "<" * MIB,
    "<!--" * (MIB // 4),
    "<a:" * (MIB // 3),
    "\\" * MIB,
    "[" + "\\]" * (MIB // 2),
    "[x]: " + "<" * MIB,
    "[" + "x" * MIB + "]: y.md",
    "<a name=" * (MIB // 8),
    "[a](b" + "\\(" * (MIB // 2),
    "[a]( " + " " * MIB,
    "[a](b (" * (MIB // 7),
]


@pytest.mark.parametrize("line", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_link_finder_is_linear_on_a_1_mib_line(line: str) -> None:
    start = time.perf_counter()
    markdown.parse(line).anchors()
    assert time.perf_counter() - start < 5, "a 1 MiB line must be scanned in linear time"


def test_a_1_mib_line_through_the_cli(repo: Repo) -> None:
    make(repo, "# P\n" + "[a](" * (MIB // 4) + "\n[b](missing.md)\n")
    start = time.perf_counter()
    code, gate = check(repo)
    assert time.perf_counter() - start < 10
    assert found(gate) == [("link-broken", "docs/page.md", 3)]


def test_line_anchor_parsing() -> None:
    assert mdlinks.line_anchor("L10") == (10, 10)
    assert mdlinks.line_anchor("L10-L20") == (10, 20)
    assert mdlinks.line_anchor("L3C2-L4C1") == (3, 4)
    for bad in ("L", "Lx", "l10", "L10-", "L10-20", "L1C", "L" + "1" * MIB + "x"):
        assert mdlinks.line_anchor(bad) is None


def test_this_repository_links_resolve() -> None:
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        pytest.skip("needs this repository's checkout")
    run = run_cli(["--repo", str(root), "--format", "json", "links", "check"])
    gate = run.json()["gates"][0]
    assert (run.exit_code, gate["findings"]) == (0, []), gate
    assert gate["stats"]["files"] >= 5


# -- tools links anchors -----------------------------------------------------------------------
def anchors(repo: Repo, *args: str) -> Any:
    """``tools links anchors`` run from the repository's root (FILE paths are the cwd's)."""
    return run_cli(["links", "anchors", *args], cwd=repo.path)


ANCHORED = '# Guide\n\n> ## In a quote\n\n### <a id="cpp"></a>C++\n\n## Guide\n'


def test_anchors_lists_each_anchor_with_its_line_and_source(repo: Repo) -> None:
    make(repo, ANCHORED)
    run = anchors(repo, "--format", "json", "docs/page.md", "docs/sub/deep.md")
    assert run.exit_code == 0, run.stderr
    gate = run.json()["gates"][0]
    got = [(f["rule"], f["path"], f["line"], f["message"]) for f in gate["findings"]]
    assert got == [
        ("anchor", "docs/page.md", 1, "#guide  (heading 'Guide')"),
        ("anchor", "docs/page.md", 3, "#in-a-quote  (heading 'In a quote')"),
        ("anchor", "docs/page.md", 5, "#c  (heading '<a id=\"cpp\"></a>C++')"),
        ("anchor", "docs/page.md", 5, "#cpp  (element '<a id=\"cpp\">')"),
        ("anchor", "docs/page.md", 7, "#guide-1  (heading 'Guide')"),
        ("anchor", "docs/sub/deep.md", 1, "#deep  (heading 'Deep')"),
    ]
    assert gate["stats"] == {"files": 2, "anchors": 6}


@pytest.mark.parametrize("fmt", ["text", "github", "sarif"])
def test_anchors_in_every_format(repo: Repo, fmt: str) -> None:
    make(repo, ANCHORED)
    run = anchors(repo, "--format", fmt, "docs/page.md")
    assert run.exit_code == 0, run.stderr
    if fmt == "text":
        assert "docs/page.md:5: #cpp  (element '<a id=\"cpp\">')" in run.stdout
    elif fmt == "github":
        assert "::notice file=docs/page.md,line=7,title=links/anchor::#guide-1" in run.stdout
    else:
        results = json.loads(run.stdout)["runs"][0]["results"]
        assert [r["ruleId"] for r in results] == ["links/anchor"] * 5
        assert results[1]["locations"][0]["physicalLocation"]["region"]["startLine"] == 3


def test_anchors_of_a_missing_file_is_exit_2(repo: Repo) -> None:
    make(repo, ANCHORED)
    run = anchors(repo, "docs/page.md", "docs/nope.md")
    assert run.exit_code == 2
    assert run.stderr.strip() == "error: docs/nope.md: no such file"
    assert run.stdout == ""
