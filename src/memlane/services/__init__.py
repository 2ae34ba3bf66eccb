"""The feature services `Memory` composes (see memlane.memory); each holds the runtime
(memlane.runtime) and calls its pure policy.

- Namespaces of `Memory`: graph, registries, wake, transfer, lifecycle, pack
  (`Memory.packs`), maintenance, reflect (`Memory.reflection`), admin.
- Behind `Memory`'s everyday methods: writing (with the write policy in policy and the
  automatic anchors in anchoring), recall, forget.
- Parts of a namespace: doctor and backup (admin).
"""
