from memlane import Memory


def test_add_then_show_json(run, db_path):
    added = run("add", "--content", "Use uv for installs", "--json")
    assert added.exit_code == 0, added.stderr
    memory_id = added.json()["id"]
    shown = run("show", memory_id, "--json")
    assert shown.json()["body"] == "Use uv for installs"
    with Memory.open(db_path) as mem:
        assert mem.get(memory_id).scope == "project:proj"
