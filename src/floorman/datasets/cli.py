"""`floorman datasets render|scenario|preview`."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("datasets", help="render training datasets and scenario videos")
    sub = parser.add_subparsers(dest="datasets_command", metavar="SUBCOMMAND", required=True)
    del sub
