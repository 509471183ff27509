"""Install instructions name only what exists (SPEC §9.3, "Honest install"): the distribution is
not on the package index and the repository has no release tags, so no doc, workflow or
script of the repository installs ``agent-protocol-gates`` without a source (a path, or a git
URL pinned to a commit), and no ``rev:`` names a tag the repository lacks.

The checker reads every file of the repository that git tracks or would track (tests left out:
they hold the refused forms on purpose), with real git for the tags and commits."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.conftest import Repo

ROOT = Path(__file__).resolve().parents[1]
DIST = "agent-protocol-gates"
# Versions of the distribution on the package index. None yet: a version pin names nothing.
PUBLISHED: tuple[str, ...] = ()
# An install command, by pip, pipx or uv (`.venv/bin/pip install` too).
INSTALL = re.compile(r"\b(?:pip3?|pipx|uv pip|uv tool|python3? -m pip) install\b")
# An obvious placeholder, which the reader replaces: `<commit>`, `<owner>/<repo>`.
PLACEHOLDER = re.compile(r"<[^<>\s]+>")
REV = re.compile(r"^\s*(?:-\s+)?rev:\s*(?P<value>[^#\s]+)")
NAMES_DIST = re.compile(rf"^{re.escape(DIST)}(?:$|[\[\s@=<>~!;])")


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)


def tags(root: Path) -> set[str]:
    return set(git(root, "tag", "--list").stdout.split())


def has_commit(root: Path, rev: str) -> bool:
    return git(root, "cat-file", "-e", f"{rev}^{{commit}}").returncode == 0


def rev_problem(root: Path, rev: str) -> str | None:
    """Why ``rev`` (a `rev:` or a git URL's ``@REV``) names nothing the repository has."""
    if PLACEHOLDER.fullmatch(rev):
        return None
    if re.fullmatch(r"[0-9a-f]{40}", rev):
        return None if has_commit(root, rev) else f"commit {rev} is not in the repository"
    if rev in tags(root):
        return None
    return f"{rev!r} is neither a full commit id nor a tag the repository has (git tag)"


def source_problem(root: Path, word: str) -> str | None:
    """Why an install argument that names the distribution has no source, or None."""
    match = re.fullmatch(rf"{re.escape(DIST)}(?:\[[^\]]*\])?\s*(?P<spec>.*)", word, re.S)
    assert match is not None
    spec = match["spec"].strip()
    if spec.startswith("@"):
        url = spec[1:].strip()
        if not url.startswith("git+"):
            return None  # a path or an archive: a source
        _, _, last = url.rpartition("/")
        if "@" not in last:
            return f"{url} is not pinned: add @<commit>"
        return rev_problem(root, last.rpartition("@")[2])
    version = spec[2:].strip() if spec.startswith("==") else None
    if version in PUBLISHED:
        return None
    return (
        f"{word!r} asks the package index, which has no {DIST}"
        + (f" {version}" if version else "")
        + ": install from a clone (pip install .) or a git URL pinned to a commit"
    )


def install_words(line: str) -> Iterator[list[str]]:
    """The arguments of each install command on ``line``: to the end of the line, or of the
    inline code span the command is in; a trailing shell comment left out."""
    for found in INSTALL.finditer(line):
        rest = line[found.end() :]
        if line[: found.start()].count("`") % 2 == 1:
            rest = rest.split("`", 1)[0]
        try:
            yield shlex.split(rest, comments=True)
        except ValueError:  # prose around the command: its words are enough
            yield rest.split()


def yaml_lines(path: Path, text: str) -> Iterator[tuple[int, str]]:
    """The YAML lines of a file: all of a .yml/.yaml file, the ```yaml blocks of markdown."""
    if path.suffix in (".yml", ".yaml"):
        yield from enumerate(text.splitlines(), 1)
        return
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() in ("```yaml", "```yml"):
            inside = True
        elif inside and line.strip() == "```":
            inside = False
        elif inside:
            yield number, line


def repository_files(root: Path) -> list[tuple[Path, str]]:
    """Every text file git tracks or would track, outside tests/."""
    listed = git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
    files = []
    for rel in sorted(set(filter(None, listed.split("\0")))):
        path = root / rel
        if rel.startswith("tests/") or not path.is_file():
            continue
        try:
            files.append((path, path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue  # a binary file instructs nobody
    return files


def problems(root: Path, files: list[tuple[Path, str]]) -> list[str]:
    found = []
    for path, text in files:
        rel = path.relative_to(root)
        for number, line in enumerate(text.splitlines(), 1):
            for words in install_words(line):
                for word in words:
                    if NAMES_DIST.match(word):
                        why = source_problem(root, word)
                        if why is not None:
                            found.append(f"{rel}:{number}: {why}")
        for number, line in yaml_lines(path, text):
            rev = REV.match(line)
            if rev is not None:
                why = rev_problem(root, rev["value"].strip("'\""))
                if why is not None:
                    found.append(f"{rel}:{number}: rev: {why}")
    return found


def test_no_instruction_installs_what_does_not_exist() -> None:
    files = repository_files(ROOT)
    assert any(path.name == "README.md" for path, _ in files)
    assert any(path.parent.name == "workflows" for path, _ in files)
    assert problems(ROOT, files) == []


def test_the_docs_install_from_a_clone_a_pinned_git_url_and_a_pinned_rev() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / "docs/ci.md").read_text(encoding="utf-8")
    url = f'pip install "{DIST} @ git+https://github.com/<owner>/<repo>@<commit>"'
    for text in (readme, ci):
        assert "pip install ." in text and url in text
    assert re.search(r"^\s+rev: <commit>\s", ci, re.M)
    # A placeholder is said to be one, where it is used.
    for path, text in repository_files(ROOT):
        if "<owner>/<repo>" in text:
            assert "placeholder" in text.lower(), path


def test_the_checker_refuses_a_bare_name_a_version_and_a_tag_that_does_not_exist(
    repo: Repo,
) -> None:
    repo.commit("Start\n\nBody.\n", {"a.txt": "a\n"})
    head = repo.head()
    doc = repo.path / "INSTALL.md"
    doc.write_text(
        "```sh\n"
        f"pip install {DIST}   # the index\n"
        f"pip install '{DIST}[numerics]==0.1.0'\n"
        f'pip install "{DIST} @ git+https://example.invalid/tools"\n'
        f'pip install "{DIST} @ git+https://example.invalid/tools@v0.1.0"\n'
        "```\n\n"
        f"Or run `pipx install {DIST}` by hand.\n\n"
        "```yaml\nrepos:\n  - repo: https://example.invalid/tools\n    rev: v0.1.0\n```\n"
    )
    found = problems(repo.path, [(doc, doc.read_text())])
    assert [line.split(": ", 1)[0] for line in found] == [
        "INSTALL.md:2",
        "INSTALL.md:3",
        "INSTALL.md:4",
        "INSTALL.md:5",
        "INSTALL.md:8",
        "INSTALL.md:13",
    ], found
    assert "asks the package index" in found[0] and "0.1.0" in found[1]
    assert "not pinned" in found[2] and "'v0.1.0' is neither" in found[3]
    # What exists passes: a path, a placeholder, this repository's commit, a tag it has.
    repo.git("tag", "v0.1.0")
    doc.write_text(
        "```sh\npip install .\npip install -e '.[dev]'\n"
        f'pip install "{DIST} @ git+https://github.com/<owner>/<repo>@<commit>"\n'
        f'pip install "{DIST}[numerics] @ git+https://example.invalid/tools@{head}"\n'
        f'pip install "{DIST} @ git+https://example.invalid/tools@v0.1.0"\n'
        f"pip install '{DIST} @ file:///src/tools'\n"
        "```\n\n```yaml\nrepos:\n  - repo: https://example.invalid/tools\n"
        f"    rev: {head}\n  - repo: https://example.invalid/tools\n    rev: v0.1.0\n```\n"
    )
    assert problems(repo.path, [(doc, doc.read_text())]) == []
    missing = "0" * 40
    doc.write_text(f"```yaml\nrepos:\n  - repo: x\n    rev: {missing}\n```\n")
    assert problems(repo.path, [(doc, doc.read_text())]) == [
        f"INSTALL.md:4: rev: commit {missing} is not in the repository"
    ]
