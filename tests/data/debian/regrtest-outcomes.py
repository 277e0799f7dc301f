"""One line per test case of a `python3 -m test --junit-xml FILE` run, for shell tools.

    python3 - FILE < regrtest-outcomes.py

Each line is tab-separated: the test's id (test.test_os.FileTests.test_access), its
outcome (pass, skip, fail, error), its time in seconds, and the first line of the skip
reason or of the exception, tabs and newlines flattened. A test case the run left
without a name (a failure in a subTest is recorded that way) is reported with the id
"?". 48-run-debian.sh runs this with the tested tree's own python, in the sandbox and in
the chroot, so the host needs no python of its own.
"""
import sys
import xml.etree.ElementTree as ET


def flat(text):
    line = (text or "").strip().splitlines()[:1]
    return " ".join(line[0].split()) if line else ""


def outcome(case):
    for tag, name in (("error", "error"), ("failure", "fail"), ("skipped", "skip")):
        child = case.find(tag)
        if child is not None:
            detail = child.get("message") or child.text
            return name, flat(detail)
    return "pass", ""


def main():
    root = ET.parse(sys.argv[1]).getroot()
    for case in root.iter("testcase"):
        name, detail = outcome(case)
        print("\t".join([case.get("name", "?"), name, case.get("time", "0"), detail]))


main()
