#!/usr/bin/env bash
# demo.sh — THE demo command (README): installs what is missing (Debian packages, then a
# virtual environment .venv with pith, NumPy and PyTorch 2.13.0, the CPU build on this
# machine's disk), and runs examples/quickstart.py: an MLP built with pith.nn, loaded with
# weights from NumPy, checked against NumPy, timed beside NumPy and PyTorch.
#
# PITH_DEMO_NO_TORCH=1 leaves PyTorch out (the demo then times pith and NumPy only).
# The C demo (examples/c/mlp.c against libpith) is scripts/demo_c.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
echo "demo.sh: installing pith into .venv (builds libpith and pith._C; a minute or two)"
.venv/bin/python -m pip install --quiet --disable-pip-version-check . numpy
if [ "${PITH_DEMO_NO_TORCH:-0}" != 1 ]; then
    # Exactly this version: it is the CPU build on disk; any other is a multi-GB download.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "torch==2.13.0"
fi
echo
exec .venv/bin/python examples/quickstart.py "$@"
