#include "Callgrind.h"

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND_H 1
#endif
#endif

void callgrindToggleCollect(void) {
#ifdef HAVE_CALLGRIND_H
    CALLGRIND_TOGGLE_COLLECT;
#endif
}
