# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Survey answers given as YAML or JSON text, read on the controller (the modules' code has no YAML)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import yaml


def parse_text(text):
    """YAML or JSON text as data; ValueError (one line) when it is neither."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(" ".join(str(err).split()))
