"""The nine tools of the official MCP memory server (modelcontextprotocol/servers,
src/memory), with its names, argument and result shapes, descriptions and hints, so
a client configured for that server works unchanged. The graph lives in memlane's
store (see `memlane.server.knowledge_graph`); each tool parses, calls one KnowledgeGraph
operation and renders what the official server returns: its JSON as text, and the
same as structured content.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from memlane.memory import Memory
from memlane.server.auth import Grant
from memlane.server.backend import Backend
from memlane.server.knowledge_graph import Entity, KnowledgeGraph, Relation

T = TypeVar("T")
Ctx = Context[Any, Any]
SEARCH_QUERY_MAX_LENGTH = 2048  # the official server's limit


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


class EntityShape(_Model):
    name: str = Field(description="The name of the entity")
    entity_type: str = Field(alias="entityType", description="The type of the entity")
    observations: list[str] = Field(
        description="An array of observation contents associated with the entity"
    )

    @classmethod
    def of(cls, entity: Entity) -> EntityShape:
        return cls(
            name=entity.name, entityType=entity.entity_type, observations=list(entity.observations)
        )

    def value(self) -> Entity:
        return Entity(self.name, self.entity_type, tuple(self.observations))


class RelationShape(_Model):
    source: str = Field(
        alias="from", description="The name of the entity where the relation starts"
    )
    to: str = Field(description="The name of the entity where the relation ends")
    relation_type: str = Field(alias="relationType", description="The type of the relation")

    @classmethod
    def of(cls, relation: Relation) -> RelationShape:
        shape = {
            "from": relation.source,
            "to": relation.target,
            "relationType": relation.relation_type,
        }
        return cls.model_validate(shape)

    def value(self) -> Relation:
        return Relation(self.source, self.to, self.relation_type)


class ObservationsIn(_Model):
    entity_name: str = Field(
        alias="entityName", description="The name of the entity to add the observations to"
    )
    contents: list[str] = Field(description="An array of observation contents to add")


class DeletionIn(_Model):
    entity_name: str = Field(
        alias="entityName", description="The name of the entity containing the observations"
    )
    observations: list[str] = Field(description="An array of observations to delete")


class AddedOut(_Model):
    entity_name: str = Field(alias="entityName")
    added_observations: list[str] = Field(alias="addedObservations")


class EntitiesOut(_Model):
    entities: list[EntityShape]


class RelationsOut(_Model):
    relations: list[RelationShape]


class ResultsOut(_Model):
    results: list[AddedOut]


class GraphOut(_Model):
    entities: list[EntityShape]
    relations: list[RelationShape]


class DoneOut(_Model):
    success: bool
    message: str


def _hints(read_only: bool, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )


# name -> (title, hints), as the official server registers them.
TOOLS: dict[str, tuple[str, ToolAnnotations]] = {
    "create_entities": ("Create Entities", _hints(False, False, False)),
    "create_relations": ("Create Relations", _hints(False, False, False)),
    "add_observations": ("Add Observations", _hints(False, False, False)),
    "delete_entities": ("Delete Entities", _hints(False, True, True)),
    "delete_observations": ("Delete Observations", _hints(False, True, True)),
    "delete_relations": ("Delete Relations", _hints(False, True, True)),
    "read_graph": ("Read Graph", _hints(True, False, True)),
    "search_nodes": ("Search Nodes", _hints(True, False, True)),
    "open_nodes": ("Open Nodes", _hints(True, False, True)),
}


def _json(shown: Any, structured: dict[str, Any]) -> CallToolResult:
    """The official server's result: `shown` as JSON text (2-space indent), and
    `structured` as structured content."""
    text = json.dumps(shown, indent=2, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _done(message: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"success": True, "message": message},
    )


def _graph(entities: list[Entity], relations: list[Relation]) -> CallToolResult:
    shown = GraphOut(
        entities=[EntityShape.of(e) for e in entities],
        relations=[RelationShape.of(r) for r in relations],
    )
    dumped = shown.model_dump(by_alias=True)
    return _json(dumped, dumped)


class GraphTools:
    """create_entities, create_relations, add_observations, delete_entities,
    delete_observations, delete_relations, read_graph, search_nodes, open_nodes."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def tools(self) -> list[Tool]:
        return [
            Tool.from_function(getattr(self, name), title=title, annotations=hints)
            for name, (title, hints) in TOOLS.items()
        ]

    async def _on_graph(self, ctx: Ctx, work: Callable[[KnowledgeGraph], T]) -> T:
        def run(mem: Memory, grant: Grant) -> T:
            return work(KnowledgeGraph(mem, *grant.graph_scopes()))

        return await self.backend.call(ctx, run)

    async def create_entities(
        self, entities: list[EntityShape], ctx: Ctx
    ) -> Annotated[CallToolResult, EntitiesOut]:
        """Create multiple new entities in the knowledge graph"""
        made = await self._on_graph(
            ctx, lambda kg: kg.create_entities([e.value() for e in entities])
        )
        shown = [EntityShape.of(e).model_dump(by_alias=True) for e in made]
        return _json(shown, {"entities": shown})

    async def create_relations(
        self, relations: list[RelationShape], ctx: Ctx
    ) -> Annotated[CallToolResult, RelationsOut]:
        """Create multiple new relations between entities in the knowledge graph. Relations should be in active voice"""
        made = await self._on_graph(
            ctx, lambda kg: kg.create_relations([r.value() for r in relations])
        )
        shown = [RelationShape.of(r).model_dump(by_alias=True) for r in made]
        return _json(shown, {"relations": shown})

    async def add_observations(
        self, observations: list[ObservationsIn], ctx: Ctx
    ) -> Annotated[CallToolResult, ResultsOut]:
        """Add new observations to existing entities in the knowledge graph"""
        items = [(o.entity_name, o.contents) for o in observations]
        added = await self._on_graph(ctx, lambda kg: kg.add_observations(items))
        shown = [{"entityName": name, "addedObservations": texts} for name, texts in added]
        return _json(shown, {"results": shown})

    async def delete_entities(
        self,
        entityNames: Annotated[list[str], Field(description="An array of entity names to delete")],
        ctx: Ctx,
    ) -> Annotated[CallToolResult, DoneOut]:
        """Delete multiple entities and their associated relations from the knowledge graph"""
        deleted, missing = await self._on_graph(ctx, lambda kg: kg.delete_entities(entityNames))
        if not missing:
            return _done("Entities deleted successfully")
        return _done(
            f"Deleted {len(deleted)} of {len(entityNames)} entities. "
            f"Not found: {', '.join(missing)}"
        )

    async def delete_observations(
        self, deletions: list[DeletionIn], ctx: Ctx
    ) -> Annotated[CallToolResult, DoneOut]:
        """Delete specific observations from entities in the knowledge graph"""
        items = [(d.entity_name, d.observations) for d in deletions]
        count, missing = await self._on_graph(ctx, lambda kg: kg.delete_observations(items))
        requested = sum(len(d.observations) for d in deletions)
        if count == requested:
            return _done("Observations deleted successfully")
        absent = f" Entities not found: {', '.join(missing)}" if missing else ""
        return _done(f"Deleted {count} of {requested} observations.{absent}")

    async def delete_relations(
        self,
        relations: Annotated[
            list[RelationShape], Field(description="An array of relations to delete")
        ],
        ctx: Ctx,
    ) -> Annotated[CallToolResult, DoneOut]:
        """Delete multiple relations from the knowledge graph"""
        count = await self._on_graph(
            ctx, lambda kg: kg.delete_relations([r.value() for r in relations])
        )
        if count == len(relations):
            return _done("Relations deleted successfully")
        return _done(f"Deleted {count} of {len(relations)} relations. The rest matched nothing.")

    async def read_graph(self, ctx: Ctx) -> Annotated[CallToolResult, GraphOut]:
        """Read the entire knowledge graph"""
        graph = await self._on_graph(ctx, lambda kg: kg.read())
        return _graph(graph.entities(), list(graph.relations))

    async def search_nodes(
        self,
        query: Annotated[
            str,
            Field(
                max_length=SEARCH_QUERY_MAX_LENGTH,
                description="The search query to match against entity names, types, and observation content",
            ),
        ],
        ctx: Ctx,
    ) -> Annotated[CallToolResult, GraphOut]:
        """Search for nodes in the knowledge graph based on a query"""
        return _graph(*await self._on_graph(ctx, lambda kg: kg.search(query)))

    async def open_nodes(
        self,
        names: Annotated[list[str], Field(description="An array of entity names to retrieve")],
        ctx: Ctx,
    ) -> Annotated[CallToolResult, GraphOut]:
        """Open specific nodes in the knowledge graph by their names"""
        return _graph(*await self._on_graph(ctx, lambda kg: kg.open(names)))
