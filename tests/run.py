#!/usr/bin/env python3
"""Weft's test runner: Rust tests, C conformance tests and script checks.

Usage:
    tests/run.py [--prefix DIR] [--cache DIR] [--launcher weft|hydra] [--only PATTERN] [-v]

--prefix    the install tree `make` produced (default: build/ in the repository)
--cache     the venv cache of scripts/prepare.sh (default: ~/.cache/weft); holds gen/ (pympistandard)
            and mpich/ (MPICH 5.0.2: Hydra's mpiexec, mpicc_abi, mpi_abi.h)
--launcher  what starts the C tests: `weft` (PREFIX/bin/mpiexec, the default) or `hydra`
            (CACHE/mpich/bin/mpiexec)
--only      run only the tests whose name contains PATTERN (or matches it as a glob when it
            has * ? or [); several patterns separated by commas; names look like
            cargo/weft_abi, c/errhan/user_errhandler, check/abi-probe
-v          print the output of passing tests too

Every test prints one line, `PASS name (1.23s)`, `FAIL name (1.23s)` followed by the tail of its
output, or `SKIP name: why` (skips are not counted). The last line is exactly `N passed, N failed`;
the exit status is 1 when anything failed. Each process runs in its own process group under a
timeout; the runner is a child subreaper, so a process a test leaves behind becomes our child, is
killed (by its pid), and fails that test.

What runs:
  cargo/*     `cargo test --release --workspace`; every "test result: ... N passed; M failed" line
              adds N and M to the totals (one output line per test binary). A build failure counts
              as one failure.
  c/AREA/NAME the C tests in tests/c/AREA, described by tests/c/AREA/manifest, compiled with
              PREFIX/bin/mpicc (-Wall -Werror, tests/c/include on the include path) into
              PREFIX/tests/c/AREA/.
  fortran/AREA/NAME  the same for the Fortran programs of tests/fortran/AREA (NAME.f90 unless
              src= says otherwise), compiled with PREFIX/bin/mpifort; one SKIP when Weft was
              built without a Fortran compiler.
  mpi4py/npN  mpi4py's own test suite on N processes (scripts/mpi4py.sh: builds mpi4py from its
              source distribution into CACHE/mpi4py the first time, ~10 min; every test
              module, dynamic processes included); passes when nothing fails.
  check/*     script checks: the ABI probe (against api/abi_constants.txt and, when installed,
              MPICH's mpi_abi.h), `api/gen.py --check`, the exported symbol set, mpi.h under
              strict C/C++ standards, the static library, the profiling interface,
              mpicc/mpicxx/pkg-config, CMake/Meson/Autotools projects finding Weft
              (examples/build-systems), weft-info and its list of missing functions (each must
              return MPI_ERR_UNSUPPORTED_OPERATION), interoperability with MPICH, launches under a
              private one-machine Slurm (scripts/slurm-local.sh), a clean /dev/shm.
              Checks whose inputs are absent (the mpich venv, pkg-config) print SKIP and are
              not counted.

Manifest syntax (tests/c/AREA/manifest), one test per line, `#` starts a comment, words split
like a POSIX shell (quote values that contain spaces):

    NAME RANKS [OPTION ...]

NAME     the test's name; its source is NAME.c unless src= says otherwise
RANKS    number of ranks to launch with the launcher, or `singleton` to run the program directly
         (no launcher, no PMI environment: a world of size 1)
OPTIONs:
  timeout=S           seconds before the whole job is killed (default 30); a kill is a failure
  env=K=V             set K=V in the environment of the job (repeatable)
  args=ARGS           arguments for the program (split like a shell)
  src=F1[,F2...]      source files (relative to the area's directory) instead of NAME.c
  cflags=FLAGS        extra compiler flags (split like a shell; e.g. -fopenmp)
  expect-exit=N       the job must exit with status N (`nonzero`: any status but 0); when N is not
                      0 the ` No Errors` line is not required
  expect-stderr=TEXT  stderr must contain TEXT (repeatable; all must appear)
  expect-stdout=TEXT  stdout must contain TEXT (repeatable)
  expect-ranks        stdout must hold exactly one "rank R of N" line per rank R in 0..N-1, N = RANKS
  no-marker           do not require the ` No Errors` line (for programs that do not print it)
  max-time=S          the job must end within S seconds (wall clock, launch included)
  launcher=L          run only under launcher L (weft or hydra); otherwise SKIP
  requires=ucx        run only when Weft was built with its UCX transport (weft-info says so);
                      otherwise SKIP
  mpirun=ompi         launch with Open MPI 5.0.11's mpirun (CACHE/ompi/bin/mpirun, a PMIx
                      server) whatever --launcher says; SKIP when it is not installed or when
                      Weft cannot load OpenPMIx's libpmix.so.2 (weft-info's `pmix` line)
  mpirun-psets=N:K,.. with mpirun=ompi: launch as MPMD apps, K ranks each, the app given PRRTE's
                      `--pset N` (the Ks add up to RANKS)
  repeat=N            run the job N times; every run must pass (for races: the first failing run
                      is reported, with its number)
  shm-clean           no `weft.*` entry of /dev/shm that appeared during the job may remain after
                      it (an entry of another job running at the same time would be blamed too)
  may-skip            the program may find what it needs absent (CUDA): when the job exits with
                      status 77 the test is a SKIP (the reason is rank 0's `SKIP: why` line),
                      never a pass
Any option may be prefixed with a launcher name and a colon (`weft:expect-stderr=rank 3`,
`hydra:expect-exit=nonzero`) to apply only under that launcher; a prefixed option replaces the
unprefixed one of the same name.

A test passes when its job exits with the expected status (0 by default), rank 0 printed a line
` No Errors` (unless expect-exit is not 0 or no-marker is given), every expect-* holds, it ended
before its timeout and left no process behind.
"""

import argparse
import ctypes
import fnmatch
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(REPO, "tests")
TAIL_LINES = 40


# --------------------------------------------------------------------------- process control

def become_subreaper():
    """Orphaned descendants get re-parented to us, so leftovers can be found and killed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_CHILD_SUBREAPER = 36
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except OSError:
        return False


def our_children():
    """Pids whose parent is this process (after a test: leftovers re-parented to us)."""
    me = os.getpid()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm may contain spaces and parentheses: fields resume after the last ')'.
        rest = stat[stat.rfind(")") + 2:].split()
        if len(rest) > 1 and int(rest[1]) == me:
            name = stat[stat.find("(") + 1:stat.rfind(")")]
            found.append((int(entry), rest[0], name))
    return found


def reap_leftovers(grace=1.5):
    """Wait up to `grace` s for leftover descendants to exit, then kill the rest by pid.
    Returns a description of the ones that were still running."""
    deadline = time.monotonic() + grace
    while True:
        live = []
        for pid, state, name in our_children():
            if state == "Z":
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
            else:
                live.append((pid, name))
        if not live or time.monotonic() >= deadline:
            break
        time.sleep(0.05)
    for pid, _ in live:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # Reap what was killed.
    end = time.monotonic() + 2
    while time.monotonic() < end and any(True for _ in our_children()):
        for pid, _, _ in our_children():
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        time.sleep(0.02)
    return [f"{name}[{pid}]" for pid, name in live]


class Run:
    """The outcome of one command."""

    def __init__(self, cmd, rc, out, err, secs, timed_out, leftovers):
        self.cmd, self.rc, self.out, self.err = cmd, rc, out, err
        self.secs, self.timed_out, self.leftovers = secs, timed_out, leftovers

    def text(self):
        parts = [f"$ {' '.join(shlex.quote(c) for c in self.cmd)}"]
        if self.out:
            parts.append(self.out.rstrip("\n"))
        if self.err:
            parts.append("[stderr]\n" + self.err.rstrip("\n"))
        status = "timed out" if self.timed_out else f"exit {self.rc}"
        parts.append(f"[{status} after {self.secs:.2f}s]")
        if self.leftovers:
            parts.append("[left processes behind: " + ", ".join(self.leftovers) + "]")
        return "\n".join(parts)


def run(cmd, timeout=60, env=None, cwd=None, check_leftovers=True, merge=False):
    """Run `cmd` in its own process group; kill the group on timeout. With check_leftovers,
    processes it left behind (re-parented to us) are killed and listed; only pass it where no
    other command runs at the same time."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT if merge else subprocess.PIPE, env=env, cwd=cwd,
                             start_new_session=True)
    except OSError as e:
        return Run(cmd, 127, "", f"cannot start: {e}", 0.0, False, [])
    timed_out = False
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            out, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            # Something outside the group holds the pipes; the leftover sweep kills it.
            reap_leftovers(grace=0)
            out, err = p.communicate()
    secs = time.monotonic() - start
    # Anything still in the group, or re-parented to us, is a leftover.
    try:
        os.killpg(p.pid, 0)
        group_alive = True
    except (ProcessLookupError, PermissionError):
        group_alive = False
    leftovers = reap_leftovers() if check_leftovers else []
    if group_alive:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return Run(cmd, p.returncode, out.decode(errors="replace"), (err or b"").decode(errors="replace"),
               secs, timed_out, leftovers)


# --------------------------------------------------------------------------- results

class Outcome:
    def __init__(self, ok, detail="", passed=None, failed=None, skipped=None):
        self.ok = ok
        self.detail = detail
        # Counts for aggregate entries (cargo test binaries); None: one test.
        self.passed, self.failed = passed, failed
        self.skipped = skipped  # a reason: not counted


def tail(text, n=TAIL_LINES):
    lines = text.rstrip("\n").splitlines()
    if len(lines) > n:
        lines = [f"... ({len(lines) - n} lines cut)"] + lines[-n:]
    return "\n".join(lines)


class Runner:
    def __init__(self, args):
        self.args = args
        self.passed = 0
        self.failed = 0
        self.failures = []

    def selected(self, name):
        if not self.args.only:
            return True
        for pat in self.args.only.split(","):
            if any(c in pat for c in "*?[") and fnmatch.fnmatch(name, pat):
                return True
            if not any(c in pat for c in "*?[") and pat in name:
                return True
        return False

    def report(self, name, outcome, secs):
        if outcome.skipped is not None:
            print(f"SKIP {name}: {outcome.skipped}", flush=True)
            return
        if outcome.passed is not None:
            self.passed += outcome.passed
            self.failed += outcome.failed
            word = "PASS" if outcome.ok else "FAIL"
            print(f"{word} {name} ({outcome.passed} passed, {outcome.failed} failed) ({secs:.2f}s)",
                  flush=True)
        else:
            if outcome.ok:
                self.passed += 1
            else:
                self.failed += 1
            print(f"{'PASS' if outcome.ok else 'FAIL'} {name} ({secs:.2f}s)", flush=True)
        if not outcome.ok:
            self.failures.append(name)
        if outcome.detail and (not outcome.ok or self.args.verbose):
            for line in tail(outcome.detail).splitlines():
                print("    " + line)
            sys.stdout.flush()

    def test(self, name, fn, *fargs):
        if not self.selected(name):
            return
        start = time.monotonic()
        try:
            outcome = fn(*fargs)
        except Exception as e:  # a broken check is a failure, not a crash of the runner
            import traceback
            outcome = Outcome(False, f"runner error: {e!r}\n{traceback.format_exc()}")
        self.report(name, outcome, time.monotonic() - start)


# --------------------------------------------------------------------------- cargo

RESULT_RE = re.compile(r"test result: (\w+)\. (\d+) passed; (\d+) failed")
RUNNING_RE = re.compile(r"^\s*(Running|Doc-tests)\s+(.*)$")


def cargo_tests(runner):
    pat = runner.args.only
    if pat and "cargo" not in pat and "*" not in pat.split(","):
        return
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    start = time.monotonic()
    r = run([cargo, "test", "--release", "--workspace"], timeout=1500, cwd=REPO, merge=True)
    secs = time.monotonic() - start
    text = r.out
    current = "cargo"
    any_result = False
    cargo_failed = 0
    lines = text.splitlines()
    # Output of failing tests is interleaved on stdout; show it with the first failing binary.
    for line in lines:
        m = RUNNING_RE.match(line)
        if m:
            what = m.group(2)
            if m.group(1) == "Doc-tests":
                current = f"cargo/doc-{what.strip()}"
            else:
                path = re.search(r"\(([^)]*)\)", what)
                base = os.path.basename(path.group(1)) if path else what
                base = re.sub(r"-[0-9a-f]{16}$", "", base)
                src = what.split(" (")[0].strip()
                if src.startswith("unittests"):
                    current = f"cargo/{base}"
                else:  # an integration test: tests/launch.rs -> cargo/tests/launch
                    current = "cargo/" + re.sub(r"\.rs$", "", src)
            continue
        m = RESULT_RE.search(line)
        if m:
            any_result = True
            npass, nfail = int(m.group(2)), int(m.group(3))
            ok = nfail == 0
            cargo_failed += nfail
            if runner.selected(current) or runner.selected("cargo"):
                runner.report(current, Outcome(ok, "" if ok else tail(text, 80),
                                               passed=npass, failed=nfail), secs)
            secs = 0.0
    if r.timed_out or (r.rc != 0 and not any_result) or r.rc != 0 and "error: could not compile" in text:
        runner.report("cargo/build", Outcome(False, tail(r.text(), 60)), secs)
    elif r.rc != 0 and cargo_failed == 0:
        runner.report("cargo/exit", Outcome(False, tail(r.text(), 60)), secs)


# --------------------------------------------------------------------------- C tests

LAUNCHERS = ("weft", "hydra")


def has_ucx(prefix, _known={}):
    """Whether the Weft installed under `prefix` has its UCX transport (as weft-info says)."""
    if prefix not in _known:
        try:
            out = subprocess.run([os.path.join(prefix, "bin", "weft-info")], capture_output=True,
                                 text=True, timeout=30).stdout
        except OSError:
            out = ""
        _known[prefix] = any(l.split()[:2] == ["ucx", "built"] for l in out.splitlines())
    return _known[prefix]


def has_pmix(prefix, _known={}):
    """Whether the Weft installed under `prefix` can load OpenPMIx (as weft-info says)."""
    if prefix not in _known:
        try:
            out = subprocess.run([os.path.join(prefix, "bin", "weft-info")], capture_output=True,
                                 text=True, timeout=30).stdout
        except OSError:
            out = ""
        _known[prefix] = any(l.split()[:2] == ["pmix", "loaded"] for l in out.splitlines())
    return _known[prefix]


class CTest:
    lang = "c"

    def __init__(self, area, name, ranks, opts, line_no):
        self.area, self.name, self.ranks, self.opts, self.line_no = area, name, ranks, opts, line_no

    @property
    def full(self):
        return f"{self.lang}/{self.area}/{self.name}"


def parse_manifest(path, area):
    """Returns (tests, errors). opts: dict name -> list of values, per launcher applied later."""
    tests, errors = [], []
    with open(path) as f:
        for no, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                words = shlex.split(line, comments=True)
            except ValueError as e:
                errors.append(f"{path}:{no}: {e}")
                continue
            if len(words) < 2:
                errors.append(f"{path}:{no}: need NAME RANKS")
                continue
            name, ranks = words[0], words[1]
            if ranks != "singleton" and not ranks.isdigit():
                errors.append(f"{path}:{no}: RANKS must be a number or `singleton`")
                continue
            opts = []
            before = len(errors)
            for w in words[2:]:
                scope = None
                m = re.match(r"^(weft|hydra):(.*)$", w)
                if m:
                    scope, w = m.group(1), m.group(2)
                key, eq, value = w.partition("=")
                known = {"timeout", "env", "args", "src", "cflags", "expect-exit", "expect-stderr",
                         "expect-stdout", "expect-ranks", "no-marker", "max-time", "launcher",
                         "requires", "mpirun", "mpirun-psets", "may-skip", "repeat",
                         "shm-clean"}
                if key not in known:
                    errors.append(f"{path}:{no}: unknown option {key!r}")
                    continue
                problem = check_option(key, value if eq else None)
                if problem:
                    errors.append(f"{path}:{no}: {key}: {problem}")
                    continue
                opts.append((scope, key, value if eq else None))
            if len(errors) == before:  # a line with a mistake runs nothing; the mistake fails
                tests.append(CTest(area, name, ranks, opts, no))
    return tests, errors


FLAG_OPTIONS = {"expect-ranks", "no-marker", "may-skip", "shm-clean"}


def check_option(key, value):
    """Why an option's value is unusable, or None."""
    if key in FLAG_OPTIONS:
        return "takes no value" if value is not None else None
    if value is None:
        return "needs a value (KEY=VALUE)"
    if key in ("timeout", "max-time"):
        try:
            if float(value) <= 0:
                return "must be positive"
        except ValueError:
            return f"not a number: {value!r}"
    if key == "repeat" and not (value.isdigit() and int(value) >= 1):
        return f"a number of runs >= 1, not {value!r}"
    if key == "expect-exit" and value != "nonzero" and not re.fullmatch(r"-?\d+", value):
        return f"a status or `nonzero`, not {value!r}"
    if key == "env" and "=" not in value:
        return "K=V expected"
    if key == "launcher" and value not in LAUNCHERS:
        return f"one of {', '.join(LAUNCHERS)}"
    if key == "requires" and value != "ucx":
        return "only `ucx`"
    if key == "mpirun" and value != "ompi":
        return "only `ompi`"
    if key == "mpirun-psets" and not re.fullmatch(r"[^:,\s]+:\d+(,[^:,\s]+:\d+)*", value):
        return f"NAME:COUNT,NAME:COUNT expected, not {value!r}"
    return None


def effective(opts, launcher):
    """Options that apply under `launcher`: scoped ones replace unscoped ones of the same key."""
    scoped = {k for s, k, _ in opts if s == launcher}
    out = {}
    for s, k, v in opts:
        if s is None and k in scoped:
            continue
        if s not in (None, launcher):
            continue
        out.setdefault(k, []).append(v)
    return out


class CSuite:
    """The manifest-driven programs of tests/c (C, built with mpicc) or tests/fortran
    (Fortran, built with mpifort; skipped when Weft was built without a Fortran compiler)."""

    def __init__(self, runner, prefix, cache, launcher, lang="c"):
        self.runner = runner
        self.prefix = prefix
        self.cache = cache
        self.launcher = launcher
        self.lang = lang
        self.root = os.path.join(TESTS, lang)
        self.build_dir = os.path.join(prefix, "tests", lang)
        self.mpicc = os.path.join(prefix, "bin", "mpicc" if lang == "c" else "mpifort")

    def has_ucx(self):
        return has_ucx(self.prefix)

    def ompi_mpirun(self):
        return os.path.join(self.cache, "ompi", "bin", "mpirun")

    def ompi_missing(self):
        """Why a test launched by Open MPI's mpirun cannot run here, or None."""
        if not os.path.exists(self.ompi_mpirun()):
            return f"{self.ompi_mpirun()} is not installed (scripts/prepare.sh makes the ompi venv)"
        if not has_pmix(self.prefix):
            return "Weft cannot load OpenPMIx's libpmix.so.2 (weft-info: pmix not found; scripts/prepare.sh installs libpmix-dev)"
        return None

    def launcher_cmd(self, n, prog, args):
        if self.launcher == "weft":
            return [os.path.join(self.prefix, "bin", "mpiexec"), "-n", str(n), prog] + args
        return [os.path.join(self.cache, "mpich", "bin", "mpiexec"), "-n", str(n), prog] + args

    def compile(self, t, opts):
        srcs = []
        for v in opts.get("src", [None]):
            names = v.split(",") if v else [t.name + (".c" if self.lang == "c" else ".f90")]
            srcs += [os.path.normpath(os.path.join(self.root, t.area, s)) for s in names]
        out_dir = os.path.join(self.build_dir, t.area)
        os.makedirs(out_dir, exist_ok=True)
        exe = os.path.join(out_dir, t.name)
        if self.lang == "c":
            flags = ["-O1", "-g", "-Wall", "-Werror", "-pthread", "-I", os.path.join(TESTS, "c", "include")]
        else:
            mods = os.path.join(out_dir, t.name + ".mod")  # modules per test: builds run in parallel
            os.makedirs(mods, exist_ok=True)
            flags = ["-O1", "-g", "-Wall", "-fcheck=bounds", "-J", mods]
        for v in opts.get("cflags", []):
            flags += shlex.split(v)
        cmd = [self.mpicc, *flags, "-o", exe] + srcs
        r = run(cmd, timeout=120, check_leftovers=False)
        return exe, r

    def run_all(self):
        areas = sorted(d for d in os.listdir(self.root)
                       if os.path.isfile(os.path.join(self.root, d, "manifest")))
        if self.lang != "c" and not os.path.exists(self.mpicc):
            if self.runner.selected(f"{self.lang}/"):
                self.runner.report(f"{self.lang}/*", Outcome(True, skipped=f"{self.mpicc} is not built (no Fortran compiler)"), 0)
            return
        tests = []
        for area in areas:
            ts, errs = parse_manifest(os.path.join(self.root, area, "manifest"), area)
            for t in ts:
                t.lang = self.lang
            for e in errs:
                line = e.split(":")[1] if e.count(":") >= 2 else "?"
                self.runner.report(f"c/{area}/manifest:{line}", Outcome(False, e), 0.0)
            tests += ts
        tests = [t for t in tests if self.runner.selected(t.full)]
        if not tests:
            return
        todo = []
        for t in tests:
            opts = effective(t.opts, self.launcher)
            only = opts.get("launcher")
            if only and self.launcher not in only:
                self.runner.report(t.full, Outcome(True, skipped=f"runs only under {'/'.join(only)}"), 0)
                continue
            if "ucx" in opts.get("requires", []) and not self.has_ucx():
                self.runner.report(t.full, Outcome(True, skipped="this build has no UCX transport (libucx-dev absent when it was built)"), 0)
                continue
            if "mpirun" in opts:
                why = self.ompi_missing()
                if why:
                    self.runner.report(t.full, Outcome(True, skipped=why), 0)
                    continue
            todo.append((t, opts))
        if self.launcher == "hydra" and not os.path.exists(self.launcher_cmd(1, "", [])[0]):
            for t, _ in todo:
                self.runner.report(t.full, Outcome(False, "Hydra is not installed under --cache"), 0)
            return
        # Compile on both cores first (only compilers run then; nothing else is timed).
        with ThreadPoolExecutor(max_workers=2) as pool:
            builds = list(pool.map(lambda to: self.compile(*to), todo))
        for (t, opts), (exe, build) in zip(todo, builds):
            start = time.monotonic()
            if build.rc != 0 or build.timed_out:
                outcome = Outcome(False, "compile failed:\n" + build.text())
            else:
                try:
                    outcome = self.run_one(t, opts, exe)
                except Exception as e:  # a runner bug fails this test, not the run
                    outcome = Outcome(False, f"runner error: {e!r}")
            self.runner.report(t.full, outcome, time.monotonic() - start)

    def run_one(self, t, opts, exe):
        runs = int(opts.get("repeat", ["1"])[-1])
        for i in range(runs):
            outcome = self.run_job(t, opts, exe)
            if outcome.skipped:
                return outcome
            if not outcome.ok:
                if runs > 1:
                    outcome.detail = f"  * run {i + 1} of {runs} failed\n" + outcome.detail
                return outcome
        return outcome

    def run_job(self, t, opts, exe):
        timeout = float(opts.get("timeout", ["30"])[-1])
        env = dict(os.environ)
        for kv in opts.get("env", []):
            k, _, v = kv.partition("=")
            env[k] = v
        args = []
        for a in opts.get("args", []):
            args += shlex.split(a)
        if t.ranks == "singleton":
            for k in list(env):
                if k.startswith("PMI_") or k.startswith("PMIX_") or k.startswith("HYDRA_"):
                    del env[k]
            cmd = [exe] + args
            nranks = 1
        else:
            nranks = int(t.ranks)
            cmd = self.launcher_cmd(nranks, exe, args)
            if "mpirun" in opts:
                # As root mpirun needs --allow-run-as-root; the ranks may outnumber the cores.
                cmd = [self.ompi_mpirun(), "--allow-run-as-root", "--oversubscribe"]
                apps = [a.split(":") for a in opts.get("mpirun-psets", [f":{nranks}"])[-1].split(",")]
                if sum(int(k) for _, k in apps) != nranks:
                    return Outcome(False, f"mpirun-psets counts do not add up to {nranks} ranks")
                for i, (pset, k) in enumerate(apps):
                    cmd += ([":"] if i else []) + ["-n", k] + (["--pset", pset] if pset else []) + [exe] + args
        shm_before = shm_entries()
        r = run(cmd, timeout=timeout, env=env, cwd=os.path.dirname(exe))
        appeared = shm_entries() - shm_before
        for entry in appeared:  # for check/dev-shm-clean to name the culprit
            SHM_APPEARED.setdefault(entry, t.full)
        problems = []
        if "shm-clean" in opts and appeared:
            problems.append("left in /dev/shm: " + ", ".join(sorted(appeared)))
        if r.timed_out:
            problems.append(f"timed out after {timeout:g}s")
        elif "may-skip" in opts and r.rc == SKIP_EXIT and not r.leftovers:
            why = [l[len("SKIP:"):].strip() for l in r.out.splitlines() if l.startswith("SKIP:")]
            return Outcome(True, skipped=why[0] if why else "the program exited 77 (skipped)")
        want = opts.get("expect-exit", ["0"])[-1]
        if want == "nonzero":
            if r.rc == 0:
                problems.append("expected a non-zero exit status, got 0")
        elif r.rc != int(want):
            problems.append(f"expected exit status {want}, got {r.rc}")
        marker = want == "0" and "no-marker" not in opts
        if marker and not any(line.rstrip() == " No Errors" for line in r.out.splitlines()):
            problems.append("no ' No Errors' line on stdout")
        for text in opts.get("expect-stderr", []):
            if text not in r.err:
                problems.append(f"stderr lacks {text!r}")
        for text in opts.get("expect-stdout", []):
            if text not in r.out:
                problems.append(f"stdout lacks {text!r}")
        if "expect-ranks" in opts:
            problems += check_ranks(r.out, nranks)
        if "max-time" in opts:
            limit = float(opts["max-time"][-1])
            if r.secs > limit:
                problems.append(f"took {r.secs:.2f}s, more than max-time={limit:g}s")
        if r.leftovers:
            problems.append("left processes behind: " + ", ".join(r.leftovers))
        detail = r.text()
        if problems:
            detail = "\n".join("  * " + p for p in problems) + "\n" + detail
        return Outcome(not problems, detail)


# The exit status of a `may-skip` program that skipped (Automake's convention).
SKIP_EXIT = 77

RANK_LINE_RE = re.compile(r"\brank (\d+) of (\d+)\b")


def check_ranks(out, n):
    problems = []
    seen = []
    for line in out.splitlines():
        m = RANK_LINE_RE.search(line)
        if m:
            r, size = int(m.group(1)), int(m.group(2))
            if size != n:
                problems.append(f"line {line!r}: size {size}, expected {n}")
            seen.append(r)
    if sorted(seen) != list(range(n)):
        problems.append(f"ranks reported: {sorted(seen)}, expected each of 0..{n - 1} once")
    return problems


# --------------------------------------------------------------------------- script checks

def parse_constant_table(path):
    """(entries, layout): entries are (name, value text, section kind, section arg) in order."""
    entries = []
    kind, arg = None, None
    with open(path) as f:
        for raw in f:
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("@"):
                parts = line[1:].split(None, 1)
                kind, arg = parts[0], (parts[1].strip() if len(parts) > 1 else None)
                continue
            name, eq, value = line.partition("=")
            if not eq:
                raise ValueError(f"{path}: cannot parse {raw.rstrip()!r}")
            entries.append((name.strip(), value.strip(), kind, arg))
    return entries


INT_RE = re.compile(r"^-?(0[xX][0-9a-fA-F]+|\d+)$")
CAST_RE = re.compile(r"^\(\((.+)\)\s*(-?(?:0[xX][0-9a-fA-F]+|\d+))\)$")


def expected_value(value, known):
    if INT_RE.match(value):
        return int(value, 0)
    m = CAST_RE.match(value)
    if m:
        return int(m.group(2), 0)
    if value in known:
        return known[value]
    raise ValueError(f"cannot evaluate {value!r}")


def probe_source(entries, header):
    lines = ["#include <stdio.h>", "#include <stddef.h>", "#include <stdint.h>",
             f"#include \"{header}\"",
             "#define P(name, expr) printf(\"%s %lld\\n\", name, (long long)(intptr_t)(expr))",
             "int main(void) {"]
    for name, _value, kind, arg in entries:
        if kind in ("opaque", "callbacks"):
            continue
        q = name.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f"    P(\"{q}\", {name});")
        if kind == "handle" and arg:
            lines.append(f"    P(\"typeof {q}\", _Generic(({name}), {arg}: 1, default: 0));")
    lines += ["    return 0;", "}"]
    return "\n".join(lines) + "\n"


def compile_and_run_probe(src, include_dir, workdir, tag, extra_flags=()):
    c = os.path.join(workdir, f"probe_{tag}.c")
    exe = os.path.join(workdir, f"probe_{tag}")
    with open(c, "w") as f:
        f.write(src)
    cc = os.environ.get("CC", "cc")
    r = run([cc, "-std=gnu11", "-Wall", *extra_flags, "-I", include_dir, "-o", exe, c], timeout=120,
            check_leftovers=False)
    if r.rc != 0:
        return None, "probe compile failed:\n" + r.text()
    r2 = run([exe], timeout=30)
    if r2.rc != 0:
        return None, "probe failed:\n" + r2.text()
    values = {}
    for line in r2.out.splitlines():
        name, _, v = line.rpartition(" ")
        values[name] = int(v)
    return values, None


class Checks:
    def __init__(self, runner, prefix, cache, launcher):
        self.runner = runner
        self.prefix = prefix
        self.cache = cache
        self.launcher = launcher
        self.work = os.path.join(prefix, "tests", "checks")
        os.makedirs(self.work, exist_ok=True)
        self.mpicc = os.path.join(prefix, "bin", "mpicc")
        self.mpicxx = os.path.join(prefix, "bin", "mpicxx")
        self.mpiexec = os.path.join(prefix, "bin", "mpiexec")
        self.hydra = os.path.join(cache, "mpich", "bin", "mpiexec")
        self.mpich_inc = os.path.join(cache, "mpich", "include")
        self._probe_entries = None

    # ---- ABI probe
    def table_entries(self):
        if self._probe_entries is None:
            e = parse_constant_table(os.path.join(REPO, "api", "abi_constants.txt"))
            self._probe_entries = e
        return self._probe_entries

    def abi_probe(self):
        entries = self.table_entries()
        mpix = os.path.join(REPO, "api", "mpix_constants.txt")
        mpix_entries = parse_constant_table(mpix) if os.path.exists(mpix) else []
        known = {}
        expected = []
        for name, value, kind, arg in entries + mpix_entries:
            if kind in ("opaque", "callbacks"):
                continue
            v = expected_value(value, known)
            known[name] = v
            expected.append((name, v))
            if kind == "handle" and arg:
                expected.append((f"typeof {name}", 1))
        src = probe_source(entries + mpix_entries, "mpi.h")
        values, err = compile_and_run_probe(src, os.path.join(self.prefix, "include"), self.work, "weft")
        if err:
            return Outcome(False, err)
        bad = [f"{n}: header gives {values.get(n)}, table says {v}" for n, v in expected
               if values.get(n) != v]
        detail = f"{len(expected)} values compared ({len(entries)} table entries, {len(mpix_entries)} MPIX)"
        if bad:
            return Outcome(False, f"{len(bad)} mismatches:\n" + "\n".join(bad[:40]) + "\n" + detail)
        return Outcome(True, detail)

    def abi_probe_mpich(self):
        header = os.path.join(self.mpich_inc, "mpi_abi.h")
        if not os.path.exists(header):
            return Outcome(True, skipped=f"{header} is not installed")
        entries = self.table_entries()
        src_weft = probe_source(entries, "mpi.h")
        src_mpich = probe_source(entries, "mpi_abi.h")
        ours, err = compile_and_run_probe(src_weft, os.path.join(self.prefix, "include"), self.work, "weft_std")
        if err:
            return Outcome(False, err)
        theirs, err = compile_and_run_probe(src_mpich, self.mpich_inc, self.work, "mpich")
        if err:
            return Outcome(False, "against MPICH's mpi_abi.h: " + err)
        bad = [f"{n}: Weft {ours.get(n)}, MPICH {theirs.get(n)}" for n in sorted(set(ours) | set(theirs))
               if ours.get(n) != theirs.get(n)]
        if bad:
            return Outcome(False, f"{len(bad)} differences:\n" + "\n".join(bad[:40]))
        return Outcome(True, f"{len(ours)} values identical")

    # ---- generator
    def gen_check(self):
        py = os.path.join(self.cache, "gen", "bin", "python")
        if not os.path.exists(py):
            return Outcome(True, skipped=f"{py} is missing (scripts/prepare.sh makes it)")
        texts, ok = [], True
        for script in ("gen.py", "gen_fortran.py"):
            r = run([py, os.path.join(REPO, "api", script), "--check"], timeout=300, cwd=REPO)
            ok = ok and r.rc == 0 and not r.timed_out
            texts.append(r.text())
        return Outcome(ok, "\n".join(texts))

    # ---- Rust checks beyond cargo test
    def loom_models(self):
        """The loom models of the lock-free structures (their own target dir: `--cfg loom`
        rebuilds everything)."""
        cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
        env = dict(os.environ, RUSTFLAGS="--cfg loom")
        r = run([cargo, "test", "-p", "weft-core", "--lib", "--target-dir",
                 os.path.join(REPO, "target", "loom"), "loom"], timeout=1200, cwd=REPO, env=env,
                merge=True)
        m = RESULT_RE.search(r.out)
        ok = r.rc == 0 and not r.timed_out and m is not None and int(m.group(2)) > 0
        return Outcome(ok, tail(r.text(), 60))

    def clippy_unsafe(self):
        """Every unsafe block documented: clippy's undocumented_unsafe_blocks, alone."""
        cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
        r = run([cargo, "clippy", "--release", "--workspace", "--all-targets", "--", "-A",
                 "clippy::all", "-D", "clippy::undocumented_unsafe_blocks"], timeout=1200,
                cwd=REPO, merge=True)
        if r.rc != 0 and "no such command" in r.out:
            return Outcome(True, skipped="cargo clippy is not installed")
        return Outcome(r.rc == 0 and not r.timed_out, tail(r.text(), 60))

    # ---- exported symbols
    def exports(self):
        lib = os.path.join(self.prefix, "lib", "libmpi_abi.so.1")
        names = []
        with open(os.path.join(REPO, "api", "exports.txt")) as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if line:
                    names.append(line)
        problems = []
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            problems.append(f"api/exports.txt lists twice: {sorted(dup)}")
        expected = {}
        for n in names:
            expected[n] = "W"
            expected["P" + n] = "T"
            # QMPI's last link of each chain (docs/tools.md); none for the variadic MPI_Pcontrol
            if n != "MPI_Pcontrol":
                expected["Q" + n] = "T"
        for n in ("Register_tool_name", "Register_tool_storage", "Register_function", "Get_function",
                  "Get_tool_storage", "Get_calling_address"):
            expected["QMPI_" + n] = "T"
        r = run(["nm", "-D", "--defined-only", lib], timeout=60, check_leftovers=False)
        if r.rc != 0:
            return Outcome(False, r.text())
        got = {}
        for line in r.out.splitlines():
            parts = line.split()
            if len(parts) < 3:
                continue
            kind, sym = parts[1], parts[2].split("@")[0]
            got[sym] = kind
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        wrong = sorted(f"{s}: {got[s]} (want {expected[s]})" for s in set(expected) & set(got)
                       if got[s] != expected[s])
        if missing:
            problems.append(f"{len(missing)} missing: {' '.join(missing[:30])}")
        if extra:
            problems.append(f"{len(extra)} not in api/exports.txt: {' '.join(extra[:30])}")
        if wrong:
            problems.append(f"{len(wrong)} with the wrong binding: " + "; ".join(wrong[:30]))
        r2 = run(["readelf", "-d", lib], timeout=60, check_leftovers=False)
        m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", r2.out)
        soname = m.group(1) if m else None
        if soname != "libmpi_abi.so.1":
            problems.append(f"soname is {soname!r}, expected 'libmpi_abi.so.1'")
        for link in ("libmpi.so", "libmpi_abi.so"):
            p = os.path.join(self.prefix, "lib", link)
            if not os.path.exists(p) or os.path.realpath(p) != os.path.realpath(lib):
                problems.append(f"{p} does not lead to libmpi_abi.so.1")
        detail = f"{len(names)} functions, {len(got)} exported symbols, soname {soname}"
        return Outcome(not problems, "\n".join(problems + [detail]))

    # ---- helpers
    def build(self, out_name, sources, compiler=None, flags=()):
        exe = os.path.join(self.work, out_name)
        r = run([compiler or self.mpicc, *flags, "-o", exe, *sources], timeout=120, check_leftovers=False)
        return exe, r

    def clean_env(self, **extra):
        env = {k: v for k, v in os.environ.items()
               if k != "LD_LIBRARY_PATH" and not k.startswith(("PMI_", "PMIX_", "HYDRA_"))}
        env.update(extra)
        return env

    # ---- profiling interface
    def profiling(self):
        d = os.path.join(TESTS, "check")
        exe, r = self.build("profile", [os.path.join(d, "profile_main.c"), os.path.join(d, "profile_tool.c")])
        if r.rc != 0:
            return Outcome(False, "build failed:\n" + r.text())
        r = run([exe], timeout=30, env=self.clean_env())
        ok = r.rc == 0 and " No Errors" in r.out.splitlines()
        return Outcome(ok, r.text())

    # ---- mpicc / mpicxx / pkg-config
    def mpicc_show(self):
        inc = "-I" + os.path.join(self.prefix, "include")
        libdir = "-L" + os.path.join(self.prefix, "lib")
        problems, log = [], []

        def q(*flags):
            r = run([self.mpicc, *flags], timeout=30, check_leftovers=False)
            log.append(f"mpicc {' '.join(flags)} -> rc {r.rc}: {r.out.strip()} {r.err.strip()}")
            if r.rc != 0:
                problems.append(f"mpicc {' '.join(flags)} exited {r.rc}")
            return r.out.split()

        show = q("-show")
        for want in (inc, libdir, "-lmpi"):
            if want not in show:
                problems.append(f"-show lacks {want}")
        show_c = q("-show", "-c", "x.c")
        if "-lmpi" in show_c or inc not in show_c or "x.c" not in show_c:
            problems.append("-show -c x.c should compile only (include dir, no -lmpi)")
        for flag in ("-showme:compile", "-compile_info"):
            words = q(flag)
            if inc not in words or "-lmpi" in words:
                problems.append(f"{flag} should give the include dir and no -lmpi")
        for flag in ("-showme:link", "-link_info"):
            words = q(flag)
            if "-lmpi" not in words or libdir not in words:
                problems.append(f"{flag} should give -L{self.prefix}/lib and -lmpi")
        cxx = run([self.mpicxx, "-show"], timeout=30, check_leftovers=False).out.split()
        if inc not in cxx or "-lmpi" not in cxx:
            problems.append("mpicxx -show lacks the include dir or -lmpi")
        return Outcome(not problems, "\n".join(problems + log))

    def mpicc_runpath(self):
        exe, r = self.build("hello_runpath", [os.path.join(REPO, "examples", "hello.c")])
        if r.rc != 0:
            return Outcome(False, r.text())
        problems = []
        d = run(["readelf", "-d", exe], timeout=30, check_leftovers=False).out
        libdir = os.path.join(self.prefix, "lib")
        m = re.search(r"\((RUNPATH|RPATH)\)\s+Library r\w*path: \[([^\]]*)\]", d)
        if not m or libdir not in m.group(2).split(":"):
            problems.append(f"no RUNPATH with {libdir}: {m.group(0) if m else 'none'}")
        ldd = run(["ldd", exe], timeout=30, env=self.clean_env(), check_leftovers=False).out
        lm = re.search(r"libmpi_abi\.so\.1 => (\S+)", ldd)
        if not lm or os.path.realpath(lm.group(1)) != os.path.realpath(os.path.join(libdir, "libmpi_abi.so.1")):
            problems.append(f"ldd resolves libmpi_abi.so.1 to {lm.group(1) if lm else 'nothing'}")
        r = run([exe], timeout=30, env=self.clean_env())
        if r.rc != 0 or "Hello from rank 0 of 1" not in r.out:
            problems.append("hello without LD_LIBRARY_PATH did not print rank 0 of 1")
        return Outcome(not problems, "\n".join(problems) + "\n" + ldd + r.text())

    def mpicxx_check(self):
        exe, r = self.build("hello_cxx", [os.path.join(TESTS, "check", "hello.cxx")], compiler=self.mpicxx,
                            flags=("-Wall", "-Werror"))
        if r.rc != 0:
            return Outcome(False, r.text())
        r = run([exe], timeout=30, env=self.clean_env())
        ok = r.rc == 0 and "C++ hello from rank 0 of 1" in r.out
        return Outcome(ok, r.text())

    def pkg_config(self):
        pc = shutil.which("pkg-config") or shutil.which("pkgconf")
        if not pc:
            return Outcome(True, skipped="pkg-config is not installed")
        env = self.clean_env(PKG_CONFIG_PATH=os.path.join(self.prefix, "lib", "pkgconfig"))
        r = run([pc, "--cflags", "--libs", "mpi"], timeout=30, env=env, check_leftovers=False)
        if r.rc != 0:
            return Outcome(False, r.text())
        flags = shlex.split(r.out)
        problems = []
        if "-I" + os.path.join(self.prefix, "include") not in flags:
            problems.append("--cflags lacks the include dir")
        if "-lmpi" not in flags:
            problems.append("--libs lacks -lmpi")
        if not problems:
            exe = os.path.join(self.work, "hello_pc")
            cc = os.environ.get("CC", "cc")
            b = run([cc, "-o", exe, os.path.join(REPO, "examples", "hello.c"), *flags], timeout=120,
                    check_leftovers=False)
            if b.rc != 0:
                problems.append("cc $(pkg-config --cflags --libs mpi) failed:\n" + b.text())
            else:
                h = run([exe], timeout=30, env=self.clean_env())
                if h.rc != 0 or "rank 0 of 1" not in h.out:
                    problems.append("the pkg-config-built hello did not run:\n" + h.text())
        return Outcome(not problems, "\n".join(problems + [r.text()]))

    # ---- build systems finding Weft (examples/build-systems)
    def build_system_project(self, tool):
        """A fresh copy of examples/build-systems to configure and build in."""
        src = os.path.join(self.work, f"bs-{tool}")
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(os.path.join(REPO, "examples", "build-systems"), src)
        return src

    def run_rings(self, bindir, names):
        """Runs each built ring program on 3 ranks; returns the problems."""
        problems = []
        for name in names:
            exe = os.path.join(bindir, name)
            if not os.path.exists(exe):
                problems.append(f"{name} was not built")
                continue
            r = run(self.launcher_cmd(3, exe), timeout=60)
            if r.rc != 0 or "expected 6" not in r.out or r.out.count(" 6, expected 6") != 1:
                problems.append(f"{name} on 3 ranks:\n" + r.text())
        return problems

    def launcher_cmd(self, n, exe):
        return [os.path.join(self.prefix, "bin", "mpiexec"), "-n", str(n), exe]

    def have_fortran(self):
        return os.path.exists(os.path.join(self.prefix, "bin", "mpifort"))

    def cmake(self):
        cmake = shutil.which("cmake")
        if not cmake:
            return Outcome(True, skipped="cmake is not installed (scripts/prepare.sh installs it)")
        src = self.build_system_project("cmake")
        build = os.path.join(src, "build")
        env = self.clean_env()
        fortran = self.have_fortran()
        c = run([cmake, "-S", src, "-B", build, f"-DMPI_HOME={self.prefix}",
                 f"-DWITH_FORTRAN={'ON' if fortran else 'OFF'}"], timeout=300, env=env, check_leftovers=False)
        if c.rc != 0:
            return Outcome(False, "cmake configure failed:\n" + c.text())
        if f"Found MPI_C: {self.prefix}" not in c.out:
            return Outcome(False, "FindMPI did not find Weft's C library:\n" + c.text())
        b = run([cmake, "--build", build], timeout=300, env=env, check_leftovers=False)
        if b.rc != 0:
            return Outcome(False, "cmake --build failed:\n" + b.text())
        names = ["ring_c", "ring_cxx"] + (["ring_f"] if fortran else [])
        problems = self.run_rings(build, names)
        return Outcome(not problems, "\n".join(problems + [c.text()]))

    def meson(self):
        meson = os.path.join(self.cache, "buildtools", "bin", "meson")
        if not os.path.exists(meson):
            return Outcome(True, skipped=f"{meson} is missing (scripts/prepare.sh installs it)")
        src = self.build_system_project("meson")
        build = os.path.join(src, "build")
        env = self.clean_env()
        env["PATH"] = os.pathsep.join([os.path.join(self.prefix, "bin"), os.path.dirname(meson), env.get("PATH", "")])
        fortran = self.have_fortran()
        c = run([meson, "setup", build, src, f"-Dfortran={'true' if fortran else 'false'}"], timeout=300,
                env=env, check_leftovers=False)
        if c.rc != 0 or "Run-time dependency MPI for c found: YES" not in c.out:
            return Outcome(False, "meson setup failed:\n" + c.text())
        b = run([meson, "compile", "-C", build], timeout=300, env=env, check_leftovers=False)
        if b.rc != 0:
            return Outcome(False, "meson compile failed:\n" + b.text())
        names = ["ring_c", "ring_cxx"] + (["ring_f"] if fortran else [])
        problems = self.run_rings(build, names)
        return Outcome(not problems, "\n".join(problems + [c.text()]))

    def autotools(self):
        autoreconf = shutil.which("autoreconf")
        if not autoreconf or not shutil.which("automake"):
            return Outcome(True, skipped="autoconf/automake are not installed (scripts/prepare.sh installs them)")
        src = self.build_system_project("autotools")
        env = self.clean_env()
        a = run([autoreconf, "-i"], timeout=300, cwd=src, env=env, check_leftovers=False)
        if a.rc != 0:
            return Outcome(False, "autoreconf -i failed:\n" + a.text())
        env["CC"] = self.mpicc
        c = run(["./configure"], timeout=300, cwd=src, env=env, check_leftovers=False)
        if c.rc != 0:
            return Outcome(False, "CC=mpicc ./configure failed:\n" + c.text())
        b = run(["make"], timeout=300, cwd=src, env=env, check_leftovers=False)
        if b.rc != 0:
            return Outcome(False, "make failed:\n" + b.text())
        os.replace(os.path.join(src, "ring"), os.path.join(src, "ring_c"))
        problems = self.run_rings(src, ["ring_c"])
        return Outcome(not problems, "\n".join(problems))

    def pkg_config_fortran(self):
        pc = shutil.which("pkg-config") or shutil.which("pkgconf")
        if not pc:
            return Outcome(True, skipped="pkg-config is not installed")
        if not self.have_fortran():
            return Outcome(True, skipped="Weft was built without Fortran bindings")
        env = self.clean_env(PKG_CONFIG_PATH=os.path.join(self.prefix, "lib", "pkgconfig"))
        r = run([pc, "--cflags", "--libs", "mpi-fort"], timeout=30, env=env, check_leftovers=False)
        if r.rc != 0 or "-lmpifort" not in r.out:
            return Outcome(False, "pkg-config mpi-fort:\n" + r.text())
        exe = os.path.join(self.work, "ring_f_pc")
        b = run(["gfortran", "-o", exe, os.path.join(REPO, "examples", "build-systems", "ring.f90"),
                 *shlex.split(r.out)], timeout=120, cwd=self.work, check_leftovers=False)
        if b.rc != 0:
            return Outcome(False, "gfortran $(pkg-config --cflags --libs mpi-fort) failed:\n" + b.text())
        problems = self.run_rings(self.work, ["ring_f_pc"])
        return Outcome(not problems, "\n".join(problems + [r.text()]))

    # ---- mpi4py's own test suite (scripts/mpi4py.sh; builds mpi4py into the cache once)
    def mpi4py(self, np):
        script = os.path.join(REPO, "scripts", "mpi4py.sh")
        env = self.clean_env(WEFT_CACHE=self.cache)
        r = run([script, "--prefix", self.prefix, str(np)], timeout=2400, env=env, merge=True)
        line = next((l for l in r.out.splitlines() if l.startswith(f"mpi4py np={np}:")), None)
        ok = r.rc == 0 and not r.timed_out and line is not None
        return Outcome(ok, (line or "no summary line") + "\n" + r.text())

    # ---- mpi.h in strict C and C++ modes
    def header_strict(self):
        inc = os.path.join(self.prefix, "include")
        c_src = os.path.join(self.work, "strict.c")
        cxx_src = os.path.join(self.work, "strict.cxx")
        body = ("#include <mpi.h>\n"
                "int main(void) { MPI_Comm c = MPI_COMM_WORLD; MPI_Status st; (void)c; (void)st;\n"
                "  return MPI_VERSION == 5 && sizeof(MPI_Status) == 32 ? 0 : 1; }\n")
        for path in (c_src, cxx_src):
            with open(path, "w") as f:
                f.write(body)
        cc = os.environ.get("CC", "cc")
        cxx = os.environ.get("CXX", "c++")
        strict = ["-pedantic-errors", "-Wall", "-Wextra", "-Werror", "-I", inc, "-fsyntax-only"]
        problems, log = [], []
        for compiler, std, src in [(cc, "c99", c_src), (cc, "c11", c_src), (cc, "c17", c_src),
                                   (cxx, "c++11", cxx_src), (cxx, "c++17", cxx_src), (cxx, "c++20", cxx_src)]:
            r = run([compiler, f"-std={std}", *strict, src], timeout=120, check_leftovers=False)
            log.append(f"{std}: exit {r.rc}")
            if r.rc != 0:
                problems.append(f"mpi.h does not compile with -std={std} -pedantic-errors -Wall -Wextra -Werror:\n"
                                + tail(r.err, 15))
        return Outcome(not problems, "\n".join(problems + log))

    # ---- the static library
    def static_lib(self):
        lib = os.path.join(self.prefix, "lib", "libmpi_abi.a")
        if not os.path.exists(lib):
            return Outcome(False, f"{lib} is missing")
        cc = os.environ.get("CC", "cc")
        inc = "-I" + os.path.join(self.prefix, "include")
        native = ["-lpthread", "-ldl", "-lm", "-lrt", "-lutil", "-lgcc_s"]
        if has_ucx(self.prefix):  # the ucx transport needs UCX's libraries (docs/multinode.md)
            native = run(["pkg-config", "--libs", "ucx"], timeout=30, check_leftovers=False).out.split() + native
        problems, log = [], []
        hello = os.path.join(self.work, "hello_static")
        b = run([cc, inc, "-o", hello, os.path.join(REPO, "examples", "hello.c"), lib, *native],
                timeout=120, check_leftovers=False)
        if b.rc != 0:
            return Outcome(False, "linking hello with libmpi_abi.a failed:\n" + b.text())
        ldd = run(["ldd", hello], timeout=30, check_leftovers=False).out
        if "libmpi_abi" in ldd:
            problems.append("the statically linked hello still needs libmpi_abi.so")
        h = run([hello], timeout=30, env=self.clean_env())
        if h.rc != 0 or "Hello from rank 0 of 1" not in h.out:
            problems.append("statically linked hello failed:\n" + h.text())
        d = os.path.join(TESTS, "check")
        prof = os.path.join(self.work, "profile_static")
        b = run([cc, inc, "-o", prof, os.path.join(d, "profile_main.c"), os.path.join(d, "profile_tool.c"), lib,
                 *native], timeout=120, check_leftovers=False)
        if b.rc != 0:
            problems.append("linking the profiling tool with libmpi_abi.a failed:\n" + b.text())
        else:
            p = run([prof], timeout=30, env=self.clean_env())
            log.append(p.text())
            if p.rc != 0 or " No Errors" not in p.out.splitlines():
                problems.append("the profiling tool over libmpi_abi.a did not see its own code run")
        return Outcome(not problems, "\n".join(problems + log))

    # ---- weft-info and the functions it lists as missing
    def weft_info(self):
        info = os.path.join(self.prefix, "bin", "weft-info")
        problems = []
        r = run([info], timeout=30)
        if r.rc != 0:
            return Outcome(False, r.text())
        if not r.out.startswith("Weft "):
            problems.append("weft-info does not start with the version")
        src = os.path.join(REPO, "crates", "weft-core", "src", "config.rs")
        documented = sorted(set(re.findall(r'name: "(WEFT_[A-Z0-9_]+)"', open(src).read())))
        for var in documented:
            if var not in r.out:
                problems.append(f"weft-info does not show {var}")
        if not documented:
            problems.append(f"no WEFT_* variables found in {src}")
        cv = run([info, "--cvars"], timeout=30, env=dict(os.environ, WEFT_COLL_REDUCE="linear"))
        for var in documented:
            if not re.search(rf"\d+ {var} ", cv.out):
                problems.append(f"weft-info --cvars does not list {var}")
        if not re.search(r"WEFT_COLL_REDUCE +enum \{auto, binomial, rabenseifner, linear, shm\}; "
                         r"group_eq, writable; value per communicator", cv.out):
            problems.append("weft-info --cvars does not describe WEFT_COLL_REDUCE as MPI_T does")
        if not re.search(r"WEFT_NUM_VCIS +int; readonly; value 1\n", cv.out):
            problems.append("weft-info --cvars does not show WEFT_NUM_VCIS's value")
        pv = run([info, "--pvars"], timeout=30)
        for name in ("weft_msgs_sent_shm", "weft_unexpected_queue_max", "weft_coll_bcast_binomial",
                     "weft_unexpected_arrival"):
            if f" {name} " not in pv.out:
                problems.append(f"weft-info --pvars does not list {name}")
        m = re.search(r"(\d+) exported, (\d+) implemented, (\d+) not implemented", r.out)
        missing = run([info, "--missing"], timeout=30)
        names = missing.out.split()
        exports = set()
        with open(os.path.join(REPO, "api", "exports.txt")) as f:
            for raw in f:
                line = raw.split("#", 1)[0].strip()
                if line:
                    exports.add(line)
        if missing.rc != 0:
            problems.append("weft-info --missing failed")
        unknown = sorted(set(names) - exports)
        if unknown:
            problems.append(f"--missing lists names that are not exported: {unknown[:10]}")
        if not m:
            problems.append("no 'N exported, N implemented, N not implemented' line")
        else:
            total, done, todo = map(int, m.groups())
            if total != len(exports) or done + todo != total or todo != len(names):
                problems.append(f"counts {total}/{done}/{todo} disagree with {len(exports)} exports and "
                                f"{len(names)} listed as missing")
        for required in ("MPI_Init", "MPI_Comm_rank", "MPI_Error_string", "MPI_Info_create",
                         "MPI_Comm_call_errhandler", "MPI_Abi_get_info"):
            if required in names:
                problems.append(f"{required} is implemented but listed as missing")
        return Outcome(not problems, "\n".join(problems + [r.text()]))

    def missing_functions(self):
        info = os.path.join(self.prefix, "bin", "weft-info")
        missing = run([info, "--missing"], timeout=30)
        if missing.rc != 0:
            return Outcome(False, missing.text())
        exe, b = self.build("call_missing", [os.path.join(TESTS, "check", "call_missing.c")], flags=("-ldl",))
        if b.rc != 0:
            return Outcome(False, b.text())
        listing = os.path.join(self.work, "missing.txt")
        with open(listing, "w") as f:
            f.write(missing.out)
        r = run(["sh", "-c", 'exec "$0" < "$1"', exe, listing], timeout=60, env=self.clean_env())
        n = len(missing.out.split())
        ok = r.rc == 0 and " No Errors" in r.out.splitlines() and f"{2 * n} calls" in r.out
        return Outcome(ok, f"{n} functions listed as missing\n" + r.text())

    # ---- interoperability with MPICH
    def interop_mpicc_abi(self):
        mpicc_abi = os.path.join(self.cache, "mpich", "bin", "mpicc_abi")
        if not os.path.exists(mpicc_abi):
            return Outcome(True, skipped=f"{mpicc_abi} is not installed")
        exe, r = self.build("hello_mpich_abi", [os.path.join(REPO, "examples", "hello.c")], compiler=mpicc_abi)
        if r.rc != 0:
            return Outcome(False, "mpicc_abi failed:\n" + r.text())
        libdir = os.path.join(self.prefix, "lib")
        env = self.clean_env(LD_LIBRARY_PATH=libdir)
        problems = []
        ldd = run(["ldd", exe], timeout=30, env=env, check_leftovers=False).out
        lm = re.search(r"libmpi_abi\.so\.1 => (\S+)", ldd)
        if not lm or os.path.realpath(lm.group(1)) != os.path.realpath(os.path.join(libdir, "libmpi_abi.so.1")):
            problems.append(f"ldd resolves libmpi_abi.so.1 to {lm.group(1) if lm else 'nothing'}, not {libdir}")
        h = run([self.mpiexec, "-n", "2", exe], timeout=30, env=env)
        problems += check_ranks(h.out, 2)
        if h.rc != 0 or h.timed_out or h.leftovers:
            problems.append(f"Weft's mpiexec -n 2 exited {h.rc}" + (" (timed out)" if h.timed_out else "")
                            + (f", left {h.leftovers}" if h.leftovers else ""))
        return Outcome(not problems, "\n".join(problems) + "\n" + ldd + h.text())

    def interop_hydra(self):
        if not os.path.exists(self.hydra):
            return Outcome(True, skipped=f"{self.hydra} is not installed")
        exe, r = self.build("hello_for_hydra", [os.path.join(REPO, "examples", "hello.c")])
        if r.rc != 0:
            return Outcome(False, r.text())
        h = run([self.hydra, "-n", "2", exe], timeout=30, env=self.clean_env())
        problems = check_ranks(h.out, 2)
        if h.rc != 0 or h.timed_out or h.leftovers:
            problems.append(f"Hydra's mpiexec -n 2 exited {h.rc}")
        return Outcome(not problems, "\n".join(problems) + "\n" + h.text())


    def slurm(self):
        """Launches under a private one-machine Slurm (scripts/slurm-local.sh: srun --mpi=pmi2
        and --mpi=pmix); skipped where Slurm is not installed or its daemons cannot start."""
        r = run([os.path.join(REPO, "scripts", "slurm-local.sh"), self.prefix], timeout=600)
        skip = re.search(r"^slurm: SKIP: (.*)$", r.out, re.M)
        if skip and r.rc == 0:
            return Outcome(True, skipped=skip.group(1))
        ok = r.rc == 0 and re.search(r"^slurm: \d+ passed, 0 failed$", r.out, re.M) is not None
        return Outcome(ok and not r.leftovers, r.text())


SHM_APPEARED = {}  # /dev/shm entry -> the C test during which it appeared


def shm_entries():
    try:
        return {e for e in os.listdir("/dev/shm") if e.startswith("weft.")}
    except FileNotFoundError:
        return set()


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description="Weft's test runner (see the top of this file).")
    ap.add_argument("--prefix", default=os.path.join(REPO, "build"))
    ap.add_argument("--cache", default=os.path.expanduser("~/.cache/weft"))
    ap.add_argument("--launcher", choices=LAUNCHERS, default="weft")
    ap.add_argument("--only", default=None, metavar="PATTERN")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    args.prefix = os.path.abspath(args.prefix)
    args.cache = os.path.abspath(os.path.expanduser(args.cache))

    become_subreaper()
    # A stray signal to the runner should still end with a summary and no leftovers.
    def on_term(*_):
        raise KeyboardInterrupt()
    signal.signal(signal.SIGTERM, on_term)

    shm_before = shm_entries()
    runner = Runner(args)
    start = time.monotonic()
    try:
        cargo_tests(runner)
        CSuite(runner, args.prefix, args.cache, args.launcher).run_all()
        CSuite(runner, args.prefix, args.cache, args.launcher, lang="fortran").run_all()
        checks = Checks(runner, args.prefix, args.cache, args.launcher)
        runner.test("check/abi-probe", checks.abi_probe)
        runner.test("check/abi-probe-mpich", checks.abi_probe_mpich)
        runner.test("check/gen-up-to-date", checks.gen_check)
        runner.test("check/loom", checks.loom_models)
        runner.test("check/clippy-unsafe", checks.clippy_unsafe)
        runner.test("check/exports", checks.exports)
        runner.test("check/profiling", checks.profiling)
        runner.test("check/header-strict", checks.header_strict)
        runner.test("check/static-lib", checks.static_lib)
        runner.test("check/mpicc-show", checks.mpicc_show)
        runner.test("check/mpicc-runpath", checks.mpicc_runpath)
        runner.test("check/mpicxx", checks.mpicxx_check)
        runner.test("check/pkg-config", checks.pkg_config)
        runner.test("check/pkg-config-fortran", checks.pkg_config_fortran)
        runner.test("check/cmake", checks.cmake)
        runner.test("check/meson", checks.meson)
        runner.test("check/autotools", checks.autotools)
        runner.test("mpi4py/np1", checks.mpi4py, 1)
        runner.test("mpi4py/np2", checks.mpi4py, 2)
        runner.test("check/weft-info", checks.weft_info)
        runner.test("check/missing-functions", checks.missing_functions)
        runner.test("check/interop-mpicc-abi", checks.interop_mpicc_abi)
        runner.test("check/interop-hydra", checks.interop_hydra)
        runner.test("check/slurm", checks.slurm)

        def shm_clean():
            # Reported, not removed: a job running beside this run may own an entry.
            new = sorted(shm_entries() - shm_before)
            text = "\n".join(f"new /dev/shm entry {e}" + (f" (appeared during {SHM_APPEARED[e]})"
                                                         if e in SHM_APPEARED else "") for e in new)
            return Outcome(not new, text)
        runner.test("check/dev-shm-clean", shm_clean)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        runner.failed += 1
    finally:
        reap_leftovers(grace=0)
    if runner.failures:
        print(f"# failed: {' '.join(runner.failures)}")
    print(f"# {time.monotonic() - start:.1f}s, launcher {args.launcher}")
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main())
