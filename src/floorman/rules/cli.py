"""`floorman ruling` and `floorman rules` (the rules issue)."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the rules subcommands. Nothing is registered until the rules package lands."""
    del subparsers
