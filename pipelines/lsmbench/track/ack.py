"""`lsmbench track ack ID --why TEXT`: marks a change point as expected; the acknowledgement is
kept in the history, and the change is no longer an open regression (:mod:`.changes`)."""

from __future__ import annotations

import argparse
import sys

from ..util.exits import EXIT_OK, EXIT_USAGE
from .changes import find_changes
from .history import Ack, HistoryError, history_path, now_iso, open_history


def cmd_ack(args: argparse.Namespace) -> int:
    why = (args.why or "").strip()
    if not why:
        print("lsmbench track ack: --why must say why the change is expected", file=sys.stderr)
        return EXIT_USAGE
    try:
        with open_history(history_path(args), create=False) as h:
            changes = {c.id: c for c in find_changes(h).changes}
            change = changes.get(args.id)
            if change is None:
                known = ", ".join(sorted(changes)) or "none"
                raise HistoryError(f"no change with id {args.id!r} in {h.path} (known: {known}; "
                                   "lsmbench track report lists them)")
            # A change several nodes saw: each node's own change is acknowledged (each node is
            # a series of its own; the next report merges them again).
            for c in change.per_node or [change]:
                h.add_ack(Ack(change_id=c.id, campaign=c.campaign, group=c.group,
                              metric=c.metric, direction=c.direction, run_id=c.run_id,
                              why=why, acked_at=now_iso()))
    except HistoryError as e:
        print(f"lsmbench track ack: {e}", file=sys.stderr)
        return EXIT_USAGE
    # The one line, with --quiet too.
    nodes = f" on {', '.join(change.nodes)}" if change.nodes else ""
    print(f"{change.id}: {change.metric} of {change.group} ({change.campaign}){nodes} "
          f"{change.change:+.1%} marked as expected: {why}")
    return EXIT_OK
