#!/usr/bin/env python3
"""Counts the instructions a workload runs per operation, and the shares of two parts of the Swift runtime:
generic-metadata lookups and reference counting.

A generic type whose arguments are only known at run time (code that the compiler did not specialise)
asks the runtime for its metadata: `swift_getGenericMetadata`, a hash-table lookup of some hundreds of
instructions, on every use. Reference counting is `swift_retain`, `swift_release` and their kin, an
atomic operation each. Both are pure overhead, and both show up as these shares.

Usage (from `Benchmarks/`, after `swift build -c release`):

    cp .build/release/benchmarks /tmp/bench && objcopy --strip-debug /tmp/bench
    python3 Scripts/callgrind-shares.py /tmp/bench W12 2000

The third argument is the workload's operations per quick round (W12: 2 000 dispatches; W5: 20 000;
W9: 2 000; see each workload's `scale.count`). An optional fourth names the library (default
Stillwater). The script runs the workload under callgrind for one and for three quick rounds and divides
the difference by two rounds' operations, so start-up and the allocation-counting run cancel out. Only
the timed parts are counted (the program switches collection on around each, as for `speed-gate.py`), so
setup and teardown are left out too.
It prints:

- instructions per operation;
- the metadata share: `swift_getGenericMetadata` with everything it calls (inclusive), and, wider, every
  `__swift_instantiateGenericMetadata` (the accessors' way in, which calls it), as shares of the
  difference, with the lookups per operation;
- the reference-counting share: the self cost of `swift_retain`, `swift_release`, their `_n` forms and
  the bridge-object and unknown-object variants (the counting itself; a release's deinit is not in it).

A workload whose consumers run on other threads (W12) is not deterministic: callgrind runs one thread at a
time, and how often a consumer waits depends on when it runs. Its counts move between runs, for W12 by
a factor of two (see its section in the README). `--repeat N` runs the pair N times and prints each.
`--per PATTERN` also counts the calls of the functions whose mangled name the regular expression
PATTERN matches, per operation, and the instructions per call: W12's consumers call `LastSeen.record`
once per view they take, so `--per 'LastSeen.*C6record'` tells how many views they took per dispatch in
that run.

Needs valgrind (callgrind_annotate comes with it). The debug info must be stripped first: callgrind 3.19
cannot read the DWARF 5 that Swift emits.
"""
import os
import re
import subprocess
import sys
import tempfile

REFERENCE_COUNTING = re.compile(
    r"^swift_(nonatomic_)?(retain|release|retain_n|release_n|bridgeObjectRetain|bridgeObjectRelease|"
    r"bridgeObjectRetain_n|bridgeObjectRelease_n|unknownObjectRetain|unknownObjectRelease|"
    r"unknownObjectRetain_n|unknownObjectRelease_n)$")
LINE = re.compile(r"^\s*([0-9,]+)\s+(?:\([ 0-9.]+%\)\s+)?\S*?:(.+?)(?: \[(.*)\])?$")


def annotate(path, inclusive):
    """Instructions by function name, self or inclusive, from callgrind_annotate."""
    output = subprocess.run(
        ["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}", "--threshold=100", path],
        capture_output=True, text=True, check=True).stdout
    costs, total = {}, None
    for line in output.splitlines():
        if "PROGRAM TOTALS" in line:
            count = line.split()[0].replace(",", "")
            if not count.isdigit():
                sys.exit(f"callgrind counted nothing in {path}: the binary does not switch collection on around "
                         "its timed parts (built before Sources/Callgrind?)")
            total = int(count)
            continue
        match = LINE.match(line)
        if match:
            name = match.group(2).strip()
            costs[name] = costs.get(name, 0) + int(match.group(1).replace(",", ""))
    return total, costs


def calls_to(path, callee, exact=True):
    """How many times `callee` (or, not `exact`, any function whose name the regular expression `callee`
    matches) was called, from the profile's call lines (written uncompressed)."""
    count, target = 0, False
    with open(path) as profile:
        for line in profile:
            if line.startswith("cfn="):
                name = line[4:].rstrip("\n")
                target = name == callee if exact else re.search(callee, name) is not None
            elif line.startswith("calls=") and target:
                count += int(line[6:].split()[0])
                target = False
    return count


def profile(binary, workload, library, rounds, directory, per):
    output = f"{directory}/callgrind.{rounds}"
    # The program switches collection on and off around each timed part (see speed-gate.py), so it
    # starts off: started on, callgrind would count everything but the timed parts.
    subprocess.run(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--compress-strings=no", "--compress-pos=no",
                    f"--callgrind-out-file={output}", binary, "--quick", "--only", workload,
                    "--library", library, "--rounds", str(rounds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    total, inclusive = annotate(output, inclusive=True)
    _, own = annotate(output, inclusive=False)
    return {
        "total": total,
        "metadata": inclusive.get("swift_getGenericMetadata", 0),
        "accessors": inclusive.get("__swift_instantiateGenericMetadata", 0),
        "lookups": calls_to(output, "swift_getGenericMetadata"),
        "counting": sum(cost for name, cost in own.items() if REFERENCE_COUNTING.match(name)),
        "per": calls_to(output, per, exact=False) if per else 0,
    }


def main():
    arguments = sys.argv[1:]
    options = {"--repeat": "1", "--per": None}
    for option in options:
        if option in arguments:
            index = arguments.index(option)
            options[option] = arguments[index + 1]
            del arguments[index:index + 2]
    repeat, per = int(options["--repeat"]), options["--per"]
    if len(arguments) not in (3, 4):
        sys.exit("usage: callgrind-shares.py [--repeat N] [--per PATTERN] BINARY WORKLOAD OPERATIONS_PER_QUICK_ROUND [LIBRARY]")
    binary, workload, per_round = os.path.abspath(arguments[0]), arguments[1], int(arguments[2])
    library = arguments[3] if len(arguments) == 4 else "Stillwater"
    operations = 2 * per_round
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as directory:
            one = profile(binary, workload, library, 1, directory, per)
            three = profile(binary, workload, library, 3, directory, per)
        extra = {key: three[key] - one[key] for key in one}
        total = extra["total"]
        print(f"{workload} {library}: {total / operations:,.0f} instructions per operation; "
              f"swift_getGenericMetadata {100 * extra['metadata'] / total:.1f}% "
              f"({extra['lookups'] / operations:,.1f} lookups per operation), "
              f"all metadata accessors {100 * extra['accessors'] / total:.1f}%; "
              f"reference counting {100 * extra['counting'] / total:.1f}%")
        if per:
            print(f"  {per}: {extra['per'] / operations:,.2f} calls per operation, "
                  f"{total / max(extra['per'], 1):,.0f} instructions per call")


if __name__ == "__main__":
    main()
