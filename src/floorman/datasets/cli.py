"""`floorman datasets render|scenario|preview`."""

from __future__ import annotations

import argparse

from floorman.datasets.render_cli import register_render
from floorman.datasets.scenario_cli import register_scenario


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("datasets", help="render training datasets and scenario videos")
    sub = parser.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND", required=True)
    register_render(sub)
    register_scenario(sub)
