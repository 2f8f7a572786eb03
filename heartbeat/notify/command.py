"""The ``command`` notifier: run a program (no shell) with the message on stdin."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..base.errors import NotifyError
from ..base.redact import argv_secrets, mask, redact
from ..core.models import Notification
from .base import MAX_ANSWER, one_line

__all__ = ["CommandNotifier"]


class CommandNotifier:
    """Run a command (no shell) with the text on stdin and the JSON in ``HEARTBEAT_NOTIFICATION``."""

    def __init__(self, name: str, command: str, *, timeout: float = 30.0, cwd: Path | None = None) -> None:
        from ..base.commandline import split_command  # here: a tick that runs no command need not load shlex

        argv = split_command(command, f"notifier {name}", braced=False)
        self.name = name
        self.argv = argv
        self.timeout = timeout
        self.cwd = cwd
        self._secrets = argv_secrets(argv[1:])  # --token X, password=X: never echoed
        self.mask_with: list[str] = []
        """Secrets (``${ENV}`` values, webhook URLs) masked out of the text, the JSON and its errors.

        Only these, and the values its flags name as credentials (``--token X``):
        the command's other words (a file name) stay readable in an error; a
        URL in it is cut to its host.
        """

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
