"""A file of the edge's table states for one scenario video, so that the derivation can be re-scored without
running the vision again (`python -m floorman.evaluation --vision C --states NAME`).

JSON lines: the first line is a header naming what the states were made from (the video's size and
modification time, the detector's and the calibration's SHA-256, and a SHA-256 of the vision's own code and data:
`floorman.vision` with its card classifier and templates, and the edge modules that build states from frames),
each further line one `TableState`. A file whose header does not match the inputs of the run at hand is not
read: the states are made again and the file replaced (written beside it first, then renamed, so an interrupted
run never leaves half a file). A change to the recognisers thus remakes the states instead of scoring stale ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from floorman.core.errors import ConfigError
from floorman.core.table_state import SeenButton, SeenCard, SeenChips, SeenHand, TableState

logger = logging.getLogger(__name__)

FORMAT = "floorman-table-states/1"


class ViewHeader(BaseModel):
    """Another camera's video fused with the first's (`--view`), as a states header names it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    video: str  # its folder and file name
    video_bytes: int
    video_mtime_ns: int
    calibration_sha256: str


class StatesHeader(BaseModel):
    """What a states file was made from (with `views`: the first camera's states fused with other cameras')."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    format: str = FORMAT
    video: str
    video_bytes: int
    video_mtime_ns: int
    model_sha256: str
    calibration_sha256: str
    vision_sha256: str = ""  # files of session 4 had none: they are made again
    views: tuple[ViewHeader, ...] = ()


def digest(path: Path) -> str:
    sha = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


_PACKAGE = Path(__file__).resolve().parent.parent
VISION_SOURCES = ("vision", "edge/agent.py", "edge/builders.py", "edge/gate.py", "core/table_state.py",
                  "core/cards.py", "core/card_patch.py", "core/chips.py", "core/geometry.py", "core/layout.py",
                  "core/stack_patch.py", "core/chip_sides.py", "core/chip_box_strips.py",
                  "core/data")
"""What turns a frame into a `TableState` (relative to the package): its code and data files (the core modules the
vision imports among them: a change to the geometry or the chip set reads frames otherwise)."""


def vision_digest(root: Path = _PACKAGE) -> str:
    """SHA-256 over the names and contents of the `VISION_SOURCES` files (folders: every file below them,
    compiled caches aside)."""
    files: list[Path] = []
    for name in VISION_SOURCES:
        path = root / name
        files += sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
            if path.is_dir() else [path]
    sha = hashlib.sha256()
    for path in files:
        sha.update(path.relative_to(root).as_posix().encode() + b"\0")
        sha.update(path.read_bytes())
    return sha.hexdigest()


def header_for(video: Path, *, model: Path, calibration: Path,
               views: Sequence[tuple[Path, Path]] = ()) -> StatesHeader:
    """The header of states made from `video` (with `views`: fused with each other camera's (video, calibration))."""
    stat = video.stat()
    return StatesHeader(video=video.name, video_bytes=stat.st_size, video_mtime_ns=stat.st_mtime_ns,
                        model_sha256=digest(model), calibration_sha256=digest(calibration),
                        vision_sha256=vision_digest(), views=tuple(_view_header(v, c) for v, c in views))


def _view_header(video: Path, calibration: Path) -> ViewHeader:
    stat = video.stat()
    return ViewHeader(video=f"{video.parent.name}/{video.name}", video_bytes=stat.st_size,
                      video_mtime_ns=stat.st_mtime_ns, calibration_sha256=digest(calibration))


def _videos(header: StatesHeader) -> tuple[object, ...]:
    """What of a header names the videos the states were made from (the first camera's and the others')."""
    return (header.video, header.video_bytes, header.video_mtime_ns,
            tuple((v.video, v.video_bytes, v.video_mtime_ns) for v in header.views))


def _tuple(value: Any) -> Any:
    return tuple(_tuple(v) for v in value) if isinstance(value, list) else value


def _seen(kind: type[Any], data: dict[str, Any]) -> Any:
    return kind(**{key: _tuple(value) for key, value in data.items()})


def state_from_dict(data: dict[str, Any]) -> TableState:
    """The `TableState` of one line (the inverse of `dataclasses.asdict`)."""
    button = data.get("button")
    return TableState(
        frame=int(data["frame"]), t=float(data["t"]), camera_id=str(data.get("camera_id", "sim")),
        cards=tuple(_seen(SeenCard, c) for c in data.get("cards", ())),
        chips=tuple(_seen(SeenChips, c) for c in data.get("chips", ())),
        hands=tuple(_seen(SeenHand, h) for h in data.get("hands", ())),
        button=None if button is None else _seen(SeenButton, button),
        size=_tuple(data.get("size")), extra=dict(data.get("extra", {})))


def _header(line: str) -> StatesHeader | None:
    """The header a states file's first line holds (None when it holds none)."""
    try:
        return StatesHeader.model_validate_json(line)
    except ValueError:
        return None


def stale_header(path: Path, *, expected: StatesHeader) -> StatesHeader | None:
    """The header of the states in `path` when they were made from the same video as `expected` describes,
    whatever detector, calibration or vision code made them (a warning names what differs); None when there is no
    such file. A file made from another video is an error: its frames are not this video's."""
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as f:
        first = f.readline()
    header = _header(first)
    if header is None:
        raise ConfigError(f"{path}, line 1: expected a states header, got {first[:80]!r}", field="states")
    if _videos(header) != _videos(expected):
        made = [header.video] + [v.video for v in header.views]
        wanted = [expected.video] + [v.video for v in expected.views]
        raise ConfigError(f"{path}: made from other videos ({', '.join(made)}; {header.video_bytes} bytes), expected "
                          f"{', '.join(wanted)} ({expected.video_bytes} bytes)", field="states")
    differ = [name for name in ("model_sha256", "calibration_sha256", "vision_sha256")
              if getattr(header, name) != getattr(expected, name)]
    if [v.calibration_sha256 for v in header.views] != [v.calibration_sha256 for v in expected.views]:
        differ.append("views' calibration")
    if differ:
        logger.warning("%s: read as it is, though made with another %s", path,
                       ", ".join(name.removesuffix("_sha256") for name in differ))
    return header


def read_states(path: Path, *, expected: StatesHeader) -> list[TableState] | None:
    """The states stored in `path`, or None when it is missing or was made from other inputs."""
    if not path.is_file():
        return None
    with path.open(encoding="utf-8") as f:
        header = _header(f.readline())
        if header is None:
            logger.warning("%s: not a states file (bad header); making the states again", path)
            return None
        if header != expected:
            logger.info("%s was made from other inputs; making the states again", path)
            return None
        states = []
        for number, line in enumerate(f, start=2):
            try:
                states.append(state_from_dict(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise ConfigError(f"{path}, line {number}: expected a table state, got {line[:80]!r} ({exc})",
                                  field="states") from None
    return states


def read_states_as_made(path: Path) -> list[TableState]:
    """The states stored in `path`, whatever video, detector, calibration or vision code made them."""
    with path.open(encoding="utf-8") as f:
        header = _header(f.readline())
    if header is None:
        raise ConfigError(f"{path}: not a states file (its first line is no states header)", field="states")
    states = read_states(path, expected=header)
    assert states is not None  # the file is there and its header is the one expected
    return states


def stored_dict(state: TableState) -> dict[str, Any]:
    """`state` as a states file's line holds it: every field but the stacks' count log-likelihoods (up to 30 numbers
    a stack, for fusing cameras' views: the harness scores one camera's states)."""
    data = asdict(state)
    for chips in data["chips"]:
        chips.pop("count_log_likelihood", None)
    return data


def previous_path(path: Path) -> Path:
    """Where `cached_states` keeps the states file it replaces (NAME.previous.jsonl)."""
    return path.with_name(f"{path.stem}.previous{path.suffix}")


def cached_states(path: Path, *, header: StatesHeader, make: Iterable[TableState]) -> Iterator[TableState]:
    """The stored states when `path` matches `header`; else those of `make`, stored as they go by. States made
    from other inputs are not lost when the new ones are complete: they are kept as `previous_path(path)` (one
    generation; a states file named for one detector and read with another, a forgotten `--model`, is hours of
    vision at 4K)."""
    stored = read_states(path, expected=header)
    if stored is not None:
        logger.info("%s: %d stored table states", path, len(stored))
        yield from stored
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        with partial.open("w", encoding="utf-8") as f:
            f.write(header.model_dump_json() + "\n")
            for state in make:
                f.write(json.dumps(stored_dict(state), separators=(",", ":")) + "\n")
                yield state
        if path.is_file():
            path.replace(previous_path(path))
            logger.warning("%s: made again from other inputs; the states it held are kept as %s", path,
                           previous_path(path).name)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)
