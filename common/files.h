/* Whole files in and out: segment metadata, models, logs. */
#ifndef LANCE_COMMON_FILES_H
#define LANCE_COMMON_FILES_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The file's bytes in malloc'd memory (free them; one byte more is
 * allocated and set to 0, so a text file reads as a C string) and their
 * count in *len.  NULL, with errno set, when the file cannot be read whole. */
unsigned char* read_whole_file(const char* path, size_t* len);

/* Writes `len` bytes to `path` atomically: into a temporary file beside it,
 * renamed into place once complete, so a reader never sees half a file.
 * Returns 0, or -1 with errno set (the temporary file is removed). */
int write_whole_file(const char* path, const void* bytes, size_t len);

#ifdef __cplusplus
}
#endif

#endif
