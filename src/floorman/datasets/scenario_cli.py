"""`floorman datasets scenario` and `floorman datasets preview`: scripted scenarios to video and truth."""

from __future__ import annotations

import argparse


def register_scenario(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    del sub
