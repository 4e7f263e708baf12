#define _POSIX_C_SOURCE 200809L
#include "files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned char* read_whole_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    /* Read in growing chunks: works for pipes and /proc files, whose size
     * ftell does not know. */
    size_t cap = 1 << 16, n = 0;
    unsigned char* buf = malloc(cap + 1);
    int failed = buf == NULL;
    while (!failed) {
        if (n == cap) {
            unsigned char* grown = cap <= ((size_t)-1 - 1) / 2 ? realloc(buf, cap * 2 + 1) : NULL;
            if (!grown) {
                errno = ENOMEM;
                failed = 1;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            failed = ferror(f) != 0;
            break;
        }
    }
    int saved = errno;
    fclose(f);
    if (failed) {
        free(buf);
        errno = saved ? saved : EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

int write_whole_file(const char* path, const void* bytes, size_t len) {
    /* The temporary name carries the process id: two writers of one path do
     * not share a temporary file. */
    size_t cap = strlen(path) + 32;
    char* tmp = malloc(cap);
    if (!tmp) return -1;
    snprintf(tmp, cap, "%s.tmp.%ld", path, (long)getpid());
    FILE* f = fopen(tmp, "wb");
    int ok = f && fwrite(bytes, 1, len, f) == len;
    int saved = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        saved = errno;
    }
    if (!ok) unlink(tmp);
    free(tmp);
    errno = saved;
    return ok ? 0 : -1;
}
