"""The results store: a point appears only by rename, complete; leftovers are cleaned."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from lsmbench.store import POINT_FILE, TMP_DIR, Store, StoreError


def test_point_invisible_until_commit(tmp_path):
    store = Store(tmp_path)
    w = store.begin_point("c", "p=1,rep=0")
    (w.path / "testing").mkdir()
    (w.path / "testing" / "summary.json").write_text("{}")
    assert w.path.parent.name == TMP_DIR
    assert store.points("c") == []
    assert store.point("c", "p=1,rep=0") is None
    final = w.commit({"state": "complete", "x": 1})
    assert final == tmp_path / "c" / "p=1,rep=0"
    assert (final / "testing" / "summary.json").is_file()
    recs = store.points("c")
    assert [(r.point_id, r.state) for r in recs] == [("p=1,rep=0", "complete")]
    assert not any((tmp_path / "c" / TMP_DIR).iterdir())


def test_commit_replaces_an_earlier_attempt(tmp_path):
    store = Store(tmp_path)
    w = store.begin_point("c", "p")
    (w.path / "old-file").write_text("old")
    w.commit({"state": "failed"})
    w = store.begin_point("c", "p")
    w.commit({"state": "complete"})
    p = store.point("c", "p")
    assert p is not None and p.state == "complete"
    assert not (p.path / "old-file").exists()
    with pytest.raises(StoreError):
        w.commit({"state": "complete"})


def test_update_point_is_atomic_and_persistent(tmp_path):
    store = Store(tmp_path)
    store.begin_point("c", "p").commit({"state": "complete", "published": False})
    rec = store.point("c", "p")
    store.update_point(rec, published=True)
    assert json.loads((rec.path / POINT_FILE).read_text())["published"] is True
    assert [f.name for f in rec.path.iterdir() if f.name.startswith(".")] == []


def test_clean_tmp_and_campaign_listing(tmp_path):
    store = Store(tmp_path)
    w = store.begin_point("c", "half")
    (w.path / "load").mkdir()
    store.write_campaign("c", {"plan": {"points": [1, 2]}})
    assert store.campaigns() == ["c"]
    assert store.clean_tmp("c") == [w.path.name]
    assert not w.path.exists()


def test_lock_excludes_a_second_runner(tmp_path):
    store = Store(tmp_path)
    code = textwrap.dedent(f"""
        import sys, time
        from lsmbench.store import Store
        with Store({str(tmp_path)!r}).lock("c"):
            print("locked", flush=True)
            time.sleep(30)
    """)
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "locked"
        with pytest.raises(StoreError, match="being run by another lsmbench process"), \
                store.lock("c"):
            pass
    finally:
        proc.kill()
        proc.wait()
    with store.lock("c"):  # released when its holder dies
        pass


def test_killed_writer_leaves_nothing_that_looks_complete(tmp_path):
    """A process killed in the middle of a point (even inside commit's file writes) leaves
    at most a directory under .tmp/, never a point directory."""
    code = textwrap.dedent(f"""
        import os, signal
        from lsmbench.store import Store
        s = Store({str(tmp_path)!r})
        s.begin_point("c", "done").commit({{"state": "complete"}})
        w = s.begin_point("c", "killed")
        (w.path / "testing").mkdir()
        (w.path / "testing" / "summary.json").write_text("{{}}")
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    r = subprocess.run([sys.executable, "-c", code], check=False)
    assert r.returncode == -9
    store = Store(tmp_path)
    assert [p.point_id for p in store.points("c")] == ["done"]
    visible = sorted(p.name for p in (tmp_path / "c").iterdir() if not p.name.startswith("."))
    assert visible == ["done"]
    leftovers = list((tmp_path / "c" / TMP_DIR).iterdir())
    assert len(leftovers) == 1 and leftovers[0].name.startswith("killed.")
    assert store.clean_tmp("c") and not any((tmp_path / "c" / TMP_DIR).iterdir())
    assert os.listdir(tmp_path / "c" / "done") == [POINT_FILE]
