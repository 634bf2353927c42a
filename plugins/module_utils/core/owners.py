# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who owns the fields a write changes (no I/O).

Every write of this collection is made as one field manager, ``FIELD_MANAGER`` (client.requests sends it with
every POST, PUT and PATCH), the same for every module and release, so that ``managedFields`` tells its writes
from those of GitOps controllers, Helm, the Cluster topology controller or a person.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

# Never changes: a new name would leave the fields of earlier runs to a manager nobody writes as.
FIELD_MANAGER = "capi-rollout"
