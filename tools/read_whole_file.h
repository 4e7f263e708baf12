/* Reads a whole file into memory: the one reader of the tool, the examples,
 * the tests and the benchmarks (segment metadata, models, logs). */
#ifndef LANCE_READ_WHOLE_FILE_H
#define LANCE_READ_WHOLE_FILE_H

#include <stdio.h>
#include <stdlib.h>

/* The file's bytes in malloc'd memory (free them) and their count in *len;
 * NULL when the file cannot be read whole. */
static inline unsigned char* read_whole_file(const char* path, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char* buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        buf = (unsigned char*)malloc(size > 0 ? (size_t)size : 1);
        if (buf && fread(buf, 1, (size_t)size, f) == (size_t)size) {
            *len = (size_t)size;
        } else {
            free(buf);
            buf = NULL;
        }
    }
    fclose(f);
    return buf;
}

#endif
