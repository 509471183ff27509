"""A repository with a few hundred commits of realistic agent history, built fast with
``git fast-import`` (one process, however many commits).

What it holds, as the model repository's history does: early commits without the protocol,
then markers glued to their trailers in most commits and a paragraph of their own in the
rest, Assisted-by IDs with a space, subjects over 72 characters, merges of side branches,
device-specific C++ in shared layers (ratchet sites), broken anchors and links in the docs,
and a roadmap matrix with several tables whose first cells repeat.

``build(..., habits=True)`` adds what adoption must learn rather than assume: README.md and
docs/BENCHMARKS.md changed with src/** in most commits (a doc file changed in few does not
count), a scripts/ folder touched too rarely to decide, side branches of unmarked
contributors' commits merged every 20 commits, one subject in five over 72
characters, one commit in five without a body, one marked commit in eight ending with the
marker glued under its trailers, a dependency bot's unmarked commits with `---` lines, a
kernel library split per device, a status matrix, and the specs in .agents/specs/.
"""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

MARKER = "FOLLOWING_AGENTS_PROTOCOL"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z
PRE_PROTOCOL = 30  # the first commits carry no marker
SPACED = "Claude Code:claude-opus-4-8 [ClaudeCode]"
PLAIN = "codex:gpt-5.1 [codex-cli]"

_VERBS = ["Add", "Fix", "Move", "Drop", "Teach", "Split", "Measure", "Keep", "Name", "Guard"]
_THINGS = [
    "the paged attention path",
    "the sampler's top-p cut",
    "the KV cache eviction",
    "the BF16 logit grid",
    "the tokenizer's byte fallback",
    "the scheduler's prefill budget",
    "the rotary embedding table",
    "the CPU fallback of the GEMM",
]
_WHERE = ["in the engine", "for the CPU leg", "behind the device interface", "in the docs"]

GUIDE = """# Guide

## Install

Build with `cmake -B build`. See [the setup notes](#installing) and [the design](design.md).

## Running

Run `./build/engine`. The old notes are in [old design](old-design.md).

## Design notes

See [Install](#install) and [Running](#running).
"""

ROADMAP = """# Roadmap v1

## Phase A

| Row | Claim | State | Spec |
| --- | --- | --- | --- |
| 0 | paged attention on CPU | `GATING` | [spec](specs/paged.md) |
| 1 | top-p kept count | `PROVEN` | [spec](specs/topp.md) |
| 2a | BF16 ties | `GATING` | [spec](specs/ties.md) |

## Phase B

| Row | Claim | State | Spec |
| --- | --- | --- | --- |
| 0 | CUDA graphs | `PLANNED` | [spec](specs/graphs.md) |
| 1 | ROCm leg | `PLANNED` | [spec](specs/rocm.md) |
| 2a | Metal leg | `PLANNED` | [spec](specs/metal.md) |
"""

INTERFACE_H = """#pragma once
// The device interface: the one shared header that may name a device.
enum class Device { kCPU, kCUDA };
inline bool on_gpu(Device d) { return d == Device::kCUDA; }
"""

CUDA_KERNEL = """#include <cuda_runtime.h>
__global__ void add(float* x) { x[threadIdx.x] += 1.0f; }
"""


def _engine(n_sites: int, n_lines: int) -> str:
    out = ["#include <vector>", '#include "platforms/interface.h"', ""]
    for i in range(n_lines):
        out.append(f"int step_{i}(int x) {{ return x + {i}; }}")
        if i < n_sites:
            out.append(f"bool uses_gpu_{i}(const Tensor& t) {{ return t.is_cuda(); }}")
    return "\n".join(out) + "\n"


def message(rng: random.Random, i: int, *, habits: bool = False) -> str:
    """Commit ``i``'s message, as the agents of such a repository write them."""
    subject = f"{rng.choice(_VERBS)} {rng.choice(_THINGS)} {rng.choice(_WHERE)}"
    if i % 23 == 7 or (habits and i % 5 == 1):
        subject += " so that the numbers in the spec are the ones the ledger holds"
    body = (
        f"Step {i}: the change keeps the contract of the previous step and records what "
        "was measured in the spec's Now section."
    )
    if i < PRE_PROTOCOL:
        return f"{subject}\n\n{body}\n"
    head = f"{subject}\n\n" if habits and i % 5 == 2 else f"{subject}\n\n{body}\n\n"
    assisted = SPACED if i % 3 == 0 else PLAIN
    ai = "true" if i % 7 else "false"
    trailers = f"Following-Agents-Protocol: true\nAI-Assisted: {ai}\nAssisted-by: {assisted}\n"
    if habits and i % 8 == 4:
        return f"{head}{trailers}{MARKER}\n"  # the marker glued under the trailers, last
    glue = "\n" if i % 5 == 0 else ""  # one in five a paragraph of its own
    return f"{head}{MARKER}\n{glue}{trailers}"


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


# A kernel library split per device (its dispatch names the device), a shared file named after
# a device, and a shared loader whose device include only a feature macro's build compiles.
DEVICE_LAYER = {
    "src/kern/cpu/gemm.cc": "int gemm_cpu() { return 0; }\n",
    "src/kern/metal/gemm.cc": "int gemm_metal() { return 1; }\n",
    "src/kern/cuda/gemm.cc": "#include <cuda_runtime.h>\nint gemm_cuda() { return 2; }\n",
    "src/kern/dispatch.cc": "auto pick() { return at::Device(at::kCUDA); }\n",
    "src/core/cuda_helpers.cc": "auto device() { return kCUDA; }\n",
    "src/core/loader.cc": (
        '#ifdef ENGINE_FAST_PATH\n#include "kern/cuda/fast.h"\n#endif\n'
        "#include <cuda_runtime.h>\nint load() { return 0; }\n"
    ),
}


# A status matrix whose rows link the specs as written from .agents/ (one link bare), and a
# legend table whose first column holds the states (no matrix: it links no spec).
MATRIX = """# Roadmap

| ID | Claim | State | Spec |
| --- | --- | --- | --- |
| `R-PAGED` | paged attention | `PLANNED` | [spec](specs/paged.md) |
| `R-TOPP` | top-p count | `ACTIVE` | planned: `specs/topp.md` |
| `R-GRAPHS` | CUDA graphs | `PLANNED` | [spec](specs/paged.md#now) |
| `R-NOTE` | a note | `R-PAGED` | [spec](specs/topp.md) |

| State | Meaning |
| --- | --- |
| `PLANNED` | not started |
| `ACTIVE` | in progress |
| `DONE` | gated |
"""


# A dependency bot's commits: no marker, no trailers, and git's `---` patch divider.
BOT = b"dependabot[bot] <49699333+dependabot[bot]@users.noreply.github.com>"
BOT_MESSAGE = (
    "Bump numlib from 1.{i} to 1.{i}1\n\nBumps numlib.\n\n---\nupdated-dependencies:\n"
    "- dependency-name: numlib\n  dependency-type: direct:production\n...\n\n"
    "Signed-off-by: dependabot[bot] <support@github.com>\n"
)


def _habit_files(i: int) -> dict[str, str]:
    """The files commit ``i`` of a ``habits`` history adds to its usual change."""
    files: dict[str, str] = {}
    if i == 0:
        files[".agents/specs/paged.md"] = "# Paged attention\n\n## Now\n\nPlanned.\n"
        files[".agents/specs/topp.md"] = "# Top-p kept count\n\n## Now\n\nPlanned.\n"
        files.update(DEVICE_LAYER)
        files[".agents/roadmap.md"] = MATRIX
    if i % 10 < 8:
        files["README.md"] = f"# engine\n\nAn inference engine, step {i}.\n"
    if i % 10 < 7:
        files["docs/BENCHMARKS.md"] = f"# Benchmarks\n\nStep {i}: 1.{i % 7} ms.\n"
    if i % 10 == 9:
        files["docs/design.md"] = f"# Design\n\nRevised at step {i}.\n"
    if i % 50 == 5:
        files["scripts/bench.sh"] = f"#!/bin/sh\necho {i}\n"
    return files


def build(path: Path, commits: int = 300, *, seed: int = 20261201, habits: bool = False) -> Path:
    """A fresh repository at ``path`` whose ``main`` holds ``commits`` commits (a merge of a
    side branch every 40 of them). Returns ``path``."""
    rng = random.Random(seed)
    merge_every = 20 if habits else 40
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream: list[bytes] = []
    mark = 0
    prev = 0
    for i in range(commits):
        when = EPOCH + 3600 * i
        files: dict[str, str] = {}
        if i == 0:
            files = {
                "README.md": "# engine\n\nAn inference engine. See [the guide](docs/guide.md).\n",
                "AGENTS.md": f"# Agents\n\nEvery commit carries `{MARKER}` and its trailers.\n",
                "src/platforms/interface.h": INTERFACE_H,
                "src/cuda/kernels.cu": CUDA_KERNEL,
                "docs/guide.md": GUIDE,
                "docs/design.md": "# Design\n\nSee [the guide](guide.md#running).\n",
                "docs/roadmap_v1.md": ROADMAP,
            }
        files[f"src/core/engine_{i % 4}.cc"] = _engine(min(i // 60, 3), 5 + i // 4)
        if habits:
            files.update(_habit_files(i))
        if i % 11 == 3:
            files[f"docs/notes/step-{i}.md"] = (
                f"# Step {i}\n\nSee [the roadmap](../roadmap_v1.md).\n"
            )
        if i and i % merge_every == 0:
            mark += 1
            side = mark
            stream.append(b"commit refs/heads/side\nmark :%d\n" % side)
            stream.append(b"author Agent <agent@example.com> %d +0000\n" % (when - 60))
            stream.append(b"committer Agent <agent@example.com> %d +0000\n" % (when - 60))
            if habits:  # a contributor's branch: no marker, no trailers
                side_message = f"Side {i}\n\nA contributor's change.\n"
            elif i >= PRE_PROTOCOL:
                side_message = message(rng, i)
            else:
                side_message = f"Side {i}\n\nBody.\n"
            stream.append(_data(side_message))
            stream.append(b"from :%d\n" % prev)
            side_file = f"docs/notes/side-{i}.md"
            side_text = f"# Side {i}\n\nMerged back. See [the guide](../guide.md#install).\n"
            stream.append(b"M 100644 inline %s\n" % side_file.encode() + _data(side_text))
            files[side_file] = side_text
        mark += 1
        stream.append(b"commit refs/heads/main\nmark :%d\n" % mark)
        bot = habits and i % 25 == 13 and i >= PRE_PROTOCOL
        author = BOT if bot else b"Agent <agent@example.com>"
        stream.append(b"author %s %d +0000\n" % (author, when))
        stream.append(b"committer Agent <agent@example.com> %d +0000\n" % when)
        if i and i % merge_every == 0:
            stream.append(_data(f"Merge branch 'side' into main\n\nStep {i}.\n"))
            stream.append(b"from :%d\nmerge :%d\n" % (prev, side))
        else:
            stream.append(_data(BOT_MESSAGE.format(i=i) if bot else message(rng, i, habits=habits)))
            if prev:
                stream.append(b"from :%d\n" % prev)
        for rel, text in sorted(files.items()):
            stream.append(b"M 100644 inline %s\n" % rel.encode() + _data(text))
        stream.append(b"\n")
        prev = mark
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=path,
        input=b"".join(stream),
        check=True,
        capture_output=True,
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=path, check=True)
    for key, value in (("user.name", "Agent"), ("user.email", "agent@example.com")):
        subprocess.run(["git", "config", key, value], cwd=path, check=True)
    subprocess.run(["git", "branch", "-q", "-D", "side"], cwd=path, check=False)
    return path
