"""python -m lsmbench: the same as the `lsmbench` command."""

import sys

from .cli import main

sys.exit(main())
