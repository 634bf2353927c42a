"""pytest plugin: local CAPI management-cluster fleets as fixtures (``-p capisim.pytest_plugin``).

``fleet_factory(spec)`` (session scope) brings a fleet up in a temporary directory once per
distinct spec (a dict or a YAML path) and stops it, by PID, at the end of the session::

    def test_x(fleet_factory):
        fleet = fleet_factory("tests/fleets/single-v1.14.yml")
        mgmt = fleet.cluster()                       # the only (or a named) management cluster
        mark = mgmt.audit_mark()
        mgmt.api("rollout-operator").patch_merge(path, patch)
        assert len(mgmt.audit_log(since=mark).writes("rollout-operator")) == 1

Users: admin (system:masters), rollout-operator (docs/rbac.yml), viewer, capi-controller-manager.
The controller simulator runs when it exists, unless $CAPISIM_NO_CONTROLLER is set; tests that
need it carry ``@pytest.mark.needs_controller`` and are skipped otherwise.
"""

import json
import os

import pytest

from . import crds
from .audit import AuditReader
from .fleet import Fleet, controller_available
from .fleetspec import load_fleet


def controller_enabled():
    return controller_available() and not os.environ.get("CAPISIM_NO_CONTROLLER")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_controller: needs the CAPI controller simulator (capisim.controller)")


def pytest_runtest_setup(item):
    if item.get_closest_marker("needs_controller") and not controller_enabled():
        pytest.skip("the CAPI controller simulator is not available (capisim.controller missing or $CAPISIM_NO_CONTROLLER)")


# A skip is a failure of the run unless the test declares it an opt-in ("opt-in: ..." reason) or the caller
# allows skips ($CAPISIM_ALLOW_SKIPS, for local work without the controller): a green run never hides tests
# that did not run.
OPT_IN_PREFIX = "opt-in:"
_UNEXPECTED_SKIPS = []


def _skip_reason(report):
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).replace("Skipped: ", "", 1)
    return str(longrepr)


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        reason = _skip_reason(report)
        if not reason.startswith(OPT_IN_PREFIX):
            _UNEXPECTED_SKIPS.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session, exitstatus):
    if _UNEXPECTED_SKIPS and exitstatus == 0 and not os.environ.get("CAPISIM_ALLOW_SKIPS") \
            and not hasattr(session.config, "workerinput"):
        session.exitstatus = 1
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"{len(_UNEXPECTED_SKIPS)} test(s) skipped that were not told to skip "
                                "(set CAPISIM_ALLOW_SKIPS=1 to allow it):", red=True)
            for line in _UNEXPECTED_SKIPS[:20]:
                reporter.write_line(f"  {line}")


class ClusterHandle:
    """One running management cluster of a test fleet."""

    def __init__(self, cluster):
        self.cluster = cluster
        self.name = cluster.name
        self.capi_version = cluster.capi_version
        self.api_version = crds.api_version(cluster.capi_version)
        info = cluster.info()
        self.server = info["server"]
        self.ca_file = info["paths"]["ca"]
        self.pids = dict(info["pids"])
        self._audit = AuditReader(cluster.audit_log, cluster.api("admin"))

    def api(self, user="admin"):
        """A fresh KubeAPI for a user: admin, rollout-operator, viewer or capi-controller-manager."""
        return self.cluster.api(user)

    def restart_apiserver(self, down_seconds):
        """Stop the API server for ``down_seconds``, then start it again (cluster.Cluster.restart_apiserver)."""
        self.cluster.restart_apiserver(down_seconds)
        self.pids = dict(self.cluster.info()["pids"])

    def freeze_apiserver(self):
        self.cluster.freeze_apiserver()

    def thaw_apiserver(self):
        self.cluster.thaw_apiserver()

    def kubeconfig(self, user="admin"):
        return self.cluster.kubeconfig(user)

    def audit_mark(self):
        """Mark the audit log now; pass the result as audit_log(since=...) to see one step's requests."""
        return self._audit.mark()

    def audit_log(self, since=None):
        """The audit events received so far (after `since`), as an AuditLog."""
        return self._audit.read(since)


class FleetHandle:
    """A running fleet: its management clusters by name, state directory and Ansible inventory."""

    def __init__(self, fleet):
        self.fleet = fleet
        self.state = fleet.state
        self.inventory = fleet.inventory
        self.clusters = {name: ClusterHandle(c) for name, c in fleet.clusters.items()}

    def cluster(self, name=None):
        if name is None:
            if len(self.clusters) != 1:
                raise ValueError(f"the fleet has {len(self.clusters)} management clusters; name one of {sorted(self.clusters)}")
            return next(iter(self.clusters.values()))
        return self.clusters[name]


@pytest.fixture(scope="session")
def fleet_factory(tmp_path_factory):
    """Callable spec -> FleetHandle; one fleet per distinct spec per session, all stopped at the end."""
    fleets = {}

    def factory(spec, controller=None):
        """spec: dict or YAML path. controller: run the simulator (default: when available)."""
        normalized = load_fleet(spec)
        controller = controller_enabled() if controller is None else controller
        key = json.dumps([normalized, controller], sort_keys=True)
        if key not in fleets:
            fleet = Fleet(normalized, tmp_path_factory.mktemp("fleet"))
            fleet.up(controller=controller)  # stops what it started when it fails
            fleets[key] = FleetHandle(fleet)
        return fleets[key]

    yield factory
    for handle in fleets.values():
        handle.fleet.down()
