#!/usr/bin/env bash
# The detector's accelerator run, as one device call (see src/floorman/models/weights/MODEL_CARD.md):
#   run(command="bash scripts/device_train.sh", carry=[".whl"], timeout_s=590)
# The device image has python3 with torch, onnx, onnxruntime, OpenCV; it lacks pydantic and Ultralytics, which
# travel as wheels in .whl/ (scripts/device_wheels.sh fetches them here), and polars, which Ultralytics only
# needs to read its own results.csv back: a 20-line stand-in is written instead of carrying its 54 MB wheel.
set -euo pipefail
OUT=${OUT:-$PWD/out/device}
mkdir -p "$OUT"
SITE=${SITE:-/tmp/site}
PY=${PY:-python3}
if [ -z "${SKIP_WHEELS:-}" ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" .whl/*.whl
fi
if [ -n "${FORCE_POLARS_SHIM:-}" ] || ! PYTHONPATH="$SITE" "$PY" -c "import polars" 2>/dev/null; then
  mkdir -p "$SITE/polars"
  cat > "$SITE/polars/__init__.py" <<'PY'
"""Stand-in for polars: only read_csv(...).to_dict(as_series=False), all Ultralytics training calls."""
import csv
import io


class _Frame:
    def __init__(self, rows):
        self._rows = rows

    def to_dict(self, as_series=True):
        keys = list(self._rows[0]) if self._rows else []
        return {k: [_number(r[k]) for r in self._rows] for k in keys}


def _number(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return text


def read_csv(source, infer_schema_length=None):
    text = source.decode() if isinstance(source, bytes) else open(source, encoding="utf-8").read()
    return _Frame(list(csv.DictReader(io.StringIO(text))))
PY
fi
export PYTHONPATH="$SITE:$PWD/src:$PWD" PYTHONUNBUFFERED=1 YOLO_OFFLINE=1 YOLO_CONFIG_DIR="$PWD/.yolo-device"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null || true
# A copy of the newest checkpoint every 20 s: if the call is cut at its limit, $OUT still brings one back.
( while sleep 20; do
    for last in runs/device/*/weights/last.pt; do
      # only a file left alone for 3 s (Ultralytics writes it whole, but not atomically)
      if [ -f "$last" ] && [ $(( $(date +%s) - $(stat -c %Y "$last") )) -ge 3 ]; then
        cp -f "$last" "$OUT/periodic.tmp" && mv -f "$OUT/periodic.tmp" "$OUT/last_periodic.pt"
      fi
    done
  done ) >/dev/null 2>&1 &
copier=$!
set +e
"$PY" scripts/device_train.py --out "$OUT" "$@" > "$OUT/train_log.txt" 2>&1
status=$?
set -e
pkill -P "$copier" 2>/dev/null || true
kill "$copier" 2>/dev/null || true
tr '\r' '\n' < "$OUT/train_log.txt" | grep -v "it/s\|━" | tail -n 60
exit $status
