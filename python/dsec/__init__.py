"""dsec from Python: a thin layer over the dsec programs and their JSON Lines records.

    from dsec import Sandbox
    with Sandbox.create(layers=["base"], memory="512M") as sb:
        print(sb.exec(["uname", "-a"]).stdout)
        with sb.session() as sh:
            sh.run("cd /tmp && export X=1")
            print(sh.run("pwd; echo $X").stdout)

Errors raise DsecError, which carries the error record (`.record`, `.code`).
The programs are found on PATH, or in $DSEC_BIN; DSEC_ROOT and DSEC_RUN pass through.
"""

from ._proc import DsecError
from .batch import create_many, destroy_many, exec_many
from .sandbox import Result, Sandbox, Session

__all__ = ["DsecError", "Result", "Sandbox", "Session", "create_many", "destroy_many", "exec_many"]
