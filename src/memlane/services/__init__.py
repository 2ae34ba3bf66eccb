"""The feature services `Memory` composes (see memlane.memory): each holds the
runtime (memlane.runtime) and works beside its pure logic."""
