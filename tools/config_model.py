"""The protocol config as typed, frozen values: one named tuple per section of
``.agents/protocol.yaml`` and one for the whole (a named tuple costs a seventh of a frozen
dataclass to define, and every command defines these).

:func:`protocol_config` builds them from the merged mapping once it has passed the JSON Schema
(``tools/data/protocol.schema.json``, the contract and the source of
docs/config-reference.md); nothing here validates again. Lists become tuples; a key the
schema lets the user leave out gets the default its description names.
"""

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple, TypeAlias, TypeVar

RuleLevel: TypeAlias = Literal["off", "info", "warning", "error"]
# A bucket's exemption per file: how many of its first sites, or "*" for all.
Allowance: TypeAlias = "int | Literal['*']"
StateColumn: TypeAlias = "str | int | None"
_Section = TypeVar("_Section", bound=NamedTuple)  # a section's named tuple


class TrailerException(NamedTuple):
    """A known finding kept as debt: of one commit, or of every commit of one author (by
    email, any case: a bot whose messages the protocol does not govern)."""

    commit: str | None
    rule: str
    reason: str
    author: str | None = None


class TrailersConfig(NamedTuple):
    enabled: bool
    marker: str | None
    marker_placement: Literal["paragraph", "line"]
    assisted_by_format: str | None
    required: Mapping[str, tuple[str, ...]]  # trailer key -> its allowed values
    assisted_by: bool
    ai_identities: tuple[str, ...]
    merges: Literal["check", "skip"]
    fixups: Literal["allow", "check"]
    first_parent: bool
    cutover: str | None
    exceptions: tuple[TrailerException, ...]


class StyleConfig(NamedTuple):
    enabled: bool
    subject_max: int
    subject_length: Literal["warning", "error"]
    subject_pattern: str | None
    require_body: bool


class RowMoveTrigger(NamedTuple):
    """``docs.rules[].when_row_moves``: a row of ``matrix`` moving into one of ``to``."""

    matrix: str
    to: tuple[str, ...]
    states: tuple[str, ...]  # empty: those of the spec_now entries on the same matrix
    key_column: int
    state_column: StateColumn


class CheckpointRule(NamedTuple):
    """``docs.rules[]``: a change to some paths needs a change to others in the same commit."""

    name: str
    when_changed: tuple[str, ...]
    require_changed: tuple[str, ...]
    when_row_moves: RowMoveTrigger | None
    when_added_line: str | None
    renames: bool
    message: str | None


class StatusMatrix(NamedTuple):
    """``docs.spec_now[]``: a matrix whose rows' state changes need their spec's Now."""

    matrix: str
    spec_link: str
    states: tuple[str, ...]
    key_column: int
    state_column: StateColumn


class DocsConfig(NamedTuple):
    rules: tuple[CheckpointRule, ...]
    spec_now: tuple[StatusMatrix, ...]


class BucketConfig(NamedTuple):
    regex: str
    examples: tuple[str, ...]
    counter_examples: tuple[str, ...]
    outside_guards: tuple[str, ...] | None  # None: the key is absent


class TagSource(NamedTuple):
    """``ratchets.<name>.allow_tags_from[]``: a matrix whose rows' keys are allow tags."""

    matrix: str
    key_column: int


class PatternRatchetConfig(NamedTuple):
    buckets: Mapping[str, BucketConfig]
    include: tuple[str, ...] | None  # None: every tracked file
    exclude: tuple[str, ...] | None  # None: none
    strip: Literal["c"] | None
    exempt_files: Mapping[str, Mapping[str, Allowance]]  # path -> bucket -> allowance
    allow_marker: str | None
    baseline: str | None  # None: .agents/baselines/<name>.json
    allow_tags_from: tuple[TagSource, ...] = ()  # besides the index's rows and issues
    kind: Literal["pattern"] = "pattern"


class MarkdownRatchetConfig(NamedTuple):
    path: str
    paragraph_max: int | None  # None: the kind's default
    cell_max: int | None
    baseline: str | None
    kind: Literal["markdown"] = "markdown"


RatchetConfig: TypeAlias = "PatternRatchetConfig | MarkdownRatchetConfig"


class NowConfig(NamedTuple):
    path: str
    headings: tuple[str, ...]
    max_lines: int
    max_entry: int
    max_age_days: int | None


class LinksConfig(NamedTuple):
    paths: tuple[str, ...]
    exclude: tuple[str, ...]


class FileConfig(NamedTuple):
    """A section that names one repo-relative file (``index``, ``ledger``)."""

    path: str


class LedgerConfig(NamedTuple):
    """``ledger``: the ledger file, and the SSH ``allowed_signers`` / revocation files that
    ``ledger verify --require-attested`` checks attestations against (SPEC §11)."""

    path: str
    allowed_signers: str | None = None
    revoked_signers: str | None = None


class FolderConfig(NamedTuple):
    """A section that names one repo-relative folder (``specs``, ``goldens``)."""

    dir: str


class PreflightConfig(NamedTuple):
    gates: tuple[str, ...]


class MutateConfig(NamedTuple):
    """``mutate``: how mutation runs treat the steps they run (SPEC §10)."""

    kill_grace_s: float  # after SIGTERM to a step's process group, before SIGKILL


class LimitsConfig(NamedTuple):
    """``limits``: how much of one file of the judged tree is read (SPEC §10)."""

    max_file_bytes: int
    max_line_bytes: int


class ProtocolConfig(NamedTuple):
    """The effective config, every section filled."""

    base: str
    preflight: PreflightConfig
    rules: Mapping[str, RuleLevel]  # rule id -> its configured level (YAML's false: "off")
    # The section, not the tuple method it shadows (no caller asks a config for a position).
    index: FileConfig  # type: ignore[assignment]
    ledger: LedgerConfig
    trailers: TrailersConfig
    style: StyleConfig
    docs: DocsConfig
    ratchets: Mapping[str, RatchetConfig]
    now: NowConfig
    specs: FolderConfig
    links: LinksConfig
    goldens: FolderConfig
    mutate: MutateConfig
    limits: LimitsConfig


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(value or ())


def _optional_strings(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _section(kind: type[_Section], data: Mapping[str, Any], **converted: Any) -> _Section:
    """A section's named tuple: each field as ``data`` holds it under the field's name, unless
    ``converted`` gives its value (a name that is no field is a bug here, not a default)."""
    fields: tuple[str, ...] = kind._fields
    unknown = converted.keys() - set(fields)
    if unknown:
        raise TypeError(f"{kind.__name__} has no field {sorted(unknown)[0]!r}")
    return kind(*[converted[f] if f in converted else data[f] for f in fields])


def _trailers(data: Mapping[str, Any]) -> TrailersConfig:
    return _section(
        TrailersConfig,
        data,
        required={key: tuple(values) for key, values in data["required"].items()},
        ai_identities=_strings(data["ai_identities"]),
        exceptions=tuple(
            TrailerException(e.get("commit"), e["rule"], e["reason"], e.get("author"))
            for e in data["exceptions"]
        ),
    )


def _checkpoint(data: Mapping[str, Any]) -> CheckpointRule:
    moves = data.get("when_row_moves")
    trigger = None
    if moves is not None:
        trigger = RowMoveTrigger(
            matrix=moves["matrix"],
            to=_strings(moves["to"]),
            states=_strings(moves.get("states")),
            key_column=moves.get("key_column", 1),
            state_column=moves.get("state_column"),
        )
    return CheckpointRule(
        name=data["name"],
        when_changed=_strings(data.get("when_changed")),
        require_changed=_strings(data["require_changed"]),
        when_row_moves=trigger,
        when_added_line=data.get("when_added_line"),
        renames=bool(data.get("renames", False)),
        message=data.get("message"),
    )


def _status_matrix(data: Mapping[str, Any]) -> StatusMatrix:
    return StatusMatrix(
        matrix=data["matrix"],
        spec_link=data["spec_link"],
        states=_strings(data["states"]),
        key_column=data.get("key_column", 1),
        state_column=data.get("state_column"),
    )


def _bucket(data: str | Mapping[str, Any]) -> BucketConfig:
    if isinstance(data, str):
        return BucketConfig(data, (), (), None)
    return BucketConfig(
        regex=data["regex"],
        examples=_strings(data.get("examples")),
        counter_examples=_strings(data.get("counter_examples")),
        outside_guards=_optional_strings(data.get("outside_guards")),
    )


def _ratchet(data: Mapping[str, Any]) -> RatchetConfig:
    if data["kind"] == "markdown":
        return MarkdownRatchetConfig(
            path=data["path"],
            paragraph_max=data.get("paragraph_max"),
            cell_max=data.get("cell_max"),
            baseline=data.get("baseline"),
        )
    return PatternRatchetConfig(
        buckets={name: _bucket(b) for name, b in data["buckets"].items()},
        include=_optional_strings(data.get("include")),
        exclude=_optional_strings(data.get("exclude")),
        strip=data.get("strip"),
        exempt_files={
            path: dict(allowances) for path, allowances in (data.get("exempt_files") or {}).items()
        },
        allow_marker=data.get("allow_marker"),
        baseline=data.get("baseline"),
        allow_tags_from=tuple(
            TagSource(source["matrix"], source.get("key_column", 1))
            for source in data.get("allow_tags_from") or ()
        ),
    )


# YAML 1.1 reads a bare ``off`` as false: that is ``off`` too.
_LEVELS: dict[object, RuleLevel] = {
    False: "off",
    "off": "off",
    "info": "info",
    "warning": "warning",
    "error": "error",
}


def protocol_config(data: Mapping[str, Any]) -> ProtocolConfig:
    """The typed config of a merged mapping that passed the schema (defaults filled in)."""
    docs = data["docs"]
    return ProtocolConfig(
        base=data["base"],
        preflight=PreflightConfig(_strings(data["preflight"]["gates"])),
        rules={rule: _LEVELS[level] for rule, level in (data.get("rules") or {}).items()},
        index=FileConfig(data["index"]["path"]),
        ledger=LedgerConfig(
            data["ledger"]["path"],
            data["ledger"].get("allowed_signers"),
            data["ledger"].get("revoked_signers"),
        ),
        trailers=_trailers(data["trailers"]),
        style=_section(StyleConfig, data["style"]),
        docs=DocsConfig(
            rules=tuple(_checkpoint(r) for r in docs["rules"]),
            spec_now=tuple(_status_matrix(e) for e in docs["spec_now"]),
        ),
        ratchets={name: _ratchet(r) for name, r in (data.get("ratchets") or {}).items()},
        now=_section(NowConfig, data["now"], headings=_strings(data["now"]["headings"])),
        specs=FolderConfig(data["specs"]["dir"]),
        links=LinksConfig(_strings(data["links"]["paths"]), _strings(data["links"]["exclude"])),
        goldens=FolderConfig(data["goldens"]["dir"]),
        mutate=MutateConfig(float(data["mutate"]["kill_grace_s"])),
        limits=_section(LimitsConfig, data["limits"]),
    )
