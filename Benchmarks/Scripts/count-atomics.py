#!/usr/bin/env python3
"""Counts the atomic read-modify-write instructions a workload runs per operation.

On the reference machine an uncontended atomic operation (a `lock`-prefixed instruction, or `xchg` with
memory) costs about as much as fifteen plain ones, and reference counting is made of them, so W8's and
W9's times follow this count more closely than the instruction count. Like the instruction count, it does
not move with machine load.

Usage (from `Benchmarks/`, after `swift build -c release`):

    cp .build/release/benchmarks /tmp/bench && objcopy --strip-debug /tmp/bench
    python3 Scripts/count-atomics.py /tmp/bench W8 20000

The last argument is the workload's operations per quick round (W8: 20 000 values; W9: 2 000 round
trips; see each workload's `scale.count`). The script runs the workload under callgrind for one and for
three quick rounds, Stillwater only, and divides the difference by two rounds' operations, so start-up
and setup cancel out. It prints each atomic instruction that runs at least once per hundred operations
(object, address, instruction, function) and the total.

Needs valgrind, objdump and addr2line (binutils). The debug info must be stripped first: callgrind 3.19 cannot
read the DWARF 5 that Swift emits.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def instruction_counts(path):
    """Executions of each instruction, keyed by (object file, address), from a callgrind profile made
    with --dump-instr=yes. A cost line just after `calls=` is the call's inclusive cost: skipped."""
    objects, counts = {}, collections.Counter()
    current, address, after_call = None, 0, False
    with open(path) as profile:
        for line in profile:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith(("ob=", "cob=")):
                match = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line)
                if match.group(2):
                    objects[match.group(1)] = match.group(2)
                if line.startswith("ob="):
                    current = objects.get(match.group(1))
                continue
            if line.startswith("calls="):
                after_call = True
                continue
            if line[0] not in "0123456789+-*":
                continue
            fields = line.split()
            position = fields[0]
            if position.startswith("0x"):
                address = int(position, 16)
            elif position[0] in "+-":
                step = int(position[1:], 16) if position[1:].startswith("0x") else int(position[1:])
                address += step if position[0] == "+" else -step
            elif position != "*":
                address = int(position)
            if after_call:
                after_call = False
                continue
            if len(fields) >= 3 and current:
                counts[(current, address)] += int(fields[2])
    return counts


def atomic_instructions(path, cache={}):
    """The addresses of the atomic read-modify-write instructions in one object file."""
    if path not in cache:
        listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                                 capture_output=True, text=True, check=True).stdout
        found = {}
        for line in listing.splitlines():
            match = re.match(r"\s*([0-9a-f]+):\s+(.*)$", line)
            if match and (match.group(2).startswith("lock") or re.match(r"xchg\s+.*\(", match.group(2))):
                found[int(match.group(1), 16)] = match.group(2)
        cache[path] = found
    return cache[path]


def function_name(path, address):
    """The function holding `address` in `path`, demangled when `swift demangle` is at hand."""
    found = subprocess.run(["addr2line", "-f", "-e", path, hex(address)], capture_output=True, text=True)
    name = found.stdout.splitlines()[0] if found.stdout else "?"
    if not name.startswith(("$s", "_$s")):
        return name
    try:
        name = subprocess.run(["swift", "demangle", "--simplified", "--compact", name],
                              capture_output=True, text=True).stdout.strip() or name
    except OSError:
        pass
    return name


def profile(binary, workload, rounds, directory):
    output = f"{directory}/callgrind.{rounds}"
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={output}",
                    binary, "--quick", "--only", workload, "--library", "Stillwater", "--rounds", str(rounds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return instruction_counts(output)


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: count-atomics.py BINARY WORKLOAD OPERATIONS_PER_QUICK_ROUND")
    binary, workload, per_round = os.path.abspath(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    with tempfile.TemporaryDirectory() as directory:
        one, three = profile(binary, workload, 1, directory), profile(binary, workload, 3, directory)
    operations = 2 * per_round
    rows, total = [], 0.0
    for (path, address), count in three.items():
        extra = (count - one.get((path, address), 0)) / operations
        instruction = atomic_instructions(path).get(address) if extra > 0 else None
        if instruction:
            total += extra
            rows.append((extra, path, address, instruction))
    for extra, path, address, instruction in sorted(rows, reverse=True):
        if extra >= 0.01:
            function = function_name(path, address)[:100]
            print(f"{extra:7.2f}  {path.split('/')[-1]} {address:#x}  {instruction}  in {function}")
    print(f"{total:7.2f}  atomic operations per operation ({workload})")


if __name__ == "__main__":
    main()
