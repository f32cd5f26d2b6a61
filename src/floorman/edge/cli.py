"""`floorman broker` (the XSUB/XPUB proxy of the event bus), `floorman edge` (the edge agent of one camera) and
`floorman keys generate` (CURVE certificates)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from floorman.core.errors import ConfigError, flag_error
from floorman.edge.agent import EdgeConfig, ViewConfig, build_agent
from floorman.edge.broker import Broker, BrokerSecurity
from floorman.edge.bus import ENDPOINT_HELP, check_endpoint
from floorman.edge.keys import generate_keypair, load_allow_list, load_keypair
from floorman.edge.publisher import PublisherSecurity

logger = logging.getLogger(__name__)


def _endpoint_type(*, bind: bool) -> Callable[[str], str]:
    def parse(value: str) -> str:
        try:
            return check_endpoint(value, bind=bind)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "bind endpoint" if bind else "endpoint"
    return parse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `floorman broker` and `floorman keys`."""
    broker = subparsers.add_parser(
        "broker", help="run the event bus broker (XSUB/XPUB proxy between edges and consumers)",
        description="Forward every event from the edges (PUB sockets connected to --frontend) to the consumers "
        "(SUB sockets connected to --backend, subscribed by topic prefix floorman/<table>/). With --keys and "
        "--allow, both sides use CURVE: only edges whose public certificate is in --allow may publish, and "
        "consumers need the broker's public key (and a certificate in --consumers, when given). Runs until "
        "interrupted.")
    bind = _endpoint_type(bind=True)
    broker.add_argument("--frontend", type=bind, default="tcp://*:5550", metavar="ENDPOINT",
                        help=f"where edges connect ({ENDPOINT_HELP}; default: %(default)s)")
    broker.add_argument("--backend", type=bind, default="tcp://*:5551", metavar="ENDPOINT",
                        help=f"where consumers connect ({ENDPOINT_HELP}; default: %(default)s)")
    broker.add_argument("--keys", type=Path, metavar="FILE.key_secret",
                        help="the broker's secret certificate (turns CURVE on; needs --allow)")
    broker.add_argument("--allow", type=Path, metavar="DIR",
                        help="folder of the public certificates (*.key) of the edges allowed to publish")
    broker.add_argument("--consumers", type=Path, metavar="DIR",
                        help="folder of the public certificates of the consumers allowed to subscribe "
                        "(default: any consumer that knows the broker's public key)")
    broker.set_defaults(handler=run_broker)

    register_edge(subparsers)

    keys = subparsers.add_parser("keys", help="CURVE certificates for the event bus")
    sub = keys.add_subparsers(dest="keys_command", metavar="SUBCOMMAND", required=True)
    generate = sub.add_parser(
        "generate", help="write a CURVE keypair in ZeroMQ's certificate format",
        description="Write NAME.key (public: copy it into the broker's --allow folder, or to the consumers) and "
        "NAME.key_secret (secret: keep it on this machine).")
    generate.add_argument("--out", type=Path, required=True, metavar="DIR", help="folder to write into")
    generate.add_argument("--name", default="floorman", help="certificate name (default: %(default)s)")
    generate.set_defaults(handler=run_keys_generate)


def broker_security(args: argparse.Namespace) -> BrokerSecurity | None:
    """The CURVE settings named by --keys/--allow/--consumers, or None when CURVE is off."""
    if args.keys is None and args.allow is None and args.consumers is None:
        return None
    if args.keys is None or args.allow is None:
        missing = "--keys" if args.keys is None else "--allow"
        raise ConfigError("CURVE needs both --keys (the broker's secret certificate) and --allow (the edges' "
                          "public certificates)", field=missing)
    consumers = None if args.consumers is None else load_allow_list(args.consumers)
    return BrokerSecurity(keys=load_keypair(args.keys), edge_keys=load_allow_list(args.allow),
                          consumer_keys=consumers)


@contextlib.contextmanager
def terminate_sets(stopping: threading.Event) -> Iterator[None]:
    """Inside: SIGTERM sets `stopping` (in the main thread only, where Python handles signals)."""
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopping.set()) if in_main else None
    try:
        yield
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


class Service(Protocol):
    def start(self) -> object: ...

    def stop(self) -> None: ...


@contextlib.contextmanager
def serving(service: Service, stopping: threading.Event, *, field: str) -> Iterator[None]:
    """Inside: `service` started (a bind error is a ConfigError on `field`), SIGTERM sets `stopping`; stopped
    on the way out, whatever happens."""
    with terminate_sets(stopping), contextlib.ExitStack() as cleanup:
        cleanup.callback(service.stop)
        try:
            service.start()
        except OSError as exc:
            raise ConfigError(str(exc), field=field) from None
        yield


def run_broker(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Run the broker until interrupted, terminated (SIGTERM) or until `stop` is set."""
    stopping = stop or threading.Event()
    broker = Broker(args.frontend, args.backend, security=broker_security(args))
    with serving(broker, stopping, field="--frontend/--backend"):
        sys.stdout.write(f"broker: edges -> {broker.frontend_endpoint}, consumers <- {broker.backend_endpoint}"
                         f"{' (CURVE)' if broker.security else ''}\n")
        sys.stdout.flush()
        while not stopping.is_set() and not broker.wait(0.2):
            pass
    logger.info("broker stopped")
    return 0


def run_keys_generate(args: argparse.Namespace) -> int:
    try:
        public, secret = generate_keypair(args.out, name=args.name)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--name") from None
    sys.stdout.write(f"public: {public}\nsecret: {secret}\n")
    return 0


def register_edge(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    edge = subparsers.add_parser(
        "edge", help="run the edge agent of one camera: frames in, events out to the broker",
        description="Capture frames from SRC (video file, rtsp:// or http:// stream, USB camera index, or folder "
        "of images), build what the camera sees (the ONNX detector, woken by motion, mapped to table mm with the "
        "calibration; or, with --truth, a simulator's frames.jsonl), derive events and publish them to the "
        "broker's frontend. Heartbeats announce the replay endpoint, which also serves evidence JPEGs by frame "
        "number. Runs until interrupted, or until a file source (without --loop) is fully published.")
    edge.add_argument("--table", required=True, help="table id")
    edge.add_argument("--camera", required=True, help="camera id")
    edge.add_argument("--source", required=True, metavar="SRC", help="video file, stream URL, camera index or "
                      "image folder")
    edge.add_argument("--layout", required=True, metavar="L", help="table layout YAML or bundled layout name")
    edge.add_argument("--calib", type=Path, metavar="K", help="camera calibration YAML (floorman calibrate)")
    edge.add_argument("--model", type=Path, metavar="M", help="ONNX detector (default: the shipped INT8 model)")
    edge.add_argument("--chipset", type=Path, help="the club's chip set YAML (default: the bundled one)")
    edge.add_argument("--camera-height", type=float, metavar="MM",
                      help="camera height above the felt in mm (stack counts under a straight-down camera; "
                      "default: the calibration file's, if measured)")
    edge.add_argument("--view", nargs=2, action="append", default=[], metavar=("SRC", "CALIB"),
                      help="another camera of the same table and its calibration (repeatable): read in step with "
                      "--source (one frame rate), each stack counted from every camera's view of it "
                      "(`vision.fusion`); its camera height is its calibration file's")
    edge.add_argument("--connect", required=True, type=_endpoint_type(bind=False), metavar="tcp://HOST:PORT",
                      help="the broker's frontend")
    edge.add_argument("--truth", type=Path, metavar="FRAMES", help="derive from a simulator frames.jsonl instead "
                      "of vision (frame numbers follow the source)")
    edge.add_argument("--replay-bind", type=_endpoint_type(bind=True), default="tcp://*:*", metavar="ENDPOINT",
                      help="where to answer replay and evidence requests (default: %(default)s, any free port)")
    edge.add_argument("--advertise", type=_endpoint_type(bind=False), metavar="ENDPOINT",
                      help="replay endpoint announced in heartbeats (default: the bound one)")
    edge.add_argument("--spool", default=None, metavar="PATH",
                      help="SQLite spool of the published events (default: floorman-edge-TABLE-CAMERA.sqlite)")
    edge.add_argument("--loop", action="store_true", help="loop a video file or image folder")
    pace = edge.add_mutually_exclusive_group()
    pace.add_argument("--realtime", dest="realtime", action="store_true", default=True,
                      help="play files at their recorded speed, dropping frames when behind (default)")
    pace.add_argument("--fast", dest="realtime", action="store_false", help="analyse files as fast as possible")
    edge.add_argument("--fps", type=float, default=30.0, help="frame rate of an image folder (default: 30)")
    edge.add_argument("--change", type=int, default=12, metavar="LEVEL",
                      help="grey-level change (0..255) that wakes the detector where it happens (0: the whole "
                      "frame every frame; default: 12)")
    edge.add_argument("--evidence-mb", type=float, default=64.0, help="evidence buffer size in MiB (default: 64)")
    edge.add_argument("--keys", type=Path, metavar="FILE.key_secret", help="this edge's secret certificate "
                      "(turns CURVE on; needs --broker-key)")
    edge.add_argument("--broker-key", type=Path, metavar="FILE.key", help="the broker's public certificate")
    edge.add_argument("--consumers", type=Path, metavar="DIR", help="public certificates of the consumers "
                      "allowed to ask for replays and evidence (default: any that knows this edge's key)")
    edge.set_defaults(handler=run_edge)


def edge_config(args: argparse.Namespace) -> EdgeConfig:
    """The agent's configuration from the command line; ConfigError names the flag that is wrong."""
    from pydantic import ValidationError

    spool = args.spool or f"floorman-edge-{args.table}-{args.camera}.sqlite"
    try:
        return EdgeConfig(table_id=args.table, camera_id=args.camera, source=args.source, layout=args.layout,
                          calibration=args.calib, model=args.model, chipset=args.chipset,
                          camera_height_mm=args.camera_height, truth=args.truth, connect=args.connect,
                          replay_bind=args.replay_bind, advertise=args.advertise, spool=spool, loop=args.loop,
                          realtime=args.realtime, fps=args.fps, change_threshold=args.change,
                          evidence_mb=args.evidence_mb,
                          views=[ViewConfig(source=source, calibration=Path(calib)) for source, calib in args.view])
    except ValidationError as exc:
        raise flag_error(exc, flags={"table_id": "--table", "camera_id": "--camera", "change_threshold": "--change",
                                     "camera_height_mm": "--camera-height"}) from None


def edge_security(args: argparse.Namespace) -> PublisherSecurity | None:
    if args.keys is None and args.broker_key is None:
        return None
    if args.keys is None or args.broker_key is None:
        raise ConfigError("CURVE needs both --keys (this edge's secret certificate) and --broker-key",
                          field="--keys" if args.keys is None else "--broker-key")
    return PublisherSecurity.from_files(keys=args.keys, broker=args.broker_key, consumers=args.consumers)


def run_edge(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Run the edge agent until interrupted, terminated, `stop` is set or a file source is done."""
    stopping = stop or threading.Event()
    agent = build_agent(edge_config(args), security=edge_security(args))
    with serving(agent, stopping, field="--replay-bind"):
        sys.stdout.write(f"edge {args.table}/{args.camera}: {args.source} -> {args.connect}; replays and evidence "
                         f"on {agent.publisher.advertised}\n")
        sys.stdout.flush()
        agent.run(stopping)
    stats = agent.pipeline.stats
    sys.stdout.write(f"edge {args.table}/{args.camera}: {stats.captured} frames captured, {stats.analysed} "
                     f"analysed, {stats.dropped} dropped, {stats.events} events published\n")
    return 0
