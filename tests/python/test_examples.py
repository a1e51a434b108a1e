"""examples/quickstart.py, the README's demo, runs to the end: its forward matches NumPy,
the compiled model eager, and its classifier trains (the loss falls below a quarter of
where it started). PITH_DEMO_QUICK=1 shortens its timings only."""
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def test_quickstart_demo_runs_and_trains():
    env = dict(os.environ, PITH_DEMO_QUICK="1")
    done = subprocess.run([sys.executable, os.path.join(REPO, "examples", "quickstart.py")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches NumPy" in done.stdout
    losses = [float(v) for v in re.findall(r"epoch +\d+ +loss ([0-9.]+)", done.stdout)]
    assert len(losses) >= 2 and losses[-1] < losses[0] / 4, done.stdout
