"""Run one command and write what it cost to a JSON file: ``measure.py OUT -- CMD...``.

The harness starts every measured command through this wrapper so that ``getrusage(RUSAGE_CHILDREN)`` here covers
exactly that command's process tree (ansible-playbook and the workers and modules it forks and waits for, or a shell
loop and its kubectl processes) and nothing else the harness ran before. ``ru_maxrss`` of the children is the peak
resident set of the largest single process of the tree (Linux reports the maximum, not a sum), in KiB.
Start and end are wall-clock times (``time.time()``), so the harness can compare them with the moments its own
watcher saw a rollout complete.
"""

import json
import resource
import subprocess
import sys
import time


def main(argv):
    out, sep, cmd = argv[0], argv[1], argv[2:]
    if sep != "--" or not cmd:
        raise SystemExit("usage: measure.py OUT -- CMD...")
    start = time.time()
    began = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    wall = time.monotonic() - began
    end = time.time()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {"rc": proc.returncode, "wall": wall, "start": start, "end": end,
              "cpu_user": usage.ru_utime, "cpu_system": usage.ru_stime, "cpu": usage.ru_utime + usage.ru_stime,
              "maxrss_kib": usage.ru_maxrss, "output": proc.stdout.decode("utf-8", "replace")[-20000:]}
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main(sys.argv[1:])
