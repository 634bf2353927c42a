# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""rollout_failure_budget (core.refresh.failure_budget): the failure budget over every batch of a run so far."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.capi.rollout.plugins.filter.rollout_failure_budget import rollout_failure_budget

HOSTS = ["mc-1", "mc-2", "mc-3", "mc-4"]


def ran(*outcomes):
    """The results of the first management clusters, in order: failed, succeeded, stopped_window, ..."""
    return [{"name": host, "result": outcome} for host, outcome in zip(HOSTS, outcomes)]


def test_one_management_cluster_per_batch_with_a_budget_of_100_never_stops():
    """Ansible stops a play whose whole batch failed, whatever max_fail_percentage says; the budget must not."""
    for outcomes in (("failed",), ("failed", "failed"), ("failed", "failed", "failed")):
        out = rollout_failure_budget(ran(*outcomes), budget_percent=100, hosts=HOSTS)
        assert out["spent"] is False and out["stop"] is False and out["message"] is None, outcomes
        assert out["failed"] == HOSTS[:len(outcomes)] and out["total"] == len(outcomes)


def test_zero_stops_after_the_first_batch_with_a_failure_and_names_what_is_left():
    assert rollout_failure_budget(ran("succeeded"), budget_percent=0, hosts=HOSTS)["stop"] is False
    out = rollout_failure_budget(ran("succeeded", "failed"), budget_percent="0", hosts=HOSTS)
    assert out["spent"] and out["stop"] and out["not_started"] == ["mc-3", "mc-4"]
    assert out["message"] == (
        "failure budget spent: 1 of 2 management cluster(s) failed so far (mc-2), more than failure_budget_percent=0%; "
        "the later batches are not started: mc-3, mc-4. Fix the failures named in the report, then re-run with the same "
        "refresh id: it continues where this run stopped.")


def test_the_budget_counts_every_batch_so_far_not_only_the_last():
    # 1 of 2 (50%) is within 50; the next batch of one more failure makes 2 of 3 (67%): spent
    assert rollout_failure_budget(ran("failed", "succeeded"), budget_percent=50, hosts=HOSTS)["spent"] is False
    out = rollout_failure_budget(ran("failed", "succeeded", "failed"), budget_percent=50, hosts=HOSTS)
    assert out["spent"] and out["stop"] and out["not_started"] == ["mc-4"]
    # a closed window is no failure; after the last batch nothing is left to stop
    assert rollout_failure_budget(ran("stopped_window", "stopped_window"), budget_percent=0, hosts=HOSTS)["spent"] is False
    last = rollout_failure_budget(ran("failed", "failed", "failed", "failed"), budget_percent=0, hosts=HOSTS)
    assert last["spent"] and last["stop"] is False and last["message"] is None


def test_a_management_cluster_that_failed_without_a_result_counts_as_failed():
    out = rollout_failure_budget(ran("succeeded"), budget_percent=40, hosts=HOSTS, failed_hosts=["mc-2"])
    assert out["failed"] == ["mc-2"] and out["total"] == 2 and out["stop"]


@pytest.mark.parametrize("bad", [150, "abc", -1, "", None, True, 12.5])
def test_a_budget_that_is_not_a_percentage_is_refused_naming_the_variable(bad):
    with pytest.raises(AnsibleFilterError, match=r"failure_budget_percent must be a whole number from 0 to 100 .*got "):
        rollout_failure_budget(ran("failed"), budget_percent=bad, hosts=HOSTS)
