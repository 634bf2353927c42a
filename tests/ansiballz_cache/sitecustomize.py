"""Caches for the module runs of the tests: bytecode, on when $CAPI_ROLLOUT_BYTECODE_CACHE names a directory, and
AnsiballZ payloads, on when $CAPI_ROLLOUT_PAYLOAD_CACHE does.

AnsiballZ ships a module and the module_utils it imports as Python source in a zip, which the module's process imports
with zipimport. zipimport cannot write bytecode, so every module run compiles the same source again: about half the
CPU of a module run (0.2 of 0.4 s), thousands of times in `make test`. Python imports this file at start from
$PYTHONPATH (the Makefile's test targets put this directory there); it makes zipimport keep what it compiles, keyed
by the source itself, the interpreter's bytecode version and optimization level, as __pycache__ does for files. The
module still runs from its own zip: the code of a source never seen is compiled, and the file names in tracebacks are
this run's (``_imp._fix_co_filename``, as importlib does for a .pyc).

ansible-playbook builds each module's payload (the zip of the module and the module_utils it imports, found by parsing
each file) once per run, in ``ansiballz_cache`` of the run's local temporary directory: 0.15 CPU s for every run of
a capi.rollout module. The runs of tests/integration/forkserver.py share their server's; the exec'd runs (Molecule,
AWX, background refreshes, conformance) and each new server's first do not. With the payload cache, that directory is
a link to one shared by the runs, keyed by the Python, the ansible-core installation and every file of this checkout's
``plugins/modules`` and ``plugins/module_utils``: a changed source makes a new key, so a run never gets a payload of
other code. That key holds every source a payload can have only when this checkout is the one collection Ansible can
load modules from (besides ansible-core's own), so a run that could find another (kubernetes.core, in the benchmark's
venv) keeps its own cache. Only for ansible-core 2.19 and newer, which lock the cache across processes
(``_locking.named_mutex``); older releases lock it within one run only, so they keep their own too.
"""

import os


def _install(cache_dir):
    import _imp  # pylint: disable=import-outside-toplevel
    import hashlib  # pylint: disable=import-outside-toplevel
    import importlib.util  # pylint: disable=import-outside-toplevel
    import marshal  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel
    import zipimport  # pylint: disable=import-outside-toplevel

    compile_source = zipimport._compile_source  # pylint: disable=protected-access
    version = importlib.util.MAGIC_NUMBER + bytes([sys.flags.optimize])

    def cached_compile_source(pathname, source):
        path = os.path.join(cache_dir, hashlib.sha256(version + source).hexdigest())
        try:
            with open(path, "rb") as handle:
                code = marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            code = compile_source(pathname, source)
            os.makedirs(cache_dir, exist_ok=True)
            partial = f"{path}.{os.getpid()}"
            with open(partial, "wb") as handle:
                handle.write(marshal.dumps(code))
            os.replace(partial, path)  # whole or not at all, for the runs side by side
            return code
        _imp._fix_co_filename(code, pathname)  # pylint: disable=protected-access
        return code

    zipimport._compile_source = cached_compile_source  # pylint: disable=protected-access


CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _collection_roots():
    """Where Ansible looks for collections: $ANSIBLE_COLLECTIONS_PATH, collections_path of the ansible.cfg it reads,
    the default paths and sys.path (COLLECTIONS_SCAN_SYS_PATH). More than it looks in is only more careful."""
    import configparser  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel

    roots = [os.path.expanduser("~/.ansible/collections"), "/usr/share/ansible/collections"] + sys.path
    for variable in ("ANSIBLE_COLLECTIONS_PATH", "ANSIBLE_COLLECTIONS_PATHS"):
        roots += os.environ.get(variable, "").split(os.pathsep)
    for config in (os.environ.get("ANSIBLE_CONFIG", ""), "ansible.cfg", os.path.expanduser("~/.ansible.cfg"),
                   "/etc/ansible/ansible.cfg"):
        if config and os.path.isfile(config):
            parser = configparser.ConfigParser(interpolation=None)
            parser.read(config)
            for option in ("collections_path", "collections_paths"):
                for root in parser.get("defaults", option, fallback="").split(os.pathsep):
                    if root:
                        roots.append(os.path.join(os.path.dirname(os.path.abspath(config)), os.path.expanduser(root)))
            break
    return [root for root in roots if root]


def _only_this_collection():
    """Whether every collection in reach is this checkout."""
    checkout = os.path.realpath(CHECKOUT)
    for root in _collection_roots():
        top = os.path.join(root, "ansible_collections")
        for namespace in os.listdir(top) if os.path.isdir(top) else ():
            folder = os.path.join(top, namespace)
            for name in os.listdir(folder) if os.path.isdir(folder) else ():
                if os.path.realpath(os.path.join(folder, name)) != checkout:
                    return False
    return True


def _payload_key(ansible_dir):
    import hashlib  # pylint: disable=import-outside-toplevel
    import sys  # pylint: disable=import-outside-toplevel

    digest = hashlib.sha256(f"{sys.version}\0{ansible_dir}\0".encode())
    with open(os.path.join(ansible_dir, "release.py"), "rb") as handle:
        digest.update(handle.read())
    plugins = os.path.join(CHECKOUT, "plugins")
    for part in ("modules", "module_utils"):
        for folder, dirs, files in sorted(os.walk(os.path.join(plugins, part))):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(folder, name)
                with open(path, "rb") as handle:
                    digest.update(f"\0{os.path.relpath(path, plugins)}\0".encode() + handle.read())
    return digest.hexdigest()[:32]


def _share_payloads(cache_dir):
    import sys  # pylint: disable=import-outside-toplevel
    import tempfile  # pylint: disable=import-outside-toplevel

    mkdtemp = tempfile.mkdtemp

    def mkdtemp_sharing_payloads(suffix=None, prefix=None, dir=None):  # pylint: disable=redefined-builtin
        path = mkdtemp(suffix, prefix, dir)
        ansible = sys.modules.get("ansible")
        # ansible.config.manager makes the run's local temporary directory (DEFAULT_LOCAL_TMP) with this prefix
        if prefix and prefix.startswith("ansible-local-") and ansible is not None:
            ansible_dir = os.path.dirname(ansible.__file__)
            if os.path.exists(os.path.join(ansible_dir, "_internal", "_locking.py")) and _only_this_collection():
                shared = os.path.join(cache_dir, _payload_key(ansible_dir))
                os.makedirs(shared, exist_ok=True)
                os.symlink(shared, os.path.join(path, "ansiballz_cache"))
        return path

    tempfile.mkdtemp = mkdtemp_sharing_payloads


if os.environ.get("CAPI_ROLLOUT_BYTECODE_CACHE"):
    _install(os.environ["CAPI_ROLLOUT_BYTECODE_CACHE"])
if os.environ.get("CAPI_ROLLOUT_PAYLOAD_CACHE"):
    _share_payloads(os.environ["CAPI_ROLLOUT_PAYLOAD_CACHE"])
