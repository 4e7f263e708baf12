#define _XOPEN_SOURCE 700 /* nftw, mkdtemp */
#include "temp_dir.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

char* temp_dir_create(const char* tag) {
    const char* base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    char pattern[PATH_MAX];
    int n = snprintf(pattern, sizeof pattern, "%s/lance-c-%s-XXXXXX", base, tag);
    if (n < 0 || (size_t)n >= sizeof pattern) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (!mkdtemp(pattern)) return NULL; /* mode 0700 */
    char* path = strdup(pattern);
    if (!path) {
        int saved = errno;
        rmdir(pattern);
        errno = saved;
    }
    return path;
}

/* nftw() keeps no state of its own for the callback: the first error is
 * kept here (the walk of one remove_tree() call, one thread at a time). */
static _Thread_local int first_error;

static int remove_entry(const char* path, const struct stat* st, int type, struct FTW* where) {
    (void)st, (void)type, (void)where;
    if (remove(path) != 0 && !first_error) first_error = errno;
    return 0; /* go on: remove as much as can be removed */
}

int remove_tree(const char* path) {
    if (!path) return 0;
    first_error = 0;
    /* FTW_DEPTH: a directory's entries before the directory; FTW_PHYS: a
     * symbolic link is removed, not followed. */
    if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0) return -1;
    if (first_error) {
        errno = first_error;
        return -1;
    }
    return 0;
}
