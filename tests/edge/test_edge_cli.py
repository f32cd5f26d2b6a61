"""`floorman edge`: bad files are named, and a run from simulator truth publishes its events to the broker."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from floorman.cli import build_parser, main
from floorman.core.events import Event, Heartbeat
from floorman.core.layout import TableLayout
from floorman.edge.broker import Broker
from floorman.edge.cli import edge_config, run_edge
from floorman.edge.subscriber import EventSubscriber
from floorman.vision.calibration import PointPair, calibrate_from_points
from tests.edge.derive_helpers import centre


def write_calibration(path: Path, *, layout: TableLayout) -> Path:
    pairs = [PointPair(pixel=p, table_mm=m) for p, m in (((0, 0), (-1200, 600)), ((640, 0), (1200, 600)),
                                                        ((640, 360), (1200, -600)), ((0, 360), (-1200, -600)))]
    calibrate_from_points(pairs, layout=layout, image_size=(640, 360)).save(path)
    return path


def folder_and_truth(tmp_path: Path, frames: int = 20) -> tuple[Path, Path]:
    """A folder of blank frames and a frames.jsonl in which a stack stands in stack_2 and a bet lands at 10."""
    folder = tmp_path / "frames"
    folder.mkdir()
    lines = []
    x, y = centre("stack_2")
    bx, by = centre("bet_2")
    for i in range(frames):
        cv2.imwrite(str(folder / f"{i:03d}.png"), np.zeros((36, 64, 3), dtype=np.uint8))
        objects = [f'{{"id":1,"cls":"chip","box":[0,0,1,1],"visible_fraction":1.0,"position_mm":[{x},{y}],'
                   f'"zone":"stack_2","chips":[100,100,100],"count":3}}']
        if i >= 10:
            objects.append(f'{{"id":2,"cls":"chip","box":[0,0,1,1],"visible_fraction":1.0,'
                           f'"position_mm":[{bx},{by}],"zone":"bet_2","chips":[500],"count":1}}')
        lines.append(f'{{"frame":{i},"t":{i / 30:.4f},"objects":[{",".join(objects)}]}}')
    truth = tmp_path / "frames.jsonl"
    truth.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder, truth


def edge_args(*extra: str, source: str, connect: str = "tcp://127.0.0.1:5550") -> list[str]:
    return ["edge", "--table", "t1", "--camera", "c1", "--source", source, "--layout", "oval9",
            "--connect", connect, *extra]


@pytest.mark.parametrize(("change", "named"), [
    ({"--layout": "no-such-layout.yaml"}, "--layout"),
    ({"--source": "no-such-video.mp4"}, "--source"),
    ({"--calib": "no-such-calib.yaml"}, "--calib"),
    ({"--truth": "no-such-frames.jsonl"}, "--truth"),
    ({"--model": "no-such-model.onnx"}, "--model"),
])
def test_missing_files_are_named_by_their_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               change: dict[str, str], named: str) -> None:
    folder, _ = folder_and_truth(tmp_path, frames=1)
    calib = write_calibration(tmp_path / "cam.yaml", layout=TableLayout.default())
    flags = {"--calib": str(calib), "--spool": str(tmp_path / "s.sqlite")}
    flags.update(change)
    if "--truth" in change:
        del flags["--calib"]
    argv = edge_args(*[part for flag, value in flags.items() for part in (flag, value)], source=str(folder))
    if "--source" in change:
        argv[argv.index("--source") + 1] = change["--source"]
    if "--layout" in change:
        argv[argv.index("--layout") + 1] = change["--layout"]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert f"field '{named}'" in error and "no such" in error


def test_another_camera_s_missing_files_and_truth_are_named_by_view(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    folder, truth = folder_and_truth(tmp_path, frames=1)
    calib = str(write_calibration(tmp_path / "cam.yaml", layout=TableLayout.default()))
    spool = ("--spool", str(tmp_path / "s.sqlite"))
    for view, message in (([str(folder), "no-such-calib.yaml"], "no such calibration file"),
                          (["no-such-video.mp4", calib], "no such file or folder")):
        assert main(edge_args("--calib", calib, "--view", *view, *spool, source=str(folder))) == 2
        error = capsys.readouterr().err
        assert "field '--view'" in error and message in error
    assert main(edge_args("--truth", str(truth), "--view", str(folder), calib, *spool, source=str(folder))) == 2
    assert "field '--view'" in capsys.readouterr().err
    args = build_parser().parse_args(edge_args("--calib", calib, "--view", str(folder), calib, source=str(folder)))
    views = edge_config(args).views
    assert [(v.source, v.calibration) for v in views] == [(str(folder), Path(calib))]


def test_a_calibration_of_another_layout_is_refused_naming_the_file(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = folder_and_truth(tmp_path, frames=1)
    other = TableLayout.default().model_copy(update={"name": "other"})
    calib = write_calibration(tmp_path / "cam.yaml", layout=other)
    assert main(edge_args("--calib", str(calib), source=str(folder))) == 2
    error = capsys.readouterr().err
    assert str(calib) in error and "field 'layout'" in error and "'other'" in error


def test_vision_without_a_calibration_says_which_flag_is_missing(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    folder, _ = folder_and_truth(tmp_path, frames=1)
    assert main(edge_args(source=str(folder))) == 2
    assert "field '--calib'" in capsys.readouterr().err


@pytest.mark.parametrize("height", ["-5", "0", "20000"])
def test_a_camera_height_out_of_range_is_named_by_its_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           height: str) -> None:
    folder, _ = folder_and_truth(tmp_path, frames=1)
    calib = write_calibration(tmp_path / "cam.yaml", layout=TableLayout.default())
    assert main(edge_args("--calib", str(calib), "--camera-height", height, source=str(folder))) == 2
    assert "field '--camera-height'" in capsys.readouterr().err


def test_an_edge_run_from_truth_publishes_its_events_and_announces_its_replay_endpoint(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, truth = folder_and_truth(tmp_path)
    with Broker("tcp://127.0.0.1:*", "tcp://127.0.0.1:*") as broker, \
            EventSubscriber(broker.backend_endpoint, replay_timeout=0.5, discovery_wait=3.0) as sub:
        # played at its recorded speed (2 s at 10 frames/s): early events the bus drops while the edge's PUB
        # socket connects are replayed from the endpoint its heartbeats announce
        args = build_parser().parse_args(edge_args(
            "--truth", str(truth), "--fps", "10", "--spool", str(tmp_path / "spool.sqlite"),
            "--replay-bind", "tcp://127.0.0.1:*", source=str(folder), connect=broker.frontend_endpoint))
        done: list[int] = []
        thread = threading.Thread(target=lambda: done.append(run_edge(args)))
        thread.start()
        events: list[Event] = []
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (
                not thread.is_alive() and any(isinstance(e, Heartbeat) and e.status == "offline" for e in events)):
            events += sub.poll(0.05)
        thread.join(10)
    assert done == [0]
    derived = [e for e in events if e.type != "heartbeat"]
    assert [(e.type, getattr(e, "zone", None)) for e in derived] == [("zone_chips", "stack_2"),
                                                                    ("zone_chips", "bet_2")]
    beats = [e for e in events if isinstance(e, Heartbeat)]
    assert beats and beats[-1].status == "offline" and beats[0].replay_endpoint is not None
    assert [e.seq for e in events] == list(range(len(events)))
    assert "20 frames captured, 20 analysed, 0 dropped" in capsys.readouterr().out
