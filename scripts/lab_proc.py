"""What the lab's background processes share (lab-kube-vip.py,
lab-backend.py): their log line and shedding the descriptors they inherit.
Standard library only; imported from the scripts' own directory."""

import os
import sys
import time


def logger(prog):
    """A function that logs one line to stderr as `TIMEZ prog[pid]: msg`
    (lab.sh waits for a process's first line in that form)."""

    def log(msg):
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        frac = f"{time.time() % 1:.3f}"[1:]
        sys.stderr.write(f"{ts}{frac}Z {prog}[{os.getpid()}]: {msg}\n")
        sys.stderr.flush()

    return log


def close_inherited_fds():
    """Close every descriptor above stderr: a caller's (the lab lock
    /run/ribbridge-lab.lock above all) must not live on in a background
    process."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2:
            try:
                os.close(fd)
            except OSError:
                pass
