# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import settings

KNOWN = ["hardware_refresh_wait_timeout", "hardware_refresh_stall_timeout", "hardware_refresh_soak_seconds"]


@pytest.mark.parametrize("name, value", [
    ("hardware_refresh_stall_timeout", 0), ("hardware_refresh_wait_timeout", -1), ("hardware_refresh_soak_seconds", -5),
    ("hardware_refresh_wait_timeout", "soon"), ("hardware_refresh_wait_timeout", True), ("hardware_refresh_wait_timeout", 1.5),
    ("hardware_refresh_soak_seconds", "1e11"), ("hardware_refresh_soak_seconds", 86401), ("hardware_refresh_wait_timeout", "12.5"),
    ("hardware_refresh_window_minutes", "5m"), ("hardware_refresh_max_in_flight", "150%"), ("hardware_refresh_max_in_flight", 0),
    ("hardware_refresh_lock_duration", 2),
])
def test_out_of_range_or_not_a_whole_number(name, value):
    (problem,) = settings.errors({name: value}, KNOWN, [])
    assert problem.startswith(f"{name} must be a whole number from ") and repr(value) in problem


@pytest.mark.parametrize("value", [1, "300", " 30 ", 86400])
def test_in_range_and_survey_text(value):
    assert settings.errors({"hardware_refresh_soak_seconds": value, "hardware_refresh_wait_timeout": value}, KNOWN, []) == []


def test_unknown_variables_are_named_with_the_closest_option():
    problems = settings.errors({}, KNOWN, ["hardware_refresh_soak_second", "hardware_refresh_wait_timeout", "hardware_refresh_zzz"])
    assert problems == ["hardware_refresh_soak_second is not a setting of this role; did you mean hardware_refresh_soak_seconds?",
                        "hardware_refresh_zzz is not a setting of this role"]


@pytest.mark.parametrize("value", ["y", "t", "maybe", "yes please", 2, [], "n"])
def test_role_booleans_that_the_bool_filter_would_guess_are_refused(value):
    (problem,) = settings.errors({"hardware_refresh_canary": value}, KNOWN, [], types={"hardware_refresh_canary": "bool"})
    assert problem == f"hardware_refresh_canary must be true or false (also yes/no, on/off, 1/0), got {value!r}"


@pytest.mark.parametrize("value", [True, False, "yes", "NO", " on ", "0", 1])
def test_role_booleans_as_the_bool_filter_takes_them(value):
    assert settings.errors({"hardware_refresh_canary": value}, KNOWN, [], types={"hardware_refresh_canary": "bool"}) == []


def test_the_role_s_window_is_checked_before_anything_is_read():
    problems = settings.errors({"hardware_refresh_not_before": "2026-02-30T00:00:00Z", "hardware_refresh_not_after": ""}, KNOWN, [])
    assert problems == ["hardware_refresh_not_before: '2026-02-30T00:00:00Z' is not an RFC 3339 time such as "
                        "2026-11-30T22:00:00Z (a real date and time, year 9999 at most, with Z or an offset such as +02:00)"]
    (problem,) = settings.errors({"hardware_refresh_not_before": "2026-12-02T00:00:00Z",
                                  "hardware_refresh_not_after": "2026-12-01T00:00:00Z"}, KNOWN, [])
    assert problem.startswith("hardware_refresh_not_after (2026-12-01T00:00:00Z) must be later than hardware_refresh_not_before")


def test_every_bound_is_a_sane_range_with_its_reason():
    for key, bound in settings.BOUNDS.items():
        assert 0 <= bound.low < bound.high and bound.what and bound.why, key
        # the boundaries themselves are in range, one past them is not
        assert settings.bound_problem(key, bound.low, key) is None and settings.bound_problem(key, bound.high, key) is None
        assert settings.bound_problem(key, bound.high + 1, key).startswith(f"{key} must be a whole number from {bound.low} to {bound.high}")
        if bound.low > 0:
            assert settings.bound_problem(key, bound.low - 1, key) is not None
    # a soak holds the lock: at most a day; a wait at most a week; the percentages at most 100
    assert settings.BOUNDS["soak_seconds"].high == 86400 and settings.BOUNDS["wait_timeout"].high == 7 * 86400
    assert settings.BOUNDS["failure_budget_percent"].high == 100
    for table in (settings.MODULE_BOUNDS, settings.LOCK_BOUNDS, settings.ROLE_BOUNDS):
        assert set(table.values()) <= set(settings.BOUNDS)
    assert {kind.split(":", 1)[1] for kind in settings.PLAYBOOK_VARIABLES.values() if kind.startswith("bound:")} <= set(settings.BOUNDS)


@pytest.mark.parametrize("value, accepted", [
    ("25%", True), ("100%", True), (" 1 % ", True), (3, True), ("3", True), ("0%", False), ("150%", False), ("12.5%", False),
    ("%", False), ("abc", False), (0, False), (True, False), ("10001", False), (2.0, False),
])
def test_counts_or_percentages(value, accepted):
    assert (settings.bound_problem("batch_size", value, "batch_size") is None) is accepted


@pytest.mark.parametrize("value, number", [
    (5, 5), ("5", 5), (" -3 ", -3), ("+7", 7), ("12.5", None), ("12.0", None), ("1e11", None), ("5m", None), (True, None),
    (12.0, None), ("", None), (None, None), ("1_000", None), ("Infinity", None), ("NaN", None),
])
def test_whole_numbers_as_given_or_as_survey_text_and_nothing_else(value, number):
    assert settings.whole_number(value) == number


@pytest.mark.parametrize("value, answer", [
    (True, True), ("Yes", True), ("ON", True), (1, True), ("1", True), (" true ", True),
    (False, False), ("no", False), ("0", False), ("off", False), (0, False),
    ("maybe", None), ("y", None), ("t", None), ("yes please", None), (2, None), (None, None), ("", None), (1.0, None),
])
def test_booleans(value, answer):
    assert settings.boolean(value) is answer


@pytest.mark.parametrize("params, expected", [
    ({"wait_timeout": 0}, "wait_timeout must be a whole number from 1 to 604800 seconds"),
    ({"stall_timeout": "0"}, "stall_timeout must be a whole number from 1 to 86400 seconds"),
    ({"soak_seconds": -1}, "soak_seconds must be a whole number from 0 to 86400 seconds"),
    ({"soak_seconds": 100000000000}, "soak_seconds must be a whole number from 0 to 86400 seconds"),
    ({"poll_interval": True}, "poll_interval must be a whole number from 1 to 3600 seconds"),
    ({"history_limit": 1000}, "history_limit must be a whole number from 1 to 100 entries"),
    ({"max_in_flight": "150%"}, "max_in_flight must be a whole number from 1 to 10000 objects or a whole percentage"),
    ({"progress_verbosity": 9}, "progress_verbosity must be a whole number from 0 to 6"),
    ({"lease": {"lease_duration_seconds": 0}}, "lease.lease_duration_seconds must be a whole number from 1 to 86400"),
    ({"lock": {"lease_duration_seconds": 86401}}, "lock.lease_duration_seconds must be a whole number from 1 to 86400"),
    ({"objects": []}, "objects is empty"),
    ({"rollout_id": "has spaces"}, "rollout_id must be 1-128 letters"),
    ({"rollout_id": "-starts-with-a-dash"}, "rollout_id must be"),
    ({"rollout_id": "x" * 129}, "rollout_id must be"),
])
def test_module_options_out_of_range(params, expected):
    problems = settings.module_errors(params)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_module_options_in_range_and_the_lock_s_own_bounds():
    assert settings.module_errors({"wait_timeout": 1, "stall_timeout": "5", "soak_seconds": 0, "poll_interval": None,
                                   "rollout_id": "CHG-1234/hw-2026-12_a:b.c", "objects": [{"name": "md-0"}],
                                   "max_in_flight": "25%", "lease": {"lease_duration_seconds": 300}}) == []
    assert settings.module_errors({"wait_timeout": 0, "poll_interval": 5}, settings.LOCK_BOUNDS) == []
    assert settings.module_errors({"wait_timeout": -1}, settings.LOCK_BOUNDS)[0].startswith("wait_timeout must be")


SPEC = {
    "wait_timeout": {"type": "int"}, "name": {"type": "str"}, "names": {"type": "list", "elements": "str"},
    "overrides": {"type": "dict"}, "wait": {"type": "bool"}, "kubeconfig": {"type": "raw"},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"]},
    "objects": {"type": "list", "elements": "dict", "options": {"name": {"type": "str"}, "wait_timeout": {"type": "int"}}},
    "lease": {"type": "dict", "options": {"lease_duration_seconds": {"type": "int"}}},
}


@pytest.mark.parametrize("given, expected", [
    ({"wait_timeout": "12.0"}, "wait_timeout must be a whole number, got text '12.0'"),
    ({"wait_timeout": "1e3"}, "wait_timeout must be a whole number, got text '1e3'"),
    ({"wait_timeout": True}, "wait_timeout must be a whole number, got a boolean True"),
    ({"wait_timeout": 30.0}, "wait_timeout must be a whole number, got a number 30.0"),
    ({"name": True}, "name must be text, got a boolean True"),
    ({"name": {"a": 1}}, "name must be text, got a mapping {'a': 1}"),
    ({"ssl_ca_cert": ["a"]}, "ssl_ca_cert must be text, got a list ['a']"),
    ({"overrides": "customImage=x"}, "overrides must be a mapping, got text 'customImage=x'"),
    ({"names": [{"a": 1}]}, "names[0] must be text, got a mapping {'a': 1}"),
    ({"names": 5}, "names must be a list, got a number 5"),
    ({"objects": ["md-0"]}, "objects[0] must be a mapping, got text 'md-0'"),
    ({"objects": "md-0"}, "objects must be a list, got text 'md-0'"),
    ({"objects": [{"name": "md-0", "wait_timeout": "5m"}]}, "objects[0].wait_timeout must be a whole number, got text '5m'"),
    ({"lease": {"lease_duration_seconds": "12.5"}}, "lease.lease_duration_seconds must be a whole number, got text '12.5'"),
    ({"name": "wa\x00md"}, "name contains the control character '\\x00' at position 2"),
    ({"overrides": {"image": "a\x1bb"}}, "overrides.image contains the control character '\\x1b' at position 1"),
])
def test_options_as_given_are_refused_where_ansible_would_convert_them(given, expected):
    problems = settings.given_problems(SPEC, dict(given, _ansible_check_mode=False))
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_options_as_given_that_ansible_takes_as_they_are_pass():
    given = {"wait_timeout": "30", "name": "md-0", "names": "a,b", "overrides": {"x": [1, "b"]}, "wait": "yes",
             "kubeconfig": {"any": ["thing"]}, "ssl_ca_cert": "/ca.pem", "objects": [{"name": "md-0", "wait_timeout": 5}],
             "reason": "not an option of the spec", "lease": {"lease_duration_seconds": "300"}}
    assert settings.given_problems(SPEC, given) == []


def test_a_long_value_is_shown_cut_with_its_length():
    problem = settings.text_problem("reason", "x" * 200000)
    assert problem.startswith("reason is 200000 characters long ('xxx") and "... (200000 characters)" in problem
    assert len(problem) < 300


READ = {"{a: [": ValueError("not YAML"), "a: 1": {"a": 1}, "[1]": [1], "plain": "plain"}


def parse(text):
    value = READ[text]
    if isinstance(value, Exception):
        raise value
    return value


@pytest.mark.parametrize("values, expected", [
    ({"batch_size": "abc"}, "batch_size must be a whole number from 1 to 10000 management clusters or a whole percentage "
                            "from 1% to 100%"),
    ({"batch_size": 0}, "batch_size must be a whole number from 1 to 10000"),
    ({"failure_budget_percent": 150}, "failure_budget_percent must be a whole number from 0 to 100 percent"),
    ({"failure_budget_percent": "12.5"}, "failure_budget_percent must be a whole number from 0 to 100 percent"),
    ({"max_in_flight": "150%"}, "max_in_flight must be a whole number from 1 to 10000 objects or a whole percentage"),
    ({"soak_seconds": "1e11"}, "soak_seconds must be a whole number from 0 to 86400 seconds"),
    ({"window_minutes": "5m"}, "window_minutes must be a whole number from 0 to 10080 minutes"),
    ({"not_after": "tomorrow"}, "not_after: 'tomorrow' is not an RFC 3339 time such as 2026-11-30T22:00:00Z"),
    ({"not_before": "2026-02-30T00:00:00Z"}, "not_before: '2026-02-30T00:00:00Z' is not an RFC 3339 time"),
    ({"not_after": "10000-01-01T00:00:00Z"}, "not_after: '10000-01-01T00:00:00Z' is not an RFC 3339 time"),
    ({"not_before": "2026-12-02T00:00:00Z", "not_after": "2026-12-01T00:00:00Z"},
     "not_after (2026-12-01T00:00:00Z) must be later than not_before (2026-12-02T00:00:00Z)"),
    ({"canary": "yes please"}, "canary must be true or false (also yes/no, on/off, 1/0), got 'yes please'"),
    ({"restart": "y"}, "restart must be true or false (also yes/no, on/off, 1/0), got 'y'"),
    ({"on_blocked": "ignore"}, "on_blocked must be one of fail, skip, got 'ignore'"),
    ({"refresh_id": "hw 2026"}, "refresh_id must be 1-63 letters"),
    ({"restart_id": "x" * 64}, "restart_id must be 1-63 letters"),
    ({"reason": "a\x00b"}, "reason contains the control character '\\x00' at position 1"),
    ({"report_dir": ["a"]}, "report_dir must be text, got a list ['a']"),
    ({"clusters": {"a": 1}}, "clusters must be a list of names, or text of names separated by commas or blanks, got a mapping"),
    ({"machine_deployments": [""]}, "machine_deployments[0] must be a non-empty name"),
    ({"label_selectors": [{"a": 1}]}, "label_selectors[0] must be a non-empty name"),
    ({"namespaces": "team-a\x00"}, "namespaces contains the control character"),
    ({"template_overrides": "{a: ["}, "template_overrides must be a mapping, or YAML or JSON text of one; its text is not YAML"),
    ({"template_overrides": "[1]"}, "template_overrides must be a mapping, or YAML or JSON text of one, got a list [1]"),
    ({"object_templates": "plain"}, "object_templates must be a mapping, or YAML or JSON text of one, got text 'plain'"),
    ({"object_templates": ["a"]}, "object_templates must be a mapping, or YAML or JSON text of one, got a list"),
])
def test_playbook_variables_name_what_was_given_and_what_is_accepted(values, expected):
    problems = settings.playbook_errors(values, list(values), parse_text=parse)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_playbook_variables_as_values_or_survey_text_pass():
    values = {"batch_size": "25%", "failure_budget_percent": "0", "max_in_flight": 2, "soak_seconds": " 60 ", "canary": "Yes",
              "restart": False, "on_blocked": "skip", "not_before": "2026-12-01T22:00:00+01:00", "not_after": "2026-12-02T04:00:00Z",
              "refresh_id": "hw-2026-12", "reason": "CHG-1", "clusters": "wa, wb", "namespaces": ["default"],
              "label_selectors": "pool in (a, b)\ntier=gpu", "template_overrides": "a: 1", "object_templates": {"cluster:wa": {}},
              "report_dir": "", "window_minutes": None}
    assert settings.playbook_errors(values, list(values), parse_text=parse) == []


def test_unknown_variables_close_to_a_playbook_variable_are_typos():
    present = ["max_inflight", "batchsize", "namespace", "inventory_file", "capi_kubeconfig", "ansible_forks", "awx_job_id",
               "hardware_refresh_soak_seconds", "groups", "my_own_variable", "max_in_flight"]
    assert settings.playbook_errors({}, present) == [
        "batchsize is not a variable of playbooks/hardware_refresh.yml (its header lists them); did you mean batch_size?",
        "max_inflight is not a variable of playbooks/hardware_refresh.yml (its header lists them); did you mean max_in_flight?",
        "namespace is not a variable of playbooks/hardware_refresh.yml (its header lists them); did you mean namespaces?",
    ]


@pytest.mark.parametrize("refresh_id", ["", " hw-1", "hw 1", "x" * 64, "-hw", None, 7])
def test_refresh_id_must_be_a_short_token(refresh_id):
    (problem,) = settings.errors({"hardware_refresh_id": refresh_id}, KNOWN, [])
    assert problem.startswith("hardware_refresh_id must be 1-63 letters, digits, '.', '_', ':' or '-'")
    assert problem.endswith(f"got {'nothing' if refresh_id is None else refresh_id}")


@pytest.mark.parametrize("refresh_id", ["hw-2026-11", "a", "x" * 63, "run:1_b.c"])
def test_usable_refresh_ids_pass(refresh_id):
    assert settings.errors({"hardware_refresh_id": refresh_id}, KNOWN, []) == []


@pytest.mark.parametrize("restart,overrides,objects,problem", [
    (False, {}, {}, True),
    ("false", {}, {}, True),  # an AWX survey answer
    (None, {}, {}, True),
    (True, {}, {}, False),
    ("yes", {}, {}, False),
    (False, {"instanceType": "m7i.large"}, {}, False),
    (False, {}, {"MachineDeployment/ns/md-0": {"overrides": {"instanceType": "m7i.large"}}}, False),
])
def test_new_templates_must_differ_unless_restarting(restart, overrides, objects, problem):
    values = {"hardware_refresh_restart": restart, "hardware_refresh_template_overrides": overrides,
              "hardware_refresh_object_templates": objects}
    found = settings.errors(values, KNOWN, [])
    assert bool(found) is problem
    if problem:
        assert found[0].startswith("hardware_refresh_template_overrides is empty, so every new template would be a copy")


HOOK_MISSING = {"hooks/smoke.yml": ("/work/project/hooks/smoke.yml", False)}


@pytest.mark.parametrize("files, expected", [
    (HOOK_MISSING, ["hardware_refresh_after_wave: 'hooks/smoke.yml' is no task file on the Ansible host "
                    "(/work/project/hooks/smoke.yml does not exist or is not a file); give the path of a task file, absolute "
                    "or relative to the directory ansible-playbook runs in (empty: no hook)"]),
    ({"hooks/smoke.yml": ("/work/project/hooks/smoke.yml", True)}, []),
])
def test_a_hook_names_a_task_file_that_exists(files, expected):
    values = {"hardware_refresh_before_wave": "", "hardware_refresh_after_wave": "hooks/smoke.yml"}
    assert settings.errors(values, KNOWN, [], files=files) == expected


def test_a_hook_of_the_playbook_is_checked_as_the_role_checks_it():
    assert settings.playbook_errors({"before_wave": "hooks/smoke.yml", "after_wave": ""}, files=HOOK_MISSING) == [
        "before_wave: 'hooks/smoke.yml' is no task file on the Ansible host (/work/project/hooks/smoke.yml does not exist or "
        "is not a file); give the path of a task file, absolute or relative to the directory ansible-playbook runs in "
        "(empty: no hook)"]
    (problem,) = settings.playbook_errors({"after_wave": ["a.yml"]})
    assert problem == "after_wave must be text, got a list ['a.yml']"
