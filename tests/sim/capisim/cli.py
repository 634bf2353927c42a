"""Command line: ``python -m capisim up|down|status --state DIR [--fleet FILE]``, ``crds-vendor --upstream DIR``.

up      validate FILE, start its management clusters in parallel, create the CAPI objects, wait until
        every rollout is complete, write DIR/inventory.yml. Exit 0 also when it was already up.
down    stop exactly the recorded processes (all clusters and controllers); --purge removes DIR.
status  per management cluster its MachineDeployments/KubeadmControlPlanes and their counters.
down and status read the fleet recorded in DIR; --fleet limits them to that spec's clusters.
crds-vendor  regenerate tests/crds (reduced CRDs, provenance.yml, PROVENANCE.md) from upstream originals
        (one directory per release with its SOURCES.md); see crds.vendor().
Progress goes to stderr; status output to stdout. Exit 1 with a message on any failure.
"""

import argparse
import os
import sys

from . import crds
from .fleet import Fleet
from .fleetspec import FleetSpecError
from .kubeapi import ApiError


def _parser():
    parser = argparse.ArgumentParser(prog="python -m capisim", description="Local CAPI management clusters for tests and demos.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("up", "start a fleet"), ("down", "stop a fleet"), ("status", "show a fleet's rollouts")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--state", required=True, help="state directory (one subdirectory per management cluster)")
        cmd.add_argument("--fleet", required=name == "up", help="fleet spec YAML (see tests/fleets/README.md)")
        if name == "up":
            cmd.add_argument("--no-controller", action="store_true", default=bool(os.environ.get("CAPISIM_NO_CONTROLLER")),
                             help="do not run the CAPI controller simulator (nothing becomes ready; no waiting); "
                                  "default from $CAPISIM_NO_CONTROLLER")
            cmd.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for the fleet (default 180)")
        if name == "down":
            cmd.add_argument("--purge", action="store_true", help="also remove the state directory")
    cmd = sub.add_parser("crds-vendor", help="regenerate tests/crds from upstream CRD files")
    cmd.add_argument("--upstream", required=True, help="upstream originals, one directory per release (capi-<tag>/, with a SOURCES.md)")
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        if args.command == "crds-vendor":
            print(f"{len(crds.vendor(args.upstream))} CRD files written to {crds.VENDORED}", file=sys.stderr)
            return 0
        if args.command == "up":
            Fleet.load(args.fleet, args.state).up(controller=not args.no_controller, timeout=args.timeout)
            return 0
        fleet = Fleet.from_state(args.state)
        if args.fleet:
            wanted = Fleet.load(args.fleet, args.state).clusters
            fleet.clusters = {name: c for name, c in fleet.clusters.items() if name in wanted}
        if args.command == "down":
            fleet.down(purge=args.purge)
        else:
            print(fleet.status())
        return 0
    except (FleetSpecError, ApiError, RuntimeError, TimeoutError, OSError) as err:
        print(f"capisim {args.command}: {err}", file=sys.stderr)
        return 1
