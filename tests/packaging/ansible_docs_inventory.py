"""Write a small Sphinx intersphinx inventory of the docs.ansible.com labels that the generated
collection docs link to, so `make docs` resolves them offline (no inventory download) and still
fails, with -W, on any other unresolved reference.

usage: python ansible_docs_inventory.py OUTPUT.inv
"""

import sys
import zlib

# label -> (page#anchor relative to https://docs.ansible.com/projects/ansible/devel/, title)
LABELS = {
    "common_return_values": ("reference_appendices/common_return_values.html#common-return-values",
                             "Return Values"),
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
    "ansible_configuration_settings": ("reference_appendices/config.html#ansible-configuration-settings",
                                       "Ansible Configuration Settings"),
}
BUILTIN_MODULES = ["copy"]
for module in BUILTIN_MODULES:
    label = "ansible_collections.ansible.builtin.%s_module" % module
    LABELS[label] = ("collections/ansible/builtin/%s_module.html#%s" % (module, label.replace(".", "-").replace("_", "-")),
                     "ansible.builtin.%s module" % module)


def main(path):
    body = "".join("%s std:label -1 %s %s\n" % (name, uri, title) for name, (uri, title) in sorted(LABELS.items()))
    header = ("# Sphinx inventory version 2\n# Project: Ansible\n# Version: devel\n"
              "# The remainder of this file is compressed using zlib.\n")
    with open(path, "wb") as out:
        out.write(header.encode() + zlib.compress(body.encode()))


if __name__ == "__main__":
    main(sys.argv[1])
