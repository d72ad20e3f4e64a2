"""The counting every Python check shares: one line per failure, then "N passed, M failed"
(the line scripts/test.sh reads), and the comparison of a regenerated fixture with the committed one."""

import sys


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}")

    def finish(self):
        """Prints the closing line and returns the exit status."""
        print(f"{self.passed} passed, {self.failed} failed")
        return 1 if self.failed else 0


def compare_fixture(generated, committed, why):
    """Each generated entry (dicts with a "name") must equal the committed one of that name, and no
    committed entry may be missing. Returns the exit status after the closing line."""
    tally = Tally()
    want = {e["name"]: e for e in committed}
    for e in generated:
        tally.check(want.get(e["name"]) == e, f"{e['name']}: {why}")
    for name in sorted(set(want) - {e["name"] for e in generated}):
        tally.check(False, f"{name}: in the fixture but no longer generated")
    return tally.finish()


def exit_with(tally):
    sys.exit(tally.finish())
