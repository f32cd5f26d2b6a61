"""What event derivation keeps between frames: readings that must settle, and object tracks.

`Settle` holds a reading (a zone's content, the button's seat, the zone under a hand) and commits a new value
only once it has held for `frames` analysed frames and `seconds` seconds: flicker makes no event. `Tracker`
follows the objects of one kind from frame to frame, by the `track_id` the state builder gave them or, when it
gave none, by the nearest position in table millimetres (where the track was last seen or, with `predict_s`,
where it would be moving on as it moved: cards in flight); a track remembers where it was first seen (its
origin), where it is, whether it is at rest, and ends once it has been unseen for a while.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from floorman.core.table_state import PointMm, SeenButton, SeenCard, SeenChips, SeenHand

T = TypeVar("T")
Seen = SeenCard | SeenChips | SeenHand | SeenButton
_AUTO_FIRST = 2_000_000_000
_AUTO_IDS = itertools.count(_AUTO_FIRST)


@dataclass
class Settle(Generic[T]):
    """A reading that counts once it has held `frames` frames and `seconds` seconds."""

    frames: int
    seconds: float
    committed: T | None = None
    known: bool = False
    _candidate: T | None = None
    _since: float = 0.0
    _count: int = 0
    _held_since: float | None = None

    def observe(self, value: T, t: float) -> bool:
        """Feed this frame's reading; True when it commits a value different from the committed one."""
        if self.known and value == self.committed:
            self._count, self._held_since = 0, None
            return False
        if self._count == 0 or value != self._candidate:
            self._candidate, self._since, self._count = value, t, 1
        else:
            self._count += 1
        if self._count >= self.frames and t - self._since >= self.seconds:
            self.committed, self.known, self._count, self._held_since = value, True, 0, None
            return True
        return False

    def hold(self, t: float) -> None:
        """This frame's reading cannot be trusted (part of it is hidden): no candidate counts through it, but
        `pending_since` remembers that the committed value has been in doubt since `t`."""
        if self._held_since is None:
            self._held_since = min(t, self._since) if self._count else t
        self._count = 0

    @property
    def pending_since(self) -> float | None:
        """When the committed value was first in doubt: the reading now waiting to settle was first seen, or a
        `hold` began before it (None when neither)."""
        if self._held_since is not None:
            return min(self._held_since, self._since) if self._count else self._held_since
        return self._since if self._count else None


@dataclass
class Track:
    """One object followed over frames."""

    id: int
    first_t: float
    first_frame: int
    first_position: PointMm
    first_zone: str | None
    position: PointMm
    zone: str | None
    last_t: float
    last_frame: int
    seen: Seen
    observations: int = 1
    still: bool = False
    ended: bool = False
    handed_over: bool = False  # ended by `Tracker._adopt`: it lives on under the vision's id for the same object
    successor: int | None = None  # the id it lives on under, when handed over
    rest_zone: str | None = None  # the zone it last lay at rest in
    rest_position: PointMm | None = None  # where it last lay at rest
    velocity: PointMm = (0.0, 0.0)  # mm/s between its last two sightings
    marks: set[str] = field(default_factory=set)

    def distance_to(self, point: PointMm) -> float:
        return math.hypot(self.position[0] - point[0], self.position[1] - point[1])

    def reach_to(self, point: PointMm, *, t: float, predict_s: float) -> float:
        """How far `point` is from where the track was last seen or, moving on as it moved, would be at `t`
        (at most `predict_s` on): the nearer."""
        ahead = min(max(t - self.last_t, 0.0), predict_s)
        x, y = self.position[0] + self.velocity[0] * ahead, self.position[1] + self.velocity[1] * ahead
        return min(self.distance_to(point), math.hypot(x - point[0], y - point[1]))


def position_of(seen: Seen) -> PointMm | None:
    return seen.position_mm


def zone_of(seen: Seen) -> str | None:
    return seen.zone if not isinstance(seen, SeenButton) else None


class Tracker:
    """Tracks of one kind of object (cards, chip stacks, hands)."""

    def __init__(self, *, match_mm: float, still_mm: float, lost_s: float, predict_s: float = 0.0,
                 switch_mm: float | None = None, kept_mm: float | None = None, left_behind: bool = False) -> None:
        if match_mm <= 0 or still_mm <= 0 or lost_s <= 0 or predict_s < 0 or any(
                mm is not None and mm <= 0 for mm in (switch_mm, kept_mm)):
            raise ValueError(f"expected match_mm, still_mm, lost_s > 0, predict_s >= 0 and switch_mm, kept_mm > 0 "
                             f"or None, got {match_mm}, {still_mm}, {lost_s}, {predict_s}, {switch_mm}, {kept_mm}")
        self.match_mm = match_mm
        self.still_mm = still_mm
        self.lost_s = lost_s
        self.predict_s = predict_s  # an object without an id is matched where a moving track would be this far on
        self.switch_mm = switch_mm  # a new vision id this close to where a track with another id went unseen is it
        # a track kept past lost_s (hidden under a hand) lies where it lay: an object without an id this close to it
        self.kept_mm = kept_mm
        self.left_behind = left_behind  # a moving track's id on a box left behind names another object (`_hand_on`)
        self.tracks: dict[int, Track] = {}

    def update(self, objects: Iterable[Seen], *, frame: int, t: float,
               hidden: Callable[[Track], bool] | None = None,
               renewed: Callable[[Track], bool] | None = None) -> tuple[list[Track], list[Track]]:
        """Match this frame's objects to tracks; returns (tracks seen now, tracks that just ended). An unseen
        track for which `hidden` holds (a hand covers it) does not end. A track unseen for a frame or more for which
        `renewed` holds names no object seen again: the vision's id of it seen again ends it and starts a new track
        (the vision gave a lost id to another object), and an object without an id is not matched to it."""
        placed = [(o, p) for o in objects if (p := position_of(o)) is not None]
        # the vision's own track ids first: an object without one never takes a track another object names
        taken = {seen.track_id for seen, _ in placed if seen.track_id is not None}
        ids: list[int] = []
        for seen, point in placed:
            if seen.track_id is None:
                ids.append(self._nearest(point, taken, frame=frame, t=t, renewed=renewed))
                taken.add(ids[-1])
            else:
                ids.append(seen.track_id)
        if self.left_behind:
            self._hand_on(placed, ids, t=t)
        ended: list[Track] = []
        for track_id, (_, point) in zip(ids, placed, strict=True):
            old = self.tracks.get(track_id)
            if old is not None and renewed is not None and track_id < _AUTO_FIRST and old.last_frame < frame - 1 \
                    and renewed(old):
                ended.append(self.end(old))
            if track_id not in self.tracks and track_id < _AUTO_FIRST:
                adopted = self._adopt(track_id, point, taken, t=t)
                if adopted is not None:
                    taken.add(adopted.id)
                    ended.append(adopted)
        current = [self._observe(track_id, seen, point, frame=frame, t=t)
                   for track_id, (seen, point) in zip(ids, placed, strict=True)]
        for track in list(self.tracks.values()):
            if track.id in taken or (hidden is not None and hidden(track)):
                continue
            if t - track.last_t > self.lost_s:
                ended.append(self.end(track))
        return current, ended

    def _hand_on(self, placed: list[tuple[Seen, PointMm]], ids: list[int], *, t: float) -> None:
        """With `left_behind` (the hands' tracker): a moving track (more than `still_mm` a frame) whose vision id
        names a box left behind, farther than `still_mm` from where the track would be, while a surer box without an
        id lies nearer to there: that box is the object, and the named one a new track. The vision's tracker keeps an
        id on the weak box a fast hand leaves for a frame (from 1280x720, splash_02: seat 8's hand throwing chips
        into the pot went on as a new hand first seen out on the table, of no sure seat, while its id stayed on a
        0.41 box at its last place)."""
        for named, (seen, point) in enumerate(placed):
            track = self.tracks.get(ids[named])
            if seen.track_id is None or track is None or track.last_t >= t:
                continue
            ahead = min(t - track.last_t, self.predict_s)
            if math.hypot(*track.velocity) * ahead <= self.still_mm:  # at rest: no box is left behind
                continue
            x, y = track.position[0] + track.velocity[0] * ahead, track.position[1] + track.velocity[1] * ahead
            behind = math.hypot(point[0] - x, point[1] - y)
            if behind <= self.still_mm:
                continue
            best, best_d = None, behind
            for other, (other_seen, other_point) in enumerate(placed):
                d = math.hypot(other_point[0] - x, other_point[1] - y)
                if (other_seen.track_id is None and ids[other] not in self.tracks and d < best_d
                        and other_seen.confidence > seen.confidence):
                    best, best_d = other, d
            if best is not None:
                ids[named], ids[best] = ids[best], ids[named]

    def end(self, track: Track) -> Track:
        """End a track now (it is followed no more); returns it."""
        track.ended = True
        del self.tracks[track.id]
        return track

    def _adopt(self, track_id: int, point: PointMm, taken: set[int], *, t: float) -> Track | None:
        """A new track id of the vision's (its tracker confirms a track a frame or two after the object appears)
        takes over the nearest track followed so far without an id, within match_mm and not seen in this frame:
        the same object, its history kept (where it first came from tells a hand's seat). With `switch_mm`, a
        track with another id of the vision's, not seen in this frame, is taken over too when the new id lies within
        `switch_mm` of it (or of where it would be, moving on: `reach_to`): the vision's tracker lost a fast object
        and named it again (from video a hand crossing the table got five ids in a second, and a dealer's hand
        named anew over a bet zone was taken for that seat's). That track ends."""
        best, best_d = None, math.inf
        for track in self.tracks.values():
            if track.id in taken:
                continue
            if track.id >= _AUTO_FIRST:
                d, reach = track.distance_to(point), self.match_mm
            elif self.switch_mm is not None:
                d, reach = track.reach_to(point, t=t, predict_s=self.predict_s), self.switch_mm
            else:
                continue
            if d <= reach and d < best_d:
                best, best_d = track, d
        if best is None:
            return None
        del self.tracks[best.id]
        self.tracks[track_id] = replace(best, id=track_id, marks=set(best.marks))
        best.ended = best.handed_over = True
        best.successor = track_id
        return best

    def _nearest(self, point: PointMm, taken: set[int], *, frame: int, t: float,
                 renewed: Callable[[Track], bool] | None) -> int:
        best, best_d = None, self.match_mm
        for track in self.tracks.values():
            if track.id in taken or (renewed is not None and track.last_frame < frame and renewed(track)):
                continue
            d = track.reach_to(point, t=t, predict_s=self.predict_s)
            if self.kept_mm is not None and t - track.last_t > self.lost_s and d > self.kept_mm:
                continue
            if d <= best_d:
                best, best_d = track.id, d
        return best if best is not None else next(_AUTO_IDS)

    def _observe(self, track_id: int, seen: Seen, point: PointMm, *, frame: int, t: float) -> Track:
        track = self.tracks.get(track_id)
        zone = zone_of(seen)
        if track is None:
            track = Track(id=track_id, first_t=t, first_frame=frame, first_position=point, first_zone=zone,
                          position=point, zone=zone, last_t=t, last_frame=frame, seen=seen)
            self.tracks[track_id] = track
            return track
        track.still = track.distance_to(point) <= self.still_mm
        if t > track.last_t:
            track.velocity = ((point[0] - track.position[0]) / (t - track.last_t),
                              (point[1] - track.position[1]) / (t - track.last_t))
        if track.still:
            track.rest_zone, track.rest_position = zone, point
        track.position, track.zone, track.seen = point, zone, seen
        track.last_t, track.last_frame = t, frame
        track.observations += 1
        return track

    def unseen(self, current: Sequence[Track]) -> list[Track]:
        """Live tracks not seen in this frame (hidden for now, or gone and not yet ended)."""
        ids = {track.id for track in current}
        return [track for track in self.tracks.values() if track.id not in ids]
