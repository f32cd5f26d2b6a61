#!/usr/bin/env bash
# Fetch the wheels scripts/device_train.sh installs on the device machine (Python 3.12, x86-64) into .whl/.
set -euo pipefail
grep -qx "/.whl/" .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo "/.whl/" >> .git/info/exclude; }
PY=${PY:-.venv/bin/python}
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  ultralytics==8.4.190 ultralytics-thop==2.2.3 pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 \
  typing-inspection==0.4.5 onnxslim==0.1.98
du -sh .whl
