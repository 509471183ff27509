"""Patterns from the config run on RE2, in linear time (SPEC §10, "Patterns from a pull request
run in linear time"), on real repositories through the real CLI.

A pattern that makes Python's backtracking engine take exponential time ends at once with its
verdict; a pattern RE2 cannot express (a backreference, a lookaround) is exit 2 with one
`error:` line naming its key, for every kind of config pattern; the defaults, the starter
config and this repository's own config compile and keep counting what they counted.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.conftest import Repo
from tools.bounded import MAX_PATTERN_PROGRAM, ConfigPattern, config_pattern
from tools.config import defaults, load_bytes, merge
from tools.config_model import protocol_config
from tools.errors import UsageError
from tools.package_data import data_text
from tools.ratchets import engine

ROOT = Path(__file__).resolve().parents[1]
MARKER = "FOLLOWING_AGENTS_PROTOCOL"
# A generous bound: the backtracking engine takes minutes on these inputs, RE2 milliseconds.
GUARD_S = 20


def message(assisted_by: str, subject: str = "Add the widget") -> str:
    return (
        f"{subject}\n\nWhy the widget.\n\n{MARKER}\n\n"
        f"Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: {assisted_by}\n"
    )


def cli(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI in a process of its own, stopped (a failure) after GUARD_S seconds."""
    return subprocess.run(
        [sys.executable, "-m", "tools", "--repo", str(repo.path), *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def pull_request(repo: Repo, config: dict, msg: str, files: dict[str, str] | None = None) -> None:
    """main without a config; branch `work` adds ``config`` (and ``files``) in a commit
    whose message is ``msg``: the pull request brings the pattern that judges it."""
    repo.commit("Start\n\nBase.\n", {"README.md": "hello\n"})
    repo.branch("work")
    repo.commit(msg, {".agents/protocol.yaml": yaml.safe_dump(config), **(files or {})})


# -- a catastrophic pattern ends at once, with its verdict -----------------------------------
CATASTROPHIC = "(a|aa)+$"  # Python: Fibonacci(n) paths before it gives up on "a" * n + "b"


@pytest.mark.parametrize("n", [44, 60, 1000])
def test_a_catastrophic_assisted_by_format_is_judged_at_once_under_config_from_head(
    repo: Repo, n: int
) -> None:
    pull_request(repo, {"trailers": {"assisted_by_format": CATASTROPHIC}}, message("a" * n + "b"))
    run = cli(
        repo, "--config-from", "head", "--format", "json", "trailers", "check", "--base", "main"
    )
    assert run.returncode == 1, run.stderr
    findings = json.loads(run.stdout)["gates"][0]["findings"]
    assert [f["rule"] for f in findings] == ["assisted-by-format"]
    assert "assisted_by_format" in findings[0]["message"]
    # The clean twin: the same pattern, a value it matches.
    repo.commit(message("a" * n), {"README.md": "again\n"})
    run = cli(
        repo, "--config-from", "head", "--format", "json", "trailers", "check", "--commit", "HEAD"
    )
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_commit_msg_hook_form_judges_a_catastrophic_format_at_once(repo: Repo) -> None:
    """The message file, as the commit-msg hook judges it, with the working tree's config."""
    repo.commit(
        "Start\n\nBase.\n",
        {
            ".agents/protocol.yaml": yaml.safe_dump(
                {"trailers": {"assisted_by_format": CATASTROPHIC}}
            )
        },
    )
    path = repo.write(".git/COMMIT_EDITMSG", message("a" * 50 + "b"))
    run = cli(repo, "--format", "json", "trailers", "check", "--message-file", str(path))
    assert run.returncode == 1, run.stderr
    assert [f["rule"] for f in json.loads(run.stdout)["gates"][0]["findings"]] == [
        "assisted-by-format"
    ]


def test_catastrophic_patterns_of_every_kind_end_at_once(repo: Repo) -> None:
    """A subject pattern, a ratchet bucket and its allow marker, a docs trigger: each with a
    backtracking bomb, each against the line that sets it off."""
    bomb = "zy" + "x" * 5000  # every literal of each pattern, so no prefilter skips the line
    config = {
        "style": {"subject_pattern": r"^(\w+\s?)*$"},
        "docs": {
            "rules": [
                {
                    "name": "r",
                    "when_changed": ["src/**"],
                    "when_added_line": "(x+x+)+y",
                    "require_changed": ["docs/**"],
                }
            ]
        },
        "ratchets": {
            "bombs": {
                "kind": "pattern",
                "include": ["src/**"],
                "buckets": {"b": "(x+x+)+y"},
                "allow_marker": "(?P<tag>(x|xx)+)z",
            }
        },
    }
    pull_request(
        repo, config, message("c:m [t]", subject="word " * 2000 + "!"), {"src/a.c": bomb + "\n"}
    )
    run = cli(repo, "--format", "json", "style", "check", "--base", "main")
    assert run.returncode == 1, run.stderr
    assert "subject-pattern" in {f["rule"] for f in json.loads(run.stdout)["gates"][0]["findings"]}
    run = cli(repo, "--format", "json", "docs", "check", "--base", "main")
    assert run.returncode == 0, run.stdout + run.stderr  # no added line matches: no finding
    run = cli(repo, "--format", "json", "ratchet", "check", "--rev", "HEAD")
    assert run.returncode in (0, 1), run.stderr
    assert json.loads(run.stdout)["gates"][0]["stats"]["ratchets"]["bombs"]["counts"] == {"b": 0}


# -- what RE2 cannot express is exit 2 naming the key --------------------------------------
def _config_with(key: str, pattern: str) -> dict:
    """A config holding ``pattern`` at ``key`` (one of the config's regex keys), valid but
    for it."""
    bucket = {"kind": "pattern", "buckets": {"b": "x"}}
    if key == "trailers.assisted_by_format":
        return {"trailers": {"assisted_by_format": pattern}}
    if key == "style.subject_pattern":
        return {"style": {"subject_pattern": pattern}}
    if key == "docs.rules[0].when_added_line":
        return {
            "docs": {
                "rules": [
                    {
                        "name": "r",
                        "when_changed": ["src/**"],
                        "when_added_line": pattern,
                        "require_changed": ["docs/**"],
                    }
                ]
            }
        }
    if key == "docs.spec_now[0].spec_link":
        return {
            "docs": {
                "spec_now": [
                    {
                        "matrix": "docs/m.md",
                        "spec_link": f"(?P<spec>x){pattern}",
                        "states": ["done"],
                    }
                ]
            }
        }
    if key == "ratchets.r.buckets.b":
        return {"ratchets": {"r": {**bucket, "buckets": {"b": pattern}}}}
    if key == "ratchets.r.buckets.b.regex":
        return {"ratchets": {"r": {**bucket, "buckets": {"b": {"regex": pattern}}}}}
    if key == "ratchets.r.buckets.b.outside_guards[1]":
        guards = {"regex": "x", "outside_guards": ["VT_\\w+", pattern]}
        return {"ratchets": {"r": {**bucket, "strip": "c", "buckets": {"b": guards}}}}
    if key == "ratchets.r.allow_marker":
        return {"ratchets": {"r": {**bucket, "allow_marker": f"(?P<tag>x){pattern}"}}}
    raise AssertionError(key)


KEYS = [
    "trailers.assisted_by_format",
    "style.subject_pattern",
    "docs.rules[0].when_added_line",
    "docs.spec_now[0].spec_link",
    "ratchets.r.buckets.b",
    "ratchets.r.buckets.b.regex",
    "ratchets.r.buckets.b.outside_guards[1]",
    "ratchets.r.allow_marker",
]
# (pattern, what RE2 says of it)
INEXPRESSIBLE = [
    (r"(a)\1", "invalid escape sequence"),  # a backreference
    ("(?=x)", "invalid perl operator"),  # a lookahead
    ("(?<!x)y", "invalid perl operator"),  # a lookbehind
    ("a*+", "bad repetition operator"),  # possessive (Python 3.11 has it)
]


def error_line(run) -> str:
    assert run.exit_code == 2, (run.stdout, run.stderr)
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


@pytest.mark.parametrize("key", KEYS)
@pytest.mark.parametrize(("pattern", "says"), INEXPRESSIBLE, ids=[p for p, _ in INEXPRESSIBLE])
def test_a_pattern_re2_cannot_express_is_exit_2_naming_its_key(
    repo: Repo, key: str, pattern: str, says: str
) -> None:
    repo.write(".agents/protocol.yaml", yaml.safe_dump(_config_with(key, pattern)))
    line = error_line(repo.tools("config", "validate"))
    assert line.startswith(f"error: .agents/protocol.yaml: {key}: bad value "), line
    assert says in line and "expected an RE2 regular expression" in line, line


GATE_OF = {
    "trailers.assisted_by_format": ("trailers", "check"),
    "style.subject_pattern": ("style", "check"),
    "docs.rules[0].when_added_line": ("docs", "check"),
    "docs.spec_now[0].spec_link": ("docs", "check"),
    "ratchets.r.buckets.b": ("ratchet", "check"),
    "ratchets.r.buckets.b.regex": ("ratchet", "check"),
    "ratchets.r.buckets.b.outside_guards[1]": ("ratchet", "check"),
    "ratchets.r.allow_marker": ("ratchet", "check"),
}


@pytest.mark.parametrize("key", KEYS)
def test_the_gates_refuse_it_too_under_config_from_head(repo: Repo, key: str) -> None:
    """The pull request's config, read from its head: the gate that reads the key refuses
    it before judging anything."""
    pull_request(repo, _config_with(key, r"(a)\1"), message("c:m [t]"))
    line = error_line(repo.tools("--config-from", "head", *GATE_OF[key], "--base", "main"))
    assert f": {key}: bad value " in line and "invalid escape sequence: \\1" in line, line


def test_a_required_group_is_still_checked(repo: Repo) -> None:
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {"ratchets": {"r": {"kind": "pattern", "buckets": {"b": "x"}, "allow_marker": "A(x)"}}}
        ),
    )
    line = error_line(repo.tools("config", "validate"))
    assert "ratchets.r.allow_marker: regex lacks its named group" in line
    # RE2's own spelling of a named group counts.
    repo.write(
        ".agents/protocol.yaml",
        yaml.safe_dump(
            {
                "ratchets": {
                    "r": {"kind": "pattern", "buckets": {"b": "x"}, "allow_marker": "A(?<tag>x)"}
                }
            }
        ),
    )
    assert repo.tools("config", "validate").exit_code == 0


@pytest.mark.parametrize(
    ("pattern", "says"),
    [
        ("(.{1000})+x", "instructions, more than"),  # a huge program
        (r"\pL{1000}", "pattern too large"),  # more than RE2's memory budget
        ("a{1001}", "invalid repetition size"),
        ("(" * 100_000 + ")" * 100_000, "instructions, more than"),  # Python: RecursionError
        ("x" * (1 << 20), "pattern too large"),
    ],
    ids=["huge program", "over the memory budget", "repeat", "100,000 groups", "1 MiB"],
)
def test_a_pattern_too_large_is_refused_cleanly(repo: Repo, pattern: str, says: str) -> None:
    repo.write(".agents/protocol.yaml", yaml.safe_dump({"style": {"subject_pattern": pattern}}))
    line = error_line(repo.tools("config", "validate"))
    assert line.startswith("error: .agents/protocol.yaml: style.subject_pattern: bad value ")
    assert says in line and len(line) < 400, line  # the pattern is quoted, shortened


def test_a_gate_refuses_a_bad_pattern_it_meets_unvalidated() -> None:
    """A config that skipped validation (built in code): the gate's own compile refuses it,
    naming the key."""
    from tools.gates import trailers

    cfg = protocol_config(defaults()).trailers._replace(assisted_by_format="(?=x)")
    with pytest.raises(UsageError, match=r"^trailers\.assisted_by_format: bad value"):
        trailers.judge(message("a"), cfg, lambda *a: None)


# -- the defaults, the starter config and this repository's own config --------------------
def test_the_defaults_compile_and_their_buckets_stay_armed() -> None:
    cfg = protocol_config(defaults())
    (ratchet,) = engine.load(cfg, None)
    det = ratchet.detector
    assert det is not None
    for bucket in det.buckets:
        assert isinstance(bucket.regex, ConfigPattern)
        for line in bucket.examples:
            assert det.line_matches(bucket, line), (bucket.name, line)
        for line in bucket.counter_examples:
            assert not det.line_matches(bucket, line), (bucket.name, line)


@pytest.mark.parametrize("name", ["starter", "this repository's"])
def test_shipped_configs_validate_under_re2(name: str) -> None:
    if name == "starter":
        raw = data_text("protocol.starter.yaml").encode()
    else:
        raw = (ROOT / ".agents" / "protocol.yaml").read_bytes()
    data = load_bytes(raw, display=name)
    cfg = protocol_config(merge(defaults(), data))
    engine.load(cfg, name)  # every bucket, guard and marker compiles


# The default `cuda_include` lost its lookahead (RE2 has none); it must count the same lines.
OLD_CUDA_INCLUDE = re.compile(
    r'^[ \t]*#[ \t]*include(?:_next)?[ \t]*[<"](?=[^>"]*[>"])(?:cuda_runtime|[^>"]*?/cuda/)'
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "#",
                " ",
                "\t",
                "include",
                "_next",
                "<",
                ">",
                '"',
                "cuda_runtime",
                "/cuda/",
                "cuda",
                "/",
                "x.h",
                "vt",
            ]
        ),
        max_size=12,
    ).map("".join)
)
@example("#include <vt/cuda/unclosed.h")
@example('#include "a/cuda/b.h" // <c>')
@example('#include <a/cuda/b.h"')
def test_the_new_cuda_include_counts_what_the_old_one_counted(line: str) -> None:
    regex = defaults()["ratchets"]["device-leakage"]["buckets"]["cuda_include"]["regex"]
    new = config_pattern(regex, "cuda_include")
    assert (new.search(line) is not None) == (OLD_CUDA_INCLUDE.search(line) is not None)


# -- what RE2 reads as Python does, and what it reads differently ----------------------------
@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="kCUDA_x1 ;:().", max_size=30))
@example("mykCUDA")
@example("kCUDA_x")
@example("at::kCUDA;")
def test_ascii_word_boundaries_are_pythons(line: str) -> None:
    """C/C++ identifiers are ASCII: there RE2's `\\b` and `\\w` are Python's."""
    for pattern in (r"\bkCUDA\b", r"\w+\(", r"is_cuda\s*\(", r"\bVT_\w"):
        ours = config_pattern(pattern, "p")
        assert (ours.search(line) is None) == (re.search(pattern, line) is None), pattern


def test_word_classes_are_ascii_as_documented() -> None:
    """docs/configuration.md: `\\w`, `\\b` are ASCII (Python's re.ASCII)."""
    assert config_pattern(r"\w+", "p").fullmatch("naïve") is None
    assert re.fullmatch(r"\w+", "naïve", re.ASCII) is None
    assert config_pattern(r"\bkCUDA\b", "p").search("ékCUDA") is not None  # é: no word
    assert config_pattern(r"[^\s:]+", "p").fullmatch("naïve") is not None  # the way round


def test_python_spellings_that_keep_working() -> None:
    end = config_pattern(r"kCUDA\Z", "p")  # Python's end of text is RE2's \z
    assert end.search("at::kCUDA") is not None and end.search("kCUDA;") is None
    assert config_pattern(r"\\Z", "p").search("a\\Z") is not None  # an escaped backslash
    marker = config_pattern(r"DSR-ALLOW\((?P<tag>[^()]+)\)", "p")
    assert marker.groupindex == {"tag": 1}
    assert [m.group("tag") for m in marker.finditer("DSR-ALLOW(#1) DSR-ALLOW(F2)")] == ["#1", "F2"]
    assert config_pattern("(?i)claude", "p").search("CLAUDE") is not None
    assert config_pattern(r"^[ \t]*#", "p").search("  # x") is not None


def test_bytes_git_could_not_decode_are_one_character_each(repo: Repo) -> None:
    """A line holding a byte that is not UTF-8 (kept as a surrogate) is matched, counted and
    its marker's tag read, as a character of its own."""
    config = {
        "ratchets": {
            "r": {
                "kind": "pattern",
                "include": ["src/**"],
                "buckets": {"b": r"\bkCUDA\b.\."},
                "allow_marker": r"OK\((?P<tag>[^()]+)\)",
            }
        }
    }
    repo.write(".agents/protocol.yaml", yaml.safe_dump(config))
    repo.write(
        ".agents/issue-index.md",
        "# Index\n\n| Issue | Row | Title | Kind |\n"
        "|---|---|---|---|\n| #2 | F1 | Foundation | foundation |\n",
    )
    repo.commit("Start\n\nBody.\n", {"src/a.c": b"at::kCUDA\xff.; caf\xe9\nx; // OK(\xff)\n"})
    run = repo.tools("--format", "json", "ratchet", "check", "--rev", "HEAD")
    assert run.exit_code in (0, 1), run.stderr
    gate = run.json()["gates"][0]
    assert gate["stats"]["ratchets"]["r"]["counts"] == {"b": 1}
    assert [f["rule"] for f in gate["findings"] if f["rule"] == "allow-tag-unknown"] == [
        "allow-tag-unknown"
    ]


# -- the bound on a compiled program -------------------------------------------------------
def test_the_densest_program_allowed_still_judges_a_mib_in_linear_time() -> None:
    """The worst pattern we could build under the bound: its DFA blows up, so RE2 runs its
    NFA, every instruction live at every byte. Linear: twice the text, about twice the work
    (measured in bench/bench_hostile.py; here only bounded)."""
    width = MAX_PATTERN_PROGRAM - 7  # the program: the repeat's instructions and 7 more
    pattern = f"[ab]*a[ab]{{{width}}}x"
    compiled = config_pattern(pattern, "p")
    with pytest.raises(UsageError, match="instructions, more than"):
        config_pattern(f"[ab]*a[ab]{{{width + 1}}}x", "p")
    text = "".join(random.Random(1).choices("ab", k=1 << 20))
    assert compiled.search(text) is None


# -- a table of 100,000 rows: each linked spec is judged once -------------------------------
def test_a_table_of_100000_rows_moving_at_once_is_judged_in_linear_time(repo: Repo) -> None:
    """Every row of the matrix moves in one commit and links the same spec: the spec is read
    and judged once for the commit, not once per row."""
    n = 100_000
    config = {
        "docs": {
            "spec_now": [
                {
                    "matrix": "docs/m.md",
                    "states": ["todo", "done"],
                    "spec_link": r"\]\((?P<spec>[^)\s]+)\)",
                }
            ]
        }
    }
    parts = "".join(f"## {i}. Part\n\nText.\n\n" for i in range(2000))
    spec = f"# Spec\n\n{parts}## Now\n\nDone.\n"

    def matrix(state: str) -> str:
        rows = "".join(f"|r{i}|`{state}`|[s](s.md)|\n" for i in range(n))
        return "|Row|State|Spec|\n|-|-|-|\n" + rows

    repo.commit(
        "Start\n\nBase.\n",
        {
            ".agents/protocol.yaml": yaml.safe_dump(config),
            "docs/s.md": spec,
            "docs/m.md": matrix("todo"),
        },
    )
    repo.branch("work")
    repo.commit("Move\n\nAll.\n", {"docs/m.md": matrix("done"), "docs/s.md": spec + "More.\n"})
    run = cli(repo, "--format", "json", "docs", "check", "--base", "main")
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr
    # The same moves without a change to the spec: one finding per row, all of one verdict.
    repo.commit("Back\n\nAll.\n", {"docs/m.md": matrix("todo")})
    run = cli(repo, "--format", "text", "docs", "check", "--commit", "HEAD")
    assert run.returncode == 1, run.stderr
    assert f"{n} errors" in run.stdout.replace(",", ""), run.stdout[:2000]
    assert run.stdout.count("its spec docs/s.md did not change") == 50  # the first 50 shown
