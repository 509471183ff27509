"""``tools demo``: a realistic example repository, built in a temp dir, and a tour of the gates.

The repository is a small C project maintained the way the model repository is: agent
commits with the marker paragraph and trailers (a few of them bad), an issue index that two
branches appended and git's union driver merged, a docs checkpoint, a device-leakage ratchet
with one exempted site, a spec with ``Owed`` and ``Now``. The tour runs the real CLI on it, one
subprocess per command, exactly as a user would type them, and says what to look at.

Nothing is left behind unless ``--keep DIR`` names where the repository should stay.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tools import numerics
from tools.errors import UsageError
from tools.git import run_git

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
TRAILERS = "Following-Agents-Protocol: true\nAI-Assisted: true\nAssisted-by: codex:o3 [codex-cli]"
# The demo's clock and identities are fixed: the same repository, byte for byte, every run.
_ENV = {
    "GIT_AUTHOR_NAME": "Ada Agent",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Agent",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_TERMINAL_PROMPT": "0",
}

CONFIG = """\
# The example repository's protocol (see `tools config show` for every key).
base: main
preflight:
  gates: [conflicts, index, trailers, style, docs, ratchet, now, spec, links, ledger]
docs:
  rules:
    - name: calc-docs
      when_changed: ["src/**"]
      require_changed: ["docs/**"]
      message: a change to src/ explains itself in docs/
"""

NOW = """\
# NOW — the calculator
<!-- now-updated: 2026-01-05 -->

## Live claims
- `add` and `sub` are exact for every int pair that does not overflow (tests/test_calc.c).

## Current gate
- `make test` green on main; the ratchet keeps device code out of src/.

## Next actions
- #4: multiply, with its docs.
"""

INDEX_HEAD = """\
# Issue index

Append-only: one row per issue, appended at the tail.

| Issue | Row | Title | Kind |
|---|---|---|---|
| #1 | C1 | The calculator: add and sub | feature |
| #2 | C2 | Build and test with make | build |
| #3 | D1 | Device paths stay out of shared code | gate |
"""

SPEC = """\
# Calculator: add and sub

## Owed

- #1 — `add` and `sub` exact for every int pair that does not overflow.
- #2 — `make test` is the gate.

## Now

- `add` and `sub` exist in src/calc.c; tests/test_calc.c checks them.
"""

MAKEFILE = """\
CC ?= cc
build/test_calc: src/calc.c src/ops.c tests/test_calc.c src/calc.h
\tmkdir -p build
\t$(CC) -Wall -o build/test_calc src/calc.c src/ops.c tests/test_calc.c
build: build/test_calc
test: build/test_calc
\t./build/test_calc
.PHONY: build test
"""

CALC_H = "int add(int a, int b);\nint sub(int a, int b);\nint mul(int a, int b);\n"
CALC_C = """\
#include "calc.h"

int add(int a, int b) { return a + b; }

int sub(int a, int b) { return a - b; }
"""
OPS_C = """\
#include "calc.h"

/* Shared code: device paths are counted by the device-leakage ratchet. */
#ifdef VT_CUDA
int device_count(void) { return 1; }
#else
int device_count(void) { return 0; }
#endif

/* DSR-ALLOW(#3): the one device branch the platform layer needs until #3 lands. */
#if defined(VT_METAL)
int metal_only(void) { return 2; }
#endif
"""
TEST_C = """\
#include <stdio.h>
#include "../src/calc.h"

int main(void) {
    int bad = 0;
    if (add(2, 3) != 5) { printf("add(2, 3) = %d, want 5\\n", add(2, 3)); bad = 1; }
    if (sub(7, 4) != 3) { printf("sub(7, 4) = %d, want 3\\n", sub(7, 4)); bad = 1; }
    if (!bad) printf("ok\\n");
    return bad;
}
"""
DOCS = (
    "# The calculator\n\n`add(a, b)` and `sub(a, b)`: int arithmetic, exact unless it overflows.\n"
)

PLAN = """\
# A mutation experiment: does the test really catch a wrong `add`?
spec: specs/calc.md
base: main
build: make -s build
test: make -s test
timeout: 120
artifacts: [build/test_calc]           # the test binary: an arm that leaves it as it was is STALE
versions: ["cc --version"]
arms:
  - name: control
  - name: add-subtracts
    replace: {path: src/calc.c, old: "return a + b;", new: "return a - b;", count: 1}
  # Outside what the test binary is built from: its GREEN would say nothing about the code.
  - name: docs-only
    replace: {path: docs/calc.md, old: "exact", new: "precise", count: 1}
expect: {control: GREEN, add-subtracts: RED, docs-only: STALE}
"""

GRID_TIE = {
    "schema": "tools.grid-tie/1",
    "top_n": 4,
    "max_divergent": 1,
    "prompts": [
        {
            "prompt": 0,
            "diverged": True,
            "experiment_token": 11,
            "reference_token": 7,
            "experiment_tokens": 64,
            "reference_tokens": 64,
            "top": [
                {"id": 11, "logprob": -0.5},
                {"id": 7, "logprob": -0.5},
                {"id": 3, "logprob": -1.0},
                {"id": 9, "logprob": -2.0},
            ],
        },
        {"prompt": 1, "diverged": False, "experiment_tokens": 64, "reference_tokens": 64},
    ],
}


def message(subject: str, body: str, *, marker: bool = True, extra: str = "") -> str:
    parts = [subject, body]
    if marker:
        parts.append(MARKER)
    parts.append(TRAILERS + extra)
    return "\n\n".join(parts) + "\n"


@dataclass
class Step:
    """One command of the tour: its exit code and its output."""

    title: str
    argv: list[str]
    want: int = 0  # the exit code the tour expects
    code: int | None = None
    output: str = ""
    seconds: float = 0.0
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        """Whether it ran and exited as the tour expects."""
        return self.skipped is None and self.code == self.want


@dataclass
class Demo:
    root: Path
    say: Callable[[str], None]
    steps: list[Step] = field(default_factory=list)
    commits: dict[str, str] = field(default_factory=dict)
    now: str = ""
    # (finding, where, the command that made it), for the summary
    made_by: list[tuple[str, str, str]] = field(default_factory=list)

    # -- running things ------------------------------------------------------------------
    def git(self, *args: str, input: str | None = None, when: str | None = None) -> str:
        env = dict(_ENV)
        if when is not None:
            env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
        data = input.encode() if input is not None else None
        status, out, err = run_git(self.root, *args, input=data, env=env, ok=None)
        if status != 0:
            raise RuntimeError(f"git {' '.join(args)}: {err.decode(errors='replace')}")
        return out.decode("utf-8", "replace")

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def commit(self, key: str, msg: str, files: dict[str, str], when: int) -> str:
        for rel, text in files.items():
            self.write(rel, text)
        self.git("add", "-A")
        self.commit_staged(msg, when)
        sha = self.git("rev-parse", "HEAD").strip()
        self.commits[key] = sha
        return sha

    def commit_staged(self, msg: str, when: int) -> None:
        # The example's history is built without hooks: some of its commits are bad on purpose.
        stamp = f"2026-01-0{1 + when // 10} 10:{when % 10:02d}:00 +0000"
        self.git(
            "-c", "core.hooksPath=/dev/null", "commit", "-q", "--cleanup=verbatim", "-F", "-",
            input=msg, when=stamp,
        )  # fmt: skip

    def _run_cli(self, args: list[str]) -> subprocess.CompletedProcess[bytes]:
        """The real CLI in a fresh interpreter (this one's ``tools``; the example repository's
        folder is never put on ``sys.path``)."""
        code = (
            "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
            "from tools.cli.main import main; sys.argv[0] = 'tools'; main()"
        )
        env = {**os.environ, **_ENV, "NO_COLOR": "1"}
        return subprocess.run(
            [sys.executable, "-c", code, *args], cwd=self.root, capture_output=True, env=env
        )

    def tools(self, title: str, *args: str, want: int = 0) -> Step:
        """Run the real CLI as a user would type it, and show what it printed."""
        step = Step(title, ["tools", *args], want)
        self.steps.append(step)
        self.say(f"  $ {shlex.join(step.argv)}")
        start = time.perf_counter()
        proc = self._run_cli(list(args))
        step.seconds = time.perf_counter() - start
        step.code = proc.returncode
        step.output = (proc.stdout + proc.stderr).decode("utf-8", "replace")
        # Progress lines (stderr) only when something went wrong: the report is on stdout.
        shown = step.output if step.code != step.want else proc.stdout.decode("utf-8", "replace")
        for line in shown.rstrip("\n").split("\n"):
            self.say(f"    {line}")
        verdict = "as expected" if step.code == step.want else f"UNEXPECTED (wanted {step.want})"
        self.say(f"  exit {step.code} in {step.seconds:.1f} s: {verdict}")
        return step

    def attribute_findings(self, *args: str) -> None:
        """Record which command made each error and warning of a report (the same command
        with ``--format json``, read back), for the summary a new user reads last."""
        proc = self._run_cli([*args, "--format", "json"])
        try:
            report = json.loads(proc.stdout)
        except ValueError:
            return
        for gate in report.get("gates", []):
            for f in gate.get("findings", []):
                if f["severity"] == "info":
                    continue
                where = f["path"] or ""
                if f.get("line") is not None and f["path"]:
                    where += f":{f['line']}"
                if f.get("commit"):
                    where = (where + " " if where else "") + f"commit {f['commit'][:12]}"
                self.made_by.append(
                    (f"{f['severity']}[{f['rule']}]", where, shlex.join(["tools", *args]))
                )

    def now_section(self) -> str:
        """The example spec's `Now` section as the tour left it (the evidence tables)."""
        from tools import markdown

        path = self.root / "specs" / "calc.md"
        if not path.exists():
            return ""
        lines = markdown.split_lines(path.read_text(encoding="utf-8"))
        for section in markdown.sections(lines):
            if section.heading.title == "now":
                return "\n".join(section.body(lines)).strip("\n")
        return ""

    def skip(self, title: str, argv: list[str], why: str) -> None:
        step = Step(title, ["tools", *argv], skipped=why)
        self.steps.append(step)
        self.say(f"  (skipped: {why})")

    # -- the repository --------------------------------------------------------------------
    def build(self) -> None:
        self.git("init", "-q", "-b", "main")
        self.write(".agents/protocol.yaml", CONFIG)
        self.write(
            ".gitattributes",
            ".agents/issue-index.md merge=union\n.agents/ledger.jsonl merge=union\n",
        )
        self.build_main()
        self.merge_other_agent()
        self.build_feature_branch()

    def build_main(self) -> None:
        """The calculator's first commit and a docs follow-up, on main."""
        base = {
            ".agents/NOW.md": NOW,
            ".agents/issue-index.md": INDEX_HEAD,
            ".agents/baselines/device-leakage.json": json.dumps(
                {
                    "ratchet": "device-leakage",
                    "buckets": {"kcuda": 0, "is_cuda": 0, "cuda_include": 0, "vt_macro": 1},
                },
                indent=2,
            )
            + "\n",
            "specs/calc.md": SPEC,
            "docs/calc.md": DOCS,
            "Makefile": MAKEFILE,
            "src/calc.h": CALC_H,
            "src/calc.c": CALC_C,
            "src/ops.c": OPS_C,
            "tests/test_calc.c": TEST_C,
            ".gitignore": "build/\n",
        }
        self.commit(
            "root",
            message("Add the calculator", "add and sub, built and tested with make."),
            base,
            0,
        )
        self.commit(
            "docs",
            message("Say what overflow does", "Callers asked; the docs now say it."),
            {"docs/calc.md": DOCS + "\nOverflow is undefined, as in C.\n"},
            1,
        )

    def merge_other_agent(self) -> None:
        """Another agent's branch appends issue #5 to the index; main merges it."""
        self.git("checkout", "-q", "-b", "agent/other")
        self.commit(
            "other",
            message("File the division issue", "Division is next after multiply."),
            {".agents/issue-index.md": INDEX_HEAD + "| #5 | C4 | Division | feature |\n"},
            2,
        )
        self.git("checkout", "-q", "main")
        self.git(
            "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "agent/other",
            "-m", message("Merge the division issue", "The index row of #5."),
            when="2026-01-01 10:08:00 +0000",
        )  # fmt: skip
        self.commits["main"] = self.git("rev-parse", "HEAD").strip()

    def build_feature_branch(self) -> None:
        """Our agent's branch: issue #4, a commit that breaks the test, a device leak, a
        commit without the marker, then main merged in (the union driver keeps both rows)."""
        self.git("checkout", "-q", "-b", "agent/feature", self.commits["docs"])
        calc_mul = CALC_C + "\nint mul(int a, int b) { return a * b; }\n"
        self.commit(
            "mul",
            message("Add multiply", "mul(a, b), with its docs and a test."),
            {
                ".agents/issue-index.md": INDEX_HEAD + "| #4 | C3 | Multiply | feature |\n",
                "src/calc.c": calc_mul,
                "docs/calc.md": DOCS + "\n`mul(a, b)` multiplies.\n",
            },
            3,
        )
        self.commit(
            "broken",
            message("Speed up add", "A shortcut for the common case."),
            {"src/calc.c": calc_mul.replace("return a + b;", "return a | b;")},
            4,
        )
        self.commit(
            "leak",
            message(
                "Add a CUDA fast path",
                "Counts devices on CUDA builds.",
                extra="\nSigned-off-by: Codex Bot <codex-bot@example.com>",
            ),
            {
                "src/ops.c": OPS_C
                + "\n#if defined(VT_CUDA) && VT_FAST\nint fast(void) { return 3; }\n#endif\n"
            },
            5,
        )
        self.commit(
            "tidy",
            message("Tidy the header.", "Sorted the declarations.", marker=False),
            {"src/calc.h": "".join(sorted(CALC_H.splitlines(keepends=True)))},
            6,
        )
        self.git(
            "-c", "core.hooksPath=/dev/null", "merge", "-q", "--no-ff", "main",
            "-m", message("Merge main", "Take the division issue row."),
            when="2026-01-01 10:09:00 +0000",
        )  # fmt: skip

    # -- the tour ---------------------------------------------------------------------------
    def tour(self) -> None:
        self.tour_gates()
        self.tour_mutation()
        self.tour_attribution()
        self.tour_evidence()
        self.tour_replay()
        self.tour_grid_tie()

    def tour_gates(self) -> None:
        self.say("[2/7] the gates over the agent branch (what CI runs on a pull request)")
        # FAIL: trailers, style, docs and ratchet name the bad commits.
        self.tools(
            "preflight",
            "preflight",
            "--base",
            "main",
            want=1,
        )
        self.attribute_findings("preflight", "--base", "main")

    def tour_mutation(self) -> None:
        self.say("[3/7] a mutation experiment: does the test catch a wrong add?")
        self.git("checkout", "-q", "main")
        self.write("specs/plans/calc-add.yaml", PLAN)
        self.git("add", "specs/plans/calc-add.yaml")
        self.commit_staged(
            message("Plan the add experiment", "Three arms: control, a wrong add, a docs edit."), 7
        )
        self.commits["plan"] = self.git("rev-parse", "HEAD").strip()
        if not _have_cc():
            self.skip("mutation run", ["mutate", "run", "specs/plans/calc-add.yaml"], _NO_CC)
            return
        # Every arm as expected (docs-only is STALE: the test binary did not change); the
        # table lands in specs/calc.md.
        self.tools(
            "mutation run",
            "mutate",
            "run",
            "specs/plans/calc-add.yaml",
            "-j",
            "2",
        )

    def tour_attribution(self) -> None:
        self.say("[4/7] which commit broke the test? bisect, then prove it both ways")
        if not _have_cc():
            self.skip("attribution", ["attribute"], _NO_CC)
            return
        c = self.commits
        # ATTRIBUTED to the commit "Speed up add".
        self.tools(
            "attribution",
            "attribute",
            "--good",
            c["docs"],
            "--bad",
            "agent/feature",
            "--build",
            "make -s build",
            "--test",
            "make -s test",
            "--spec",
            "specs/calc.md",
        )

    def tour_evidence(self) -> None:
        self.say("[5/7] the evidence, committed: spec tables re-render from the ledger")
        self.git("add", "-A")
        if self.git("status", "--porcelain").strip():  # nothing to commit without a C compiler
            self.commit_staged(
                message("Record the add experiment", "The ledger records and their spec tables."),
                8,
            )
        # ok: every evidence table is backed by its ledger record, every record's id recomputes.
        self.tools("spec check", "spec", "check")
        self.tools(
            "ledger verify",
            "ledger",
            "verify",
            "--base",
            self.commits["root"],
        )

    def tour_replay(self) -> None:
        self.say("[6/7] evidence that vouches for itself: replay an arm, sign it, refuse a forgery")
        if not _have_cc():
            self.skip("evidence replay", ["evidence", "replay"], f"{_NO_CC}: no arm to replay")
            return
        # A branch of its own: main's ledger holds the STALE arm, which no replay vouches for
        # (it proves nothing), so `--require-attested mutation-arm` could never pass there.
        self.git("checkout", "-q", "-b", "agent/evidence", self.commits["plan"])
        try:
            plan = "specs/plans/calc-add.yaml"
            if not self.tools("one arm", "mutate", "run", plan, "--arm", "add-subtracts").ok:
                return
            self.git("add", "-A")
            self.commit_staged(message("Record the wrong add", "The arm's record, to sign."), 9)
            # Re-run in a fresh worktree at the recorded commit: it sees what the record says.
            self.tools("evidence replay", "evidence", "replay", "--base", "main")
            self.signed_and_forged()
        finally:
            self.git("checkout", "-q", "main")

    def signed_and_forged(self) -> None:
        """Sign the replayed arm with a throwaway key, verify, then refuse a forged copy."""
        keys = tempfile.mkdtemp(prefix="tools-demo-key-")  # never inside the judged tree
        try:
            made = _throwaway_key(Path(keys))
            if isinstance(made, str):
                self.skip("signing", ["evidence", "sign"], made)
                return
            key, signers = made
            if not self.tools(
                "evidence sign", "evidence", "sign", "--key", str(key), "--base", "main"
            ).ok:
                return
            verify = [
                "ledger", "verify", "--base", "main",
                "--require-attested", "mutation-arm", "--allowed-signers", str(signers),
            ]  # fmt: skip
            self.tools("attested", *verify)  # ok: the arm carries a valid attestation
            self.git("add", "-A")
            self.commit_staged(message("Sign the wrong add", "Its attestation record."), 10)
            self.forge(verify)
        finally:
            shutil.rmtree(keys, ignore_errors=True)

    def forge(self, verify: list[str]) -> None:
        """A copy of the signed arm with run_rc edited and its id recomputed: the ledger gate
        passes (the id is right), the attestations gate refuses it (nobody signed it)."""
        from tools import ledger

        path = self.root / ".agents" / "ledger.jsonl"
        kept = path.read_bytes()
        arm = next(
            r
            for r in map(json.loads, kept.decode("utf-8").splitlines())
            if r["kind"] == "mutation-arm"
        )
        forged = {k: v for k, v in arm.items() if k != "id"}
        forged["run_rc"], forged["run_rcs"] = 0, [0]
        forged["id"] = ledger.record_id(forged)
        self.say(f"  (a forged copy of the arm appended: run_rc 0, id {forged['id'][:12]}…)")
        path.write_bytes(kept + ledger.canonical_json(forged) + b"\n")
        try:
            self.tools("forgery", *verify, want=1)  # FAIL: evidence-unattested
        finally:
            path.write_bytes(kept)

    def tour_grid_tie(self) -> None:
        self.say("[7/7] a numerical claim: are two greedy outputs a BF16 logit-grid tie?")
        self.write("evidence/grid-tie.json", json.dumps(GRID_TIE, indent=2) + "\n")
        argv = ["numerics", "grid-tie", "evidence/grid-tie.json"]
        # The command needs the whole `numerics` extra; without it the step says what is absent.
        absent = numerics.missing()
        if absent:
            verb = "is" if len(absent) == 1 else "are"
            why = f"{' and '.join(absent)} {verb} not installed (pip install '.[numerics]')"
            self.skip("grid-tie", argv, why)
            return
        self.tools("grid-tie", *argv)  # PASS: a one-step tie on the 0.5 grid


def _have_cc() -> bool:
    return bool(shutil.which("cc") or shutil.which("gcc"))


_NO_CC = "no C compiler (cc) on PATH"


def _throwaway_key(folder: Path) -> tuple[Path, Path] | str:
    """An ed25519 key made by ``ssh-keygen`` in ``folder`` and an ``allowed_signers`` file
    trusting it; or why there is none."""
    if shutil.which("ssh-keygen") is None:
        return "no ssh-keygen on PATH (OpenSSH): nothing signed, nothing verified"
    key = folder / "demo-key"
    made = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "demo", "-f", str(key)],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        first = (made.stderr.strip().splitlines() or ["no message"])[0]
        return f"ssh-keygen could not make a key (exit {made.returncode}: {first})"
    kind, blob = (folder / "demo-key.pub").read_text().split()[:2]
    signers = folder / "allowed_signers"
    signers.write_text(f'ci@example.com namespaces="agent-protocol-gates" {kind} {blob}\n')
    return key, signers


def run_demo(keep: Path | None, say: Callable[[str], None]) -> Demo:
    """Build the example repository and run the tour; remove it unless ``keep``."""
    if keep is not None:
        if keep.exists() and (not keep.is_dir() or any(keep.iterdir())):
            raise UsageError(
                "exists and is not an empty folder",
                where=str(keep),
                expected="a new or empty folder for --keep",
            )
        keep.mkdir(parents=True, exist_ok=True)
        root = keep.resolve()
        cleanup = None
    else:
        cleanup = tempfile.mkdtemp(prefix="tools-demo-")
        root = Path(cleanup) / "calc"
        root.mkdir()
    demo = Demo(root, say)
    try:
        say(f"[1/7] building an example repository in {root}")
        demo.build()
        demo.tour()
        demo.now = demo.now_section()
    finally:
        if cleanup is not None:
            shutil.rmtree(cleanup, ignore_errors=True)
    return demo
