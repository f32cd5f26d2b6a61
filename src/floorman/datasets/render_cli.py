"""`floorman datasets render`: a YOLO detection dataset from random scenes."""

from __future__ import annotations

import argparse


def register_render(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    del sub
