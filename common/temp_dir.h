/* Scratch directories: a program's temporary datasets, models and segment
 * files, made private to it and removed whole when it is done. */
#ifndef LANCE_COMMON_TEMP_DIR_H
#define LANCE_COMMON_TEMP_DIR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a new directory, readable by its owner only, named
 * "lance-c-<tag>-XXXXXX" (a unique suffix) under $TMPDIR, or /tmp when
 * TMPDIR is unset or empty.  Returns its path (malloc'd; free it), or NULL
 * with errno set (ENAMETOOLONG when the path would not fit in PATH_MAX). */
char* temp_dir_create(const char* tag);

/* Removes `path` and everything under it, without following symbolic
 * links.  A NULL path is a no-op.  Returns 0, or -1 with errno set by the
 * first removal that failed (the walk goes on past it). */
int remove_tree(const char* path);

#ifdef __cplusplus
}
#endif

#endif
