"""The execution environment: execution-environment/execution-environment.yml is a valid ansible-builder 3
definition whose build context carries the collection's Python and system requirements, and the built
collection declares the same requirements to ansible-builder's introspection (meta/execution-environment.yml).
No image is built (no container engine here): `ansible-builder create` writes the context only.
ansible-builder comes from the galaxy venv (`make venv-galaxy`, requirements/galaxy.txt)."""

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
EE_DIR = REPO / "execution-environment"
BUILDER = REPO / ".venv-galaxy" / "bin" / "ansible-builder"
GALAXY = Path(sys.executable).parent / "ansible-galaxy"


def requirement_lines(path):
    return [line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def run(*args, cwd=None):
    # no ansible.cfg of this checkout (its collections_path already has capi.rollout, linked)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False, cwd=cwd or REPO.parent, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_definition_uses_the_collections_own_requirement_files_as_its_metadata_does():
    definition = yaml.safe_load((EE_DIR / "execution-environment.yml").read_text(encoding="utf-8"))
    meta = yaml.safe_load((REPO / "meta" / "execution-environment.yml").read_text(encoding="utf-8"))
    assert definition["version"] == 3
    base = definition["images"]["base_image"]["name"]
    assert "/" in base and ":" in base and not base.endswith(":latest"), base
    deps = definition["dependencies"]
    # meta/ names files relative to the collection root, the definition relative to its own folder
    assert (EE_DIR / deps["python"]).resolve() == (REPO / meta["dependencies"]["python"]).resolve() == REPO / "requirements.txt"
    assert (EE_DIR / deps["system"]).resolve() == (REPO / meta["dependencies"]["system"]).resolve() == REPO / "bindep.txt"
    galaxy = yaml.safe_load((EE_DIR / deps["galaxy"]).read_text(encoding="utf-8"))
    (collection,) = galaxy["collections"]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert collection["type"] == "git" and collection["name"] in readme, collection


def test_ansible_builder_create_writes_a_context_with_the_collections_requirements(tmp_path):
    context = tmp_path / "context"
    run(BUILDER, "create", "--file", EE_DIR / "execution-environment.yml", "--context", context,
        "--output-filename", "Containerfile")
    containerfile = (context / "Containerfile").read_text(encoding="utf-8")
    definition = yaml.safe_load((EE_DIR / "execution-environment.yml").read_text(encoding="utf-8"))
    assert definition["images"]["base_image"]["name"] in containerfile
    assert requirement_lines(context / "_build" / "requirements.txt") == requirement_lines(REPO / "requirements.txt")
    assert requirement_lines(context / "_build" / "bindep.txt") == requirement_lines(REPO / "bindep.txt")
    assert "kubernetes>=24.2.0" in requirement_lines(context / "_build" / "requirements.txt")
    assert (context / "_build" / "requirements.yml").read_text(encoding="utf-8") == (EE_DIR / "requirements.yml").read_text(encoding="utf-8")


def test_ansible_builder_introspect_of_the_built_collection_finds_its_requirements(collection_tarball, tmp_path):
    tarball = collection_tarball
    collections = tmp_path / "collections"
    run(GALAXY, "collection", "install", tarball, "-p", collections, cwd=tmp_path)
    data = yaml.safe_load(run(BUILDER, "introspect", "--sanitize", collections).split("\n", 1)[1])
    assert "kubernetes>=24.2.0  # from collection capi.rollout" in data["python"], data
    assert "ca-certificates [platform:dpkg platform:rpm]  # from collection capi.rollout" in data["system"], data
    # PyYAML is in requirements.txt; ansible-builder leaves it out of a collection's list (every EE has it)
    assert not [line for line in data["python"] if line.lower().startswith("pyyaml")], data
    # what the image build installs: the collections' requirements merged with the definition's own
    pip_out, bindep_out = tmp_path / "pip.txt", tmp_path / "bindep.txt"
    run(BUILDER, "introspect", "--sanitize", "--user-pip", REPO / "requirements.txt", "--user-bindep", REPO / "bindep.txt",
        "--write-pip", pip_out, "--write-bindep", bindep_out, collections)
    for written, source in ((pip_out, "requirements.txt"), (bindep_out, "bindep.txt")):
        lines = requirement_lines(written)
        assert {line.split("#")[0].strip() for line in lines} == set(requirement_lines(REPO / source)), lines
        assert any(line.endswith("# from collection capi.rollout") for line in lines), lines
