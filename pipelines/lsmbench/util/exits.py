"""The exit codes of every command (docs/commands.md), and what an exception no command
caught becomes: a path the system refused is the user's input or the machine's, anything else
is a bug in lsmbench -- always one line, never a traceback (--verbose logs it)."""

from __future__ import annotations

import errno
import logging
import sys

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_ENV = 3
EXIT_INTERRUPTED = 130
EXIT_INTERNAL = 70  # a bug in lsmbench (EX_SOFTWARE); never a traceback
EXIT_REGRESSION = 4  # track report and track nightly: a regression is open

class Terminated(KeyboardInterrupt):
    """SIGTERM, which the command line turns into an interruption (cli.main). Unlike Ctrl-C,
    which the terminal sends to the whole process group, it reached this process alone: what
    this process started must be told (reproduce's children)."""


# A path the system refused for the machine's reasons (exit 3); other refusals are the user's
# input (exit 2).
_ENVIRONMENT_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.EDQUOT,
                       errno.EIO, errno.EBUSY, errno.ETXTBSY, errno.EMFILE, errno.ENFILE}

# pathlib's Path.resolve() reports a symbolic link loop so before Python 3.13 (later versions
# raise OSError ELOOP).
_SYMLINK_LOOP = "Symlink loop from "


def uncaught(command: str, e: Exception) -> int:
    """Says what e means in one line on stderr and returns the exit code. An OSError naming a
    path that no command checked itself (a name too long for the filesystem, a symlink loop, a
    path through a regular file, a read-only filesystem...) is the path and the system's
    reason: bad paths are input, not bugs."""
    if isinstance(e, OSError) and e.filename is not None:
        where = f"{e.filename}" + (f" -> {e.filename2}" if e.filename2 else "")
        print(f"lsmbench {command}: {where}: {e.strerror or e}", file=sys.stderr)
        return EXIT_ENV if e.errno in _ENVIRONMENT_ERRNOS else EXIT_USAGE
    if isinstance(e, RuntimeError) and str(e).startswith(_SYMLINK_LOOP):
        print(f"lsmbench {command}: {str(e)[len(_SYMLINK_LOOP):]}: too many levels of symbolic "
              "links", file=sys.stderr)
        return EXIT_USAGE
    logging.getLogger("lsmbench").debug("internal error", exc_info=e)
    print(f"lsmbench {command}: internal error: {type(e).__name__}: {e} (a bug: please report "
          "it; --verbose shows where)", file=sys.stderr)
    return EXIT_INTERNAL
