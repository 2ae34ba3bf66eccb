"""Benchmarks of memlane at scale: synthetic stores, timings and the machine they ran on.

`memlane bench` and the scripts in `bench/` share these modules: `corpus` (seeded
synthetic memories and queries), `timing` (percentiles), `machine` (what ran it) and
`scale` (stores of 10^4..10^6 memories with vectors, and what recall costs at each size).
"""
