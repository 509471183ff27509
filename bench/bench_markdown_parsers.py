"""Which markdown parser: three candidates on the 1 MiB hostile markdown of tests/hostile.py.

For each input of the markdown families ("headings", "links"): pyromark (pulldown-cmark,
iterating every event with its byte range), cmarkgfm (GitHub's cmark-gfm, HTML out) and
markdown-it-py (its token stream, GFM tables on), each the median of --runs runs, and our whole
read (tools.markdown.parse: the pyromark walk that fills a Document). markdown-it-py is stopped
after --cap seconds an input. The figures are in docs/docs-and-links.md ("How markdown is read").

    python bench/bench_markdown_parsers.py [--runs 3] [--cap 10]
"""

from __future__ import annotations

import argparse
import gc
import platform
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from measure import cpu_model, median  # noqa: E402

from tests.hostile import cases, forget  # noqa: E402

FAMILIES = ("headings", "links")


class _Cap(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Cap


def main() -> None:
    import cmarkgfm
    import pyromark
    from markdown_it import MarkdownIt

    from tools import markdown

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cap", type=float, default=10.0)
    args = ap.parse_args()
    mdit = MarkdownIt("commonmark").enable(["table", "strikethrough"])

    def run_pyromark(text: str) -> None:
        for _ in pyromark.events_with_range(text, options=markdown.OPTIONS, merge_text=True):
            pass

    # Ours first: markdown-it-py leaves a large heap behind that slows the next allocations.
    parsers = {
        "tools.markdown.parse": markdown.parse,
        "pyromark": run_pyromark,
        "cmarkgfm": cmarkgfm.github_flavored_markdown_to_html,
        "markdown-it-py": mdit.parse,
    }
    print(f"# {cpu_model()}, Python {platform.python_version()}, median of {args.runs} runs")
    print("| input (1 MiB) | " + " | ".join(f"{p} ms" for p in parsers) + " |")
    print("|---|" + "---|" * len(parsers))
    worst = dict.fromkeys(parsers, 0.0)
    signal.signal(signal.SIGALRM, _alarm)
    for case in cases():
        if case.family not in FAMILIES:
            continue
        cells = []
        for name, parse in parsers.items():
            times: list[float] = []
            capped = False
            for _ in range(args.runs):
                forget()
                gc.collect()
                start = time.perf_counter()
                # The alarm can go off while it is being disarmed, once the parse has run for
                # the whole cap: the inner finally disarms, the outer handler counts it capped.
                try:
                    try:
                        if name == "markdown-it-py":
                            signal.setitimer(signal.ITIMER_REAL, args.cap)
                        parse(case.data)
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                except _Cap:
                    capped = True
                except Exception as exc:  # a refusal (nesting) is a result too
                    cells.append(f"refused ({type(exc).__name__})")
                    break
                times.append(time.perf_counter() - start)
                if capped:
                    break
            if len(cells) > list(parsers).index(name):
                continue
            if capped:
                cells.append(f"> {args.cap * 1000:.0f}")
                worst[name] = max(worst[name], args.cap)
            else:
                cells.append(f"{median(times) * 1000:.0f}")
                worst[name] = max(worst[name], max(times))
        print(f"| {case.family}: {case.name} | " + " | ".join(cells) + " |")
    print()
    for name, w in worst.items():
        print(f"slowest {name}: {w * 1000:.0f} ms")


if __name__ == "__main__":
    main()
