"""Behaviours that disagreed with what a user reads: a derived title follows its body,
exclusive flags are refused, a misspelt command is named, relative times are read, and
messages name real flags and the real range."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from memlane import Memory
from memlane.errors import Invalid
from memlane.scope import Context
from memlane.timeutil import parse_instant, utcnow


def test_a_derived_title_follows_a_new_body_and_a_chosen_one_stays(tmp_path):
    with Memory.open(tmp_path / "m.db", agent="ada", context=Context()) as mem:
        derived = mem.add("The API allows 100 requests a minute per key.")
        chosen = mem.add("The API allows 100 requests a minute per key.", title="Rate limit",
                         allow_duplicate=True)  # fmt: skip
        assert "100 requests" in mem.get(derived.id).title
        mem.update(derived.id, content="The API allows 500 requests a minute per key.")
        mem.update(chosen.id, content="The API allows 500 requests a minute per key.")
        assert "500 requests" in mem.get(derived.id).title
        assert mem.get(chosen.id).title == "Rate limit"


def test_cli_update_shows_the_new_title_in_list(run):
    memory_id = run("add", "We use MySQL 5.7 for the orders service.", "--json").json()["id"]
    assert run("update", memory_id, "--content", "We use PostgreSQL 16 for orders.").exit_code == 0
    listed = run("list").stdout
    assert "PostgreSQL 16" in listed and "MySQL" not in listed


def test_feedback_takes_exactly_one_outcome(run):
    memory_id = run("add", "Always run the linter before pushing.", "--json").json()["id"]
    for args in ((), ("--applied", "--violated")):
        result = run("feedback", memory_id, *args)
        assert result.exit_code == 2 and "--applied or --violated" in result.stderr
    assert run("feedback", memory_id, "--violated", "--json").json()["violated_count"] == 1


def test_a_misspelt_command_is_named(run):
    result = run("serch", "deploy")
    assert result.exit_code == 2 and "did you mean search" in result.stderr


@pytest.mark.parametrize(("text", "back"), [("24h", timedelta(hours=24)),
                         ("7d", timedelta(days=7)), ("2w", timedelta(weeks=2)),
                         ("90 min", timedelta(minutes=90)), ("3 days ago", timedelta(days=3))])  # fmt: skip
def test_a_span_back_from_now_is_a_time(text, back):
    assert abs(utcnow() - back - parse_instant(text)) < timedelta(seconds=5)


def test_words_are_a_time_and_nonsense_is_refused():
    assert utcnow() - parse_instant("yesterday") < timedelta(days=2)
    with pytest.raises(Invalid, match="24h, 7d, 2w"):
        parse_instant("blorp")


def test_list_since_takes_a_relative_time(run):
    run("add", "The deploy window is Tuesday.")
    assert "deploy window" in run("list", "--since", "24h").stdout
    assert "no memories matched" in run("list", "--until", "2d").stderr


def test_messages_name_real_flags_and_the_real_range(run, monkeypatch):
    monkeypatch.delenv("MEMLANE_AGENT", raising=False)
    result = run("add", "A note.", "--importance", "0")
    assert result.exit_code == 2 and "between 1 and 100 (1-10 is the usual scale)" in result.stderr
    with Memory.open(":memory:", context=Context()) as mem, pytest.raises(Invalid) as caught:
        mem.wake()
    assert "--agent" not in str(caught.value)


def test_open_threads_include_memories_filed_as_threads(run):
    filed = run("add", "Waiting on the vendor's answer about SSO.", "--category", "thread",
                "--json").json()["id"]  # fmt: skip
    typed = run("add", "Who owns the billing migration?", "--type", "thread_opened",
                "--json").json()["id"]  # fmt: skip
    result = run("open-threads", "--json")
    assert result.exit_code == 0, result.stderr
    ids = {r["id"] for r in result.json()}
    assert {filed, typed} <= ids


def test_for_session_takes_an_unambiguous_part_of_the_id(run):
    run("add", "Notes from the planning call.", "--session-id", "s-ebmnxks1")
    run("add", "Another session's note.", "--session-id", "s-qqq00001")
    for part in ("s-ebmnxks1", "ebmnxks1", "s-ebm", "ebm"):
        result = run("for-session", part, "--json")
        assert result.exit_code == 0, (part, result.stderr)
        assert [r["body"] for r in result.json()["results"]] == ["Notes from the planning call."]
    assert run("for-session", "s-").exit_code == 2  # ambiguous
    assert run("for-session", "zzz").exit_code == 1


def test_a_bare_memlane_shows_home_and_creates_nothing(run, tmp_path):
    missing = tmp_path / "fresh" / "m.db"
    result = run("--db", str(missing))
    assert result.exit_code == 0
    assert "no store yet" in result.stdout and "memlane recall QUERY" in result.stdout
    assert not missing.parent.exists()
    run("add", "The deploy runs nightly.")
    home = run()
    assert home.exit_code == 0 and "1 live of 1 memories" in home.stdout


def test_an_empty_answer_says_how_many_other_scopes_hold(run):
    run("add", "The other project's deploy runs nightly.", "--scope", "project:elsewhere")
    for args in (("list",), ("search", "deploy")):
        result = run(*args)
        assert result.exit_code == 0
        assert "no memories matched" in result.stderr
        assert "1 in other scopes" in result.stderr and "--scope all" in result.stderr
    assert "deploy" in run("list", "--scope", "all").stdout


def test_review_decays_by_the_half_lives_recall_uses(run, cli_env, monkeypatch):
    run("add", "The on-call rota changes every Monday.", "--importance", "8")
    assert "nothing is due" in run("review").stderr  # written just now
    monkeypatch.setitem(cli_env, "MEMLANE_RECALL_HALF_LIVES", "1e-12,1e-12,1e-12,1e-12")
    due = run("review", "--json")
    assert due.exit_code == 0, due.stderr
    assert "on-call rota" in due.stdout


def test_show_json_names_entities_links_and_chunks(run):
    a = run("add", "Alice Smith owns the `billing-api` service.", "--json").json()["id"]
    b = run("add", "The billing-api deploys on Fridays.", "--json").json()["id"]
    assert run("links", "add", "--from", a, "--to", b, "--type", "supports").exit_code == 0
    shown = run("show", a, "--json").json()
    assert {"entities", "links", "chunks"} <= set(shown)
    assert any(ln["target"] == b and ln["type"] == "supports" for ln in shown["links"])
    assert shown["entities"] and isinstance(shown["chunks"], int)


def test_a_fact_restated_in_a_later_session_is_in_that_sessions_view(run):
    fact = "The staging database runs PostgreSQL 16 on port 5433."
    first = run("add", fact, "--session-id", "s-first001", "--json").json()
    again = run("add", fact, "--session-id", "s-later002", "--json").json()
    assert again["status"] == "refreshed" and again["id"] == first["id"]
    for session in ("s-first001", "s-later002"):
        shown = run("for-session", session, "--json")
        assert shown.exit_code == 0, shown.stderr
        assert [r["id"] for r in shown.json()["results"]] == [first["id"]]
    sightings = [json.loads(line) for line in run("export").stdout.splitlines()]
    [seen] = [r for r in sightings if r["kind"] == "sighting"]
    assert (seen["memory_id"], seen["session_id"]) == (first["id"], "s-later002")


def test_recall_json_counts_what_a_passive_read_held_back(run):
    run("add", "The deploy checklist lives in docs/deploy.md.")
    run("add", "The deploy mirror is on a forum post.", "--taint", "untrusted_web")
    passive = run("recall", "deploy", "--passive", "--json").json()
    assert passive["count"] == 1 and passive["held_back"] == 1
    text = run("recall", "deploy", "--passive")
    assert "1 held back from a passive read" in text.stderr
    assert run("recall", "deploy", "--json").json()["held_back"] == 0
