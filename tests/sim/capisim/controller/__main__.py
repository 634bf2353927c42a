"""``python -m capisim.controller --kubeconfig PATH --capi-version RELEASE (capisim.releases) [--log FILE]``: run until SIGTERM."""

import argparse
import faulthandler
import logging
import signal
import sys

from ..kubeapi import KubeAPI
from ..releases import RELEASES
from .loop import Controller


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m capisim.controller", description=__doc__)
    parser.add_argument("--kubeconfig", required=True, help="kubeconfig of the capi-controller-manager identity")
    parser.add_argument("--capi-version", required=True, choices=sorted(RELEASES), help="CAPI release to simulate")
    parser.add_argument("--log", help="action log file (one line per action); default: stderr")
    parser.add_argument("--sync-period", type=float, default=600.0, help="resync every object this often (seconds)")
    parser.add_argument("--topology", action="store_true",
                        help="run the topology controller (the ClusterClass CRDs are installed)")
    parser.add_argument("--in-place-accepts", help="InPlaceUpdates on: comma-separated template fields the update "
                                                   "extension accepts in place (infrastructureRef,version,bootstrap)")
    parser.add_argument("--in-place-seconds", type=float, default=1.0, help="how long an in-place update takes")
    parser.add_argument("--verbose", action="store_true", help="also log conflicts and retries")
    args = parser.parse_args(argv)

    handler = logging.FileHandler(args.log, encoding="utf-8") if args.log else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s.%(msecs)03d %(levelname)s %(message)s", "%Y-%m-%dT%H:%M:%S"))
    logger = logging.getLogger("capisim.controller")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if args.verbose else logging.INFO)

    controller = Controller(lambda: KubeAPI.from_kubeconfig(args.kubeconfig), args.capi_version, sync_period=args.sync_period,
                            topology=args.topology,
                            in_place_accepts=None if args.in_place_accepts is None
                            else [f for f in args.in_place_accepts.split(",") if f],
                            in_place_seconds=args.in_place_seconds)

    def stop(signum, _frame):
        logger.info("signal %d: stopping", signum)
        controller.stop.set()

    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 PID` prints every thread's stack to stderr
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    logger.info("capisim controller for CAPI %s (%s) against %s", args.capi_version, controller.api_version,
                controller.api.server)
    controller.run()
    logger.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
