// Counts heap allocations by defining malloc & co. in the benchmark executable itself.
//
// On Linux a symbol defined in the executable comes first in the dynamic linker's lookup order, so
// these definitions replace glibc's for every library in the process (the Swift runtime included).
// They forward to glibc's own entry points (`__libc_malloc` etc.), which avoids the dlsym(RTLD_NEXT)
// bootstrap problem (dlsym itself allocates). `free` is not wrapped: the memory still comes from glibc.
#include "MallocCounter.h"
#include <stddef.h>
#if defined(__linux__)
#include <features.h>  // defines __GLIBC__
#endif

#if defined(__linux__) && defined(__GLIBC__)
#include <errno.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static atomic_bool enabled;
static atomic_long count;

static inline void counted(void) {
    if (atomic_load_explicit(&enabled, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t count, size_t size) { counted(); return __libc_calloc(count, size); }
void *realloc(void *pointer, size_t size) { counted(); return __libc_realloc(pointer, size); }
void *memalign(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    counted();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void mallocCounterSetEnabled(bool on) { atomic_store(&enabled, on); }
long mallocCount(void) { return atomic_load(&count); }
bool mallocCounterIsAvailable(void) { return true; }

#else
void mallocCounterSetEnabled(bool on) { (void)on; }
long mallocCount(void) { return 0; }
bool mallocCounterIsAvailable(void) { return false; }
#endif
