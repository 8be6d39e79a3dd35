"""Memory families: ``@modelcontextprotocol/server-memory``, graph emptied per trajectory."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aw_lookahead.datagen.mcp.content import CITIES, PEOPLE, TEAMS, TOPICS
from aw_lookahead.datagen.mcp.session import Family, Plan, pick, typo

RELATIONS = ("works_with", "reports_to", "mentors", "lives_in", "member_of")
BAD_MEMORY_TOOLS = ("update_entity", "remember", "delete_graph", "query_graph", "add_entity")


@dataclass
class MemoryWorkspace:
    """The graph file the shared memory server reads and writes (empty at the start)."""

    graph_file: Path


def _people(rng: random.Random, k: int) -> list[str]:
    return rng.sample(PEOPLE, k)


def _entity(rng: random.Random, name: str) -> dict[str, Any]:
    notes = [
        f"likes {pick(rng, TOPICS)}",
        f"based in {pick(rng, CITIES)}",
        f"on the {pick(rng, TEAMS)} team",
    ]
    return {
        "name": name,
        "entityType": "person",
        "observations": rng.sample(notes, rng.randrange(1, 3)),
    }


def build_graph(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Record who works with whom")
    names = _people(rng, rng.randrange(2, 4))
    plan.add("create_entities", entities=[_entity(rng, n) for n in names])
    rel = {"from": names[0], "to": names[1], "relationType": pick(rng, RELATIONS[:3])}
    plan.add("create_relations", relations=[rel])
    if rng.random() < 0.7:
        plan.add("create_relations", True, relations=[{"from": names[0], "to": names[1]}])
    plan.add("read_graph")
    return plan


def observations(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Remember new facts about a person")
    names = _people(rng, 2)
    plan.add("create_entities", entities=[_entity(rng, n) for n in names])
    fact = f"prefers {pick(rng, TOPICS)}"
    if rng.random() < 0.7:
        plan.add(
            "add_observations",
            True,
            observations=[{"entityName": typo(rng, names[0]), "contents": [fact]}],
        )
    plan.add("add_observations", observations=[{"entityName": names[0], "contents": [fact]}])
    plan.add("open_nodes", names=[names[0]])
    return plan


def search(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Look up people by interest")
    names = _people(rng, 3)
    entities = [_entity(rng, n) for n in names]
    plan.add("create_entities", entities=entities)
    hit = entities[rng.randrange(3)]["observations"][0].split()[-1]
    plan.add("search_nodes", query=pick(rng, [hit, pick(rng, TOPICS), pick(rng, CITIES)]))
    if rng.random() < 0.7:
        plan.add("search_nodes", True)
    plan.add("open_nodes", names=[names[0], pick(rng, PEOPLE)])
    return plan


def delete(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Remove someone who left")
    names = _people(rng, 3)
    plan.add("create_entities", entities=[_entity(rng, n) for n in names])
    plan.add(
        "create_relations",
        relations=[{"from": names[0], "to": names[1], "relationType": "works_with"}],
    )
    if rng.random() < 0.5:
        plan.add(
            "delete_relations",
            relations=[{"from": names[0], "to": names[1], "relationType": "works_with"}],
        )
    if rng.random() < 0.7:
        plan.add("delete_entities", True, entityNames=names[0])
    plan.add("delete_entities", entityNames=[names[1]])
    plan.add("read_graph")
    return plan


def forget(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Forget an outdated fact")
    name = _people(rng, 1)[0]
    entity = _entity(rng, name)
    plan.add("create_entities", entities=[entity])
    if rng.random() < 0.7:
        plan.add("delete_observations", True, deletions=[{"entityName": name, "contents": ["old"]}])
    plan.add(
        "delete_observations",
        deletions=[{"entityName": name, "observations": entity["observations"][:1]}],
    )
    plan.add("open_nodes", names=[name])
    return plan


def bad_calls(rng: random.Random, ws: MemoryWorkspace) -> Plan:
    plan = Plan("Store a note about a colleague")
    name = _people(rng, 1)[0]
    plan.add(pick(rng, BAD_MEMORY_TOOLS), True, name=name, note=f"likes {pick(rng, TOPICS)}")
    plan.add("create_entities", True, entities=[{"name": name, "observations": ["new"]}])
    if rng.random() < 0.5:
        plan.add("add_observations", True, observations=[{"entityName": name, "contents": ["x"]}])
    plan.add("create_entities", entities=[_entity(rng, name)])
    return plan


MEMORY_FAMILIES: tuple[Family, ...] = (
    Family("memory.build_graph", "memory", build_graph),
    Family("memory.observations", "memory", observations),
    Family("memory.search", "memory", search),
    Family("memory.delete", "memory", delete),
    Family("memory.forget", "memory", forget),
    Family("memory.bad_calls", "memory", bad_calls),
)
