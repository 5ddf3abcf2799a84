"""A command line whose process the kernel kills when the process that started it dies.

``dying_with_parent(argv)`` wraps ``argv`` in ``python -I -S -c <wrapper> CALLER_PID argv...``: the wrapper asks
Linux for SIGKILL when its parent dies (``prctl(PR_SET_PDEATHSIG = 1, SIGKILL = 9)``), gives up if the caller is
already gone (the request would then never fire), and becomes ``argv`` by ``exec``. Elsewhere than Linux it only
execs. Used for Tesseract runs and the local model server: a SIGKILLed citebound process leaves neither behind.

>>> dying_with_parent(["tesseract", "--version"])[-2:]
['tesseract', '--version']
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

__all__ = ["dying_with_parent"]

_EXEC_DYING_WITH_PARENT = (
    "import os, sys\n"
    "if sys.platform.startswith('linux'):\n"
    "    import ctypes; ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)\n"
    "    os.getppid() == int(sys.argv[1]) or os._exit(70)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])"
)


def dying_with_parent(argv: Sequence[str]) -> list[str]:
    """``argv`` behind the wrapper that ties its life to this process."""
    return [sys.executable, "-I", "-S", "-c", _EXEC_DYING_WITH_PARENT, str(os.getpid()), *argv]
