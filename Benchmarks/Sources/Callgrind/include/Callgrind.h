#ifndef CALLGRIND_TOGGLE_H
#define CALLGRIND_TOGGLE_H

/// Switches callgrind's event collection on or off (a client request of valgrind's). The speed gate
/// (`Scripts/speed-gate.py`) runs the benchmarks with `--collect-atstart=no`, and `Stopwatch.measure`
/// toggles around the timed part, so its counts hold the hot loop alone, not setup or teardown.
/// Outside valgrind it runs a few instructions and does nothing; where valgrind's header was missing at
/// build time it is empty.
void callgrindToggleCollect(void);

#endif
