#!/usr/bin/env python3
"""Runs every model program of tests/models on pith (compared with torch when torch is
installed), prints a line per program and "N passed, M failed", and exits non-zero when
any failed. The programs known to be blocked (tests/models/programs BLOCKED) are run too
and listed apart: each must still fail for its stated reason. With --train, the programs
that train are trained instead, and compared with torch's training run (Note [Comparing
training runs]). Usage: python scripts/run_models.py [-k SUBSTRING] [--no-torch] [--train]"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "models"))

import harness  # noqa: E402
import programs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", default="", help="run only programs whose name contains this")
    parser.add_argument("--no-torch", action="store_true",
                        help="run on pith alone, even when torch is installed")
    parser.add_argument("--train", action="store_true",
                        help="train the programs that train, and compare the runs")
    args = parser.parse_args()
    with_torch = harness.torch_available() and not args.no_torch
    passed = failed = blocked = 0
    if args.train:
        selection = [p for p in programs.ALL if p.does_train]
    else:
        selection = programs.ALL + programs.BLOCKED
    for program in selection:
        if args.k not in program.name:
            continue
        if args.train:
            result = harness.run_training(program, with_torch=with_torch)
        else:
            result = harness.run(program, with_torch=with_torch)
        is_blocked = program.blocked or (args.train and program.train_blocked and with_torch)
        status = "FAIL" if not result.ok else "BLOCKED" if is_blocked else "PASS"
        print(f"{status}  {result.program}: {result.detail} ({result.seconds:.2f} s)",
              flush=True)
        if is_blocked and result.ok:
            blocked += 1
        else:
            passed += result.ok
            failed += not result.ok
    print(f"{passed} passed, {failed} failed" +
          (f" ({blocked} known blocked, listed above)" if blocked else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
