"""`floorman demo`: a bundled simulated table through the live pipeline, table -> edge -> bus -> rules.

1. The simulator renders a scenario: video.mp4, frames.jsonl (per-frame truth) and truth.jsonl (events and the
   alerts a correct checker raises), plus the annotated preview.mp4.
2. On loopback: a broker, the rules service (`floorman.serve.RulesService`: gap-filling subscriber, checker,
   sanctions) and an edge agent (`floorman.edge.agent`) playing the video. The edge's table state comes from the
   simulator's per-frame truth (`--truth`): the shipped detector is not yet accurate enough to drive the rules
   (see the README). With --vision it comes from the edge's own vision (the shipped detector and recognisers),
   the camera calibrated first on the render's calibration frame as `floorman calibrate` calibrates a real one.
   The tournament clock's `blinds_level` and the floor keypad's `declaration` events, which no camera can see, are
   published by a second publisher when the video reaches them.
3. Every alert is printed as it arrives, then scored against the scenario's expected alerts.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from floorman.core.alerts import Alert, ExpectedAlert
from floorman.core.events import BlindsLevel, Declaration, EventBase
from floorman.datasets.preview import DEFAULT_PREVIEW, write_preview
from floorman.datasets.scenario import load_scenario
from floorman.datasets.scenario_render import CALIBRATION_FILE, run_scenario
from floorman.datasets.truth import read_truth
from floorman.edge.agent import EdgeConfig, build_agent
from floorman.edge.broker import Broker
from floorman.edge.bus import PublisherKey
from floorman.edge.publisher import EventPublisher
from floorman.edge.spool import Spool
from floorman.rules.rulebook import load_rulebook
from floorman.rules.service import CheckerService
from floorman.rules.truth_check import RaisedAlert, TruthReport, score
from floorman.rules.truth_io import report_text
from floorman.serve import RulesService

LOOPBACK = "tcp://127.0.0.1:*"
CAMERA_ID = "cam1"
DRAIN_S = 2.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = subparsers.add_parser("demo", help="a bundled simulated table through edge, bus and rules",
                                 description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--out", type=Path, default=Path("out/demo"), help="output folder (default: out/demo)")
    demo.add_argument("--scenario", default=DEFAULT_PREVIEW, help=f"bundled scenario (default: {DEFAULT_PREVIEW})")
    demo.add_argument("--no-preview", action="store_true", help="skip the annotated preview video")
    demo.add_argument("--vision", action="store_true",
                      help="the edge reads the video with the shipped detector and recognisers, calibrated on the "
                      "render's calibration frame (its ArUco markers, as `floorman calibrate` does), instead of the "
                      "simulator's per-frame truth: the whole path a real table takes, slower, and short of the "
                      "truth where the README's from-video figures say")
    demo.set_defaults(handler=run_demo)


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _alert_line(alert: Alert) -> str:
    seat = "-" if alert.seat is None else str(alert.seat)
    suggested = alert.suggested_sanction
    sanction = "" if suggested is None else f" [sanction: {suggested.name_en or 'left to the director'}]"
    when = alert.raised_at if alert.raised_at is not None else alert.evidence.t_end
    return (f"  ALERT {alert.rule.value} seat {seat} at {when:.1f} s (confidence {alert.confidence:.2f}"
            f"{', provisional' if alert.provisional else ''}): {alert.explanation.en}{sanction}")


def run_demo(args: argparse.Namespace) -> int:
    out: Path = args.out
    name: str = args.scenario
    if not getattr(args, "verbose", False):
        logging.getLogger("floorman").setLevel(logging.WARNING)  # the alerts and the summary are the output
    spec = load_scenario(name).spec
    if not args.no_preview:
        preview = write_preview(out, scenario=name)
        _say(f"wrote {preview.path}: {preview.name}, {preview.frames} frames, {preview.seconds:.1f} s")
    folder = out / name
    run = run_scenario(name, folder, overwrite=True)
    _say(f"rendered {run.name}: {run.frames} frames at {run.size[0]}x{run.size[1]}, {run.events} truth events, "
         f"{run.expected_alerts} expected alerts -> {folder}")
    records = read_truth(folder / "truth.jsonl")
    expected = [r for r in records if isinstance(r, ExpectedAlert)]
    feeds = [r for r in records if isinstance(r, BlindsLevel | Declaration)]
    calibration = _calibrate(folder, layout=spec.layout) if args.vision else None
    raised, delivered = _run_live(folder, table=spec.table_id, rulebook=spec.rulebook, layout=spec.layout, feeds=feeds,
                                  calibration=calibration)
    report = score(raised, expected, rulebook=spec.rulebook, events=delivered)
    _print_report(report, source=f"{name} live{' (vision)' if args.vision else ''}")
    return 0


def _calibrate(folder: Path, *, layout: str) -> Path:
    """The camera calibrated on the render's calibration frame (the empty table's ArUco markers), as `floorman
    calibrate` calibrates a real camera; written to FOLDER/calibration.yaml."""
    from floorman.vision.calibration import calibrate_from_markers
    from floorman.vision.cli import load_layout, read_image

    frame = folder / CALIBRATION_FILE
    calibration = calibrate_from_markers(read_image(frame), layout=load_layout(layout), camera_id=CAMERA_ID)
    path = folder / "calibration.yaml"
    calibration.save(path)
    error = calibration.reprojection_error
    markers = len({p.marker_id for p in calibration.points if p.marker_id is not None})
    _say(f"calibrated {CAMERA_ID} on {frame} ({markers} markers): reprojection error mean {error.mean_mm:.2f} mm, "
         f"max {error.max_mm:.2f} mm -> {path}")
    return path


def _run_live(folder: Path, *, table: str, rulebook: str, layout: str, feeds: Sequence[EventBase],
              calibration: Path | None = None) -> tuple[list[RaisedAlert], int]:
    """The scenario's video through an edge agent, the broker and the rules service on loopback; the edge's table
    state from the simulator's per-frame truth, or with `calibration` from its vision."""
    latest: dict[str, Alert] = {}
    core = CheckerService(rulebook=load_rulebook(rulebook), tournament_id="demo")
    with Broker(LOOPBACK, LOOPBACK) as broker:
        service = RulesService(core=core, subscribe=broker.backend_endpoint, publish=broker.frontend_endpoint,
                               table=table).start()
        keypad = EventPublisher(PublisherKey(table, "keypad"), broker=broker.frontend_endpoint, replay=LOOPBACK,
                                spool=Spool(":memory:")).start()
        agent = build_agent(EdgeConfig(table_id=table, camera_id=CAMERA_ID, source=str(folder / "video.mp4"),
                                       layout=layout, truth=None if calibration else folder / "frames.jsonl",
                                       calibration=calibration, connect=broker.frontend_endpoint,
                                       replay_bind=LOOPBACK, realtime=False))
        _say(f"broker {broker.frontend_endpoint} -> {broker.backend_endpoint}; rules ({rulebook}) and edge "
             f"{table}/{CAMERA_ID} ({'vision' if calibration else 'simulator truth'}) connected")
        pending = sorted(feeds, key=lambda e: e.t)
        # The clock's first level must reach the rules before the first hand: publish it, then wait until the
        # service has it (an event the bus drops while the sockets connect is replayed on the next heartbeat).
        opening = [e for e in pending if e.t <= 0.0]
        pending = pending[len(opening):]
        for event in opening:
            keypad.publish(event.model_copy(update={"camera_id": "keypad"}))
        deadline = time.monotonic() + 10.0
        while service.stats.bus.delivered < len(opening) and time.monotonic() < deadline:
            service.step(0.05)
        stop = threading.Event()
        agent.start()
        started = time.perf_counter()
        edge = threading.Thread(target=agent.run, args=(stop,), name="edge")
        edge.start()
        drain_until = None
        try:
            while drain_until is None or time.monotonic() < drain_until:
                while pending and pending[0].t <= agent.pipeline.media_time + 0.05:
                    event = pending.pop(0)
                    keypad.publish(event.model_copy(update={"camera_id": "keypad"}))
                for alert in service.step(0.05):
                    if alert.alert_id not in latest and alert.confidence > 0:
                        _say(_alert_line(alert))
                    latest[alert.alert_id] = alert
                if drain_until is None and not edge.is_alive():
                    drain_until = time.monotonic() + DRAIN_S
        finally:
            stop.set()
            edge.join(10)
            agent.stop()
            keypad.stop()
            stats = service.stats
            service.close()
    counts = agent.pipeline.stats
    _say(f"edge: {counts.analysed} of {counts.captured} frames analysed in {time.perf_counter() - started:.1f} s, "
         f"{agent.publisher.stats.published} events published; rules: {stats.bus.delivered} events received "
         f"({stats.bus.replayed} by replay, {stats.bus.lost} lost)")
    raised = [RaisedAlert(alert=a, raised_at=a.raised_at or a.evidence.t_end) for a in latest.values()
              if a.confidence > 0]
    return raised, stats.bus.delivered


def _print_report(report: TruthReport, *, source: str) -> None:
    met = sum(1 for o in report.outcomes if o.met_by is not None)
    _say(f"expected alerts met: {met}/{len(report.outcomes)}; unexpected: {len(report.unexpected)} "
         f"(precision {report.precision:.2f}, recall {report.recall:.2f})")
    sys.stdout.write(report_text(report, source=source))
