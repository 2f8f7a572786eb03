"""heartbeat report in a real browser: Debian's Chromium, headless.

The session fixture installs Chromium with apt-get when it is missing (and
skips, saying why, only where that cannot be done). Three ways in, as a user
or a CI job would drive it: ``--dump-dom`` (the DOM after the page's script
ran), ``--screenshot`` (a PNG whose pixels must vary), and the DevTools
protocol over ``--remote-debugging-pipe`` (the network log, and a click on
the timeline that picks another stretch).
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import struct
import subprocess
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heartbeat.report.tuning import render_tuning
from heartbeat.report.write import write_report
from report.test_write import Night, external_refs, make_night, parse

INSTALL_TIMEOUT = 300  # seconds per apt-get call: a fresh CI machine must stay well inside its limit
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


def _find() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's Chromium, installed with apt-get when missing; else the test is skipped with the reason."""
    found = _find()
    if found:
        return found
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        pytest.skip("chromium is not installed and apt-get cannot install it here (no apt-get, or not root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        for command in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
            subprocess.run(command, env=env, capture_output=True, timeout=INSTALL_TIMEOUT, check=True)
    except (subprocess.SubprocessError, OSError) as exc:
        pytest.skip(f"chromium is not installed and `apt-get install chromium` failed: {exc}")
    found = _find()
    if not found:
        pytest.skip("`apt-get install chromium` ran but no chromium binary is on PATH")
    return found


@pytest.fixture(scope="module")
def night_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Night, Path]:
    night = make_night(tmp_path_factory.mktemp("night"))
    return night, write_report(night.hb, now=night.clock())


def _run(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, timeout=120
    )


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes): width, height, rows of pixels."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, idat = 8, {}, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IDAT":
            idat += body
        else:
            chunks[kind] = body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [b"".join(r[i : i + 3] for i in range(0, stride, bpp)) for r in rows]


def colours(data: bytes) -> dict[bytes, int]:
    """How many pixels of each colour a PNG has."""
    width, height, rows = png_pixels(data)
    counts: dict[bytes, int] = {}
    for row in rows:
        for i in range(0, len(row), 3):
            pixel = row[i : i + 3]
            counts[pixel] = counts.get(pixel, 0) + 1
    assert sum(counts.values()) == width * height
    return counts


def test_dump_dom_holds_points_markers_and_rows_after_the_script_ran(
    chromium: str, night_page: tuple[Night, Path], tmp_path: Path
) -> None:
    """The browser's DOM: the night's timeline points and markers, the stretch's rows, the picker shown."""
    _, page = night_page
    done = _run(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    root = parse(done.stdout.decode("utf-8"))
    points = list(root.one("svg", id="timeline").all("circle", class_="pt"))
    assert [p.attrs["data-first"] for p in points] == ["1", "2", "3", "4", "5", "5", "6"]
    # The script showed the picker: it ran, so the page's policy let its hash through.
    assert "hidden" not in root.one("form", id="pick").attrs
    kinds = sorted(m.attrs["data-kind"] for m in root.all("use", class_="mk"))
    assert kinds == sorted(
        [
            "repeat",
            "loop",
            "error_rate",
            "no_progress",  # four flat samples in the night (the default since detection v3)
            "recovery",
            "recovery",
            "escalation",
            "pause",
            "resume",
            "resume",
            "kill",
        ]
    )
    rows = [r for r in root.one("table", id="actions").one("tbody").all("tr") if "hidden" not in r.attrs]
    assert len(rows) == 15


def test_screenshots_are_not_blank_in_light_dark_and_phone_sizes(
    chromium: str, night_page: tuple[Night, Path], tmp_path: Path
) -> None:
    """Light, dark and a phone-sized window: each screenshot has many colours, dark is mostly dark."""
    _, page = night_page
    shots = {
        "light": ["--window-size=1200,1600"],
        "dark": ["--window-size=1200,1600", "--blink-settings=preferredColorScheme=0"],
        "phone": ["--window-size=390,844"],
    }
    brightness = {}
    for name, extra in shots.items():
        out = tmp_path / f"{name}.png"
        done = _run(chromium, tmp_path / f"profile-{name}", *extra, f"--screenshot={out}", page.as_uri())
        assert done.returncode == 0 and out.exists(), done.stderr[-2000:]
        counts = colours(out.read_bytes())
        top = max(counts.values())
        total = sum(counts.values())
        assert len(counts) > 50 and top < 0.97 * total, (name, len(counts), top / total)
        background = max(counts, key=lambda c: counts[c])
        brightness[name] = sum(background) / 3
    assert brightness["light"] > 200 and brightness["dark"] < 60, brightness


class DevTools:
    """A minimal Chrome DevTools Protocol client over --remote-debugging-pipe (fds 3 and 4)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # Chromium reads commands on fd 3 and writes on fd 4: bash puts the pipe ends there (no
        # preexec_fn, which is unsafe while other threads run; dash takes only one-digit fds).
        wire = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w} {to_chrome_r}<&- {from_chrome_w}>&-'
        argv = [chromium, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"]
        self.process = subprocess.Popen(
            [shutil.which("bash") or "/bin/bash", "-c", wire, *argv],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_chrome_r, from_chrome_w),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._buffer = b""
        self._next = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> Any:
        self._next += 1
        message: dict[str, Any] = {"id": self._next, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            reply = self._read()
            if reply.get("id") == self._next:
                assert "error" not in reply, reply
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(method)

    def wait_for(self, method: str, timeout: float = 30) -> dict[str, Any]:
        for event in self.events:
            if event.get("method") == method:
                return event
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event
        raise TimeoutError(method)

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 65536)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        result: dict[str, Any] = json.loads(message)
        return result

    def close(self) -> None:
        with contextlib.suppress(OSError, EOFError, TimeoutError):
            self.send("Browser.close")
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self._to_chrome)
        os.close(self._from_chrome)


@pytest.fixture
def devtools(chromium: str, tmp_path: Path) -> Iterator[DevTools]:
    client = DevTools(chromium, tmp_path / "profile")
    try:
        yield client
    finally:
        client.close()


def _open(devtools: DevTools, url: str) -> str:
    """Open ``url`` in a fresh tab with the network log on; return the session id once it loaded."""
    target = devtools.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session: str = devtools.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    devtools.send("Network.enable", session=session)
    devtools.send("Page.enable", session=session)
    devtools.events.clear()
    devtools.send("Page.navigate", {"url": url}, session=session)
    devtools.wait_for("Page.loadEventFired")
    return session


def _requests(devtools: DevTools) -> list[str]:
    """The URLs the page asked for so far, from the DevTools network log."""
    sent = [e for e in devtools.events if e.get("method") == "Network.requestWillBeSent"]
    return [e["params"]["request"]["url"] for e in sent]


def _evaluate(devtools: DevTools, session: str, expression: str) -> Any:
    result = devtools.send(
        "Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=session
    )
    return result["result"].get("value")


def test_the_page_makes_no_network_request_and_a_click_picks_a_stretch(
    devtools: DevTools, night_page: tuple[Night, Path]
) -> None:
    """DevTools network log: one request, the file itself. Clicking tick 6's point shows tick 6's rows."""
    _, page = night_page
    assert external_refs(page.read_text()) == []
    session = _open(devtools, page.as_uri())
    assert _requests(devtools) == [page.as_uri()]
    assert _evaluate(devtools, session, "document.querySelectorAll('#timeline .pt').length") == 7
    shown = "[].filter.call(document.querySelectorAll('#actions tbody tr'),function(r){return !r.hidden})"
    assert _evaluate(devtools, session, f"{shown}.length") == 15
    _evaluate(devtools, session, "document.querySelectorAll('#timeline .pt')[6]"
              ".dispatchEvent(new MouseEvent('click',{bubbles:true}))")  # fmt: skip
    ticks = _evaluate(devtools, session, f"{shown}.map(function(r){{return r.getAttribute('data-tick')}})")
    assert ticks == ["6"]
    caption = _evaluate(devtools, session, "document.getElementById('stretch-caption').textContent")
    assert caption == "Actions of ticks 6 to 6: 1 action in this page"
    band = _evaluate(devtools, session, "document.getElementById('band').getAttribute('width')")
    assert float(band) > 0
    # The keyboard's way: the from/to fields.
    fields = "var d=document;d.getElementById('from').value='3';d.getElementById('to').value='2';"
    _evaluate(devtools, session, fields + "d.getElementById('pick').requestSubmit()")
    ticks = _evaluate(devtools, session, f"{shown}.map(function(r){{return r.getAttribute('data-tick')}})")
    assert sorted(set(ticks)) == ["2", "3"] and len(ticks) == 3 + 4
    screenshot = devtools.send("Page.captureScreenshot", {"format": "png"}, session=session)
    assert len(colours(base64.b64decode(screenshot["data"]))) > 50
    assert _requests(devtools) == [page.as_uri()]


def test_print_media_shows_the_report_without_the_picker(
    devtools: DevTools, night_page: tuple[Night, Path]
) -> None:
    """Under print media the picker is gone and the tables are still there."""
    _, page = night_page
    session = _open(devtools, page.as_uri())
    devtools.send("Emulation.setEmulatedMedia", {"media": "print"}, session=session)
    display = _evaluate(devtools, session, "getComputedStyle(document.getElementById('pick')).display")
    assert display == "none"
    assert _evaluate(devtools, session, "document.querySelectorAll('table').length") == 3
    pdf = devtools.send("Page.printToPDF", {}, session=session)
    assert base64.b64decode(pdf["data"])[:5] == b"%PDF-"


def test_the_tuning_view_and_overview_render_in_the_browser(chromium: str, tmp_path: Path) -> None:
    """The tuning page's strips and tables come through a real browser's parser intact."""
    from report.test_write import CONFUSION, TRACES

    page = tmp_path / "tuning.html"
    page.write_text(render_tuning(TRACES, CONFUSION))
    done = _run(chromium, tmp_path / "profile", "--dump-dom", page.as_uri())
    root = parse(done.stdout.decode("utf-8"))
    assert len(list(root.all("svg", class_="strip"))) == 4
    assert sorted(m.attrs["data-kind"] for m in root.all("use", class_="mk")) == [
        "empty",
        "loop",
        "loop",
        "no_progress",
    ]


def test_markup_in_the_journal_makes_no_request_in_the_browser(devtools: DevTools, tmp_path: Path) -> None:
    """A journal full of img and script tags and URLs: the browser still asks for nothing but the file."""
    from heartbeat.testing import EPOCH
    from report.test_write import HOSTILE, hostile_folder

    page = write_report(hostile_folder(tmp_path), now=EPOCH)
    session = _open(devtools, page.as_uri())
    assert _requests(devtools) == [page.as_uri()]
    assert _evaluate(devtools, session, "document.images.length") == 0
    assert _evaluate(devtools, session, "document.scripts.length") == 1
    assert HOSTILE in _evaluate(devtools, session, "document.body.textContent")


def test_on_a_phone_only_the_timeline_and_tables_scroll_sideways(
    devtools: DevTools, night_page: tuple[Night, Path]
) -> None:
    """At 390 px the page itself does not overflow; wide parts scroll inside their own boxes."""
    _, page = night_page
    session = _open(devtools, page.as_uri())
    devtools.send(
        "Emulation.setDeviceMetricsOverride",
        {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True},
        session=session,
    )
    width = _evaluate(devtools, session, "document.documentElement.scrollWidth")
    assert width <= 390, width
    assert _evaluate(devtools, session, "document.querySelector('#timeline').parentNode.scrollWidth") > 390
    size = _evaluate(devtools, session, "parseFloat(getComputedStyle(document.body).fontSize)")
    assert size >= 14
