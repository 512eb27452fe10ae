"""The bounds of an MCP server that the SDK's stdio client starts (SPEC §3.7, §15.1).

The MCP SDK's ``stdio_client`` spawns its server itself, in a new session,
with its own default environment (HOME, LOGNAME, PATH, SHELL, TERM, USER)
and no cap on what the server writes. dcx therefore hands it this relay as
the command: ``python -I -S mcp_relay.py`` (stdlib only, so it starts in a few
milliseconds and needs no ``PYTHONPATH``), which starts the real server under
the one subprocess boundary's rules and copies the JSON-RPC lines between the
two:

- the server's argv, working folder and **whole** environment come from the
  variable ``DCX_MCP_RELAY`` (JSON; never argv, which other users can read),
  computed by dcx with ``dcx.core.process.child_env`` (the allow-list plus the
  locator's ``env``); the variable is not passed on;
- the server runs in its own process group; stdin is the relay's, stderr goes
  to the null device (never read, never copied);
- stdout is forwarded line by line; a line longer than ``line_cap`` bytes
  stops the server (``mcp_output_too_large``);
- at the deadline the server is stopped (``mcp_timeout``); when dcx closes
  stdin the server gets ``grace`` seconds to exit, then SIGTERM to its group,
  ``grace`` seconds, SIGKILL; its group is killed after a normal exit too, so
  no grandchild outlives the session; SIGTERM or SIGHUP to the relay (the
  SDK's own escalation) stops the server the same way;
- a server that cannot be spawned is ``mcp_start_failed``; one that exits
  while dcx still talks to it is ``mcp_server_exited``.

Why the session ended is written, as one reason code, to the file named by
``status_path`` (created empty by dcx, mode 0600): the SDK's transport shows
dcx only a closed stream.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time

CONFIG_ENV = "DCX_MCP_RELAY"
TICK_SECONDS = 0.25


class Relay:
    def __init__(self, config: dict) -> None:  # type: ignore[type-arg]  # plain JSON; stdlib only
        self.argv = [str(a) for a in config["argv"]]
        self.env = {str(k): str(v) for k, v in config["env"].items()}
        self.cwd = config.get("cwd")
        self.deadline = time.monotonic() + float(config["timeout"])
        self.line_cap = int(config["line_cap"])
        self.grace = float(config.get("grace", 1.0))
        self.status_path = config.get("status_path")
        self.client_done = threading.Event()
        self.proc: subprocess.Popen[bytes] | None = None
        self.said = False

    def say(self, reason: str) -> None:
        """Record the first reason the session ended (later ones are consequences)."""
        if self.said or not self.status_path:
            return
        self.said = True
        with contextlib.suppress(OSError):
            fd = os.open(self.status_path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0))
            try:
                os.write(fd, reason.encode("ascii"))
            finally:
                os.close(fd)

    def kill_group(self, sig: int) -> None:
        if self.proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, sig)

    def stop(self) -> None:
        """TERM the server's group, wait the grace period, KILL the group (stragglers too)."""
        proc = self.proc
        if proc is None:
            return
        if proc.poll() is None:
            self.kill_group(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=self.grace)
        self.kill_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=self.grace)

    def feed(self) -> None:
        """dcx's requests to the server, as they come; dcx closing stdin closes the server's."""
        assert self.proc is not None and self.proc.stdin is not None
        sink = self.proc.stdin.fileno()
        try:
            while True:
                chunk = os.read(0, 65536)
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    view = view[os.write(sink, view) :]
        except OSError:
            pass  # the server closed its stdin (or died): its stdout's end says the rest
        finally:
            self.client_done.set()
            with contextlib.suppress(OSError):
                self.proc.stdin.close()

    def run(self) -> int:
        try:
            self.proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=self.env,
                cwd=self.cwd,
                start_new_session=True,
                close_fds=True,
            )
        except (OSError, ValueError):
            self.say("mcp_start_failed")
            return 127
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, self._on_signal)
        threading.Thread(target=self.feed, daemon=True).start()
        try:
            return self.pump()
        finally:
            self.stop()

    def _on_signal(self, signum: int, frame: object) -> None:
        self.stop()
        os._exit(128 + signum)

    def pump(self) -> int:
        """Forward whole lines of the server's stdout until it ends, the deadline or the cap."""
        assert self.proc is not None and self.proc.stdout is not None
        source = self.proc.stdout.fileno()
        os.set_blocking(source, False)
        selector = selectors.DefaultSelector()
        selector.register(source, selectors.EVENT_READ)
        pending = bytearray()
        done_at: float | None = None
        while True:
            now = time.monotonic()
            if now >= self.deadline:
                self.say("mcp_timeout")
                return 3
            if self.client_done.is_set():
                done_at = done_at or now
                if now - done_at > self.grace:
                    return 0  # dcx is done and the server did not exit on its own: stop() it
            if not selector.select(timeout=min(TICK_SECONDS, self.deadline - now)):
                continue
            try:
                chunk = os.read(source, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                break
            at = chunk.rfind(b"\n")  # only the new bytes are searched: a long line costs no rescans
            end = len(pending) + at if at >= 0 else -1
            pending += chunk
            if end >= 0:
                out = memoryview(pending)[: end + 1]
                try:
                    while out:
                        out = out[os.write(1, out) :]
                except OSError:
                    return 0  # dcx went away
                del out
                del pending[: end + 1]
            if len(pending) > self.line_cap:
                self.say("mcp_output_too_large")
                return 3
        if not self.client_done.is_set():
            self.say("mcp_server_exited")
        return 0


def main() -> int:
    raw = os.environ.pop(CONFIG_ENV, None)
    try:
        config = json.loads(raw or "")
        relay = Relay(config)
    except (ValueError, KeyError, TypeError):
        return 2
    return relay.run()


if __name__ == "__main__":
    sys.exit(main())
