"""The parts of the `Memory` facade (see memlane.memory)."""
