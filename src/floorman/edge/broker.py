"""The broker: an XSUB/XPUB proxy between the edges (PUB, on the frontend) and the consumers (SUB, on the backend).

It is stateless: events are numbered and spooled by the edges, so restarting the broker loses nothing that a
subscriber cannot ask again. With CURVE keys, both sides are CURVE servers with the broker's keypair; a ZAP
authenticator lets onto the frontend only the edges whose public keys are in the allow-list, and onto the
backend only the consumers in theirs (or any consumer that knows the broker's public key, when no consumer
allow-list is given). A peer that fails the handshake gets nothing.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import zmq
from zmq.auth.thread import ThreadAuthenticator

from floorman.edge.bus import check_endpoint
from floorman.edge.keys import AllowList, KeyPair, close_context, make_server

logger = logging.getLogger(__name__)

EDGE_DOMAIN = "floorman-edges"
CONSUMER_DOMAIN = "floorman-consumers"
HWM = 100_000  # messages queued per peer before the broker drops (a consumer then fills the gap by replay)


@dataclass(frozen=True)
class BrokerSecurity:
    """CURVE settings of a broker: its keypair, the edges allowed to publish, the consumers allowed to read."""

    keys: KeyPair
    edge_keys: frozenset[bytes]
    consumer_keys: frozenset[bytes] | None = None

    def __post_init__(self) -> None:
        if not self.edge_keys:
            raise ValueError("expected at least one edge public key in the allow-list, got none")


class Broker:
    """XSUB (frontend) / XPUB (backend) proxy in a background thread; `stop()` ends it cleanly."""

    def __init__(self, frontend: str, backend: str, *, security: BrokerSecurity | None = None) -> None:
        self._frontend_spec = check_endpoint(frontend, bind=True, name="frontend")
        self._backend_spec = check_endpoint(backend, bind=True, name="backend")
        self.security = security
        self.frontend_endpoint = ""
        self.backend_endpoint = ""
        self._context: zmq.Context[zmq.Socket[bytes]] | None = None
        self._auth: ThreadAuthenticator | None = None
        self._thread: threading.Thread | None = None
        self._control: zmq.Socket[bytes] | None = None

    def start(self) -> Broker:
        """Bind both sides and start proxying; the bound endpoints (free ports resolved) are then set."""
        if self._thread is not None:
            raise RuntimeError("the broker is already running")
        context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        self._context = context
        if self.security is not None:
            self._auth = ThreadAuthenticator(context)
            self._auth.start()
            self._auth.configure_curve_callback(EDGE_DOMAIN, AllowList(self.security.edge_keys, side="broker frontend"))
            self._auth.configure_curve_callback(
                CONSUMER_DOMAIN, AllowList(self.security.consumer_keys, side="broker backend"))
        xsub = context.socket(zmq.XSUB)
        xpub = context.socket(zmq.XPUB)
        control_in = context.socket(zmq.PAIR)
        self._control = context.socket(zmq.PAIR)
        for sock in (xsub, xpub, control_in, self._control):
            sock.linger = 0
        xsub.rcvhwm = xpub.sndhwm = HWM
        try:
            if self.security is not None:
                make_server(xsub, self.security.keys, domain=EDGE_DOMAIN)
                make_server(xpub, self.security.keys, domain=CONSUMER_DOMAIN)
            xsub.bind(self._frontend_spec)
            xpub.bind(self._backend_spec)
        except zmq.ZMQError as exc:
            for sock in (xsub, xpub, control_in, self._control):
                sock.close()
            self._shutdown_context()
            raise OSError(f"broker cannot bind ({self._frontend_spec}, {self._backend_spec}): {exc}") from None
        self.frontend_endpoint = str(xsub.get_string(zmq.LAST_ENDPOINT))
        self.backend_endpoint = str(xpub.get_string(zmq.LAST_ENDPOINT))
        control_address = f"inproc://floorman-broker-control-{id(self)}"
        control_in.bind(control_address)
        self._control.connect(control_address)
        self._thread = threading.Thread(target=self._run, kwargs={"xsub": xsub, "xpub": xpub, "control": control_in},
                                        name="floorman-broker", daemon=True)
        self._thread.start()
        logger.info("broker: edges -> %s, consumers <- %s%s", self.frontend_endpoint, self.backend_endpoint,
                    " (CURVE)" if self.security else "")
        return self

    @staticmethod
    def _run(*, xsub: zmq.Socket[bytes], xpub: zmq.Socket[bytes], control: zmq.Socket[bytes]) -> None:
        try:
            zmq.proxy_steerable(xsub, xpub, None, control)
        except zmq.ZMQError as exc:
            if exc.errno != zmq.ETERM:
                logger.error("broker proxy stopped: %s", exc)
        finally:
            for sock in (xsub, xpub, control):
                sock.close()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the proxy ends (or `timeout` seconds); True when it has ended."""
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the proxy, close every socket and free the ports."""
        if self._thread is not None and self._control is not None:
            self._control.send(b"TERMINATE")
            self._thread.join(timeout)
            if self._thread.is_alive():
                logger.error("broker proxy did not stop within %.1f s", timeout)
        if self._control is not None:
            self._control.close()
            self._control = None
        self._thread = None
        self._shutdown_context()

    def _shutdown_context(self) -> None:
        close_context(self._context, self._auth)
        self._context, self._auth = None, None

    def __enter__(self) -> Broker:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
