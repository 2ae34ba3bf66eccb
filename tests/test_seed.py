"""seed: agents from Markdown with YAML front matter, knowledge from JSONL."""

from __future__ import annotations

import json

import pytest

from memlane import Invalid
from memlane.write.frontmatter import join, split

ADA = """---
name: ada
description: Round-trip builder
domain: development
wake_phrases: [careful coder]
---
I am Ada. I build round trips and test them before I claim them.
"""


def test_front_matter_splits_and_joins():
    meta, body = split(ADA)
    assert meta["name"] == "ada" and meta["wake_phrases"] == ["careful coder"]
    assert body.startswith("I am Ada.")
    assert split(join(meta, body)) == (meta, body)
    assert split("No front matter here.") == ({}, "No front matter here.")
    with pytest.raises(Invalid, match="YAML mapping"):
        split("---\n- a list\n---\nbody")
    with pytest.raises(Invalid, match="not valid YAML"):
        split("---\nname: [unclosed\n---\nbody")


@pytest.fixture
def seed_dirs(tmp_path, cli_env):
    data = tmp_path / "data"
    cli_env["XDG_DATA_HOME"] = str(data)
    agents = data / "memlane" / "seed" / "agents"
    knowledge = data / "memlane" / "seed" / "knowledge"
    agents.mkdir(parents=True)
    knowledge.mkdir(parents=True)
    return agents, knowledge


def test_seed_agents_registers_them_and_keeps_their_identity(run, seed_dirs):
    agents, _ = seed_dirs
    (agents / "ada.md").write_text(ADA)
    (agents / "bob.md").write_text("---\ndescription: Reviewer\n---\n")  # no body, name from file
    (agents / "broken.md").write_text("---\nname: [oops\n---\nbody")
    result = run("seed", "agents", "--json")
    assert result.exit_code == 2  # one bad file, reported; the others seeded
    report = json.loads(result.stdout)
    assert [s["agent"] for s in report["seeded"]] == ["ada", "bob"]
    assert report["failed"][0]["file"].endswith("broken.md")
    listed = {a["name"]: a for a in run("agents", "list", "--json").json()}
    assert listed["ada"]["domain"] == "development"
    memory_id = report["seeded"][0]["memory"]
    shown = run("show", memory_id, "--json").json()
    assert shown["importance"] == 9 and "agent:ada" in shown["tags"]
    assert shown["wake_phrases"] == ["careful coder"]
    (agents / "broken.md").unlink()
    again = json.loads(run("seed", "agents", "--json").stdout)
    assert again["seeded"][0]["memory"] == memory_id  # seeding again changes nothing
    assert again["seeded"][0]["status"] == "already_persisted"


def test_seed_knowledge_from_the_default_folder_or_one_file(run, seed_dirs, tmp_path):
    _, knowledge = seed_dirs
    (knowledge / "a.jsonl").write_text(
        json.dumps({"content": "Deploys go out on Tuesdays."}) + "\nnot json\n"
    )
    (knowledge / "b.jsonl").write_text(json.dumps({"content": "The API uses OAuth."}) + "\n")
    result = run("seed", "knowledge")
    assert result.exit_code == 2 and "a.jsonl:2" in result.stderr
    assert "2 memories added from 2 file(s)" in result.stdout
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"content": "Backups run nightly."}) + "\n")
    assert json.loads(run("seed", "knowledge", str(one), "--json").stdout)["added"] == 1
    assert run("seed", "agents", "--path", str(tmp_path / "missing")).exit_code == 2
