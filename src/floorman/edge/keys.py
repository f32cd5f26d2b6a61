"""CURVE keys in ZeroMQ's certificate format (`zmq.auth.create_certificates`), and how sockets use them.

`NAME.key` holds the public key (hand it out: the broker's allow-list is a folder of edges' public certs),
`NAME.key_secret` holds both keys (keep it on the machine that owns it).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from floorman.core.errors import ConfigError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class KeyPair:
    """A CURVE keypair, Z85-encoded (40 characters each)."""

    public: bytes
    secret: bytes

    def __post_init__(self) -> None:
        for name, key in (("public", self.public), ("secret", self.secret)):
            if len(key) != 40:
                raise ValueError(f"expected a 40-character Z85 {name} key, got {len(key)} characters")

    def __repr__(self) -> str:
        return f"KeyPair(public={self.public!r}, secret=<hidden>)"


def generate_keypair(out_dir: str | Path, *, name: str) -> tuple[Path, Path]:
    """Write NAME.key and NAME.key_secret into `out_dir` (created if needed); return (public, secret) paths."""
    if not name or "/" in name or name.startswith("."):
        raise ValueError(f"expected a plain certificate name, got {name!r}")
    out = Path(out_dir)
    public, secret = out / f"{name}.key", out / f"{name}.key_secret"
    for path in (public, secret):
        if path.exists():
            raise ConfigError("refusing to overwrite an existing certificate", source=str(path))
    try:
        out.mkdir(parents=True, exist_ok=True)
        public_file, secret_file = zmq.auth.create_certificates(out, name)
        Path(secret_file).chmod(0o600)
    except OSError as exc:
        raise ConfigError(f"cannot write the certificates: {exc.strerror or exc}", source=str(out)) from None
    return Path(public_file), Path(secret_file)


def _load(path: Path) -> tuple[bytes, bytes | None]:
    try:
        public, secret = zmq.auth.load_certificate(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"not a readable ZeroMQ certificate: {exc}", source=str(path)) from None
    if len(public) != 40 or (secret is not None and len(secret) != 40):
        raise ConfigError("field 'public-key'/'secret-key': expected 40-character Z85 keys", source=str(path))
    return public, secret


def load_keypair(path: str | Path) -> KeyPair:
    """The keypair of a secret certificate (NAME.key_secret)."""
    public, secret = _load(Path(path))
    if secret is None:
        raise ConfigError("expected a secret certificate (NAME.key_secret), found only a public key",
                          source=str(path), field="secret-key")
    return KeyPair(public=public, secret=secret)


def load_public_key(path: str | Path) -> bytes:
    """The public key of a certificate (public or secret)."""
    return _load(Path(path))[0]


def load_allow_list(directory: str | Path) -> frozenset[bytes]:
    """The public keys of every `*.key` certificate in a folder; ConfigError when there is none."""
    folder = Path(directory)
    if not folder.is_dir():
        raise ConfigError("expected a folder of public certificates (*.key)", source=str(folder))
    keys = frozenset(load_public_key(path) for path in sorted(folder.glob("*.key")))
    if not keys:
        raise ConfigError("no public certificate (*.key) in the allow-list folder", source=str(folder))
    return keys


def make_server(socket: zmq.Socket[bytes], keys: KeyPair, *, domain: str | None = None) -> None:
    """Make `socket` a CURVE server (before bind); `domain` is the ZAP domain its clients are checked in."""
    socket.curve_secretkey = keys.secret
    socket.curve_publickey = keys.public
    socket.curve_server = True
    if domain is not None:
        socket.zap_domain = domain.encode()


def make_client(socket: zmq.Socket[bytes], keys: KeyPair, *, server_key: bytes) -> None:
    """Make `socket` a CURVE client of the server with public key `server_key` (before connect)."""
    socket.curve_secretkey = keys.secret
    socket.curve_publickey = keys.public
    socket.curve_serverkey = server_key


class AllowList:
    """ZAP credentials provider (`ThreadAuthenticator.configure_curve_callback`): a CURVE client is let in when
    its public key is in `keys` (None: any client that completes the handshake, i.e. knows the server's key)."""

    def __init__(self, keys: frozenset[bytes] | None, *, side: str) -> None:
        self.keys = keys
        self.side = side

    def callback(self, domain: str, key: bytes) -> bool:
        allowed = self.keys is None or key in self.keys
        if not allowed:
            logger.warning("%s: refused a peer with CURVE key %s (domain %s)", self.side, key, domain)
        return allowed


def close_context(context: zmq.Context[zmq.Socket[bytes]] | None, auth: ThreadAuthenticator | None) -> None:
    """Stop a ZAP authenticator (if any), then terminate its context (if any)."""
    if auth is not None:
        auth.stop()
    if context is not None:
        context.term()
