"""The memory graph: entities from a deterministic extractor; links and anchors to come."""
