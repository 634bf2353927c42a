"""Progress lines on stderr with a timestamp, so slow steps of `up`/`down` are visible in CI logs."""

import sys
import time


def progress(message):
    now = time.time()
    sys.stderr.write(f"{time.strftime('%H:%M:%S', time.localtime(now))}.{int(now % 1 * 1000):03d} capisim: {message}\n")
    sys.stderr.flush()
