"""Nightly performance tracking (docs/tracking.md): a history of campaign runs, change points
found in each series by a maintained library, a report with exit codes, and a nightly job.

Modules by role:

* ``history``  -- the SQLite history store: ``track record`` and ``track ack``;
* ``detect``   -- change-point detection on one series: ``track detect`` and the history's
  detector;
* ``report``   -- ``history.html`` + ``regressions.json``: ``track report`` (exit 4 with an
  open regression);
* ``nightly``  -- fetch, build, testbed up, run, record, report, publish: ``track nightly``.
"""
