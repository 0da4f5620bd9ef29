"""The InfluxDB sink (`influx`, a base.Sink): a stored point's driver outputs, sent as line
protocol over HTTP; time series (the tracking history) the same way.

APIs. InfluxDB 1.x: POST {url}/write?db=DB[&rp=RP]&precision=ns, credentials as HTTP basic auth
(username + password/token) or `Authorization: Token user:pass` (1.8+). InfluxDB 2.x: POST
{url}/api/v2/write?org=ORG&bucket=BUCKET&precision=ns with `Authorization: Token TOKEN`.

What is sent (point_to_lines). For every phase directory of the point (load/, testing/,
running/, running@U/, ...):
- `<prefix>_interval`: one point per line of the driver's timeseries.jsonl (or its .partial after
  a crash), stamped with the interval's end: the phase's start (summary.json start_time_utc) +
  the interval's t_end_s. Fields are the interval's numbers, nested objects flattened to dotted
  names (`throughput.writes`, `write_latency_us.p99`, `engine.stall_us`), and its booleans
  (`measured`, `drain`).
- `<prefix>_summary`: one point per phase from summary.json (stamped with the phase's end), with
  its numbers flattened the same way, its top-level strings (status, error, hostname, ...), the
  point's metadata from point.json (`point.<key>`, matrix values as `param.<name>`).
- `<prefix>_phase`: the phase boundaries, for dashboard annotations: for every phase with a
  summary.json, one point at its start (`event="start"`) and one at its end (`event="end"`,
  with `status` and `elapsed_s`).
Every number is sent as a float, because JSON does not keep 3 and 3.0 apart and InfluxDB refuses
a field that is an integer in one point and a float in the next; metadata values are strings.

Tags are low-cardinality only: campaign, point, engine, policy, scheduler, phase, host
(ALLOWED_TAGS). Any other key a caller offers as a tag becomes a `meta.<key>` string field --
InfluxDB indexes every tag value, and PerfKit Benchmarker's publisher broke by putting all run
metadata into tags.

Re-publishing is idempotent: the same measurement, tags and timestamp overwrite a point in
InfluxDB, and the timestamps come from the driver's files, not from the clock.

Credentials: the caller hands over the secret read from an environment variable or a file
(`token`), or names them (`token_env`, `token_file`); never the spec's text. The secret is held
in a Secret, whose repr is `***`, and is scrubbed from every error message and log line.

Failures: connection errors, timeouts, HTTP 5xx and 429 are retried with exponential backoff
(`retries` more tries, delays backoff_s, 2*backoff_s, ... capped at backoff_max_s, or the
server's Retry-After); anything else, or giving up, raises PublishError. The caller keeps the
point in the local store and marks it unpublished. With a `deadline` (time.monotonic()), no
try starts after it, each try's timeout and each backoff end by it: a campaign's sink budget
(lsmbench.publish.SinkBudget) bounds its waiting on a slow server this way.
"""

from __future__ import annotations

import base64
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import requests

from lsmbench.driverio import read_json_object, read_timeseries, timeseries_file
from lsmbench.sinks.base import DeadlineReached, PublishError, SeriesPoint, Sink
from lsmbench.sinks.line_protocol import to_line_protocol
from lsmbench.store import POINT_FILE

log = logging.getLogger(__name__)

ALLOWED_TAGS: tuple[str, ...] = (
    "campaign",
    "point",
    "engine",
    "policy",
    "scheduler",
    "phase",
    "host",
)
# The point.json keys that describe publishing itself: not data.
_POINT_KEYS_SKIPPED = frozenset({"schema", "published", "publish_error", "published_to"})
_SECRET_SPEC_KEYS = frozenset({"token", "password", "secret", "credentials", "auth"})
_RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_BATCH_BYTES = 4 << 20  # InfluxDB 1.x refuses bodies over 25 MB by default


class Secret:
    """A credential that does not show itself in repr, str, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class InfluxTarget:
    """Where and how to publish.

    url: http(s)://host:port of the server.
    api: "v1" or "v2"; None picks v2 when a bucket is given, else v1.
    database, retention_policy: the v1 destination. org, bucket: the v2 destination.
    username: v1 user (the password is the token).
    token: the secret itself, already read by the caller from the environment or a file.
    token_env / token_file: or where to read it (the variable first, then the file's first line).
    measurement_prefix: measurements are <prefix>_interval and <prefix>_summary.
    timeout_s: per HTTP request. retries: further tries after the first one.
    backoff_s, backoff_max_s: the first retry delay and the cap of the doubling delays.
    batch_lines: lines per HTTP request.
    create_database: v1 only -- on "database not found", CREATE DATABASE and retry once.
    """

    url: str
    api: str | None = None
    database: str | None = None
    retention_policy: str | None = None
    org: str | None = None
    bucket: str | None = None
    username: str | None = None
    token: Secret | str | None = field(default=None, repr=False, compare=False)
    token_env: str | None = None
    token_file: str | None = None
    measurement_prefix: str = "lsm"
    timeout_s: float = 10.0
    retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    batch_lines: int = 5000
    create_database: bool = True

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"InfluxDB url must start with http:// or https://, got {self.url!r}")
        object.__setattr__(self, "url", self.url.rstrip("/"))
        api = self.api or ("v2" if self.bucket else "v1")
        if api not in ("v1", "v2"):
            raise ValueError(f"InfluxDB api must be v1 or v2, got {self.api!r}")
        object.__setattr__(self, "api", api)
        if api == "v1" and not self.database:
            raise ValueError("InfluxDB v1 needs a database")
        if api == "v2" and not (self.org and self.bucket):
            raise ValueError("InfluxDB v2 needs an org and a bucket")
        if isinstance(self.token, str):
            object.__setattr__(self, "token", Secret(self.token) if self.token else None)
        if self.retries < 0 or self.batch_lines < 1 or self.timeout_s <= 0:
            raise ValueError("retries must be >= 0, batch_lines >= 1, timeout_s > 0")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> InfluxTarget:
        """From a spec's sink section; refuses credentials written in it."""
        bad = sorted(_SECRET_SPEC_KEYS & set(data))
        if bad:
            raise ValueError(
                f"InfluxDB credentials must not be written in the spec (found {', '.join(bad)}): "
                "put the token in an environment variable (token_env: NAME) or a file "
                "(token_file: PATH)"
            )
        known = set(cls.__dataclass_fields__) - {"token"}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown InfluxDB sink key(s): {', '.join(unknown)}")
        return cls(**dict(data))

    def credential(self) -> Secret | None:
        """The secret: `token`, else $token_env, else the first line of token_file, else None."""
        if isinstance(self.token, Secret):
            return self.token
        if self.token_env and os.environ.get(self.token_env, "").strip():
            return Secret(os.environ[self.token_env].strip())
        if self.token_file:
            path = Path(self.token_file).expanduser()
            try:
                text = path.read_text()
            except OSError as e:
                raise PublishError(
                    f"cannot read the InfluxDB token file {path}: {e.strerror}"
                ) from None
            lines = text.strip().splitlines()
            if not lines:
                raise PublishError(f"the InfluxDB token file {path} is empty")
            if path.stat().st_mode & 0o004:
                log.warning("the InfluxDB token file %s is readable by every user", path)
            return Secret(lines[0].strip())
        return None

    def write_endpoint(self) -> tuple[str, dict[str, str]]:
        if self.api == "v2":
            assert self.org and self.bucket
            return f"{self.url}/api/v2/write", {
                "org": self.org,
                "bucket": self.bucket,
                "precision": "ns",
            }
        assert self.database
        params = {"db": self.database, "precision": "ns"}
        if self.retention_policy:
            params["rp"] = self.retention_policy
        return f"{self.url}/write", params


def _auth_header(target: InfluxTarget, secret: Secret | None) -> dict[str, str]:
    if secret is None:
        return {}
    value = secret.reveal()
    if target.api == "v2":
        return {"Authorization": f"Token {value}"}
    if target.username:
        pair = f"{target.username}:{value}"
    elif ":" in value:
        pair = value
    else:  # InfluxDB 1.8+ and the 2.x v1-compatibility API take a bare token this way
        return {"Authorization": f"Token {value}"}
    return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}


class InfluxSink(Sink):
    """Sends line protocol to one InfluxTarget (see the module docstring for the retry rules).

    session and sleep can be replaced (tests use a fake sleep to stay fast).
    deadline: a time.monotonic() after which nothing more is tried (PublishError).
    Not thread-safe: one sink per thread.
    """

    title: ClassVar[str] = "InfluxDB"

    def __init__(
        self,
        target: InfluxTarget,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        deadline: float | None = None,
    ) -> None:
        self.target = target
        self.session = session or requests.Session()
        self._sleep = sleep
        self._deadline = deadline
        self._secret = target.credential()
        self._headers = _auth_header(target, self._secret)
        self._db_created = False

    def __repr__(self) -> str:
        return f"InfluxSink({self.target!r})"

    # -- construction (the Sink interface) -----------------------------------------------------

    @staticmethod
    def target_of(section: Any) -> InfluxTarget:
        """The InfluxTarget of a spec's `sinks.influx` section (spec/models.py InfluxSinkSpec);
        the credential is read when the sink is opened, from $token_env or token_file."""
        return InfluxTarget(
            url=section.url,
            api=section.api,
            database=section.database,
            retention_policy=section.retention_policy,
            org=section.org,
            bucket=section.bucket,
            username=section.username,
            token_env=section.token_env,
            token_file=section.token_file,
            measurement_prefix=section.measurement_prefix,
            timeout_s=section.timeout,
            retries=section.retries,
        )

    @classmethod
    def from_section(cls, section: Any, *, deadline: float | None = None) -> InfluxSink:
        return cls(cls.target_of(section), deadline=deadline)

    @classmethod
    def check_section(cls, section: Any) -> None:
        cls.target_of(section)

    @classmethod
    def url_fields(cls, url: str) -> dict[str, Any]:
        """url without its query; the query's db (or database), org and bucket; a bucket
        without a db is a 2.x destination, so the database is cleared."""
        parts = urlsplit(url)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        fields: dict[str, Any] = {
            "url": f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")}
        for key, name in (("db", "database"), ("database", "database"), ("org", "org"),
                          ("bucket", "bucket")):
            if key in query:
                fields[name] = query[key]
        if "bucket" in query and "db" not in query and "database" not in query:
            fields["database"] = None
        return fields

    def _scrub(self, text: str) -> str:
        if self._secret is not None:
            value = self._secret.reveal()
            for s in (value, self._headers.get("Authorization", "")):
                if s:
                    text = text.replace(s, "***")
            if self._headers.get("Authorization", "").startswith("Basic "):
                text = text.replace(self._headers["Authorization"][6:], "***")
        return text

    # -- writing -------------------------------------------------------------------------------

    def _timeout(self, url: str, reason: str = "") -> float:
        """The next request's timeout: the target's, cut to what is left before the deadline;
        PublishError when nothing is left."""
        if self._deadline is None:
            return self.target.timeout_s
        left = self._deadline - time.monotonic()
        if left <= 0:
            why = f" (last: {self._scrub(reason)})" if reason else ""
            raise DeadlineReached(f"InfluxDB write to {url} gave up: the time allowed for the "
                                  f"sink ran out{why}")
        return min(self.target.timeout_s, left)

    def _post(self, url: str, params: Mapping[str, str], body: bytes,
              headers: Mapping[str, str], timeout: float, reason: str) -> requests.Response:
        """One try. requests' timeout bounds the connect and each read, not the whole answer:
        a server that trickles its answer a byte at a time would hold a try for ever. So with
        a deadline the try runs in a daemon thread and is abandoned (DeadlineReached) when the
        deadline comes; nothing uses the session after that, since every later try is refused
        by the deadline first."""
        if self._deadline is None:
            return self.session.post(url, params=params, data=body, headers=headers,
                                     timeout=timeout)
        answers: queue.Queue[requests.Response | BaseException] = queue.Queue(maxsize=1)

        def send() -> None:
            try:
                answers.put(self.session.post(url, params=params, data=body, headers=headers,
                                              timeout=timeout))
            except BaseException as e:  # handed to the caller's thread
                answers.put(e)

        threading.Thread(target=send, name="influx-write", daemon=True).start()
        try:
            answer = answers.get(timeout=max(0.0, self._deadline - time.monotonic()))
        except queue.Empty:
            why = f" (last: {self._scrub(reason)})" if reason else ""
            raise DeadlineReached(f"InfluxDB write to {url} gave up: the time allowed for the "
                                  f"sink ran out during a write{why}") from None
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def write(self, lines: Iterable[str]) -> int:
        """Send lines in batches; returns how many were sent. Raises PublishError."""
        sent = 0
        for batch in _batches(lines, self.target.batch_lines, _MAX_BATCH_BYTES):
            self._post_batch(batch)
            sent += len(batch)
        return sent

    def publish_point(self, point_dir: str | os.PathLike[str], tags: Mapping[str, Any]) -> int:
        """point_to_lines with this target's measurement prefix, then write."""
        return self.write(
            point_to_lines(point_dir, tags, measurement_prefix=self.target.measurement_prefix)
        )

    def write_series(self, points: Iterable[SeriesPoint]) -> int:
        """Each point as a line (all of them before the first is sent: a name line protocol
        cannot spell is a ValueError with nothing sent), then write."""
        lines = [line for p in points
                 if (line := to_line_protocol(p.measurement, p.tags, p.fields, p.time_ns))
                 is not None]
        return self.write(lines)

    def _post_batch(self, batch: list[str]) -> None:
        url, params = self.target.write_endpoint()
        body = ("\n".join(batch) + "\n").encode()
        headers = {"Content-Type": "text/plain; charset=utf-8", **self._headers}
        tries = self.target.retries + 1
        reason = ""
        attempt = 0
        while attempt < tries:
            attempt += 1
            retry_after: float | None = None
            timeout = self._timeout(url, reason)
            try:
                r = self._post(url, params, body, headers, timeout, reason)
            except requests.RequestException as e:
                reason = f"{type(e).__name__}: {e}"
            else:
                if 200 <= r.status_code < 300:
                    return
                reason = f"HTTP {r.status_code}: {_error_text(r)}"
                if (
                    r.status_code == 404
                    and "database not found" in r.text
                    and self.target.api == "v1"
                    and self.target.create_database
                    and not self._db_created
                ):
                    self._db_created = True
                    assert self.target.database
                    self.create_database(self.target.database)
                    # Creating the database is not a failed try: the write gets one more.
                    tries += 1
                    continue
                if r.status_code not in _RETRY_STATUSES:
                    raise PublishError(
                        f"InfluxDB refused the write to {url}: {self._scrub(reason)}"
                    )
                retry_after = _retry_after(r)
            if attempt == tries:
                break
            delay = min(self.target.backoff_max_s, self.target.backoff_s * 2 ** (attempt - 1))
            if retry_after is not None:
                delay = min(self.target.backoff_max_s, max(delay, retry_after))
            if self._deadline is not None and time.monotonic() + delay >= self._deadline:
                # Waiting out the backoff would end past the deadline: give up now.
                raise DeadlineReached(f"InfluxDB write to {url} gave up after {attempt} of "
                                      f"{tries} tries: the time allowed for the sink ran out "
                                      f"(last: {self._scrub(reason)})")
            log.warning(
                "InfluxDB write failed (%s); try %d of %d, retrying in %.2fs",
                self._scrub(reason),
                attempt,
                tries,
                delay,
            )
            self._sleep(delay)
        raise PublishError(
            f"InfluxDB write to {url} failed after {tries} tries: {self._scrub(reason)}"
        )

    # -- reading and administration (v1 InfluxQL) ----------------------------------------------

    def query(self, q: str, *, database: str | None = None, method: str = "GET") -> dict[str, Any]:
        """Run InfluxQL via /query (v1; 2.x serves it for mapped buckets); times in ns epochs.
        Raises PublishError on any failure, including an error inside the result."""
        params = {"q": q, "epoch": "ns"}
        db = database or self.target.database or self.target.bucket
        if db:
            params["db"] = db
        url = f"{self.target.url}/query"
        timeout = self._timeout(url)
        try:
            r = self.session.request(
                method, url, params=params, headers=self._headers, timeout=timeout
            )
        except requests.RequestException as e:
            raise PublishError(
                self._scrub(f"InfluxDB query failed: {type(e).__name__}: {e}")
            ) from None
        if r.status_code != 200:
            raise PublishError(
                self._scrub(f"InfluxDB query failed: HTTP {r.status_code}: {_error_text(r)}")
            )
        data = r.json()
        for result in data.get("results", []):
            if "error" in result:
                raise PublishError(self._scrub(f"InfluxDB query error: {result['error']}"))
        return data

    def delete_series(self, measurement: str, tags: Mapping[str, str]) -> bool:
        """InfluxQL DELETE (1.x; the 2.x API has none: False, nothing sent). A measurement not
        there yet is not an error."""
        if self.target.api != "v1":
            return False
        where = " AND ".join(f'"{_influxql_ident(k)}" = {_influxql_string(v)}'
                             for k, v in tags.items())
        q = f'DELETE FROM "{_influxql_ident(measurement)}"' + (f" WHERE {where}" if where else "")
        try:
            self.query(q, method="POST")
        except PublishError as e:
            if "not found" not in str(e):
                raise
        return True

    def create_database(self, name: str) -> None:
        self.query(f'CREATE DATABASE "{_influxql_ident(name)}"', database="", method="POST")

    def ping(self) -> bool:
        try:
            r = self.session.get(f"{self.target.url}/ping", timeout=self.target.timeout_s)
        except requests.RequestException:
            return False
        return r.status_code == 204


def _influxql_ident(name: str) -> str:
    return name.replace("\\", "\\\\").replace('"', '\\"')


def _influxql_string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _error_text(r: requests.Response) -> str:
    try:
        data = r.json()
        if isinstance(data, dict):
            msg = data.get("error") or data.get("message")
            if msg:
                return str(msg)[:500]
    except ValueError:
        pass
    return r.text.strip()[:500] or r.reason or ""


def _retry_after(r: requests.Response) -> float | None:
    value = r.headers.get("Retry-After")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _batches(lines: Iterable[str], max_lines: int, max_bytes: int) -> Iterator[list[str]]:
    batch: list[str] = []
    size = 0
    for line in lines:
        if batch and (len(batch) >= max_lines or size + len(line) + 1 > max_bytes):
            yield batch
            batch, size = [], 0
        batch.append(line)
        size += len(line) + 1
    if batch:
        yield batch


# -- a stored point as line protocol ---------------------------------------------------------------


def flatten_numbers(obj: Mapping[str, Any], prefix: str = "") -> dict[str, float | bool]:
    """Numbers (as floats) and booleans of a JSON object, nested keys joined with dots.
    Strings, nulls, lists and non-finite numbers are left out."""
    out: dict[str, float | bool] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_numbers(value, name + "."))
        elif isinstance(value, bool):
            out[name] = value
        elif isinstance(value, int | float) and math.isfinite(value):
            out[name] = float(value)
    return out


def split_tags(tags: Mapping[str, Any]) -> tuple[dict[str, str], dict[str, str]]:
    """(the allowed tags, every other key as a `meta.<key>` string field)."""
    kept: dict[str, str] = {}
    meta: dict[str, str] = {}
    for key, value in tags.items():
        if value is None or value == "":
            continue
        if key in ALLOWED_TAGS:
            kept[key] = str(value)
        else:
            meta[f"meta.{key}"] = str(value)
    return kept, meta


# Tag -> the engine option it shows.
_OPTION_TAGS = {"policy": "merge_policy", "scheduler": "merge_scheduler"}


def _option_tags(phase_record: Any, params: Mapping[str, Any]) -> dict[str, str]:
    """policy and scheduler as the phase ran them: the engine options point.json records for
    the phase (a testing phase with the fair scheduler is tagged fair, whatever the point's
    scheduler); a point stored without them falls back to its matrix values."""
    options = phase_record.get("engine_options") if isinstance(phase_record, Mapping) else None
    out: dict[str, str] = {}
    for tag, option in _OPTION_TAGS.items():
        if isinstance(options, Mapping):
            value = options.get(option)
        else:
            value = next((v for k, v in params.items()
                          if k.rsplit(".", 1)[-1] in (tag, option) and v is not None), None)
        if value is not None and value != "":
            out[tag] = str(value)
    return out


def _phase_start_ns(
    summary: Mapping[str, Any] | None, intervals: list[dict[str, Any]], ts_path: Path | None
) -> int | None:
    """The phase's start in ns since the epoch: summary's start_time_unix_ns or start_time_utc;
    without a summary (a crashed run), the timeseries file's mtime minus its last t_end_s."""
    if summary:
        ns = summary.get("start_time_unix_ns")
        if isinstance(ns, int) and not isinstance(ns, bool):
            return ns
        text = summary.get("start_time_utc")
        if isinstance(text, str):
            try:
                when = datetime.fromisoformat(text)
            except ValueError:
                pass
            else:
                if when.tzinfo is None:
                    when = when.replace(tzinfo=UTC)
                return (when - _EPOCH) // timedelta(microseconds=1) * 1000
    if ts_path is not None and intervals:
        last = _interval_end_s(intervals[-1], len(intervals) - 1, 1.0)
        return ts_path.stat().st_mtime_ns - round(last * 1e9)
    return None


def _interval_end_s(obj: Mapping[str, Any], index: int, interval_s: float) -> float:
    for key in ("t_end_s", "t_s", "elapsed_s"):
        v = obj.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool):
            return float(v)
    i = obj.get("interval", index)
    return (float(i) + 1) * interval_s if isinstance(i, int | float) else (index + 1) * interval_s


def point_to_lines(
    point_dir: str | os.PathLike[str],
    tags: Mapping[str, Any] | None = None,
    *,
    measurement_prefix: str = "lsm",
) -> list[str]:
    """The line protocol of one stored point (see the module docstring for what is sent).

    tags: campaign, point, engine, policy, scheduler, host as known to the caller (other keys
    become meta.* fields). Missing ones are taken from point.json (campaign, point, engine;
    policy/scheduler per phase from the engine options that phase ran with) and summary.json
    (host); phase is the phase directory's name.
    """
    point_dir = Path(point_dir)
    meta = read_json_object(point_dir / POINT_FILE) or {}
    base_tags, meta_fields = split_tags(tags or {})
    params = meta.get("params") if isinstance(meta.get("params"), Mapping) else {}
    derived = {
        "campaign": meta.get("campaign"),
        "point": meta.get("point") or point_dir.name,
        "engine": meta.get("engine"),
    }
    for key, value in derived.items():
        if key not in base_tags and value:
            base_tags[key] = str(value)
    phase_records = meta.get("phases") if isinstance(meta.get("phases"), Mapping) else {}
    point_fields: dict[str, Any] = dict(meta_fields)
    for key, value in params.items():
        if value is not None:
            point_fields[f"param.{key}"] = str(value)
    for key, value in meta.items():
        if key in _POINT_KEYS_SKIPPED:
            continue
        if isinstance(value, bool | str):
            point_fields[f"point.{key}"] = value
        elif isinstance(value, int | float) and math.isfinite(value):
            point_fields[f"point.{key}"] = float(value)

    interval_m = f"{measurement_prefix}_interval"
    summary_m = f"{measurement_prefix}_summary"
    phase_m = f"{measurement_prefix}_phase"
    lines: list[str] = []
    for phase_dir in sorted(p for p in point_dir.iterdir() if p.is_dir()):
        summary = read_json_object(phase_dir / "summary.json")
        ts_path = timeseries_file(phase_dir / "timeseries.jsonl")
        intervals = read_timeseries(phase_dir / "timeseries.jsonl")
        if summary is None and ts_path is None:
            continue  # not a phase directory
        phase_tags = {**_option_tags(phase_records.get(phase_dir.name), params),
                      **base_tags, "phase": phase_dir.name}
        if summary:
            for tag, key in (("host", "hostname"), ("engine", "engine")):
                if tag not in phase_tags and isinstance(summary.get(key), str) and summary[key]:
                    phase_tags[tag] = summary[key]
        start_ns = _phase_start_ns(summary, intervals, ts_path)
        if start_ns is None:
            raise ValueError(f"{phase_dir}: no start time to stamp the intervals with")
        interval_s = float((summary or {}).get("interval_s") or 1.0)
        for i, obj in enumerate(intervals):
            # A tag-named key is skipped only as a value: the driver's "engine" object holds the
            # engine's metrics, sent as engine.<metric> fields, which no tag shadows.
            fields = flatten_numbers({k: v for k, v in obj.items()
                                      if k not in ALLOWED_TAGS or isinstance(v, Mapping)})
            ts = start_ns + round(_interval_end_s(obj, i, interval_s) * 1e9)
            line = to_line_protocol(interval_m, phase_tags, fields, ts)
            if line is not None:
                lines.append(line)
        if summary:
            # A field named like a tag would shadow it in InfluxQL: tags win.
            kept = {
                k: v
                for k, v in summary.items()
                if k not in ("config", "schema") and k not in ALLOWED_TAGS
            }
            fields_s: dict[str, Any] = flatten_numbers(kept)
            fields_s.update({k: v for k, v in kept.items() if isinstance(v, str)})
            fields_s.update(point_fields)
            end_s = summary.get("elapsed_s")
            if not isinstance(end_s, int | float) or isinstance(end_s, bool):
                end_s = 0.0
                if intervals:
                    end_s = _interval_end_s(intervals[-1], len(intervals) - 1, interval_s)
            line = to_line_protocol(summary_m, phase_tags, fields_s, start_ns + round(end_s * 1e9))
            if line is not None:
                lines.append(line)
            status = summary.get("status")
            for event, ts, extra in (
                ("start", start_ns, {}),
                ("end", start_ns + round(end_s * 1e9),
                 {"status": status if isinstance(status, str) else "", "elapsed_s": float(end_s)}),
            ):
                line = to_line_protocol(phase_m, phase_tags, {"event": event, **extra}, ts)
                if line is not None:
                    lines.append(line)
    return lines
