"""`floorman broker` and `floorman keys generate`, and the endpoint checks behind their flags."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zmq

from floorman.core.errors import ConfigError
from floorman.edge.bus import check_endpoint
from floorman.edge.cli import register, run_broker
from floorman.edge.keys import load_allow_list, load_keypair, load_public_key


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="floorman")
    register(root.add_subparsers(dest="command"))
    return root


@pytest.mark.parametrize(("value", "bind", "error"), [
    ("tcp://*:5550", True, None),
    ("tcp://127.0.0.1:*", True, None),
    ("tcp://0.0.0.0:5550", True, None),
    ("tcp://[::1]:5551", False, None),
    ("tcp://broker.club.local:5551", False, None),
    ("ipc:///tmp/floorman.sock", True, None),
    ("inproc://bus", False, None),
    ("tcp://*:5550", False, "expected a connect endpoint"),
    ("tcp://127.0.0.1:*", False, "expected a connect endpoint"),
    ("tcp://127.0.0.1", True, "expected a bind endpoint"),
    ("tcp://127.0.0.1:0", True, "got 'tcp://127.0.0.1:0'"),
    ("tcp://127.0.0.1:70000", True, "got 'tcp://127.0.0.1:70000'"),
    ("127.0.0.1:5550", True, "tcp://HOST:PORT, ipc://PATH or inproc://NAME"),
    ("udp://127.0.0.1:5550", True, "got 'udp://127.0.0.1:5550'"),
    ("tcp://bad host:5550", True, "got 'tcp://bad host:5550'"),
    ("ipc://", True, "got 'ipc://'"),
])
def test_endpoints(value: str, bind: bool, error: str | None) -> None:
    if error is None:
        assert check_endpoint(value, bind=bind) == value
    else:
        with pytest.raises(ValueError, match=error.replace("*", r"\*").replace("[", r"\[")):
            check_endpoint(value, bind=bind, name="--frontend")


@pytest.mark.parametrize("flag", ["--frontend", "--backend"])
def test_a_bad_endpoint_flag_is_named_with_its_value(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parser().parse_args(["broker", flag, "tcp://localhost:port"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2
    assert f"argument {flag}: expected a bind endpoint" in err
    assert "got 'tcp://localhost:port'" in err


def test_keys_generate_writes_a_zeromq_certificate_pair(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args(["keys", "generate", "--out", str(tmp_path / "certs"), "--name", "edge-t1"])
    assert args.handler(args) == 0
    public, secret = tmp_path / "certs" / "edge-t1.key", tmp_path / "certs" / "edge-t1.key_secret"
    assert f"public: {public}" in capsys.readouterr().out
    pair = load_keypair(secret)
    assert load_public_key(public) == pair.public
    assert zmq.curve_public(pair.secret) == pair.public
    assert "secret-key" not in public.read_text()
    assert secret.stat().st_mode & 0o077 == 0
    assert load_allow_list(tmp_path / "certs") == {pair.public}
    with pytest.raises(ConfigError, match="refusing to overwrite"):
        args.handler(args)


def test_key_files_that_are_wrong_are_named(tmp_path: Path) -> None:
    (tmp_path / "broken.key").write_text("public-key = \"short\"\n")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"broken\.key.*40-character"):
        load_public_key(tmp_path / "broken.key")
    with pytest.raises(ConfigError, match=r"empty: no public certificate"):
        load_allow_list(tmp_path / "empty")
    with pytest.raises(ConfigError, match=r"missing\.key_secret: not a readable ZeroMQ certificate"):
        load_keypair(tmp_path / "missing.key_secret")


def test_curve_needs_both_keys_and_allow(tmp_path: Path) -> None:
    args = parser().parse_args(["broker", "--keys", str(tmp_path / "b.key_secret")])
    with pytest.raises(ConfigError, match="field '--allow'"):
        run_broker(args)


def test_the_broker_command_forwards_events_and_stops_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args(["broker", "--frontend", "tcp://127.0.0.1:*", "--backend", "tcp://127.0.0.1:*"])
    stop = threading.Event()
    thread = threading.Thread(target=run_broker, args=(args,), kwargs={"stop": stop})
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while "broker:" not in (out := capsys.readouterr().out) and time.monotonic() < deadline:
            time.sleep(0.02)
        front, back = out.split("edges -> ")[1].split(", consumers <- ")
        received = _forwarded(front.strip(), back.strip())
    finally:
        stop.set()
        thread.join(5)
    assert not thread.is_alive()
    assert received == [b"floorman/t1/tap", b"{}"]


def _forwarded(front: str, back: str) -> list[bytes]:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    pub, sub = context.socket(zmq.PUB), context.socket(zmq.SUB)
    for sock in (pub, sub):
        sock.linger = 0
    pub.connect(front)
    sub.subscribe(b"floorman/t1/")
    sub.connect(back)
    received: list[bytes] = []
    deadline = time.monotonic() + 5
    while not received and time.monotonic() < deadline:
        pub.send_multipart([b"floorman/t1/tap", b"{}"])
        if sub.poll(50):
            received = sub.recv_multipart()
    pub.close()
    sub.close()
    context.term()
    return received


_MAIN = """
import argparse, sys
from floorman.edge.cli import register
parser = argparse.ArgumentParser(prog="floorman")
register(parser.add_subparsers(dest="command"))
args = parser.parse_args(sys.argv[1:])
sys.exit(args.handler(args))
"""


def test_the_broker_command_stops_cleanly_on_sigterm() -> None:
    command = [sys.executable, "-c", _MAIN, "broker", "--frontend", "tcp://127.0.0.1:*", "--backend",
               "tcp://127.0.0.1:*"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            assert process.stdout.readline().startswith("broker: edges -> tcp://127.0.0.1:")
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=10) == 0
        finally:
            if process.poll() is None:
                process.kill()
