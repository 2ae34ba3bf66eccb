"""The registries feature: categories, agents, projects, applicability; tag counts and
the type lists."""

from __future__ import annotations

from typing import Any

from memlane.errors import Conflict, Invalid, NotFound
from memlane.model import TYPE_REGISTRIES, RegistryEntry
from memlane.runtime import REGISTRIES, Entries, Names, Runtime
from memlane.timeutil import utcnow


class Registries:
    """Registries (categories, agents, projects, applicability), tag counts and the
    type lists (`Memory.registries`)."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def registry(self, name: str) -> Entries:
        _check_registry(name)
        return self.rt.store.registries.entries(name)

    def register(self, registry: str, key: str, **data: Any) -> RegistryEntry:
        """Add (or update) an entry of a registry: categories, agents, projects, applicability."""
        _check_registry(registry)
        key = key.strip()
        if not key or len(key) > 64 or any(c in key for c in ",\n\t"):
            raise Invalid(f"invalid {registry} name {key!r}: 1-64 characters, no commas")
        data = {k: v for k, v in data.items() if v is not None}
        entry = RegistryEntry(registry, key, data, utcnow())
        with self.rt.transaction() as w:
            w.put_registry(entry)
            self.rt.journal(w, f"{registry}.add", None)
        return entry

    def unregister(self, name: str, key: str) -> None:
        """Remove a registry entry; a category still used by any memory is refused."""
        _check_registry(name)
        if name == "categories":
            used = self.rt.store.registries.usage("category", key, None, everyone=True)
            if used:
                raise Conflict(f"category {key!r} is used by {used} memories; it stays")
        with self.rt.transaction() as w:
            if not w.remove_registry(name, key):
                raise NotFound(f"no {name} entry {key!r}")
            self.rt.journal(w, f"{name}.remove", None)
        self.rt.forget_category(key)

    def registry_entry(self, name: str, key: str) -> RegistryEntry:
        for entry in self.registry(name):
            if entry.key == key:
                return entry
        raise NotFound(f"no {name} entry {key!r}")

    def usage(self, field: str, value: str) -> int:
        """How many memories this agent may see have `field` equal to `value`."""
        return self.rt.store.registries.usage(field, value, self.rt.agent)

    def tags(self, category: str | None = None) -> dict[str, int]:
        return self.rt.store.registries.tag_counts(self.rt.agent, category)

    @staticmethod
    def types(name: str) -> Names:
        """Valid values of a typed field: kinds, source-types, relationship-types, ..."""
        key = name.strip().lower().replace("_", "-")
        if key not in TYPE_REGISTRIES:
            raise Invalid(f"unknown type list {name!r}; choose from: {', '.join(TYPE_REGISTRIES)}")
        return [member.value for member in TYPE_REGISTRIES[key]]


def _check_registry(name: str) -> None:
    if name not in REGISTRIES:
        raise Invalid(f"unknown registry {name!r}; choose from: {', '.join(REGISTRIES)}")
