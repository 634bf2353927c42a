"""A bytecode cache for the module runs of the tests: on when $CAPI_ROLLOUT_BYTECODE_CACHE names a directory.

AnsiballZ ships a module and the module_utils it imports as Python source in a zip, which the module's process imports
with zipimport. zipimport cannot write bytecode, so every module run compiles the same source again: about half the
CPU of a module run (0.2 of 0.4 s), thousands of times in `make test`. Python imports this file at start from
$PYTHONPATH (the Makefile's test targets put this directory there); it makes zipimport keep what it compiles, keyed
by the source itself, the interpreter's bytecode version and optimization level, as __pycache__ does for files. The
module still runs from its own zip: the code of a source never seen is compiled, and the file names in tracebacks are
this run's (``_imp._fix_co_filename``, as importlib does for a .pyc).
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


if os.environ.get("CAPI_ROLLOUT_BYTECODE_CACHE"):
    _install(os.environ["CAPI_ROLLOUT_BYTECODE_CACHE"])
