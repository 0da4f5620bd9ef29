"""`lsmbench testbed up|status|down|calibrate NAME`: kept testbeds under testbeds/NAME/.

    lsmbench testbed up NAME [--file TESTBED.yml] [--set k=v] [--check]
        first time: --file (a testbed definition, or a campaign spec whose `testbed:` to use);
        provisions (terraform), contacts every node (known_hosts), deploys with Ansible and
        prints per-host progress; idempotent: a second `up` reports no change
    lsmbench testbed status NAME        nodes, reachability, what is deployed
    lsmbench testbed down NAME --yes    terraform: destroy; ssh: remove what was deployed on
                                        the nodes (REMOTE_ROOT); --dry-run says what it would do
    lsmbench testbed calibrate NAME     fio on every node's data disk -> calibration/NODE.json

A campaign with `testbed: NAME` runs on it without reprovisioning.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..faults import human_bytes
from ..spec.reading import read_document
from .base import DefinitionError, TestbedError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ENV = 0, 1, 2, 3


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.json and not args.quiet:
        print(text, file=sys.stderr, flush=True)


def _definition(args: argparse.Namespace) -> dict[str, Any] | None:
    if not args.file:
        return None
    path = Path(args.file)
    try:
        doc = read_document(path)
    except ValueError as e:
        raise DefinitionError(str(e)) from None
    if isinstance(doc, dict) and "testbed" in doc and "type" not in doc:
        doc = doc["testbed"]  # a campaign spec: its testbed section
    if not isinstance(doc, dict):
        raise DefinitionError(f"{path}: expected a testbed definition (a mapping with 'type')")
    inv = doc.get("inventory")
    if isinstance(inv, str) and not Path(inv).expanduser().is_absolute():
        # Relative to the definition file, not to where the command runs.
        doc["inventory"] = str((path.parent / inv).resolve())
    from ..spec import apply_set

    for assignment in args.set:
        try:
            apply_set(doc, assignment)
        except ValueError as e:
            raise DefinitionError(f"--set {assignment}: {e}") from e
    return doc


def _open(args: argparse.Namespace, definition: dict[str, Any] | None = None) -> Any:
    from . import open_named

    return open_named(args.name, definition=definition)


def cmd_up(args: argparse.Namespace) -> int:
    from .remote import RemoteTestbed
    from .state import TestbedState

    state = TestbedState(args.name)
    doc = _definition(args)
    tb = _open(args, doc)
    _check_key_files(tb, args.file or str(state.definition_path))
    if doc is not None and not args.check:
        state.write_definition(doc)
    if not isinstance(tb, RemoteTestbed):
        nodes = tb.up()
        if args.json:
            print(json.dumps({"testbed": args.name, "kind": "local", "changed": 0}))
        else:  # the one final line, with --quiet too
            print(f"testbed {args.name} up: local ({nodes[0].data_root})")
        return EXIT_OK

    def progress(host: str, status: str, task: str) -> None:
        if status != "skipping":
            _say(args, f"  [{host}] {status:<9} {task}")

    tb.on_event = progress
    provisioned = False
    if tb.kind == "terraform":
        _say(args, f"testbed {args.name}: terraform init/apply ({tb.spec.module})")
        provisioned = tb.provision()
    nodes = tb.up()
    _say(args, f"testbed {args.name}: {len(nodes)} node(s) reachable: "
               + ", ".join(f"{n.name} ({n.facts.get('disk')})" for n in nodes))
    tb.deploy(nodes, force=True, check=args.check)
    recap = tb.last_playbook.recap if tb.last_playbook else {}
    changed = sum(r["changed"] for r in recap.values())
    out = {"testbed": args.name, "kind": tb.kind, "provisioned": provisioned,
           "nodes": [{"name": n.name, "address": n.address, "disk": n.facts.get("disk"),
                      "data_dir": n.data_root} for n in nodes],
           "recap": recap, "changed": changed + (1 if provisioned else 0),
           "state_dir": str(state.dir)}
    if args.json:
        print(json.dumps(out))
    else:
        for host, r in sorted(recap.items()):
            _say(args, f"  {host}: ok={r['ok']} changed={r['changed']} failed={r['failed']} "
                       f"unreachable={r['unreachable']}")
        print(f"testbed {args.name} up: {len(nodes)} node(s), "
              f"{'no changes' if out['changed'] == 0 else str(out['changed']) + ' change(s)'}"
              f"{' (check mode)' if args.check else ''}; state in {state.dir}")
    return EXIT_OK


def _check_key_files(tb: Any, where: str) -> None:
    """Every key_file of the definition (and of an ssh testbed's inventory file) names a file
    here; DefinitionError (nothing saved, nothing contacted) naming each one that does not."""
    from ..spec.checks import key_file_errors, key_file_problem
    from .remote import RemoteTestbed

    if not isinstance(tb, RemoteTestbed):
        return
    lines = [f"{where}: {path}: {msg}" for path, msg in key_file_errors(tb.spec, prefix="")]
    if tb.kind == "ssh" and not tb.spec.hosts and tb.spec.inventory:
        for i, h in enumerate(tb.hosts()):
            problem = key_file_problem(h.key_file) if h.key_file else None
            if problem:
                lines.append(f"{tb.spec.inventory}: hosts[{i}].key_file: {problem}")
    if lines:
        raise DefinitionError("\n".join(lines))


def cmd_status(args: argparse.Namespace) -> int:
    from .remote import RemoteTestbed

    tb = _open(args)
    if not isinstance(tb, RemoteTestbed):
        print(json.dumps({"testbed": args.name, "kind": "local"}) if args.json
              else f"testbed {args.name}: local")
        return EXIT_OK
    if tb.kind == "terraform" and not tb.applied():
        rows: list[dict[str, Any]] = []
        msg = "not provisioned (run `lsmbench testbed up`)"
    else:
        rows = tb.status()
        msg = f"{sum(1 for r in rows if r.get('reachable'))}/{len(rows)} node(s) reachable"
    if args.json:
        print(json.dumps({"testbed": args.name, "kind": tb.kind, "nodes": rows,
                          "summary": msg}))
    else:
        print(f"testbed {args.name} ({tb.kind}): {msg}")
        for r in [] if args.quiet else rows:  # --quiet: the summary line alone
            dep = (r["deployed"] or "nothing") + (" (current)" if r["current"] else
                                                  " (outdated)" if r["deployed"] else "")
            reach = "reachable" if r.get("reachable") else f"UNREACHABLE: {r.get('error')}"
            space = ""
            if r.get("data_total_bytes"):
                space = (f"; data disk {human_bytes(r['data_free_bytes'])} free of "
                         f"{human_bytes(r['data_total_bytes'])}")
            print(f"  {r['node']:<16} {r['address']:<22} {r['disk']}  {reach}; deployed: {dep}"
                  f"{space}")
            fault = r.get("fault")
            if fault:
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(fault["at"]))
                first = fault["message"].splitlines()[0] if fault["message"] else ""
                print(f"    FAULT {fault['kind']} at {when} in {fault['campaign']}/"
                      f"{fault['point']}: {first} (cleared when a point completes here)")
    return EXIT_OK if all(r.get("reachable") for r in rows) else EXIT_ENV


def cmd_down(args: argparse.Namespace) -> int:
    from .remote import RemoteTestbed

    tb = _open(args)
    if not args.yes and not args.dry_run:
        print(f"lsmbench testbed down: refusing to tear down testbed {args.name} without "
              "--yes (see what it would do with --dry-run)", file=sys.stderr)
        return EXIT_USAGE
    if not isinstance(tb, RemoteTestbed):
        print(f"testbed {args.name}: local, nothing to tear down")
        return EXIT_OK
    if tb.kind == "terraform":
        out = tb.destroy(dry_run=args.dry_run)
        if args.dry_run and not args.quiet:
            print(out.strip())
        print(f"testbed {args.name}: " + ("would be destroyed (dry run)" if args.dry_run
                                          else "destroyed"))
        return EXIT_OK
    hosts = tb.hosts()
    if args.dry_run:
        for h in [] if args.quiet else hosts:
            print(f"would remove {tb.root_of(h)} on {h.name} ({h.address}); data in "
                  f"{h.data_dir} is kept")
        print(f"testbed {args.name}: would remove the deployment from {len(hosts)} node(s) "
              "(dry run)")
        return EXIT_OK
    from .sshconn import NodeUnreachable, SshTarget

    def clean(h: Any) -> str | None:
        try:
            SshTarget(h, tb.state.known_hosts).run([*tb.sudo, "rm", "-rf", tb.root_of(h)])
            return None
        except (NodeUnreachable, TestbedError) as e:
            return str(e)

    with ThreadPoolExecutor(max_workers=min(16, len(hosts))) as pool:
        errors = [e for e in pool.map(clean, hosts) if e]
    tb.state.forget_deployed()
    for e in errors:
        print(f"lsmbench testbed down: {e}", file=sys.stderr)
    print(f"testbed {args.name}: removed the deployment from "
          f"{len(hosts) - len(errors)}/{len(hosts)} node(s)")
    return EXIT_ENV if errors else EXIT_OK


def cmd_calibrate(args: argparse.Namespace) -> int:
    from .remote import RemoteTestbed

    tb = _open(args)
    if not isinstance(tb, RemoteTestbed):
        print("lsmbench testbed calibrate: a local testbed is calibrated with "
              "`lsmbench calibrate`", file=sys.stderr)
        return EXIT_USAGE
    nodes = tb.up()
    tb.deploy(nodes)

    def one(n: Any) -> tuple[str, str | None]:
        try:
            profile = tb.calibrate(n, args.runtime, args.size_mb)
        except Exception as e:
            return n.name, str(e)
        profile.save(tb.state.calibration_path(n.name))
        return n.name, None

    with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
        results = list(pool.map(one, nodes))
    for name, err in results:
        if err:
            print(f"  {name}: FAILED: {err}", file=sys.stderr)
        elif not args.quiet:
            print(f"  {name}: profile in {tb.state.calibration_path(name)}")
    failed = sum(1 for _, err in results if err)
    print(f"testbed {args.name}: calibrated {len(results) - failed}/{len(results)} node(s)")
    return EXIT_ENV if failed else EXIT_OK


def cmd_testbed(args: argparse.Namespace) -> int:
    fn = {"up": cmd_up, "status": cmd_status, "down": cmd_down,
          "calibrate": cmd_calibrate}[args.action]
    try:
        return fn(args)
    except DefinitionError as e:
        print(f"lsmbench testbed {args.action}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except TestbedError as e:
        print(f"lsmbench testbed {args.action}: {e}", file=sys.stderr)
        return EXIT_ENV


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    s = sub.add_parser("testbed", parents=[common],
                       help="kept testbeds: up|status|down|calibrate NAME (docs/testbeds.md)")
    s.add_argument("action", choices=["up", "status", "down", "calibrate"],
                   help="bring the testbed up, say what is up, take it down, or calibrate "
                        "its nodes")
    s.add_argument("name", metavar="NAME", help="the testbed (state in testbeds/NAME/)")
    s.add_argument("--file", "-f", default=None,
                   help="up: the testbed definition (or a campaign spec with a testbed:)")
    s.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="up: override a definition value (dotted path, YAML value)")
    s.add_argument("--check", action="store_true", help="up: Ansible check mode (no changes)")
    s.add_argument("--yes", action="store_true", help="down: really tear down")
    s.add_argument("--dry-run", action="store_true", help="down: only say what would go")
    s.add_argument("--runtime", type=float, default=10.0, help="calibrate: seconds per fio job")
    s.add_argument("--size-mb", type=int, default=1024, help="calibrate: fio file size")
    s.set_defaults(func=cmd_testbed)
