from __future__ import annotations

import os
from pathlib import Path

import pytest

from floorman.models.yolo_env import install_fonts, load_ultralytics


def test_install_fonts_copies_dejavu_as_arial(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    install_fonts(tmp_path / "cfg")
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        font = tmp_path / "cfg" / name
        assert font.is_file() and font.read_bytes()[:4] in {b"\x00\x01\x00\x00", b"true"}


@pytest.mark.train
def test_load_ultralytics_is_offline_and_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ultralytics")
    monkeypatch.delenv("YOLO_OFFLINE", raising=False)
    ultralytics = load_ultralytics(tmp_path / "cfg")

    assert os.environ["YOLO_OFFLINE"] == "1"
    assert ultralytics.settings["sync"] is False
    assert ultralytics.settings["mlflow"] is False and ultralytics.settings["wandb"] is False
    from ultralytics.utils import is_online

    assert is_online() is False
