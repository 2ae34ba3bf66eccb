"""`eval locomo`: retrieval quality on the LoCoMo development split; `eval secrets` and
`eval injection`: the capture policy on its labelled corpora."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import msgspec

from memlane.cli.common import emit_json, fail, in_section, json_option, recall_settings, state
from memlane.cli.progress import Tell, progress_bar
from memlane.evaluation import locomo
from memlane.memory import Memory

if TYPE_CHECKING:
    from memlane.embed import Embedder
    from memlane.retrieve.recall import RecallOptions

T = TypeVar("T")


@in_section("admin")
@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality and the capture policy on evaluation sets."""


@eval_group.command("locomo")
@click.option(
    "--data",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The LoCoMo development split (locomo-dev.json).",
)
@click.option(
    "--mode",
    type=click.Choice(["recall", "keyword", "vector", "hybrid"]),
    default="recall",
    show_default=True,
    help="What is measured: recall, or one search mode.",
)
@click.option("--k", type=int, default=10, show_default=True, help="Results kept per question.")
@click.option("--conversations", type=int, help="Only the first N conversations.")
@click.option("--out", type=click.Path(dir_okay=False), help="Write per-question results (JSONL).")
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgres"]),
    default="sqlite",
    show_default=True,
    help="Where each conversation's store lives.",
)
@click.option(
    "--pg-url",
    metavar="URL",
    help="With --backend postgres: a server URL whose user may create "
    "databases (one per conversation, dropped afterwards).",
)
@click.option(
    "--grid",
    multiple=True,
    metavar="NAME=V1,V2",
    help="Cross-validate recall settings (repeatable; every combination is tried): a "
    "RecallOptions number such as mmr_lambda or session_share, or one lane's fusion "
    "weight (lane_weights.bm25, .vector, .entity), and its values. Prints, for each "
    "conversation, the settings chosen on the others and their figures on it.",
)
@click.option(
    "--objective",
    type=click.Choice(locomo.OBJECTIVES),
    default="quality",
    show_default=True,
    help="With --grid, what the settings are chosen for: quality ((R@10 + MRR) / 2), or "
    "silence (the most off-topic questions answered with nothing within 0.01 of the "
    "best R@10; to tune min_score).",
)
@click.option(
    "--off-topic/--no-off-topic",
    default=True,
    show_default=True,
    help="Also ask each store the other conversations' questions (1-4), and report the "
    "share answered with nothing.",
)
@click.option(
    "--folds",
    is_flag=True,
    help="Also each conversation's headline figures and their unweighted mean (the "
    "folds of leave-one-conversation-out cross-validation).",
)
@json_option
def locomo_cmd(
    data: str,
    mode: str,
    k: int,
    conversations: int | None,
    out: str | None,
    backend: str,
    pg_url: str | None,
    grid: tuple[str, ...],
    objective: str,
    off_topic: bool,
    folds: bool,
    as_json: bool,
) -> None:
    """R@5, R@10, Hit@10, nDCG@10 and MRR per category, no LLM (one store per conversation).

    Retrieval quality on the LoCoMo development split: one store per conversation, one
    memory per turn written as an agent writes one (what was said and by whom, its
    session date as `occurred_at`, its session), every question a query. Prints the
    figures for categories 1-4 together and for each category (5 separately); --folds adds each
    conversation's headline figures and their mean; --out writes one JSON line per
    question. On a terminal a progress bar runs on stderr."""
    stores: locomo.Stores = locomo.sqlite_store
    if backend == "postgres":
        if not pg_url:
            raise click.UsageError("--backend postgres needs --pg-url URL")
        stores = locomo.postgres_stores(pg_url)
    embedder = (
        None if mode == "keyword" else state().embedder_for(state().settings["embed_profile"])
    )

    tuning = recall_settings(state().settings)
    if grid:
        if mode != "recall":
            raise click.UsageError("--grid tunes recall: leave --mode at recall")
        asking = locomo.Asking(k, conversations, stores, off_topic)
        _cross_validate(Path(data), tuning, grid, embedder, asking, objective, as_json)
        return

    def search(mem: Memory, query: str, limit: int) -> list[str]:
        if mode == "recall":
            mem.recall_settings = tuning  # the settings' weights and MMR, as in `recall`
            hits = mem.recall(query, limit=limit, scope="all", count=False).hits
            return [h.record.id for h in hits]
        return [h.record.id for h in mem.search(query, mode=mode, limit=limit, scope="all")]

    scores = locomo.Scores()
    sink = open(out, "w", encoding="utf-8") if out else None  # noqa: SIM115
    try:
        with progress_bar("locomo", as_json) as tell:
            rows = locomo.run(
                Path(data), search, embedder, k, conversations, stores, off_topic, tell
            )
            for row in rows:
                scores.rows.append(row)
                if sink:
                    sink.write(json.dumps(row) + "\n")
    finally:
        if sink:
            sink.close()
    headline = scores.summary(locomo.HEADLINE)
    report = {
        "mode": mode,
        "backend": backend,
        "profile": embedder.profile.signature if embedder else None,
        "headline (1-4)": headline,
        **{f"{c} {name}": scores.summary((c,)) for c, name in locomo.CATEGORY_NAMES.items()},
    }
    mean = {}
    if folds:
        per_fold = scores.folds(locomo.HEADLINE)
        mean = locomo.fold_mean(per_fold)
        report.update({f"fold {name}": s for name, s in per_fold.items()})
        report["fold mean"] = mean
    if as_json:
        emit_json(report)
        return
    click.echo(f"LoCoMo retrieval, mode {mode}, profile {report['profile']}, backend {backend}")
    header = f"{'set':<18}{'n':>6}{'R@5':>8}{'R@10':>8}{'Hit@10':>8}{'nDCG@10':>9}{'MRR':>8}"
    click.echo(header + (f"{'silent':>8}" if off_topic else ""))
    for name, s in report.items():
        if isinstance(s, dict):
            n = int(s["questions"]) if "questions" in s else int(s["folds"])
            silent = f"{s['silent']:>8.3f}" if "silent" in s else ""
            click.echo(
                f"{name:<18}{n:>6}{s['r@5']:>8.3f}{s['r@10']:>8.3f}"
                f"{s['hit@10']:>8.3f}{s['ndcg@10']:>9.3f}{s['mrr']:>8.3f}{silent}"
            )
    if off_topic:
        asked = int(headline.get("off-topic", 0))
        click.echo(f"silent: the share of {asked} off-topic questions (another conversation's)")
        click.echo("answered with nothing")
    if mean:
        click.echo(f"R@10 across folds: {mean['r@10 min']:.3f} to {mean['r@10 max']:.3f}")


def _grid_settings(base: RecallOptions, grid: Sequence[str]) -> dict[str, RecallOptions]:
    """Every combination of the --grid values, by a name listing them. A name is a
    number of RecallOptions, or `lane_weights.LANE` for one lane's fusion weight."""
    axes = []
    for spec in grid:
        name, _, values = spec.partition("=")
        name = name.strip()
        field, _, lane = name.partition(".")
        default = getattr(base, field, ...)
        if lane and isinstance(default, Mapping) and lane in default:
            default = default[lane]
        if not values or isinstance(default, (Mapping, msgspec.Struct)) or default is ...:
            raise click.BadParameter(
                f"{spec!r}: give NAME=V1,V2 for a number of the recall settings "
                "(or lane_weights.LANE)",
                param_hint="--grid",
            )
        try:
            parsed = [None if v.strip() == "none" else float(v) for v in values.split(",")]
        except ValueError:
            raise click.BadParameter(
                f"{spec!r}: values are numbers or none", param_hint="--grid"
            ) from None
        whole = isinstance(default, int) and not isinstance(default, bool)
        axes.append([(name, int(v) if whole and v is not None else v) for v in parsed])
    return {
        " ".join(f"{n}={v}" for n, v in combo): _with(base, dict(combo))
        for combo in itertools.product(*axes)
    }


def _with(base: RecallOptions, values: Mapping[str, float | None]) -> RecallOptions:
    """`base` with these settings (`lane_weights.LANE` names one lane's weight)."""
    lanes = {n.partition(".")[2]: v for n, v in values.items() if n.startswith("lane_weights.")}
    changes: dict[str, Any] = {n: v for n, v in values.items() if "." not in n}
    if lanes:
        changes["lane_weights"] = {**base.lane_weights, **lanes}
    return msgspec.structs.replace(base, **changes)


def _cross_validate(
    data: Path,
    base: RecallOptions,
    grid: Sequence[str],
    embedder: Embedder | None,
    asking: locomo.Asking,
    objective: str,
    as_json: bool,
) -> None:
    settings = _grid_settings(base, grid)

    def searching(options: RecallOptions) -> locomo.Search:
        def search(mem: Memory, query: str, limit: int) -> list[str]:
            mem.recall_settings = options
            hits = mem.recall(query, limit=limit, scope="all", count=False).hits
            return [h.record.id for h in hits]

        return search

    searches = {name: searching(options) for name, options in settings.items()}
    results = {name: locomo.Scores() for name in settings}
    with progress_bar(f"locomo, {len(settings)} settings", as_json) as tell:
        rows = locomo.run_grid(
            data,
            searches,
            embedder,
            asking.k,
            asking.conversations,
            asking.stores,
            asking.off_topic,
            tell,
        )
        for name, row in rows:
            results[name].rows.append(row)
    held = locomo.cross_validate(results, objective=objective)
    mean = locomo.fold_mean({h.conversation: h.figures for h in held})
    pooled = {name: s.summary(locomo.HEADLINE) for name, s in results.items()}
    if as_json:
        held_out = [msgspec.to_builtins(h) for h in held]
        emit_json({"settings": pooled, "held out": held_out, "held-out mean": mean})
        return

    def silent(figures: Mapping[str, float]) -> str:
        return f"{figures['silent']:>8.3f}" if "silent" in figures else ""

    click.echo(f"{'settings':<40}{'R@10':>8}{'MRR':>8}{'silent':>8}   (all conversations pooled)")
    for name, s in pooled.items():
        click.echo(f"{name:<40}{s['r@10']:>8.3f}{s['mrr']:>8.3f}{silent(s)}")
    click.echo(f"{'held out':<12}{'chosen on the others':<40}{'R@10':>8}{'MRR':>8}{'silent':>8}")
    for h in held:
        f = h.figures
        click.echo(
            f"{h.conversation:<12}{h.chosen:<40}{f['r@10']:>8.3f}{f['mrr']:>8.3f}{silent(f)}"
        )
    if mean:
        click.echo(f"{'mean':<52}{mean['r@10']:>8.3f}{mean['mrr']:>8.3f}{silent(mean)}")


@eval_group.command("extract")
@click.option(
    "--transcript",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A Claude Code (or Codex) transcript, JSON lines.",
)
@click.option(
    "--labels",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help='Hand labels: {"keep": [{"text": SENTENCES, "kind": KIND}, ...]}.',
)
@json_option
def eval_extract_cmd(transcript: str, labels: str, as_json: bool) -> None:
    """Precision and recall of the deterministic (cue-phrase) extractor on a transcript
    against hand labels: what `extract --no-llm` and the capture hooks would keep.

    The labels are `{"keep": [{"text": SENTENCES, "kind": KIND}, ...]}`: each memory worth
    keeping as the whole sentences it is said in, a correction with the sentences that
    give its instruction and reason. A kept memory is right when it says a labelled
    sentence; a label is found when one kept memory holds all of its sentences, and
    found in part ("partly") when one holds some. `tests/transcripts` holds labelled
    sessions, split into those the cue rules were tuned on and held-out ones;
    `bench/capture_cues.py` scores them all, per split. What the cues miss is said
    without any form of a rule ("Branches are <ticket>-<slug>."); a model command
    (MEMLANE_LLM_CMD) is there to read those."""
    from memlane.evaluation import extraction
    from memlane.hooks import extract
    from memlane.hooks import transcript as reading

    turns = reading.read(transcript).turns
    kept = [(c.content, c.family, c.role) for c in extract.extract(turns)]
    result = extraction.score(kept, extraction.load_labels(Path(labels).read_text("utf-8")))
    if as_json:
        emit_json({"turns": len(turns), **msgspec.to_builtins(result)})
        return
    for v in result.verdicts:
        click.echo(f"{'right' if v.right else 'WRONG'}  {v.family:<10} {v.role:<9} {v.text}")
    for text in result.missed:
        click.echo(f"{'partly' if text in result.partial else 'missed':<27}{text}")
    click.echo(
        f"{len(turns)} turns: kept {result.kept} ({result.right} right), found {result.found} "
        f"of {result.labelled} labelled ({len(result.partial)} partly); "
        f"precision {result.precision:.3f}, recall {result.recall:.3f}"
    )


def _corpus_option(corpus: str) -> Any:
    return click.option(
        "--corpus",
        "files",
        multiple=True,
        type=click.Path(exists=True, dir_okay=False),
        help=f"A labelled JSONL file (repeatable; default: the shipped {corpus} corpora).",
    )


_MISSES = click.option("--misses", is_flag=True, help="Also list every case it got wrong.")


@eval_group.command("secrets")
@_corpus_option("secrets")
@_MISSES
@json_option
def eval_secrets_cmd(files: tuple[str, ...], misses: bool, as_json: bool) -> None:
    """Secret redaction on labelled texts: recall (a secret counts only when redacted whole)
    and precision, per kind and per corpus file.

    The corpora shipped in `memlane/evaluation/corpora`: secrets of many kinds in sentences
    people write, and look-alikes such as commit SHAs, UUIDs, digests, placeholders,
    documented example keys and talk about passwords. It prints recall, the share of
    look-alikes redacted and precision, overall, per file and per kind, and whether the
    targets (recall 0.98 or more at precision 0.95 or more) are met; --misses lists each
    case it got wrong. A file of your own (--corpus) takes the same JSON lines: `{"id",
    "label": "secret"|"benign", "kind", "text", "secrets": [...]}`."""
    from memlane.evaluation import screening
    from memlane.write.secrets import find_secrets

    cases = screening.load([Path(f) for f in files] or screening.corpus_files("secrets"))
    with progress_bar("secrets", as_json) as tell:
        spans = _counted(lambda t: [(r.start, r.end) for r in find_secrets(t)], len(cases), tell)
        report = screening.score_secrets(cases, spans)
    _report(report, misses, as_json)


@eval_group.command("injection")
@_corpus_option("injection")
@_MISSES
@click.option(
    "--held-out",
    is_flag=True,
    help="Judge each file with a model trained without it (slower): the figure "
    "for text the learned model never saw.",
)
@json_option
def eval_injection_cmd(files: tuple[str, ...], misses: bool, held_out: bool, as_json: bool) -> None:
    """Injection tagging on labelled texts: recall and the share of benign imperatives
    tagged, per kind, per language and per corpus file. The shipped model was trained on the
    shipped corpora; --held-out measures each file with a model trained on the others.

    The texts aim at a model (overrides, fake system turns, broken fences, exfiltration,
    concealment, memory poisoning, harmful commands, hidden in markup, in many languages)
    or are benign imperatives people really write. It prints whether the targets (recall
    0.95 or more with at most 2% of benign texts tagged) are met. Lines: `{"id", "label":
    "injection"|"benign", "kind", "lang", "text"}`. The shipped corpora's own figures
    flatter the model; --held-out gives the figure for text nobody fitted it to. After
    changing the corpora, `scripts/train-injection-model` retrains it."""
    from memlane.evaluation import learn, screening
    from memlane.write.injection import is_injection

    cases = screening.load([Path(f) for f in files] or screening.corpus_files("injection"))
    if not held_out:
        with progress_bar("injection", as_json) as tell:
            report = screening.score_injection(cases, _counted(is_injection, len(cases), tell))
        _report(report, misses, as_json)
        return
    if len({case.source for case in cases}) < 2:
        fail("--held-out needs two corpus files or more")
    with progress_bar("training without each file", as_json) as tell:
        verdicts = learn.held_out_verdicts(cases, tell)
    _report(screening.score_verdicts(cases, verdicts), misses, as_json)


def _counted(judge: Callable[[str], T], total: int, tell: Tell) -> Callable[[str], T]:
    """JUDGE as it is, TELL told how many of TOTAL texts it has judged."""
    done = 0

    def counted(text: str) -> T:
        nonlocal done
        verdict = judge(text)
        done += 1
        tell(done, total)
        return verdict

    return counted


def _report(report: Any, misses: bool, as_json: bool) -> None:
    from memlane.evaluation import screening

    target = screening.TARGETS[report.corpus]
    if as_json:
        payload = {
            "corpus": report.corpus,
            "targets": target,
            "meets_targets": report.meets_targets(),
            "overall": report.overall.as_dict(),
            **{
                name: {k: t.as_dict() for k, t in sorted(getattr(report, name).items())}
                for name in ("by_source", "by_kind", "by_lang")
            },
            "misses": [msgspec.to_builtins(c) for c in report.misses],
            "false_alarms": [msgspec.to_builtins(c) for c in report.false_alarms],
        }
        emit_json(payload)
        return
    click.echo(f"{'':<26}{'cases':>6}{'recall':>8}{'benign':>8}{'flagged':>9}{'precision':>10}")
    _row("overall", report.overall)
    for title, groups in (
        ("file", report.by_source),
        ("kind", report.by_kind),
        ("language", report.by_lang),
    ):
        if len(groups) > 1:
            click.echo(f"by {title}:")
            for name, tally in sorted(groups.items()):
                _row(f"  {name}", tally)
    wanted = ", ".join(
        f"{k} {'<=' if k == 'benign_flagged' else '>='} {v}" for k, v in target.items()
    )
    verdict = "met" if report.meets_targets() else "MISSED"
    click.echo(f"targets ({wanted}): {verdict}")
    if misses:
        for case in report.misses:
            click.echo(f"missed   {case.id} [{case.kind}] {case.text[:100]!r}")
        for case in report.false_alarms:
            click.echo(f"flagged  {case.id} [{case.kind}] {case.text[:100]!r}")


def _row(name: str, tally: Any) -> None:
    def show(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    click.echo(
        f"{name:<26}{tally.positives + tally.benign:>6}{show(tally.recall):>8}{tally.benign:>8}"
        f"{show(tally.flagged_share):>9}{show(tally.precision):>10}"
    )
