"""SARIF ``partialFingerprints.primaryLocationLineHash`` (SPEC §13), computed as GitHub's
upload-sarif computes it, so that code scanning tracks the alerts of a log uploaded any way.

The values are checked three ways: against the expected values published with the upload
action's own tests (github/codeql-action, src/fingerprints.test.ts: data, not code); against
the algorithm's closed form, a polynomial in base 37 over the 100 characters kept from a line's
start, computed here independently of the rolling implementation; and on real logs."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Repo
from tools.report.line_hash import BLOCK, EOF, line_hash, line_hashes

# (input, the value of each line) as github/codeql-action's src/fingerprints.test.ts lists them.
PUBLISHED = [
    ("", ["c129715d7a2bc9a3:1"]),
    (
        " a\nb\n  \t\tc\n d",
        ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"],
    ),
    (
        " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End",
        [
            "8b7cf3e952e7aeb2:1",
            "b1ae1287ec4718d9:1",
            "bff680108adb0fcc:1",
            "c6805c5e1288b612:1",
            "b86d3392aea1be30:1",
            "e6ceba753e1a442:1",
        ],
    ),
]
# One file's lines in four line-end conventions: LF, CR, CRLF, and a mix; the same values.
ENDINGS = [
    " hello; \t\nworld!!!\n\n\n  \t\tGreetings\n End\n",
    " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
    " hello; \t\r\nworld!!!\r\n\r\n\r\n  \t\tGreetings\r\n End\r\n",
    " hello; \t\nworld!!!\r\n\n\r  \t\tGreetings\r End\r\n",
]
ENDINGS_HASHES = [
    "e9496ae3ebfced30:1",
    "fb7c023a8b9ccb3f:1",
    "ce8ba1a563dcdaca:1",
    "e20e36e16fcb0cc8:1",
    "b3edc88f2938467e:1",
    "c8e28b0b4002a3a0:1",
    "c129715d7a2bc9a3:1",
]
LOREM = [
    *(f"a7f2ff13bc495cf2:{n}" for n in range(1, 7)),
    "a7f2ff1481e87703:1",
    "a9cf91f7bbf1862b:1",
    "55ec222b86bcae53:1",
    "cc97dc7b1d7d8f7b:1",
    "c129715d7a2bc9a3:1",
]


@pytest.mark.parametrize(("text", "expected"), PUBLISHED)
def test_the_upload_actions_published_values(text: str, expected: list[str]) -> None:
    assert line_hashes(text.encode()) == expected


@pytest.mark.parametrize("text", ENDINGS)
def test_every_line_end_convention_gives_the_same_values(text: str) -> None:
    assert line_hashes(text.encode()) == ENDINGS_HASHES


def test_repeated_windows_are_counted() -> None:
    # Ten identical lines: the first six hash the same 100 characters, told apart by count.
    assert line_hashes(b"Lorem ipsum dolor sit amet.\n" * 10) == LOREM


def _closed_form(kept: list[int], start: int) -> str:
    """A line's hash by its definition: sum(c[j] * 37**(99 - j)) mod 2**64 over the 100
    characters kept from ``start``, then EOF, then zeros."""
    chars = (kept + [EOF] + [0] * BLOCK)[start : start + BLOCK]
    value = sum(c * 37 ** (BLOCK - 1 - j) for j, c in enumerate(chars)) % 2**64
    return format(value, "x")


def test_the_rolling_hash_is_the_polynomial_it_stands_for() -> None:
    # By hand: spaces and tabs are dropped, so " x = 1;\n\ty\n" keeps "x=1;\ny\n".
    kept = [ord(c) for c in "x=1;\ny\n"]
    got = line_hashes(b" x = 1;\n\ty\n")
    assert [h.split(":")[0] for h in got] == [
        _closed_form(kept, 0),
        _closed_form(kept, 5),
        _closed_form(kept, 7),  # the empty line after the last line end: EOF alone
    ]
    # The empty file's one line is EOF alone: 65535 * 37**99 mod 2**64, the published value.
    assert format(EOF * 37**99 % 2**64, "x") == "c129715d7a2bc9a3"
    # A line longer than the window: only its first 100 kept characters count.
    long_line = ("ab" * 80 + "\n").encode()
    assert line_hashes(long_line)[0].split(":")[0] == _closed_form(list(long_line[:-1]), 0)
    # Characters beyond the BMP are two UTF-16 code units, as JavaScript reads them.
    emoji = "\U0001f600\n".encode()
    kept = [0xD83D, 0xDE00, ord("\n")]
    assert line_hashes(emoji)[0].split(":")[0] == _closed_form(kept, 0)
    assert line_hash(b"a\n", 3) is None and line_hash(b"a\n", 2) == line_hashes(b"a\n")[1]


DOC = "# A\n\nIntro.\n\n[x](gone.md)\n"
CONFIG = "base: main\npreflight:\n  gates: [links]\nlinks:\n  paths: ['**/*.md']\n"


def test_a_real_log_carries_the_hash_and_it_follows_the_line(repo: Repo) -> None:
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": CONFIG, "docs/a.md": DOC})
    log = json.loads(repo.tools("preflight", "--format", "sarif").stdout)
    (result,) = log["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    value = result["partialFingerprints"]["primaryLocationLineHash"]
    assert value == line_hashes(DOC.encode())[region["startLine"] - 1]
    # Lines added above move the finding; the characters from its line on are the same, so
    # code scanning sees the same alert.
    repo.write("docs/a.md", "# A\n\nNew words.\n\nMore.\n\nIntro.\n\n[x](gone.md)\n")
    moved = json.loads(repo.tools("preflight", "--format", "sarif").stdout)
    (again,) = moved["runs"][0]["results"]
    assert again["locations"][0]["physicalLocation"]["region"]["startLine"] == 9
    assert again["partialFingerprints"]["primaryLocationLineHash"] == value
    assert set(again["partialFingerprints"]) == {"toolsFinding/v1", "primaryLocationLineHash"}


def test_a_result_without_a_line_has_no_line_hash(repo: Repo) -> None:
    config = "base: main\npreflight:\n  gates: [trailers]\n"
    repo.commit("Start\n\nBody.\n", {".agents/protocol.yaml": config})
    repo.commit("no marker here\n")
    run = repo.tools("preflight", "--base", "HEAD~1", "--format", "sarif")
    results = json.loads(run.stdout)["runs"][0]["results"]
    assert results and run.exit_code == 1
    for result in results:
        assert "primaryLocationLineHash" not in result["partialFingerprints"]
