"""Limits on the shape of a YAML document, checked before it is built into data.

Configs, plans and manifests come from pull requests. A deeply nested document makes the
recursive parts of PyYAML and jsonschema run out of stack (a crash, exit 3) and an alias bomb
("billion laughs") expands a few hundred bytes into gigabytes. PyYAML's event parser is
iterative, so one pass over its events measures nesting and the size the aliases would expand
to, in linear time and without building anything.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from tools.errors import UsageError

MAX_DEPTH = 100
MAX_NODES = 100_000


@dataclass
class _Open:
    """A collection being read: its anchor (if any) and the nodes it expands to so far."""

    anchor: str | None
    nodes: int = 1


def check_yaml(text: str, where: str) -> None:
    """Refuse ``text`` (exit 2 naming ``where``) when nesting exceeds :data:`MAX_DEPTH` or the
    document with its aliases expanded exceeds :data:`MAX_NODES` nodes. A YAML syntax error is
    left for the loader, which reports it with its line."""
    stack: list[_Open] = []
    sizes: dict[str, int] = {}
    expanded = 0  # nodes of the document as built, aliases expanded
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                stack.append(_Open(event.anchor))
                expanded += 1
                if len(stack) > MAX_DEPTH:
                    line = event.start_mark.line + 1 if event.start_mark else 0
                    raise UsageError(
                        f"nesting deeper than {MAX_DEPTH} levels (line {line})",
                        where=where,
                        expected=f"a document nested at most {MAX_DEPTH} deep",
                    )
                continue
            if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                done = stack.pop()
                if done.anchor is not None:
                    sizes[done.anchor] = done.nodes
                size = done.nodes
            elif isinstance(event, yaml.ScalarEvent):
                size = 1
                expanded += 1
                if event.anchor is not None:
                    sizes[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                size = sizes.get(str(event.anchor), 1)
                expanded += size
            else:
                continue
            if stack:
                stack[-1].nodes += size
            if expanded > MAX_NODES:
                raise UsageError(
                    f"the document expands to more than {MAX_NODES:,} nodes (aliases expanded)",
                    where=where,
                    expected="a document without alias bombs",
                )
    except yaml.YAMLError:
        return
