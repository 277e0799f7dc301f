"""One sandbox and its sessions, over dsec-run."""

from dataclasses import dataclass, field

from ._proc import DsecError, one, run


@dataclass
class Result:
    """What a command did: dsec-run's result record, its fields as attributes."""
    exit_code: int
    stdout: str
    stderr: str
    duration_ms: int = 0
    timed_out: bool = False
    signal: int | None = None
    note: str = ""
    record: dict = field(default_factory=dict, repr=False)

    @property
    def ok(self):
        return self.exit_code == 0

    @classmethod
    def from_record(cls, r):
        return cls(exit_code=r.get("exit_code", -1), stdout=r.get("stdout", ""),
                   stderr=r.get("stderr", ""), duration_ms=r.get("duration_ms", 0),
                   timed_out=r.get("timed_out", False), signal=r.get("signal"),
                   note=r.get("note", ""), record=r)


def _duration(value):
    """Seconds (int or float) or a dsec duration string ("30s", "10m") as dsec takes it."""
    if value is None or isinstance(value, str):
        return value
    return f"{int(value * 1000)}ms"


def create_args(layers=None, memory=None, cpus=None, ttl=None, policy=None, env=None, labels=None,
                workdir=None, user=None, idle_ttl=None):
    """dsec-run create's options for these keyword arguments (layers only with --layers)."""
    args = []
    if layers:
        args += ["--layers", ",".join(layers)]
    for flag, value in (("--memory", memory), ("--cpus", cpus), ("--ttl", _duration(ttl)),
                        ("--idle-ttl", _duration(idle_ttl)), ("--policy", policy),
                        ("--workdir", workdir), ("--user", user)):
        if value is not None:
            args += [flag, str(value)]
    for k, v in (env or {}).items():
        args += ["--env", f"{k}={v}"]
    for k, v in (labels or {}).items():
        args += ["--label", f"{k}={v}"]
    return args


def exec_args(timeout=None, no_output_timeout=None, output_limit=None):
    args = []
    for flag, value in (("--timeout", _duration(timeout)), ("--no-output-timeout", _duration(no_output_timeout)),
                        ("--output-limit", output_limit)):
        if value is not None:
            args += [flag, str(value)]
    return args


def argv_of(cmd):
    """A command as argv: a string runs through sh -c."""
    return ["sh", "-c", cmd] if isinstance(cmd, str) else [str(a) for a in cmd]


class Session:
    """A persistent shell in a sandbox: cd, variables and background jobs carry over."""

    def __init__(self, sandbox, record):
        self.sandbox = sandbox
        self.record = record
        self.id = record["id"]

    def run(self, cmd, timeout=None, no_output_timeout=None, output_limit=None):
        """Runs one command string in the shell and returns its Result."""
        records = run("dsec-run", ["session", "exec", self.id,
                                   *exec_args(timeout, no_output_timeout, output_limit), "--", cmd],
                      passthrough=True)
        return Result.from_record(one(records, "result"))

    def close(self):
        run("dsec-run", ["session", "close", self.id])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.close()
        except DsecError as e:
            if e.code != "not_found":
                raise


class Sandbox:
    """A live sandbox. Made by Sandbox.create() (or create_many()); a context manager
    that destroys it on exit."""

    def __init__(self, record):
        self.record = record
        self.id = record["id"]

    @classmethod
    def create(cls, layers, memory=None, cpus=None, ttl=None, policy=None, **options):
        """Creates a sandbox from layer names (base first). Other keyword arguments: env
        (dict), labels (dict), workdir, user, idle_ttl. Raises DsecError."""
        args = create_args(layers, memory, cpus, ttl, policy, **options)
        return cls(one(run("dsec-run", ["create", *args]), "sandbox"))

    def exec(self, cmd, timeout=None, no_output_timeout=None, env=None, workdir=None, user=None,
             input=None, output_limit=None):
        """Runs cmd (argv list, or a string for sh -c) and returns its Result; `input`
        (str or bytes) is its stdin."""
        args = ["exec", "--json", *exec_args(timeout, no_output_timeout, output_limit)]
        if input is not None:
            args.append("--interactive")
        for k, v in (env or {}).items():
            args += ["--env", f"{k}={v}"]
        if workdir:
            args += ["--workdir", workdir]
        if user:
            args += ["--user", str(user)]
        records = run("dsec-run", [*args, self.id, "--", *argv_of(cmd)], stdin=input, passthrough=True)
        return Result.from_record(one(records, "result"))

    def session(self, shell=None, pty=False):
        """Opens a persistent shell (a Session; also a context manager). With pty, its
        commands run on a terminal: stdout and stderr come merged in stdout."""
        args = ["session", "open", self.id] + (["--shell", shell] if shell else []) + (["--pty"] if pty else [])
        return Session(self, one(run("dsec-run", args), "session"))

    def cp_in(self, src, dst):
        """Copies host `src` to `dst` inside; returns the copy record."""
        return one(run("dsec-run", ["cp", str(src), f"{self.id}:{dst}"]), "copy")

    def cp_out(self, src, dst):
        """Copies `src` inside to host `dst`; returns the copy record."""
        return one(run("dsec-run", ["cp", f"{self.id}:{src}", str(dst)]), "copy")

    def snapshot(self, name=None):
        """Packs the sandbox's files into a new layer; returns its layer record."""
        return one(run("dsec-run", ["snapshot", self.id] + (["--name", name] if name else [])), "layer")

    def log(self):
        """The sandbox's command log: one record per exec, session command and cp."""
        return [r for r in run("dsec-run", ["log", self.id]) if r.get("type") == "log"]

    def inspect(self):
        return one(run("dsec-run", ["inspect", self.id]), "sandbox")

    def destroy(self, keep_log=None):
        """Destroys the sandbox; with keep_log, its command log goes to keep_log/ID.log.jsonl."""
        run("dsec-run", ["destroy", self.id] + (["--keep-log", str(keep_log)] if keep_log else []))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()
