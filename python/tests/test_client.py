"""The Python client against the real binaries. Run by tests/integration/59-python-client.sh,
which gives it a temporary DSEC_ROOT/DSEC_RUN, the built programs on PATH and a layer
named in DSEC_TEST_LAYER (a busybox tree)."""

import asyncio
import os
import tempfile
import unittest

import dsec

LAYER = os.environ.get("DSEC_TEST_LAYER")


@unittest.skipUnless(LAYER, "needs DSEC_TEST_LAYER (run through tests/integration/59-python-client.sh)")
class SandboxTest(unittest.TestCase):
    def test_exec_session_copy_log(self):
        with dsec.Sandbox.create(layers=[LAYER], memory="256M", cpus=1, ttl=600, labels={"t": "py"}) as sb:
            r = sb.exec(["sh", "-c", "echo out; echo err >&2; exit 3"])
            self.assertEqual((r.exit_code, r.stdout, r.stderr, r.ok), (3, "out\n", "err\n", False))
            self.assertEqual(sb.exec("cat", input="fed").stdout, "fed")
            self.assertEqual(sb.exec("echo $A", env={"A": "1"}).stdout, "1\n")
            r = sb.exec(["sleep", "30"], timeout=0.3)
            self.assertTrue(r.timed_out)
            with sb.session() as sh:
                sh.run("cd /tmp && export X=7")
                self.assertEqual(sh.run("pwd; echo $X").stdout, "/tmp\n7\n")
                self.assertEqual(sh.run("exit 4").exit_code, 4)
            with sb.session(pty=True) as term:
                r = term.run("test -t 0 && test -t 1 && echo tty; echo err >&2")
                self.assertEqual((r.stdout, r.stderr), ("tty\r\nerr\r\n", ""))
            with tempfile.TemporaryDirectory() as d:
                with open(os.path.join(d, "in.txt"), "w") as f:
                    f.write("hello")
                self.assertEqual(sb.cp_in(os.path.join(d, "in.txt"), "/tmp/in.txt")["bytes"], 5)
                sb.cp_out("/tmp/in.txt", os.path.join(d, "out.txt"))
                with open(os.path.join(d, "out.txt")) as f:
                    self.assertEqual(f.read(), "hello")
            kinds = [r["kind"] for r in sb.log()]
            self.assertEqual(kinds.count("session"), 4)
            self.assertIn("cp", kinds)
            self.assertEqual(kinds[0], "exec")
        with self.assertRaises(dsec.DsecError) as caught:
            sb.exec("true")
        self.assertEqual(caught.exception.code, "not_found")
        self.assertEqual(caught.exception.record["type"], "error")

    def test_errors_carry_the_record(self):
        with self.assertRaises(dsec.DsecError) as caught:
            dsec.Sandbox.create(layers=["no-such-layer"])
        self.assertIn("message", caught.exception.record)
        with self.assertRaises(dsec.DsecError) as caught:
            dsec.Sandbox.create(layers=[LAYER], memory="12X")
        self.assertTrue(str(caught.exception))

    def test_snapshot_and_keep_log(self):
        sb = dsec.Sandbox.create(layers=[LAYER])
        try:
            sb.exec("echo snap > /root/f")
            layer = sb.snapshot(name="py-snap")
            self.assertGreater(layer["log_position"], 0)
            with dsec.Sandbox.create(layers=[LAYER, "py-snap"]) as child:
                self.assertEqual(child.exec("cat /root/f").stdout, "snap\n")
        finally:
            with tempfile.TemporaryDirectory() as d:
                sb.destroy(keep_log=d)
                with open(os.path.join(d, sb.id + ".log.jsonl")) as f:
                    self.assertIn("echo snap", f.read())

    def test_batch(self):
        async def go():
            boxes = await dsec.create_many(4, [LAYER], parallel=4, memory="128M")
            try:
                self.assertEqual(len({b.id for b in boxes}), 4)
                results = await dsec.exec_many(boxes, "hostname", parallel=4)
                self.assertEqual([r.stdout.strip() for r in results], [b.id for b in boxes])
            finally:
                await dsec.destroy_many(boxes)
            with self.assertRaises(dsec.DsecError):
                await dsec.create_many(2, ["no-such-layer"])
        asyncio.run(go())


if __name__ == "__main__":
    unittest.main()
