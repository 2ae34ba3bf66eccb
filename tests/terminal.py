"""A memlane command run with its stderr on a pseudo-terminal, as a user's terminal
would show it, for the progress-bar tests."""

from __future__ import annotations

import os
import pty
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path


def on_terminal(
    command: Sequence[str], env: Mapping[str, str], cwd: Path, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[bytes], str]:
    """The finished command (stdout captured) and everything it drew on the terminal.

    The terminal is read while the command runs: a bar redrawn many times (a slow
    machine redraws more) fills the terminal's buffer, and a command writing to a full
    one waits for a reader.
    """
    leader, follower = pty.openpty()
    drawn: list[bytes] = []

    def read() -> None:
        while True:
            try:
                block = os.read(leader, 65536)
            except OSError:  # Linux: the other end is gone and everything was read
                return
            if not block:
                return
            drawn.append(block)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        with subprocess.Popen(
            list(command), stdout=subprocess.PIPE, stderr=follower, env=dict(env), cwd=cwd
        ) as process:
            os.close(follower)  # the command holds its own end
            try:
                stdout, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                raise
        reader.join(timeout)
    finally:
        os.close(leader)
    done = subprocess.CompletedProcess(list(command), process.returncode, stdout, b"")
    return done, b"".join(drawn).decode(errors="replace")
