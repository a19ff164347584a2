"""``python3 -m clusterforge.ops.doctor --local [--gpus N] [--json]``: the doctor on this machine, stdlib only.

Exit 1 when any finding fails, else 0.
"""

from __future__ import annotations

import argparse
import sys

from clusterforge.ops.doctor import Expect, LocalShell, Status, diagnose, render
from clusterforge.ops.doctor.findings import to_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m clusterforge.ops.doctor")
    parser.add_argument("--local", action="store_true", required=True, help="diagnose this machine")
    parser.add_argument("--gpus", type=int, help="GPUs this machine should have")
    parser.add_argument("--json", action="store_true", help="findings as JSON")
    args = parser.parse_args(argv)
    shell = LocalShell()
    findings = diagnose(shell, Expect(gpus=args.gpus))
    sys.stdout.write((to_json(shell.name, findings) if args.json else render(shell.name, findings)) + "\n")
    return 1 if any(f.status is Status.fail for f in findings) else 0


if __name__ == "__main__":
    sys.exit(main())
