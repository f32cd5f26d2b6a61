"""Zone lookup for the renderer's truth: the same answer as `TableLayout.zone_names_at`, computed with
OpenCV's point-in-polygon test (one C call per zone and point instead of numpy work per zone)."""

from __future__ import annotations

import cv2
import numpy as np
import numpy.typing as npt

from floorman.core.layout import TableLayout, ZoneKind

_Contours = tuple[tuple[str, npt.NDArray[np.float32]], ...]
_cache: dict[int, tuple[TableLayout, _Contours]] = {}


def _contours(layout: TableLayout) -> _Contours:
    found = _cache.get(id(layout))
    if found is not None and found[0] is layout:
        return found[1]
    contours = tuple((zone.name, np.asarray(zone.points, dtype=np.float32).reshape(-1, 1, 2))
                     for zone in layout.all_zones)
    if len(_cache) > 32:
        _cache.clear()
    _cache[id(layout)] = (layout, contours)  # holding the layout keeps its id unique while cached
    return contours


def zone_names_at(layout: TableLayout, points: list[tuple[float, float]]) -> list[str | None]:
    """The zone under each point: seat and shared zones in `layout.all_zones` order, then 'rail_edge'."""
    names: list[str | None] = [None] * len(points)
    contours = _contours(layout)
    for i, (x, y) in enumerate(points):
        for name, contour in contours:
            if cv2.pointPolygonTest(contour, (float(x), float(y)), False) >= 0:
                names[i] = name
                break
    rest = [i for i, name in enumerate(names) if name is None]
    if rest:
        edge = layout.in_rail_edge(np.asarray([points[i] for i in rest], dtype=np.float64).reshape(-1, 2))
        for i, on_edge in zip(rest, edge, strict=True):
            if on_edge:
                names[i] = ZoneKind.RAIL_EDGE.value
    return names
