"""Comments and strings explain the code as it is: none of them sends the reader to a
document outside the repository (an issue, a DESIGN section, a reference system)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "memlane"
TESTS = ROOT / "tests"

# What citing an outside document looks like: "issue 5", "(issue #8)", "DESIGN §4",
# "reference/002", a section sign.
OUTSIDE = re.compile(r"(?i:\bissue #?\d)|\bDESIGN\b|\breference/0|§")


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment and every string (docstrings and f-string parts
    too) of one module."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_comment_or_string_cites_an_outside_document() -> None:
    # This module names the patterns it looks for: it is the one exception.
    tests = [p for p in TESTS.rglob("*.py") if p.name != Path(__file__).name]
    modules = sorted([*PACKAGE.rglob("*.py"), *tests])
    assert len(modules) > 200  # the walk found the package and the tests
    found = [
        f"{path.relative_to(ROOT)}:{line}: {match.group()!r} in {text.strip()[:80]!r}"
        for path in modules
        for line, text in _texts(path)
        for match in OUTSIDE.finditer(text)
    ]
    assert not found, "cites a document outside the repository:\n" + "\n".join(found)


def test_the_rule_reads_what_it_should() -> None:
    cited = ["(issue 5 §3)", "DESIGN §4 step 3", "reference/000", "see Issue #8"]
    plain = ["a design choice", "an issue with the cache", "RFC 6749's reference tokens"]
    assert all(OUTSIDE.search(text) for text in cited)
    assert not any(OUTSIDE.search(text) for text in plain)
