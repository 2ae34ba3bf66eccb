"""The one declared table of settings: name, default, environment variable, help.

Only interfaces read it; the core receives plain values.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from memlane.embed.profiles import MINILM
from memlane.errors import Invalid

if TYPE_CHECKING:  # the core loads only when an interface opens a Memory
    from memlane.embed import Embedder
    from memlane.lifecycle.review import ReviewPolicy
    from memlane.memory import Memory
    from memlane.retrieve.recall import RecallOptions
    from memlane.scope import Context
    from memlane.write.settings import Thresholds

APP = "memlane"


def data_dir() -> Path:
    import platformdirs  # slow to import: only when a default path is needed

    return Path(platformdirs.user_data_dir(APP, appauthor=False))


def config_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_config_dir(APP, appauthor=False))


def _whole(text: str, need: str) -> int:
    """`text` as a whole number, else ValueError saying what to give (`need`)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(need) from None


def _real(text: str, need: str) -> float:
    """`text` as a finite number (nan and inf are none), else ValueError with `need`."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(need) from None
    if not math.isfinite(value):
        raise ValueError(need)
    return value


def _reals(text: str, count: int, need: str) -> tuple[float, ...]:
    values = tuple(_real(part, need) for part in text.split(","))
    if len(values) != count:
        raise ValueError(need)
    return values


def _at_least(low: int) -> Callable[[str], int]:
    need = f"use a whole number >= {low}"

    def parse(text: str) -> int:
        value = _whole(text, need)
        if value < low:
            raise ValueError(need)
        return value

    return parse


_count = _at_least(0)
_positive = _at_least(1)
# A body shorter than a paragraph refuses most memories an agent writes (and the
# consolidation that merges bodies): 1 KiB is the least that leaves memlane usable.
MIN_BODY_BYTES = 1024


def _share(text: str) -> float:
    value = _real(text, "use a number from 0 to 1")
    if not 0.0 <= value <= 1.0:
        raise ValueError("use a number from 0 to 1")
    return value


def _probability(text: str) -> float:
    value = _real(text, "use a number above 0 and at most 1")
    if not 0.0 < value <= 1.0:
        raise ValueError("use a number above 0 and at most 1")
    return value


def _hours(text: str) -> float:
    value = _real(text, "use a number of hours > 0")
    if not value > 0:
        raise ValueError("use a number of hours > 0")
    return value


def _days(text: str) -> float:
    value = _real(text, "use a number of days > 0")
    if not value > 0:
        raise ValueError("use a number of days > 0")
    return value


def _flag(text: str) -> bool:
    if text.lower() in ("1", "true", "yes", "on"):
        return True
    if text.lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("use 1 or 0")


def _weights(text: str) -> tuple[float, ...]:
    """Five weights, each in [0, 1], summing to 1 (checked as recall's Weights does)."""
    from memlane.retrieve.score import Weights  # the check lives with the score

    values = _reals(text, 5, "give five comma-separated numbers in [0, 1] summing to 1")
    try:
        Weights(*values)
    except Invalid as exc:
        raise ValueError(str(exc)) from None
    return values


def _boosts(text: str) -> tuple[float, ...]:
    need = "give four comma-separated scope boosts in [0, 1]"
    values = _reals(text, 4, need)
    if not all(0 <= v <= 1 for v in values):
        raise ValueError(need)
    return values


def _half_lives(text: str) -> tuple[float, ...]:
    need = "give four comma-separated half-lives in days > 0"
    values = _reals(text, 4, need)
    if not all(v > 0 for v in values):
        raise ValueError(need)
    return values


def _lane_weights(text: str) -> tuple[float, ...]:
    need = "give three comma-separated numbers >= 0, not all 0"
    values = _reals(text, 3, need)
    if any(v < 0 for v in values) or not any(values):
        raise ValueError(need)
    return values


def _lambda(text: str) -> float:
    if text.strip().lower() in ("off", "none"):
        return 1.0  # ranking by score alone is what lambda 1 means
    value = _real(text, "use a number in (0, 1] or off")
    if not 0.0 < value <= 1.0:
        raise ValueError("use a number in (0, 1] or off")
    return value


def _workers(text: str) -> int | None:
    if text.strip().lower() == "auto":
        return None
    return _count(text)


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"choose from {', '.join(choices)}")
        return text

    return parse


# A host name (optionally "*." and a domain: its subdomains) or a bracketed IPv6
# address; no port, which the web view does not compare.
_HOST_NAME = re.compile(r"(\*\.)?[a-z0-9]([a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\]")


def _host_names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip().lower() for part in text.split(",") if part.strip())
    for name in names:
        if not _HOST_NAME.fullmatch(name):
            raise ValueError(
                f"{name!r} is not a host name (like memlane.example.org, "
                "*.example.org or [::1], without a port)"
            )
    return names


# The tool sets `memlane serve` offers (server.app.TOOL_SETS says what each holds).
MCP_TOOL_SETS = ("core", "all", "official")


class Setting(msgspec.Struct, frozen=True):
    """One setting. `secret`: shown masked; `reindex`: a change makes the stored vectors
    another model's, to be computed again (`memlane reembed`)."""

    name: str
    env: str
    default: Callable[[], Any]
    help: str
    parse: Callable[[str], Any] = str
    secret: bool = False
    reindex: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "config",
        "MEMLANE_CONFIG",
        lambda: str(config_dir() / "settings.toml"),
        "The settings file (TOML): settings by name, and an [env] table of environment "
        "variables set for memlane when not set already. The environment overrides it. "
        "Read from the environment only.",
    ),
    Setting(
        "auto_migrate",
        "MEMLANE_AUTO_MIGRATE",
        lambda: True,
        "1 brings a store an older memlane made up to date when it is opened; 0 refuses "
        "it until `memlane migrate` is run.",
        _flag,
    ),
    Setting(
        "db",
        "MEMLANE_DB",
        lambda: str(data_dir() / "memlane.db"),
        "Store location: a SQLite file path, or a postgresql:// URL for a shared server.",
    ),
    Setting(
        "agent",
        "MEMLANE_AGENT",
        lambda: None,
        "Who is acting: the default source agent, owner of private memories, journal actor.",
    ),
    Setting(
        "project_aliases",
        "MEMLANE_PROJECT_ALIASES",
        lambda: str(data_dir() / "project-aliases.json"),
        "JSON map of directory name -> project name, keeping renamed checkouts together.",
    ),
    Setting(
        "sqlite_synchronous",
        "MEMLANE_SQLITE_SYNCHRONOUS",
        lambda: "full",
        "SQLite durability: full (fsync every commit) or normal (faster; WAL keeps "
        "crash safety, a power loss may drop the last commits).",
        _choice("full", "normal"),
    ),
    Setting(
        "embed_profile",
        "MEMLANE_EMBED_PROFILE",
        lambda: "minilm",
        "Embedding profile: minilm (all-MiniLM-L6-v2, int8 on onnxruntime, local), hash "
        "(deterministic, for tests), http (an OpenAI-compatible endpoint), or none.",
        _choice("minilm", "hash", "http", "none"),
        reindex=True,
    ),
    Setting(
        "skip_write_embed",
        "MEMLANE_SKIP_WRITE_EMBED",
        lambda: False,
        "1 defers embedding on every write (run `memlane embed --pending` later).",
        _flag,
    ),
    Setting(
        "embed_url",
        "MEMLANE_EMBED_URL",
        lambda: None,
        "http profile: base URL of an OpenAI-compatible embeddings API.",
    ),
    Setting(
        "embed_model",
        "MEMLANE_EMBED_MODEL",
        lambda: None,
        "http profile: the model name to ask for.",
        reindex=True,
    ),
    Setting(
        "embed_dim",
        "MEMLANE_EMBED_DIM",
        lambda: None,
        "http profile: the dimension of its vectors.",
        _positive,
        reindex=True,
    ),
    Setting(
        "embed_api_key",
        "MEMLANE_EMBED_API_KEY",
        lambda: None,
        "http profile: bearer token, if the endpoint needs one.",
        secret=True,
    ),
    Setting(
        "recall_weights",
        "MEMLANE_RECALL_WEIGHTS",
        lambda: None,
        "recall score weights: relevance,importance,confidence x trust,recency,popularity "
        "(five numbers summing to 1; default 0.5,0.15,0.15,0.1,0.1).",
        _weights,
    ),
    Setting(
        "recall_lane_weights",
        "MEMLANE_RECALL_LANE_WEIGHTS",
        lambda: None,
        "recall lane fusion weights: keyword,vector,entity (three numbers >= 0; "
        "default 0.6,0.4,0.2).",
        _lane_weights,
    ),
    Setting(
        "recall_mmr_lambda",
        "MEMLANE_RECALL_MMR_LAMBDA",
        lambda: None,
        "recall diversity: MMR lambda in (0, 1] (default 0.9); 1 or 'off' ranks by score alone.",
        _lambda,
    ),
    Setting(
        "recall_link_budget",
        "MEMLANE_RECALL_LINK_BUDGET",
        lambda: None,
        "recall: linked neighbours shown after the results (default 2; 0: none; "
        "--link-budget for one call).",
        _count,
    ),
    Setting(
        "recall_scope_boosts",
        "MEMLANE_RECALL_SCOPE_BOOSTS",
        lambda: None,
        "recall scope boosts: branch,project,global,other (four numbers in [0, 1]; "
        "default 1,0.85,0.7,0.3).",
        _boosts,
    ),
    Setting(
        "recall_half_lives",
        "MEMLANE_RECALL_HALF_LIVES",
        lambda: None,
        "recall recency half-lives in days: episodic,semantic,procedural,unclassed "
        "(default 3,90,180,7).",
        _half_lives,
    ),
    Setting(
        "recall_passive_floor",
        "MEMLANE_RECALL_PASSIVE_FLOOR",
        lambda: None,
        "recall --passive holds back memories with confidence below this (default 0.25).",
        _share,
    ),
    Setting(
        "recall_session_share",
        "MEMLANE_RECALL_SESSION_SHARE",
        lambda: None,
        "recall: the memories written just before and after the best five in their "
        "session are lifted to this share of their score (default 0.5; 0: off).",
        _share,
    ),
    Setting(
        "recall_min_score",
        "MEMLANE_RECALL_MIN_SCORE",
        lambda: None,
        "recall and search by meaning answer with nothing when the query's nearest memory "
        "is less alike than this (cosine; default: the embedding profile's calibrated "
        f"floor, {MINILM.relevance_floor} for minilm; 0: always answer).",
        _share,
    ),
    Setting(
        "review_threshold",
        "MEMLANE_REVIEW_THRESHOLD",
        lambda: 0.5,
        "review: a memory is due once its recall probability since its last review is "
        "below this (0.5: one half-life of its class).",
        _probability,
    ),
    Setting(
        "review_min_importance",
        "MEMLANE_REVIEW_MIN_IMPORTANCE",
        lambda: 5,
        "review: memories less important than this decay without being resurfaced.",
        _count,
    ),
    Setting(
        "backup_dir",
        "MEMLANE_BACKUP_DIR",
        lambda: "",
        "backup: where snapshots go (empty: a backups/ folder beside the store).",
    ),
    Setting(
        "backup_retention",
        "MEMLANE_BACKUP_RETENTION",
        lambda: 7,
        "backup: verified snapshots kept; older snapshot files are deleted.",
        _positive,
    ),
    Setting(
        "backup_interval_hours",
        "MEMLANE_BACKUP_INTERVAL_HOURS",
        lambda: 24.0,
        "backup --if-due: take a snapshot only when the newest is older than this.",
        _hours,
    ),
    Setting(
        "consolidate_interval_days",
        "MEMLANE_CONSOLIDATE_INTERVAL_DAYS",
        lambda: 7,
        "consolidate/organize cadence gate: a run is skipped while the last one is fewer "
        "than this many days ago and the store grew less than the growth share since.",
        _count,
    ),
    Setting(
        "consolidate_growth",
        "MEMLANE_CONSOLIDATE_GROWTH",
        lambda: 0.2,
        "consolidate/organize cadence gate: live-memory growth (0-1) since the last run "
        "that makes a run due before the interval is over.",
        _share,
    ),
    Setting(
        "organize_working_set",
        "MEMLANE_ORGANIZE_WORKING_SET",
        lambda: 256,
        "organize: the most recent live memories it consolidates and groups into topics.",
        _count,
    ),
    Setting(
        "prune_age_days",
        "MEMLANE_PRUNE_AGE_DAYS",
        lambda: 30.0,
        "consolidate --prune: only memories written longer ago than this are retired, an "
        "ephemeral one only when untouched this long, and a hook's showing older than this "
        "no longer counts as a use.",
        _days,
    ),
    Setting(
        "capture_mode",
        "MEMLANE_CAPTURE_MODE",
        lambda: "auto",
        "Secrets on write: auto redacts them to [REDACTED:kind] (tagged auto-redacted); "
        "reviewed and manual keep the text and warn. Injection-shaped text is tagged in "
        "every mode.",
        _choice("auto", "reviewed", "manual"),
    ),
    Setting(
        "batch_workers",
        "MEMLANE_BATCH_WORKERS",
        lambda: None,
        "Processes that prepare the lines of a large add-batch (capture policy, drafts) "
        "while it writes: auto is one for each core but one, at most 4; 0 prepares them "
        "in the writing process.",
        _workers,
    ),
    Setting(
        "dedup_string_threshold",
        "MEMLANE_DEDUP_STRING_THRESHOLD",
        lambda: None,
        "Write policy: texts this alike (0-1, rapidfuzz ratio) are the same fact restated "
        "and refresh the existing memory (default 0.85).",
        _share,
    ),
    Setting(
        "dedup_vector_threshold",
        "MEMLANE_DEDUP_VECTOR_THRESHOLD",
        lambda: None,
        "Write policy: memories at this cosine or above are the same fact restated "
        "(default 0.92); it is also the top of the conflict band.",
        _share,
    ),
    Setting(
        "dedup_conflict_threshold",
        "MEMLANE_DEDUP_CONFLICT_THRESHOLD",
        lambda: None,
        "Write policy: a new memory at this cosine or above with another (and below the "
        "vector threshold) is stored and reported as a potential conflict (default 0.60).",
        _share,
    ),
    Setting(
        "max_body_bytes",
        "MEMLANE_MAX_BODY_BYTES",
        lambda: 64 * 1024,
        f"Largest memory body accepted, in UTF-8 bytes (at least {MIN_BODY_BYTES}).",
        _at_least(MIN_BODY_BYTES),
    ),
    Setting(
        "max_title_chars",
        "MEMLANE_MAX_TITLE_CHARS",
        lambda: 300,
        "Longest title accepted, in characters.",
        _positive,
    ),
    Setting("max_tags", "MEMLANE_MAX_TAGS", lambda: 50, "Most tags on one memory.", _positive),
    Setting(
        "inject_budget",
        "MEMLANE_INJECT_BUDGET",
        lambda: 1500,
        "Tokens (4 characters each) a hook or an MCP session start may inject into an "
        "agent's context; 0 keeps the hooks silent.",
        _count,
    ),
    Setting(
        "mcp_token",
        "MEMLANE_MCP_TOKEN",
        lambda: None,
        "Bearer token `memlane serve --http` requires: an operator token, every scope. "
        "Never printed.",
        secret=True,
    ),
    Setting(
        "mcp_token_file",
        "MEMLANE_MCP_TOKEN_FILE",
        lambda: None,
        'File with an HTTP token: bare (every scope) or {"token": ..., "namespaces": '
        '[...], "access": "read"} confining it to those scopes and, with access read '
        "(default write), to the read-only tools; a malformed file refuses to start.",
    ),
    Setting(
        "mcp_tools",
        "MEMLANE_MCP_TOOLS",
        lambda: "core",
        "Tools `memlane serve` offers: core (recall, search, get, remember, update, "
        "invalidate), all (memlane's and the official memory server's), or official (that "
        "server's nine).",
        _choice(*MCP_TOOL_SETS),
    ),
    Setting(
        "web_token",
        "MEMLANE_WEB_TOKEN",
        lambda: None,
        "Token `memlane web` requires when bound to anything but loopback (given once as "
        "?token=, then kept in a cookie). Never printed.",
        secret=True,
    ),
    Setting(
        "web_allowed_hosts",
        "MEMLANE_WEB_ALLOWED_HOSTS",
        lambda: (),
        "Host names `memlane web` answers besides the address it is bound to (and, on "
        "loopback, localhost, 127.0.0.1 and [::1]): comma-separated, `*.example.org` for "
        "its subdomains; a request naming any other host is refused (400).",
        _host_names,
    ),
    Setting(
        "hook_dir",
        "MEMLANE_HOOK_DIR",
        lambda: str(data_dir() / "hooks"),
        "Where `memlane hook` keeps its log (hooks.log, JSON lines, rotated at 1 MiB), each "
        "session's capture cursors and the corrections review queue.",
    ),
    Setting(
        "sweep_retention_days",
        "MEMLANE_SWEEP_RETENTION_DAYS",
        lambda: 14.0,
        "sweep: the hooks' per-session files (what a session was shown, its capture "
        "cursors) and emptied review queues untouched for longer than this are removed.",
        _days,
    ),
    Setting(
        "capture_log",
        "MEMLANE_CAPTURE_LOG",
        lambda: True,
        "Hooks append each memory they capture (secrets redacted) to captures/DATE.jsonl "
        "in MEMLANE_HOOK_DIR, a file per UTC day that `import captures` replays; 0 "
        "turns the log off.",
        _flag,
    ),
    Setting(
        "hook_upkeep",
        "MEMLANE_HOOK_UPKEEP",
        lambda: True,
        "The session-start hook starts `memlane upkeep` in the background (at most once "
        "an hour): backup --if-due, sweep and organize when each is due; 0 turns it off.",
        _flag,
    ),
    Setting(
        "llm_cmd",
        "MEMLANE_LLM_CMD",
        lambda: None,
        "A command (split like a shell line, run without a shell) that reads a prompt and "
        "a transcript on stdin and prints memories as JSON lines; hooks capture with it. "
        "Unset: the cue-phrase extractor.",
    ),
    Setting(
        "llm_max_calls",
        "MEMLANE_LLM_MAX_CALLS",
        lambda: 4,
        "Most MEMLANE_LLM_CMD runs in one capture.",
        _count,
    ),
    Setting(
        "llm_max_tokens",
        "MEMLANE_LLM_MAX_TOKENS",
        lambda: 32000,
        "Most tokens (4 characters each) sent to MEMLANE_LLM_CMD and read from it in one capture.",
        _count,
    ),
    Setting(
        "llm_timeout",
        "MEMLANE_LLM_TIMEOUT",
        lambda: 20,
        "Seconds one capture may spend in MEMLANE_LLM_CMD, all its runs together (below "
        "the hosts' 30 s hook timeout that `install` sets).",
        _count,
    ),
    Setting(
        "max_tag_chars",
        "MEMLANE_MAX_TAG_CHARS",
        lambda: 64,
        "Longest tag accepted, in characters.",
        _positive,
    ),
)
BY_NAME = {s.name: s for s in SETTINGS}


def resolve(
    environ: Mapping[str, str] | None = None, settings: tuple[Setting, ...] = SETTINGS
) -> dict[str, Any]:
    """Every setting's value: from its environment variable, else its default (the
    interfaces read the settings file too: see memlane.settings_file.load)."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for setting in settings:
        raw = env.get(setting.env)
        if raw is None or raw == "":
            values[setting.name] = setting.default()
            continue
        try:
            values[setting.name] = setting.parse(raw)
        except ValueError as exc:
            raise Invalid(f"{setting.env}={raw!r} is not valid: {exc}") from None
    return values


# ---- from settings to the values the core receives ------------------------------------
# Every interface (CLI, MCP server, hooks) opens its Memory here, so they cannot drift.


def context_for(s: Mapping[str, Any], cwd: Path | None = None) -> Context:
    """The project (and branch) `cwd` (the working directory by default) is in, under
    the settings' project aliases: what every interface's Memory writes from."""
    from memlane.scope import detect_context, load_aliases

    aliases = load_aliases(Path(s["project_aliases"]).expanduser())
    return detect_context(cwd or Path.cwd(), aliases)


def open_memory(
    s: Mapping[str, Any],
    db: str | None = None,
    *,
    cwd: Path | None = None,
    agent: str | None = None,
) -> Memory:
    """A Memory on `db` (else the `db` setting) configured by the settings `s`, its
    context detected from `cwd` (the working directory by default); `agent` stands in
    when the `agent` setting is unset."""
    from memlane.memory import Memory
    from memlane.write.settings import Limits

    # The settings' checks first: a setting that cannot be used must not leave a store.
    recall, writes, review = recall_settings(s), write_policy(s), review_policy(s)
    profile = s["embed_profile"]
    memory = Memory.open(
        db or s["db"],
        agent=s["agent"] or agent,
        context=context_for(s, cwd),
        limits=Limits(s["max_body_bytes"], s["max_title_chars"], s["max_tags"], s["max_tag_chars"]),
        synchronous=s["sqlite_synchronous"],
        # A factory: an operation that needs no vectors never loads numpy or a model.
        embedder=None if profile == "none" else lambda: embedder_for(s, profile),
        embed_on_write=not s["skip_write_embed"],
        migrate=s.get("auto_migrate", True),
    )
    memory.recall_settings = recall
    memory.write_policy = writes
    memory.review_policy = review
    memory.capture_mode = s["capture_mode"]
    memory.batch_workers = s["batch_workers"]
    return memory


def embedder_for(s: Mapping[str, Any], profile: str) -> Embedder | None:
    """The embedder a profile name selects with the settings' options (none: None)."""
    if profile == "none":
        return None
    from memlane.embed import get_embedder

    options: dict[str, object] = {}
    if profile == "http":
        options = {
            "base_url": s["embed_url"],
            "model": s["embed_model"],
            "dimension": s["embed_dim"],
            "api_key": s["embed_api_key"],
        }
    return get_embedder(profile, **options)


def vector_signature(s: Mapping[str, Any]) -> str | None:
    """What a store records of the vectors the settings' embedding profile makes
    (name/model/dimension), no model loaded; None for the profile none."""
    from memlane.embed.profiles import PROFILES

    profile = s["embed_profile"]
    if profile == "none":
        return None
    if profile == "http":
        given = PROFILES["http"]
        return msgspec.structs.replace(
            given, model=s["embed_model"], dimension=s["embed_dim"]
        ).signature
    return PROFILES[profile].signature


def write_policy(s: Mapping[str, Any]) -> Thresholds:
    """The write policy's thresholds: the settings given, the defaults otherwise."""
    from memlane.write.settings import Thresholds

    given = {
        "string": s["dedup_string_threshold"],
        "vector": s["dedup_vector_threshold"],
        "conflict": s["dedup_conflict_threshold"],
    }
    return Thresholds(**{k: v for k, v in given.items() if v is not None})


def review_policy(s: Mapping[str, Any]) -> ReviewPolicy:
    """When a memory is due for review: what `review` lists and stats, health, doctor
    and the home screen count."""
    from memlane.lifecycle.review import ReviewPolicy

    return ReviewPolicy(s["review_threshold"], s["review_min_importance"])


def recall_settings(s: Mapping[str, Any]) -> RecallOptions:
    """Recall's options from the settings: what is set overrides, what is not keeps
    RecallOptions' own default (so the library and the interfaces cannot drift apart)."""
    from memlane.retrieve.fuse import LANE_WEIGHTS, LANES
    from memlane.retrieve.recall import RecallOptions
    from memlane.retrieve.score import (
        DEFAULT_WEIGHTS,
        HALF_LIFE_DAYS,
        HALF_LIFE_ORDER,
        SCOPE_BOOSTS,
        Shape,
        Weights,
    )

    weights = Weights(*s["recall_weights"]) if s["recall_weights"] else DEFAULT_WEIGHTS
    days = s["recall_half_lives"]
    shape = Shape(
        half_lives=dict(zip(HALF_LIFE_ORDER, days, strict=True)) if days else HALF_LIFE_DAYS,
        boosts=s["recall_scope_boosts"] or SCOPE_BOOSTS,
    )
    lanes = s["recall_lane_weights"]
    scalars = {
        "passive_floor": s["recall_passive_floor"],
        "mmr_lambda": s["recall_mmr_lambda"],
        "link_budget": s["recall_link_budget"],
        "session_share": s["recall_session_share"],
        "min_score": s["recall_min_score"],
    }
    return RecallOptions(
        weights=weights,
        shape=shape,
        lane_weights=dict(zip(LANES, lanes, strict=True)) if lanes else LANE_WEIGHTS,
        **{name: value for name, value in scalars.items() if value is not None},
    )
