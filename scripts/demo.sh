#!/usr/bin/env bash
# `make demo`, after `make sim-up` started the demo fleet (tests/fleets/demo.yml): print the check-mode
# plan of a fleet-wide hardware refresh (nothing is written), run the refresh over every management
# cluster, and say where the reports are.
# usage: scripts/demo.sh VENV_DIR SIM_STATE_DIR   (environment: REFRESH_ID, REPORT_DIR, DEMO_VARS to override)
set -euo pipefail
venv=${1:-.venv}
state=${2:-.sim}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
inventory=$state/inventory.yml
[ -f "$inventory" ] || { echo "no fleet in $state (run: make sim-up)" >&2; exit 1; }
refresh_id=${REFRESH_ID:-demo-$(date -u +%Y%m%d-%H%M%S)}
report_dir=${REPORT_DIR:-report/$refresh_id}
# Absolute: the role writes relative paths next to the playbook, not where this script runs.
case $report_dir in /*) ;; *) report_dir=$root/$report_dir ;; esac
export ANSIBLE_CONFIG=${ANSIBLE_CONFIG:-$root/ansible.cfg}
# Every worker and control plane of the fleet onto "new hardware" (a new node image), two objects per
# wave after a canary, a short soak; the ClusterClass clusters through their Cluster topology (their
# classes patch the image variables onto customImage); blocked objects (paused, OnDelete) are
# skipped and reported instead of stopping their management cluster.
vars=${DEMO_VARS:-'{"template_overrides": {"customImage": "kindest/node:gen2"}, "control_plane": true,
  "max_in_flight": 2, "canary": true, "soak_seconds": 3, "poll_interval": 2, "stall_timeout": 120,
  "wait_timeout": 600, "on_blocked": "skip", "lock_duration": 60, "failure_budget_percent": 100}'}

echo "== 1/2 the plan (check mode: nothing is written) =="
"$venv/bin/ansible-playbook" -i "$inventory" playbooks/hardware_refresh.yml --check --diff \
  -e "$vars" -e refresh_id="$refresh_id" -e report_dir="$report_dir/plan"

echo "== 2/2 the refresh =="
status=0
"$venv/bin/ansible-playbook" -i "$inventory" playbooks/hardware_refresh.yml \
  -e "$vars" -e refresh_id="$refresh_id" -e report_dir="$report_dir" || status=$?

echo
echo "Plan:   $report_dir/plan/report.html"
echo "Report: $report_dir/report.html (also report.md and report.json)"
echo "Fleet state: make sim-status; stop the fleet with: make sim-down"
exit $status
