#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdbool.h>

/// Turns counting of allocation calls on or off (off at start). While off, the wrappers cost one
/// relaxed load each, so timed rounds run with counting off and allocations are counted in a separate pass.
void mallocCounterSetEnabled(bool enabled);

/// The number of malloc/calloc/realloc/memalign-family calls made by any thread while counting was on.
/// Always 0 where the interposer is not built (anything but Linux with glibc).
long mallocCount(void);

/// Whether this platform counts allocations at all.
bool mallocCounterIsAvailable(void);

#endif
