"""The ``command`` notifier: run a program (no shell) with the message on stdin."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..base.errors import ConfigError, NotifyError
from ..base.redact import mask, redact
from ..core.models import Notification
from .base import MAX_ANSWER, one_line

__all__ = ["CommandNotifier"]


class CommandNotifier:
    """Run a command (no shell) with the text on stdin and the JSON in ``HEARTBEAT_NOTIFICATION``."""

    def __init__(self, name: str, command: str, *, timeout: float = 30.0, cwd: Path | None = None) -> None:
        import shlex  # here, not at the top: a tick that runs no command need not load it

        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"notifier {name}: cannot split command: {exc}") from None
        if not argv:
            raise ConfigError(f"notifier {name}: the command is empty")
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.cwd = cwd
        # The command line may hold a token (curl ... https://hooks/...): never echo it.
        self._secrets = [arg for arg in argv[1:] if len(arg) >= 6]
        self.mask_with: list[str] = []
        """Secrets (``${ENV}`` values, webhook URLs) masked out of the text and JSON it is given."""

    def __repr__(self) -> str:
        return f"CommandNotifier(name={self.name!r}, program={self.argv[0]!r})"

    def send(self, message: Notification) -> None:
        """Run the command; a non-zero exit or a timeout raises NotifyError.

        The command runs in a process group of its own. Its exit is what
        counts: a background child it left (``cmd &``) neither holds up the
        delivery nor outlives it, since the group is ended once the command
        exits or times out. Its output goes to a temp file, not a pipe, which
        such a child would keep open.
        """
        import signal
        import subprocess  # here, not at the top: a tick that runs no command need not load it
        import tempfile

        text, data = message.text, json.dumps(message.to_json())
        if self.mask_with:
            text, data = mask(text, self.mask_with), mask(data, self.mask_with)
        env = {**os.environ, "HEARTBEAT_NOTIFICATION": data}
        program = Path(self.argv[0]).name
        with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stderr:
            stdin.write(text.encode("utf-8", errors="replace"))
            stdin.seek(0)
            try:
                process = subprocess.Popen(
                    self.argv,
                    stdin=stdin,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    env=env,
                    cwd=self.cwd,
                    start_new_session=True,
                )
            except OSError as exc:
                raise NotifyError(self.name, f"cannot run {program}: {exc.strerror}") from None
            try:
                code: int | None = process.wait(self.timeout)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                # The whole group: whatever the command started in the background goes too.
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            if code is None:
                raise NotifyError(self.name, f"{program} did not finish within {self.timeout:g}s (killed)")
            if code != 0:
                stderr.seek(0)
                said = stderr.read(MAX_ANSWER).decode("utf-8", errors="replace").strip()
                tail = said.splitlines()[-1] if said else ""
                reason = f"{program} exited with code {code}"
                if tail:
                    reason += f": {one_line(tail, 100)}"
                raise NotifyError(self.name, redact(reason, [*self._secrets, *self.mask_with]))
