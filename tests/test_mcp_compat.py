"""The official MCP memory server's nine tools over memlane's store, through the SDK's
client, and `memlane import mcp-memory` of that server's memory.jsonl."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from memlane import Context, Memory
from memlane.model import EntityType, Predicate
from memlane.server.app import build_server
from memlane.server.backend import Backend
from test_mcp import GRAPH_TOOLS, call, everything, opener, refused
from test_mcp import anyio_backend as anyio_backend  # the shared fixtures
from test_mcp import backend as backend
from test_mcp import client as client

pytestmark = pytest.mark.anyio

PEOPLE = [
    {"name": "Ada Lovelace", "entityType": "person",
     "observations": ["Wrote the first program", "Worked with Babbage"]},
    {"name": "Analytical Engine", "entityType": "machine", "observations": ["Never built"]},
    {"name": "Charles Babbage", "entityType": "person", "observations": []},
]  # fmt: skip
RELATIONS = [
    {"from": "Ada Lovelace", "to": "Analytical Engine", "relationType": "programmed"},
    {"from": "Charles Babbage", "to": "Analytical Engine", "relationType": "designed"},
    {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "corresponded_with"},
]
DONE = {"success": True}


async def text_and_structure(client: Client, tool: str, **arguments: Any) -> tuple[Any, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    return result.content[0].text, result.structured_content


async def test_the_input_schemas_are_the_official_servers(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools if t.name in GRAPH_TOOLS}
    expected = {
        "create_entities": ["entities"], "create_relations": ["relations"],
        "add_observations": ["observations"], "delete_entities": ["entityNames"],
        "delete_observations": ["deletions"], "delete_relations": ["relations"],
        "read_graph": [], "search_nodes": ["query"], "open_nodes": ["names"],
    }  # fmt: skip
    assert {name: list(t.input_schema["properties"]) for name, t in tools.items()} == expected
    relation = tools["create_relations"].input_schema["properties"]["relations"]["items"]
    assert sorted(relation["required"]) == ["from", "relationType", "to"]
    assert relation["properties"]["from"] == {
        "description": "The name of the entity where the relation starts", "type": "string"}  # fmt: skip
    entity = tools["create_entities"].input_schema["properties"]["entities"]["items"]
    assert sorted(entity["required"]) == ["entityType", "name", "observations"]
    assert tools["create_relations"].description == (
        "Create multiple new relations between entities in the knowledge graph. "
        "Relations should be in active voice"
    )
    assert (tools["read_graph"].title, tools["delete_entities"].annotations.destructive_hint) == (
        "Read Graph", True)  # fmt: skip
    assert set(tools["read_graph"].output_schema["properties"]) == {"entities", "relations"}


async def test_the_official_tool_set_round_trips_a_small_graph(client: Client) -> None:
    text, made = await text_and_structure(client, "create_entities", entities=PEOPLE)
    assert made == {"entities": PEOPLE} and json.loads(text) == PEOPLE
    assert text == json.dumps(PEOPLE, indent=2)  # JSON.stringify(result, null, 2)
    again = [*PEOPLE[:1], {"name": "Grace Hopper", "entityType": "person", "observations": []}]
    assert (await call(client, "create_entities", entities=again))["entities"] == again[1:]
    await call(client, "delete_entities", entityNames=["Grace Hopper"])

    assert await call(client, "create_relations", relations=RELATIONS) == {"relations": RELATIONS}
    assert await call(client, "create_relations", relations=RELATIONS[:1]) == {"relations": []}
    added = await call(client, "add_observations", observations=[
        {"entityName": "Charles Babbage", "contents": ["Designed the Difference Engine"]},
        {"entityName": "Ada Lovelace", "contents": ["Wrote the first program", "Was a countess"]},
    ])  # fmt: skip
    assert added == {"results": [
        {"entityName": "Charles Babbage", "addedObservations": ["Designed the Difference Engine"]},
        {"entityName": "Ada Lovelace", "addedObservations": ["Was a countess"]},
    ]}  # fmt: skip

    text, graph = await text_and_structure(client, "read_graph")
    expected = {
        "entities": [
            {**PEOPLE[0], "observations": [*PEOPLE[0]["observations"], "Was a countess"]},
            PEOPLE[1],
            {**PEOPLE[2], "observations": ["Designed the Difference Engine"]},
        ],
        "relations": RELATIONS,
    }
    assert graph == expected and json.loads(text) == expected

    searched = await call(client, "search_nodes", query="ENGINE")
    assert [e["name"] for e in searched["entities"]] == ["Analytical Engine", "Charles Babbage"]
    assert searched["relations"] == RELATIONS  # every one touches a found entity
    assert (await call(client, "search_nodes", query="person"))["entities"] == [
        expected["entities"][0], expected["entities"][2]]  # fmt: skip
    assert await call(client, "open_nodes", names=["Analytical Engine", "Nobody"]) == {
        "entities": [PEOPLE[1]], "relations": RELATIONS[:2]}  # fmt: skip

    text, deleted = await text_and_structure(client, "delete_observations", deletions=[
        {"entityName": "Ada Lovelace", "observations": ["Was a countess", "Never said"]},
        {"entityName": "Nobody", "observations": ["x"]},
    ])  # fmt: skip
    message = "Deleted 1 of 3 observations. Entities not found: Nobody"
    assert (text, deleted) == (message, {**DONE, "message": message})
    assert await call(client, "delete_relations", relations=[RELATIONS[2], RELATIONS[2]]) == {
        **DONE, "message": "Deleted 1 of 2 relations. The rest matched nothing."}  # fmt: skip
    assert await call(client, "delete_entities", entityNames=["Analytical Engine", "Zed"]) == {
        **DONE, "message": "Deleted 1 of 2 entities. Not found: Zed"}  # fmt: skip
    assert await call(client, "read_graph") == {
        "entities": [PEOPLE[0], expected["entities"][2]], "relations": []}  # fmt: skip


async def test_relations_and_observations_need_their_entities(
    client: Client, db_path: Path
) -> None:
    await call(client, "create_entities", entities=PEOPLE)
    with Memory.open(db_path, context=Context()) as mem:
        before = len(everything(mem))
    assert "not_found: Entity with name Nobody not found" in await refused(
        client, "create_relations",
        relations=[RELATIONS[0], {"from": "Ada Lovelace", "to": "Nobody", "relationType": "x"}],
    )  # fmt: skip
    assert "not_found: Entity with name Nobody not found" in await refused(
        client, "add_observations", observations=[
            {"entityName": "Ada Lovelace", "contents": ["Liked poetry"]},
            {"entityName": "Nobody", "contents": ["x"]},
        ],
    )  # fmt: skip
    assert "entity name is empty" in await refused(
        client, "create_entities", entities=[{"name": " ", "entityType": "x", "observations": []}]
    )
    assert "query" in await refused(client, "search_nodes", query="x" * 2049)
    with Memory.open(db_path, context=Context()) as mem:
        assert len(everything(mem)) == before


async def test_the_graph_is_memlane_memories_and_relations(client: Client, db_path: Path) -> None:
    await call(client, "create_entities", entities=PEOPLE)
    await call(client, "create_relations", relations=RELATIONS[:1])
    # The same observation on two entities stays two memories (no write-policy refresh).
    await call(client, "add_observations", observations=[
        {"entityName": "Charles Babbage", "contents": ["Never built"]}])  # fmt: skip
    recalled = await call(client, "recall", query="who wrote the first program")
    assert recalled["results"][0]["content"] == "Wrote the first program"
    with Memory.open(db_path, context=Context()) as mem:
        [relation] = mem.graph.relationships("Analytical Engine").relations
        assert (relation.subject, relation.predicate, relation.label, relation.object) == (
            "Ada Lovelace", Predicate.RELATED_TO, "programmed", "Analytical Engine")  # fmt: skip
        # the official type names a canonical one where it can
        assert mem.graph.entity("Ada Lovelace").type is EntityType.PERSON
        assert mem.graph.entity("Analytical Engine").type is EntityType.UNKNOWN
        rows = everything(mem)
        assert {r.scope for r in rows} == {"global"}
        assert {r.taint.value for r in rows} == {"untrusted_tool"}
        never = [r for r in rows if r.body == "Never built"]
        assert sorted(r.title for r in never) == ["Analytical Engine", "Charles Babbage"]
        ada, naming = mem.graph.mentioning("Ada Lovelace")
        assert ada.mentions == len(naming) == 3  # the card, two observations
        card = next(r for r in rows if r.title == "Ada Lovelace" and "(person)" in r.body)
        first = next(r for r in rows if r.body == "Wrote the first program")
        assert first.anchors == (card.id,) and "mcp-memory" in first.tags


async def test_deleted_relations_end_and_types_read_back_as_written(
    client: Client, db_path: Path
) -> None:
    await call(client, "create_entities", entities=PEOPLE)
    owned = {"from": "Analytical Engine", "to": "Charles Babbage", "relationType": "owned_by"}
    made = await call(client, "create_relations", relations=[owned, RELATIONS[0]])
    assert made["relations"] == [owned, RELATIONS[0]]
    # "utilizes" means "uses": one relation; a repeated triple is not new
    uses = {"from": "Ada Lovelace", "to": "Charles Babbage", "relationType": "uses"}
    await call(client, "create_relations", relations=[uses])
    again = await call(client, "create_relations",
                       relations=[{**uses, "relationType": "utilizes"}, owned])  # fmt: skip
    assert again["relations"] == []
    graph = await call(client, "read_graph")
    assert graph["relations"] == [owned, RELATIONS[0], uses]
    await call(client, "delete_relations", relations=[owned])
    assert (await call(client, "read_graph"))["relations"] == [RELATIONS[0], uses]
    with Memory.open(db_path, context=Context()) as mem:
        # stored canonical, the passive type with its ends swapped; ended, not deleted
        history = mem.graph.relationships("Charles Babbage", include_ended=True).relations
        assert [(r.subject, r.predicate.value, r.object, r.current) for r in history] == [
            ("Charles Babbage", "owns", "Analytical Engine", False),
            ("Ada Lovelace", "uses", "Charles Babbage", True),
        ]
    await call(client, "delete_entities", entityNames=["Ada Lovelace"])
    assert (await call(client, "read_graph"))["relations"] == []


async def test_recall_names_the_relations_of_an_entity_the_query_names(client: Client) -> None:
    await call(client, "create_entities", entities=PEOPLE)
    await call(client, "create_relations", relations=RELATIONS[:2])
    recalled = await call(client, "recall", query="what did Ada Lovelace write")
    assert recalled["entities"] == [
        "Ada Lovelace (person): related_to (programmed) Analytical Engine"
    ]


async def test_relations_an_older_store_kept_as_memories_still_read_and_delete(
    client: Client, db_path: Path
) -> None:
    await call(client, "create_entities", entities=PEOPLE[1:])
    with Memory.open(db_path, context=Context()) as mem:
        described = {"type": "relation", "from": "Charles Babbage", "to": "Analytical Engine",
                     "relationType": "designed"}  # fmt: skip
        mem.add("Charles Babbage designed Analytical Engine", scope="global", tags=["mcp-memory"],
                source_ref="mcp-memory:" + json.dumps(described))  # fmt: skip
    assert (await call(client, "read_graph"))["relations"] == [RELATIONS[1]]
    await call(client, "delete_relations", relations=[RELATIONS[1]])
    assert (await call(client, "read_graph"))["relations"] == []
    with Memory.open(db_path, context=Context()) as mem:
        assert not [r for r in everything(mem) if r.body.endswith("designed Analytical Engine")]


# ---- import mcp-memory -------------------------------------------------------------------


def memory_jsonl(path: Path) -> Path:
    lines = [{"type": "entity", **e} for e in PEOPLE]
    lines += [{"type": "relation", **r} for r in RELATIONS]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


async def test_import_loads_the_official_file_and_the_tools_read_it_back(
    run, tmp_path: Path, db_path: Path
) -> None:
    source = memory_jsonl(tmp_path / "memory.jsonl")
    result = run("import", "mcp-memory", str(source), "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json() == {"scope": "global", "entities": 3, "observations": 3, "relations": 3}
    again = run("import", "mcp-memory", str(source))
    assert again.stdout == "imported 0 entities, 0 observations and 0 relations into global\n"
    with Backend(opener(db_path)) as backend:
        async with Client(build_server(backend, tool_set="official")) as client:
            assert await call(client, "read_graph") == {"entities": PEOPLE, "relations": RELATIONS}


def test_a_bad_file_imports_nothing(run, tmp_path: Path, db_path: Path) -> None:
    source = memory_jsonl(tmp_path / "memory.jsonl")
    text = source.read_text(encoding="utf-8")
    cases = {
        text + "{not json\n": "line 7: not valid JSON",
        text + '{"type": "entity", "name": "X"}\n': "line 7: 'entityType' is missing",
        text + '{"type": "note"}\n': 'line 7: expected an object with "type" entity or relation',
        text + '{"type": "relation", "from": "Ada Lovelace", "to": "Nobody", '
        '"relationType": "knew"}\n': "Entity with name Nobody not found",
    }
    for content, message in cases.items():
        source.write_text(content, encoding="utf-8")
        result = run("import", "mcp-memory", str(source), "--json")
        assert result.exit_code in (1, 2) and message in result.stderr, result.stderr
        assert result.stdout == ""
    assert run("import", "mcp-memory", str(tmp_path / "missing.jsonl")).exit_code == 2
    if db_path.exists():
        with Memory.open(db_path, context=Context()) as mem:
            assert everything(mem) == []


async def test_the_tools_read_and_extend_the_entity_graph_relate_wrote(
    client: Client, db_path: Path
) -> None:
    with Memory.open(db_path, context=Context()) as mem:
        mem.graph.relate("api", "uses", "PostgreSQL")
        mem.graph.set_type("PostgreSQL", "service")
    uses = {"from": "api", "to": "PostgreSQL", "relationType": "uses"}
    api = {"name": "api", "entityType": "unknown", "observations": []}
    postgres = {"name": "PostgreSQL", "entityType": "service", "observations": []}
    assert await call(client, "open_nodes", names=["api"]) == {
        "entities": [api],
        "relations": [uses],
    }
    assert await call(client, "search_nodes", query="postgres") == {
        "entities": [postgres], "relations": [uses]}  # fmt: skip
    await call(client, "create_entities", entities=PEOPLE[:1])
    made = {"from": "Ada Lovelace", "to": "api", "relationType": "works_on"}
    assert await call(client, "create_relations", relations=[made]) == {"relations": [made]}
    await call(client, "add_observations",
               observations=[{"entityName": "api", "contents": ["Serves the web view"]}])  # fmt: skip
    graph = await call(client, "read_graph")
    assert [e["name"] for e in graph["entities"]] == ["Ada Lovelace", "api", "PostgreSQL"]
    assert graph["entities"][1] == {**api, "observations": ["Serves the web view"]}
    assert graph["relations"] == [uses, made]
    await call(client, "delete_entities", entityNames=["PostgreSQL"])
    assert (await call(client, "read_graph"))["relations"] == [made]
