"""Factories shared by the tests: small valid objects and YAML texts to break on purpose."""

from __future__ import annotations

import copy
from typing import Any

import yaml

from floorman.core.layout_gen import racetrack_layout_data

CHIPSET_YAML = """\
name: test-set
denominations:
  - {value: 25, colour: "#ecebe6", edge_colour: "#2a55b5"}
  - {value: 100, colour: "#c0202a", edge_colour: "#f4f4f0"}
"""


def layout_data(**overrides: Any) -> dict[str, Any]:
    """The default 9-seat layout as a mapping, with top-level overrides."""
    data = racetrack_layout_data()
    data.update(copy.deepcopy(overrides))
    return data


def layout_yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)
