"""Table layouts in millimetres (YAML): outline, seats and their zones, shared zones, bet line.

Coordinates: origin at the centre of the playing surface, x along the long axis, y along the short axis,
z up from the felt. The dealer sits at the middle of the -y long side; seats are numbered clockwise (seen
from above) from the dealer's left. Every zone is a simple polygon; the rail edge is the band of width
`rail_edge_band_mm` just inside the outline, where hands and chips come from below table level.
"""

from __future__ import annotations

import enum
import math
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from floorman.core.config import FieldError, model_from_yaml_file, model_from_yaml_text
from floorman.core.errors import ConfigError
from floorman.core.geometry import (
    FloatArray,
    as_points,
    crosses_polyline,
    distance_to_boundary,
    ellipse,
    points_in_polygon,
    polygons_overlap,
    racetrack,
    rotated_rect,
)


class ZoneKind(enum.StrEnum):
    STACK = "stack"
    BET = "bet"
    HOLE = "hole"
    POT = "pot"
    BOARD = "board"
    MUCK = "muck"
    DECK = "deck"
    DEALER_TRAY = "dealer_tray"
    RAIL_EDGE = "rail_edge"


SEAT_ZONE_KINDS = (ZoneKind.STACK, ZoneKind.BET, ZoneKind.HOLE)
SHARED_ZONE_KINDS = (ZoneKind.POT, ZoneKind.BOARD, ZoneKind.MUCK, ZoneKind.DECK, ZoneKind.DEALER_TRAY)

_POINT = tuple[float, float]


class PolygonShape(BaseModel):
    """A simple polygon given by its vertices in millimetres."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    polygon: tuple[_POINT, ...] = Field(min_length=3, description="Vertices [[x, y], ...] in mm.")

    def points(self) -> FloatArray:
        return as_points(self.polygon)


class RectSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    center: _POINT = Field(description="Centre [x, y] in mm.")
    size: tuple[Annotated[float, Field(gt=0)], Annotated[float, Field(gt=0)]] = Field(
        description="Width and height [w, h] in mm."
    )
    angle: float = Field(default=0.0, description="Rotation in degrees, counter-clockwise.")


class RectShape(BaseModel):
    """A rotated rectangle."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rect: RectSpec = Field(description="Centre, size and angle of the rectangle.")

    def points(self) -> FloatArray:
        return rotated_rect(self.rect.center, self.rect.size, self.rect.angle)


ZoneShape = PolygonShape | RectShape


class OvalSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    length: float = Field(gt=0, description="Length of the playing surface along x, in mm.")
    width: float = Field(gt=0, description="Width of the playing surface along y, in mm.")


class Outline(BaseModel):
    """The playing surface inside the rail: exactly one of racetrack, ellipse or polygon."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    racetrack: OvalSpec | None = Field(default=None, description="Stadium shape (straight sides, round ends).")
    ellipse: OvalSpec | None = Field(default=None, description="Elliptical surface.")
    polygon: tuple[_POINT, ...] | None = Field(default=None, description="Any simple polygon, in mm.")

    @model_validator(mode="after")
    def _exactly_one(self) -> Outline:
        given = [n for n in ("racetrack", "ellipse", "polygon") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"expected exactly one of racetrack, ellipse or polygon, got {given or 'none'}")
        if self.racetrack is not None and self.racetrack.length < self.racetrack.width:
            raise ValueError("racetrack: expected length >= width")
        if self.polygon is not None and len(self.polygon) < 3:
            raise ValueError("polygon: expected at least 3 vertices")
        return self

    def points(self) -> FloatArray:
        if self.racetrack is not None:
            return racetrack(self.racetrack.length, self.racetrack.width, points_per_end=48)
        if self.ellipse is not None:
            return ellipse(self.ellipse.length, self.ellipse.width, points=144)
        assert self.polygon is not None
        return as_points(self.polygon)


class SeatSpec(BaseModel):
    """One seat: where the player sits and the three zones that belong to them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    number: int = Field(ge=1, le=10, description="Seat number, 1..N clockwise from the dealer's left.")
    position: _POINT = Field(description="Where the player sits, a point on the rail, in mm.")
    stack: ZoneShape = Field(description="Where the player's chips stand.")
    hole: ZoneShape = Field(description="Where the player's hole cards lie (in front of the stack).")
    bet: ZoneShape = Field(description="Where bets stand: beyond the printed bet line, toward the centre.")
    bet_line: tuple[_POINT, ...] = Field(
        min_length=2, description="The printed bet line in front of this seat, as a polyline in mm."
    )


class SharedZones(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pot: ZoneShape = Field(description="Where the dealer gathers the pot.")
    board: ZoneShape = Field(description="Where the flop, turn and river are dealt.")
    muck: ZoneShape = Field(description="Where discards and burn cards go.")
    deck: ZoneShape = Field(description="Where the deck stub lies in front of the dealer.")
    dealer_tray: ZoneShape = Field(description="The dealer's chip tray at the rail.")


class MarkerSpec(BaseModel):
    """An ArUco marker laid flat on the felt for calibration, its top edge toward +y before rotation."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(ge=0, le=999, description="Marker id in the layout's ArUco dictionary.")
    center: _POINT = Field(description="Centre of the marker [x, y], in mm.")
    size_mm: float = Field(gt=10, le=500, description="Side of the black square, in mm.")
    angle: float = Field(default=0.0, description="Rotation in degrees, counter-clockwise seen from above.")

    def corners(self) -> FloatArray:
        """The four corners in ArUco order (top-left, top-right, bottom-right, bottom-left of the marker)."""
        half = self.size_mm / 2.0
        local = np.array([[-half, half], [half, half], [half, -half], [-half, -half]])
        theta = math.radians(self.angle)
        rotation = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
        result: FloatArray = local @ rotation.T + np.asarray(self.center)
        return result


class Zone(BaseModel):
    """A named zone, resolved to a polygon."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ZoneKind
    seat: int | None
    polygon: tuple[_POINT, ...]

    @cached_property
    def points(self) -> FloatArray:
        return as_points(self.polygon)

    def trigger(self, points: FloatArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Mask of the points (N, 2) that lie in this zone."""
        return points_in_polygon(as_points(points), self.points)


class TableLayout(BaseModel):
    """One table, in millimetres. Load with `TableLayout.load(path)` or `TableLayout.default()`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Name of the layout.")
    description: str = Field(default="", description="Free text.")
    outline: Outline = Field(description="The playing surface inside the padded rail.")
    rail_width_mm: float = Field(default=120.0, ge=0, le=300, description="Width of the padded rail, in mm.")
    rail_edge_band_mm: float = Field(
        default=60.0, gt=0, le=300, description="Band inside the outline where objects enter from the rail."
    )
    dealer_position: _POINT = Field(description="Where the dealer sits, a point on the rail, in mm.")
    seats: tuple[SeatSpec, ...] = Field(min_length=2, max_length=10, description="The seats, numbered 1..N.")
    zones: SharedZones = Field(description="The shared zones: pot, board, muck, deck, dealer tray.")
    marker_dictionary: str = Field(
        default="DICT_4X4_50", pattern=r"^DICT_[A-Z0-9_]+$", description="OpenCV ArUco dictionary of the markers."
    )
    markers: tuple[MarkerSpec, ...] = Field(
        default=(), description="ArUco markers laid at known positions to calibrate cameras (floorman calibrate)."
    )

    @model_validator(mode="after")
    def _check_geometry(self) -> TableLayout:
        numbers = [s.number for s in self.seats]
        if sorted(numbers) != list(range(1, len(numbers) + 1)):
            raise FieldError("seats", f"expected numbers 1..{len(numbers)} each once, got {numbers}")
        outline = self.outline.points()
        for name, zone in self._zone_shapes().items():
            pts = zone.points()
            outside = ~points_in_polygon(pts, outline)
            if outside.any():
                x, y = pts[int(np.argmax(outside))]
                raise FieldError(name, f"zone reaches outside the table outline at ({x:.0f}, {y:.0f}) mm")
        for index, seat in enumerate(self.seats):
            line = as_points(seat.bet_line)
            if (~points_in_polygon(line, outline)).any():
                raise FieldError(f"seats[{index}].bet_line", "the bet line leaves the table outline")
        self._check_overlaps()
        ids = [m.id for m in self.markers]
        for index, marker in enumerate(self.markers):
            if ids.count(marker.id) > 1:
                raise FieldError(f"markers[{index}].id", f"marker id {marker.id} is used twice")
            if (~points_in_polygon(marker.corners(), outline)).any():
                raise FieldError(f"markers[{index}]", "marker reaches outside the table outline")
        return self

    def _zone_shapes(self) -> dict[str, ZoneShape]:
        shapes: dict[str, ZoneShape] = {}
        for index, seat in enumerate(self.seats):
            for kind in SEAT_ZONE_KINDS:
                shapes[f"seats[{index}].{kind.value}"] = getattr(seat, kind.value)
        for kind in SHARED_ZONE_KINDS:
            shapes[f"zones.{kind.value}"] = getattr(self.zones, kind.value)
        return shapes

    def _check_overlaps(self) -> None:
        seat_zones = [
            (f"seats[{i}].{kind.value}", getattr(seat, kind.value).points())
            for i, seat in enumerate(self.seats)
            for kind in SEAT_ZONE_KINDS
        ]
        play_zones = [
            (f"zones.{k.value}", getattr(self.zones, k.value).points()) for k in (ZoneKind.POT, ZoneKind.BOARD)
        ]
        for i, (name_a, poly_a) in enumerate(seat_zones):
            for name_b, poly_b in seat_zones[i + 1 :] + play_zones:
                if polygons_overlap(poly_a, poly_b):
                    raise FieldError(name_a, f"zone overlaps {name_b}")

    # --- loading ---------------------------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, text: str, *, source: str = "<layout>") -> TableLayout:
        return model_from_yaml_text(cls, text, source=source)

    @classmethod
    def load(cls, path: str | Path) -> TableLayout:
        return model_from_yaml_file(cls, path)

    @classmethod
    def default(cls) -> TableLayout:
        """The shipped 9-seat oval (2400 x 1200 mm playing surface)."""
        return cls.bundled("oval9")

    @classmethod
    def bundled(cls, name: str) -> TableLayout:
        names = bundled_layout_names()
        if name not in names:
            raise ConfigError(f"unknown bundled layout {name!r}, expected one of {names}", field="layout")
        file = resources.files("floorman.core").joinpath(f"data/layouts/{name}.yaml")
        return cls.from_yaml(file.read_text("utf-8"), source=f"floorman/core/data/layouts/{name}.yaml")

    # --- queries ---------------------------------------------------------------------------------------

    @cached_property
    def outline_points(self) -> FloatArray:
        return self.outline.points()

    @cached_property
    def all_zones(self) -> tuple[Zone, ...]:
        """Seat zones first (seat order, then stack, hole, bet), then the shared zones."""
        zones: list[Zone] = []
        for seat in sorted(self.seats, key=lambda s: s.number):
            for kind in (ZoneKind.STACK, ZoneKind.HOLE, ZoneKind.BET):
                shape: ZoneShape = getattr(seat, kind.value)
                zones.append(Zone(name=f"{kind.value}_{seat.number}", kind=kind, seat=seat.number,
                                  polygon=_as_tuple(shape.points())))
        for kind in (ZoneKind.BOARD, ZoneKind.POT, ZoneKind.MUCK, ZoneKind.DECK, ZoneKind.DEALER_TRAY):
            shape = getattr(self.zones, kind.value)
            zones.append(Zone(name=kind.value, kind=kind, seat=None, polygon=_as_tuple(shape.points())))
        return tuple(zones)

    def zone(self, name: str) -> Zone:
        for zone in self.all_zones:
            if zone.name == name:
                return zone
        raise ValueError(f"layout {self.name!r}: no zone named {name!r}, expected one of "
                         f"{[z.name for z in self.all_zones] + ['rail_edge']}")

    def seat(self, number: int) -> SeatSpec:
        for seat in self.seats:
            if seat.number == number:
                return seat
        raise ValueError(f"layout {self.name!r}: no seat {number}, expected 1..{len(self.seats)}")

    @property
    def seat_numbers(self) -> tuple[int, ...]:
        return tuple(sorted(s.number for s in self.seats))

    def on_table(self, points: FloatArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
        return points_in_polygon(as_points(points), self.outline_points)

    def in_rail_edge(self, points: FloatArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Points off the table or within the rail-edge band just inside the outline."""
        pts = as_points(points)
        inside = self.on_table(pts)
        near = distance_to_boundary(pts, self.outline_points) <= self.rail_edge_band_mm
        result: np.ndarray[Any, np.dtype[np.bool_]] = ~inside | near
        return result

    def zone_names_at(self, points: FloatArray) -> list[str | None]:
        """The name of the zone under each point (seat and shared zones first, then 'rail_edge'), or None."""
        pts = as_points(points)
        names: list[str | None] = [None] * pts.shape[0]
        for zone in self.all_zones:
            mask = zone.trigger(pts)
            for i in np.flatnonzero(mask):
                if names[i] is None:
                    names[i] = zone.name
        edge = self.in_rail_edge(pts)
        for i in np.flatnonzero(edge):
            if names[i] is None:
                names[i] = ZoneKind.RAIL_EDGE.value
        return names

    def zone_name_at(self, x: float, y: float) -> str | None:
        return self.zone_names_at(np.array([[x, y]]))[0]

    def crosses_bet_line(self, seat: int, start: tuple[float, float], end: tuple[float, float]) -> bool:
        """Whether a motion from `start` to `end` (mm) crosses the printed bet line of `seat`."""
        return crosses_polyline(start, end, as_points(self.seat(seat).bet_line))

    def seat_direction(self, seat: int) -> tuple[float, float]:
        """Unit vector from the seat's rail position toward the table centre."""
        x, y = self.seat(seat).position
        norm = math.hypot(x, y) or 1.0
        return -x / norm, -y / norm


def _as_tuple(points: FloatArray) -> tuple[_POINT, ...]:
    return tuple((float(x), float(y)) for x, y in points)


def bundled_layout_names() -> list[str]:
    folder = resources.files("floorman.core").joinpath("data/layouts")
    return sorted(p.name.removesuffix(".yaml") for p in folder.iterdir() if p.name.endswith(".yaml"))

