"""run_driver(): the driver loop — request in, warm-up, timed samples (paired in order), checks, result out."""
from __future__ import annotations

import copy
import json
import math
import os
import sys
import time
import traceback
from typing import Callable, Dict, List, Optional

from .environment import collect_environment
from .profiling import ProfileError, TorchTrace
from .request import Request, RequestError, Subject, load_request
from .result import RESULT_FORMAT, RESULT_FORMAT_V2, STATUSES, list_artifacts, subject_result, write_result_atomically
from .timing import NS_PER_UNIT, make_timer, ns_to_unit

EXIT_OK = 0
EXIT_BAD_REQUEST = 2  # usage or request error: nothing was run, no result written
EXIT_DRIVER_FAILED = 3  # the driver itself could not run: no result written

# In output_dir while a request runs: which subject runs now (_RunningSubject); removed before the result.
RUNNING_SUBJECT_FILE = "cko-running-subject.txt"

# A non-finite correctness metric cannot be written as JSON; it is written as this and the
# subject's status becomes "failed", so cko's rule (status must agree) rejects it whatever the operator.
NON_FINITE_METRIC = 1.7976931348623157e308


class DriverFailure(Exception):
    """The driver cannot produce a valid result (not the fault of one subject's code)."""


class Workload:
    """Override prepare/run/check (and the optional hooks) to describe one workload.

    setup(request)              once per request, before any subject: load the case input here.
                                With keep_setup_per_case = True, in a session only when the case
                                changes (see below).
    prepare(subject, request)   per subject, untimed: load/compile the subject's code; returns a state.
    reset(state)                untimed, before every call of run (e.g. restore an in-place buffer).
    run(state)                  the timed call.
    check(state)                after sampling: {metric: value} (status passed) or (status, {metric: value}).
    constraints(state)          after each timed call: {constraint name: value in the requested unit}.
    primary_value               None, or fn(state, elapsed_ns) -> value when the primary is not a time.
    """

    primary_value: Optional[Callable] = None
    # In a session: True makes setup() run once per case (id and file) instead of once per request.
    # After a case's setup() the SDK keeps a shallow copy of the workload's attributes and puts them
    # back when a later request names that case again (cases alternate within a round). Set it only
    # when setup() reads nothing but the case (not request.seed) and no subject writes into those
    # inputs. Any failed request drops what was kept.
    keep_setup_per_case: bool = False

    def setup(self, request: Request) -> None:
        pass

    def prepare(self, subject: Subject, request: Request):
        raise NotImplementedError("Workload.prepare")

    def reset(self, state) -> None:
        pass

    def run(self, state) -> None:
        raise NotImplementedError("Workload.run")

    def check(self, state):
        raise NotImplementedError("Workload.check")

    def constraints(self, state) -> Dict[str, float]:
        return {}

    @staticmethod
    def from_functions(prepare, run, check, constraints=None, setup=None, reset=None, primary_value=None):
        """A Workload from plain functions with the signatures above."""
        w = Workload()
        w.prepare, w.run, w.check = prepare, run, check
        if constraints is not None:
            w.constraints = constraints
        if setup is not None:
            w.setup = setup
        if reset is not None:
            w.reset = reset
        w.primary_value = primary_value
        return w


class _Subject:
    """Per-subject bookkeeping while the driver runs."""

    def __init__(self, subject: Subject):
        self.subject = subject
        self.state = None
        self.error: Optional[str] = None
        self.primary: List[float] = []
        self.constraints: Dict[str, List[float]] = {}
        self.status = "passed"
        self.metrics: Dict[str, float] = {}


def _request_path(argv: List[str]) -> str:
    for i, arg in enumerate(argv):
        if arg == "--request" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--request="):
            return arg[len("--request="):]
    raise RequestError("usage: <driver> --request <request.json>")


class _Session:
    """What a session carries from one request to the next: nothing result- or sample-like."""

    def __init__(self):
        self.warmed: set = set()  # subject paths already run here: they get one untimed call
        # (case id, case path) -> the workload's attributes right after that case's setup()
        self.setups: Dict[tuple, dict] = {}
        self.environment: Dict[str, dict] = {}  # per timer name: stable facts, read once


class _RunningSubject:
    """Which subject runs now, kept where cko reads it after a crash (PROTOCOL.md "Which subject was running").

    The line `cko: subject ROLE case ID` is overwritten in output_dir/cko-running-subject.txt each time
    the running subject changes (a paired request alternates: one pwrite, nothing on stderr), and the
    file is removed before the result is written: it is there only when the driver died mid-request,
    naming the subject that was running. Where the file cannot be made, the line goes to stderr
    instead (each change of subject), which cko reads when there is no file.
    """

    def __init__(self, output_dir: str, case_id: str):
        self.case_id, self.path = case_id, os.path.join(output_dir, RUNNING_SUBJECT_FILE)
        self.last: Optional[str] = None
        self.size = 0
        try:
            self.fd: Optional[int] = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC |
                                             os.O_NOFOLLOW, 0o644)
        except OSError:
            self.fd = None

    def mark(self, role: str) -> None:
        if role == self.last:
            return
        line = f"cko: subject {role} case {self.case_id}\n"
        if self.fd is None:
            sys.stderr.write(line)
            sys.stderr.flush()
        else:
            data = line.encode()
            os.pwrite(self.fd, data, 0)
            if len(data) < self.size:
                os.ftruncate(self.fd, len(data))
            self.size = len(data)
        self.last = role

    def close(self, remove: bool) -> None:
        """Stops marking; `remove` (the request has its result) removes the file, else it stays for cko."""
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            if remove:
                try:
                    os.unlink(self.path)
                except FileNotFoundError:
                    pass


class _Runner:
    def __init__(self, workload: Workload, request: Request, timer, warmup_s: float, min_warmup_calls: int,
                 max_warmup_calls: int, setup_kept: bool = False, environment: Optional[Dict[str, dict]] = None):
        self.w, self.req, self.timer = workload, request, timer
        self.setup_kept, self.environment = setup_kept, environment
        self.workload_s = 0.0
        self.warmup_s, self.min_warmup_calls, self.max_warmup_calls = warmup_s, min_warmup_calls, max_warmup_calls
        self.subjects = {s.role: _Subject(s) for s in request.subjects}
        self.notes: List[str] = []
        self.trace: Optional[TorchTrace] = None  # set while request.profile's trace is taken
        self.running = _RunningSubject(request.output_dir, request.case.id)

    def _fail(self, s: _Subject, stage: str, exc: BaseException) -> None:
        s.error = f"subject {s.subject.role} ({s.subject.label}): {stage} raised {type(exc).__name__}: {exc}"
        self.notes.append(s.error)
        sys.stderr.write(s.error + "\n" + traceback.format_exc())

    def _alive(self) -> List[_Subject]:
        return [self.subjects[r] for r in self.req.order if self.subjects[r].error is None]

    def _mark(self, s: _Subject) -> None:
        """Says which subject runs next, so that cko can attribute a crash (PROTOCOL.md)."""
        self.running.mark(s.subject.role)

    def _timed_call(self, s: _Subject) -> float:
        self._mark(s)
        self.w.reset(s.state)
        self.timer.before_each()
        return self.timer.time_ns(lambda: self.w.run(s.state))

    def _warm_up(self) -> None:
        start_wall, start = time.time(), time.perf_counter()
        calls = 0
        while calls < self.max_warmup_calls:
            alive = self._alive()
            if not alive:
                return
            elapsed = time.perf_counter() - start
            if calls >= self.min_warmup_calls and elapsed >= self.warmup_s * len(alive):
                return
            # Never spend more than half of the time left before the deadline on warming up.
            if calls >= 1 and self.req.deadline_unix_s is not None and \
                    time.time() - start_wall > (self.req.deadline_unix_s - start_wall) / 2:
                return
            for s in alive:
                try:
                    self._timed_call(s)
                except Exception as e:
                    self._fail(s, "run (warm-up)", e)
            calls += 1

    def _sample(self, s: _Subject) -> None:
        if self.trace is not None:
            with self.trace.annotate(s.subject.role):
                elapsed_ns = self._timed_call(s)
        else:
            elapsed_ns = self._timed_call(s)
        if self.w.primary_value is not None:
            value = float(self.w.primary_value(s.state, elapsed_ns))
        else:
            value = ns_to_unit(elapsed_ns, self.req.primary.unit)
        if not (math.isfinite(value) and value > 0):
            raise DriverFailure(f"subject {s.subject.role}: primary sample {value} is not finite and positive")
        s.primary.append(value)
        if self.req.constraints:
            got = self.w.constraints(s.state) or {}
            want = {c.name for c in self.req.constraints}
            if set(got) != want:
                raise DriverFailure(f"constraints() returned {sorted(got)}, the request asks for {sorted(want)}")
            for name, v in got.items():
                v = float(v)
                if not (math.isfinite(v) and v > 0):
                    raise DriverFailure(f"subject {s.subject.role}: constraint {name} sample {v} is not finite "
                                        "and positive")
                s.constraints.setdefault(name, []).append(v)

    def _check(self, s: _Subject) -> None:
        got = self.w.check(s.state)
        status = "passed"
        if isinstance(got, tuple):
            status, got = got
            if status not in STATUSES:
                raise ValueError(f"check() returned status {status!r}; expected one of {STATUSES}")
        if not isinstance(got, dict):
            raise TypeError(f"check() must return a dict of metrics, got {type(got).__name__}")
        missing = [m for m in self.req.correctness_metrics if m not in got]
        if missing:
            raise ValueError(f"check() did not report correctness metric(s) {missing}")
        metrics = {}
        for name, v in got.items():
            v = float(v)
            if not math.isfinite(v):
                self.notes.append(f"subject {s.subject.role}: metric {name} is {v}; status set to failed")
                v = NON_FINITE_METRIC
                if status == "passed":
                    status = "failed"
            metrics[name] = v
        s.status, s.metrics = status, metrics

    def run(self) -> dict:
        # What the workload's code runs (setup to check): the result's cost.workload_s; the rest of
        # the request's time, reading it and writing the result, is the SDK's own.
        started = time.perf_counter()
        try:
            if not self.setup_kept:
                self.w.setup(self.req)
        except Exception as e:
            raise DriverFailure(f"setup raised {type(e).__name__}: {e}") from e
        for role in self.req.order:
            s = self.subjects[role]
            try:
                self._mark(s)
                s.state = self.w.prepare(s.subject, self.req)
            except Exception as e:
                self._fail(s, "prepare", e)
        self._warm_up()
        # The trace (request.profile) covers the timed samples only, not the warm-up.
        if self.req.profile is not None:
            try:
                self.trace = TorchTrace(self.req.profile.trace_path)
            except ProfileError as e:
                raise DriverFailure(str(e)) from e
        # Sample i of every subject is taken back to back in the request's order: pair i.
        for _ in range(self.req.samples):
            for s in self._alive():
                try:
                    self._sample(s)
                except DriverFailure:
                    raise
                except Exception as e:
                    self._fail(s, "run", e)
        if self.trace is not None:
            try:
                self.trace.finish()
            except ProfileError as e:
                raise DriverFailure(str(e)) from e
            self.trace = None
        for s in self._alive():
            try:
                self._check(s)
            except Exception as e:
                self._fail(s, "check", e)
        self.workload_s = time.perf_counter() - started
        return self._result()

    def _result(self) -> dict:
        subjects = []
        for sub in self.req.subjects:
            s = self.subjects[sub.role]
            # The digest comes from the subject that was prepared and timed, the one whose samples
            # these are: cko refuses an entry whose digest is not its role's (role_mismatch).
            loaded = s.subject.digest
            if s.error is not None:  # an erroring subject carries no samples and no metrics
                subjects.append(subject_result(s.subject.role, "error", {}, self.req.primary, [],
                                               self.req.constraints, {}, loaded))
            else:
                subjects.append(subject_result(s.subject.role, s.status, s.metrics, self.req.primary, s.primary,
                                               self.req.constraints, s.constraints, loaded))
        if self.environment is None:
            env = collect_environment(self.timer.name)
        else:  # a session reads the stable facts once
            if self.timer.name not in self.environment:
                self.environment[self.timer.name] = collect_environment(self.timer.name)
            env = copy.deepcopy(self.environment[self.timer.name])  # the kept facts stay as read
        env["notes"] = list(self.notes)
        self.running.close(remove=True)  # every subject ran: no crash to attribute, no artifact
        # v2 when cko named every subject's digest (a cko that reads v2), else v1 without digests.
        v2 = all(sub.digest is not None for sub in self.req.subjects)
        doc = {"format_version": RESULT_FORMAT_V2 if v2 else RESULT_FORMAT, "subjects": subjects, "environment": env,
               "artifacts": list_artifacts(self.req.output_dir, self.req.result_path)}
        if v2:  # every cko that reads v2 reads cost
            doc["cost"] = {"workload_s": max(0.0, self.workload_s)}
        return doc


def _run_one(workload: Workload, request_path: str, timer_impl, warmup_s: float, min_warmup_calls: int,
             max_warmup_calls: int, session: Optional[_Session] = None) -> int:
    """One request: load it, run the workload, write the result. Returns the exit code of a v1 call."""
    try:
        request = load_request(request_path)
        if workload.primary_value is None and request.primary.unit not in NS_PER_UNIT:
            raise RequestError(f"primary unit {request.primary.unit!r} is not a time unit "
                               f"({', '.join(NS_PER_UNIT)}); give the Workload a primary_value hook")
    except RequestError as e:
        sys.stderr.write(f"cko_driver: invalid request: {e}\n")
        return EXIT_BAD_REQUEST
    try:
        os.makedirs(request.output_dir, exist_ok=True)
        paths = {s.path for s in request.subjects}
        # In a session the process is already warm for subjects it has run: one untimed call each.
        warm_s = 0.0 if session is not None and paths <= session.warmed else warmup_s
        case_key = (request.case.id, request.case.path)
        keep = session is not None and workload.keep_setup_per_case
        setup_kept = keep and case_key in session.setups
        if setup_kept:
            workload.__dict__.update(session.setups[case_key])
        runner = _Runner(workload, request, timer_impl, warm_s, min_warmup_calls, max_warmup_calls, setup_kept,
                         session.environment if session is not None else None)
        try:
            doc = runner.run()
            write_result_atomically(request.result_path, doc)
        except Exception:
            if session is not None:
                session.setups.clear()  # a half-built case must never be put back
            raise
        finally:
            runner.running.close(remove=False)  # a failed request leaves who ran last, as a crash does
        if keep and not setup_kept:
            session.setups[case_key] = dict(workload.__dict__)
        if session is not None:
            session.warmed |= paths
    except Exception as e:
        sys.stderr.write(f"cko_driver: driver failed, no result written: {type(e).__name__}: {e}\n")
        return EXIT_DRIVER_FAILED
    return EXIT_OK


def run_driver(workload: Workload, *, argv: Optional[List[str]] = None, timer="cpu", flush_l2: bool = False,
               warmup_s: float = 0.2, min_warmup_calls: int = 1, max_warmup_calls: int = 1000) -> int:
    """Runs the whole driver call; returns the exit code (use: `raise SystemExit(run_driver(...))`).

    0: result written (subjects may still have status failed/error); 2: bad usage or request;
    3: the driver could not run. On 2 and 3 no result is written and the reason goes to stderr.
    With `--session` (cko passes it when the Target's driver declares the capability `session`)
    this is serve(): the same workload serves every request of the operation in this process.
    """
    argv = sys.argv[1:] if argv is None else argv
    if "--session" in argv:
        return serve(workload, timer=timer, flush_l2=flush_l2, warmup_s=warmup_s, min_warmup_calls=min_warmup_calls,
                     max_warmup_calls=max_warmup_calls)
    try:
        path = _request_path(argv)
    except RequestError as e:
        sys.stderr.write(f"cko_driver: invalid request: {e}\n")
        return EXIT_BAD_REQUEST
    try:
        timer_impl = make_timer(timer, flush_l2)
    except Exception as e:
        sys.stderr.write(f"cko_driver: driver failed, no result written: {type(e).__name__}: {e}\n")
        return EXIT_DRIVER_FAILED
    return _run_one(workload, path, timer_impl, warmup_s, min_warmup_calls, max_warmup_calls)


def serve(workload: Workload, *, timer="cpu", flush_l2: bool = False, warmup_s: float = 0.2,
          min_warmup_calls: int = 1, max_warmup_calls: int = 1000, requests_path: Optional[str] = None,
          notices_path: Optional[str] = None) -> int:
    """The session loop (driver protocol v2, capability `session`; PROTOCOL.md).

    First writes {"ready": true} on CKO_SESSION_NOTICES (the imports are done; nothing before it touches
    a GPU, since cko takes the GPU locks only then). Reads one JSON line per request from CKO_SESSION_REQUESTS ({"call": N, "request": PATH}), runs it
    exactly as a one-process call would (same result file, same checks) and answers with one line on
    CKO_SESSION_NOTICES: {"call": N, "status": "done"} once the result is written, or "failed" with
    the exit code a one-process call would have had. {"exit": true} ends the loop (exit 0). What
    stays between requests: this process, its imports, the timer, whatever the workload keeps on
    itself; prepare() runs for every request, from that request's snapshots, and setup() too unless the
    workload keeps it per case (Workload.keep_setup_per_case).
    """
    requests_path = requests_path or os.environ.get("CKO_SESSION_REQUESTS")
    notices_path = notices_path or os.environ.get("CKO_SESSION_NOTICES")
    if not requests_path or not notices_path:
        sys.stderr.write("cko_driver: invalid request: --session needs CKO_SESSION_REQUESTS and "
                         "CKO_SESSION_NOTICES (cko sets both)\n")
        return EXIT_BAD_REQUEST
    session = _Session()
    with open(requests_path, "r", encoding="utf-8") as requests, \
            open(notices_path, "w", encoding="utf-8") as notices:
        # Ready: the imports are done. cko waits for this before it takes the GPU locks, so nothing
        # before it may touch a GPU; the timer (CUDA events) is made after it.
        notices.write(json.dumps({"ready": True}) + "\n")
        notices.flush()
        try:
            timer_impl = make_timer(timer, flush_l2)
        except Exception as e:
            sys.stderr.write(f"cko_driver: driver failed, no result written: {type(e).__name__}: {e}\n")
            return EXIT_DRIVER_FAILED
        while True:
            line = requests.readline()
            if not line:
                return EXIT_OK
            try:
                message = json.loads(line)
                if message.get("exit"):
                    return EXIT_OK
                call, path = int(message["call"]), str(message["request"])
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                sys.stderr.write(f"cko_driver: invalid session message {line.strip()[:200]!r}: {e}\n")
                return EXIT_BAD_REQUEST
            code = _run_one(workload, path, timer_impl, warmup_s, min_warmup_calls, max_warmup_calls, session)
            sys.stdout.flush()
            sys.stderr.flush()
            notices.write(json.dumps({"call": call, "status": "done" if code == EXIT_OK else "failed",
                                      "exit_code": code}) + "\n")
            notices.flush()
