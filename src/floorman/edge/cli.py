"""`floorman broker` (the XSUB/XPUB proxy of the event bus) and `floorman keys generate` (CURVE certificates)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from floorman.core.errors import ConfigError
from floorman.edge.broker import Broker, BrokerSecurity
from floorman.edge.bus import ENDPOINT_HELP, check_endpoint
from floorman.edge.keys import generate_keypair, load_allow_list, load_keypair

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


def run_broker(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    """Run the broker until interrupted, terminated (SIGTERM) or until `stop` is set."""
    stopping = stop or threading.Event()
    broker = Broker(args.frontend, args.backend, security=broker_security(args))
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, lambda *_: stopping.set()) if in_main else None
    try:
        try:
            broker.start()
        except OSError as exc:
            raise ConfigError(str(exc), field="--frontend/--backend") from None
        sys.stdout.write(f"broker: edges -> {broker.frontend_endpoint}, consumers <- {broker.backend_endpoint}"
                         f"{' (CURVE)' if broker.security else ''}\n")
        sys.stdout.flush()
        while not stopping.is_set() and not broker.wait(0.2):
            pass
    finally:
        broker.stop()
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    logger.info("broker stopped")
    return 0


def run_keys_generate(args: argparse.Namespace) -> int:
    try:
        public, secret = generate_keypair(args.out, name=args.name)
    except ValueError as exc:
        raise ConfigError(str(exc), field="--name") from None
    sys.stdout.write(f"public: {public}\nsecret: {secret}\n")
    return 0
