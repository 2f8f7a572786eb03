"""OTLP/JSON exports read for ``heartbeat replay``: what a wrong-shaped one is told."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from heartbeat.cli.main import main


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ('{"resourceSpans": "x"}', '"resourceSpans" holds a string, not a list of objects'),
        ('{"resourceSpans": [{"scopeSpans": [7]}]}', '"scopeSpans" holds a list of other things'),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": {"a": 1}}]}]}', '"spans" holds an object, not a list'),
    ],
)
def test_a_wrong_shaped_export_is_told_what_is_wrong_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], document: str, said: str
) -> None:
    """Regression: ``{"resourceSpans": "x"}`` was refused with an internal error as its one line
    ("not a otlp file: AttributeError: 'str' object has no attribute 'get'"); now the line says
    which part of the export has the wrong shape."""
    (tmp_path / "spans.jsonl").write_text(document + "\n")
    code = main(["replay", str(tmp_path / "spans.jsonl"), "--format", "otlp"], io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "Error" not in err and said in err, err
