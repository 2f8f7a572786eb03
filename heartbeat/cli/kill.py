"""``heartbeat kill``: the KILL file written whatever else is wrong, and who it stops.

``kill`` needs only the KILL file's path: a ``heartbeat.toml`` with an error
elsewhere is said on stderr and the file written where the config (or the
default) puts it. With ``--agent`` in a fleet whose agents share one KILL file,
it names every agent the file stops.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from ..base.errors import ConfigError, HeartbeatError, UsageError
from ..config.file import DEFAULT_CONFIG_NAME, HeartbeatConfig
from ..config.flags import check_kill_target, config_with_flags, fallback_kill_files
from ..state.killswitch import KillSwitch

__all__ = ["run_kill"]


def run_kill(
    args: argparse.Namespace, out: TextIO, *, load: Callable[[argparse.Namespace], HeartbeatConfig]
) -> int:
    """``heartbeat kill``: write (or with --off remove) the KILL file the agent reads (``load``: the config).

    It needs only the KILL file's path: a heartbeat.toml with an error elsewhere is
    said on stderr and the KILL file written where the file (or the default) puts it.
    """
    try:
        config = load(args)
    except ConfigError as exc:
        if not os.path.lexists(args.config or DEFAULT_CONFIG_NAME):
            raise  # no config at all: the wrong folder, refused as before
        paths, source = fallback_kill_files(args.config, agent=args.agent, kill_file=args.kill_file)
        print(
            f"heartbeat: warning: the config could not be read ({exc}); the KILL file goes to "
            f"{source}: {', '.join(map(str, paths))}",
            file=sys.stderr,
        )
        for path in paths:
            _kill_one(KillSwitch(path), args, out)
        return 0
    check_kill_target(config, config_file=args.config, state_dir=args.state_dir, kill_file=args.kill_file)
    readers = _kill_readers(args) if args.agent and not args.kill_file else {}
    seen = set()
    for agent in config.all_agents():
        kill = KillSwitch(config.resolve(agent.kill_file))
        if kill.path in seen:
            continue
        seen.add(kill.path)
        _kill_one(kill, args, out, readers.get(kill.path.resolve(), []))
    return 0


def _kill_readers(args: argparse.Namespace) -> dict[Path, list[str]]:
    """Every agent of the whole config (not only ``--agent``'s), by the KILL file it reads."""
    try:
        whole = config_with_flags(args.config)
    except HeartbeatError:
        return {}
    readers: dict[Path, list[str]] = {}
    for agent in whole.all_agents():
        readers.setdefault(whole.resolve(agent.kill_file).resolve(), []).append(agent.name)
    return readers


def _kill_one(kill: KillSwitch, args: argparse.Namespace, out: TextIO, readers: Sequence[str] = ()) -> None:
    """Write (or remove) one KILL file and say so; ``readers``: every agent that reads it."""
    if args.off:
        try:
            removed = kill.release()
        except OSError as exc:
            raise UsageError(
                f"{kill.path}: cannot remove ({exc.strerror}); a KILL folder with files in it "
                "is removed by hand only: look inside, then rm -r it"
            ) from None
        out.write(f"{kill.path}: {'removed' if removed else 'was not there'}\n")
        if len(readers) > 1:
            out.write(f"  every agent that reads it goes on: {', '.join(readers)}\n")
        return
    try:
        text = kill.engage(args.reason, make_folder=not args.kill_file)  # a config's: its agent reads it
    except OSError as exc:  # a folder of that name (it stops the agent already), no such folder
        raise UsageError(f"{kill.path}: cannot write the KILL file ({exc.strerror or exc})") from None
    out.write(f"{kill.path}: written ({text}); `heartbeat kill --off` or rm it to go on\n")
    if len(readers) > 1:
        out.write(
            f"  this KILL file is shared: it stops every agent that reads it: {', '.join(readers)} "
            "(to stop one agent alone, give each its own kill_file in heartbeat.toml)\n"
        )
