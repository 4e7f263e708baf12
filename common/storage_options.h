/* Storage options (object-store settings such as the S3 endpoint, region
 * and credentials) for a program's lance_dataset_open() and
 * lance_dataset_write() calls, taken from the environment and the command
 * line the same way by the tool, the examples and the tests:
 *
 *   LANCE_STORAGE_OPTIONS="aws_endpoint=http://10.0.0.1:8333,aws_region=us-east-1"
 *   --storage-option aws_endpoint=http://10.0.0.1:8333   (repeated)
 *
 * The environment's entries come first, the command line's after them; for
 * a key given twice the later value is the one the library uses. */
#ifndef LANCE_COMMON_STORAGE_OPTIONS_H
#define LANCE_COMMON_STORAGE_OPTIONS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The environment variable read by storage_options_from_env(). */
#define STORAGE_OPTIONS_ENV "LANCE_STORAGE_OPTIONS"

/* Alternating keys and values, NULL-terminated: the form lance.h takes. */
typedef struct {
    char** items; /* malloc'd; NULL while empty */
    size_t count; /* keys + values, excluding the terminator */
} StorageOptions;

/* Adds one "key=value" entry (split at its first '=').  Returns 0, or -1
 * with `error` (capacity `error_cap`) saying what is wrong: no '=', an
 * empty key, or out of memory. */
int storage_options_add(StorageOptions* options, const char* key_value, char* error, size_t error_cap);

/* Adds the entries of LANCE_STORAGE_OPTIONS, "key=value" items separated by
 * commas (a value holding a comma must come from the command line).  An
 * unset or empty variable adds nothing.  Returns 0 or -1 as above. */
int storage_options_from_env(StorageOptions* options, char* error, size_t error_cap);

/* Removes every "--storage-option key=value" pair from argv (shifting the
 * rest down, updating *argc) and adds its entry.  Returns 0, or -1 as above
 * (also when the option has no value). */
int storage_options_from_args(StorageOptions* options, int* argc, char** argv, char* error, size_t error_cap);

/* The prologue of a program that opens datasets: storage_options_from_env(),
 * then storage_options_from_args().  Returns 0, or -1 with `error` as above
 * and `options` left empty. */
int storage_options_from_command_line(StorageOptions* options, int* argc, char** argv, char* error, size_t error_cap);

/* storage_options_from_command_line() for a program that stops on bad
 * storage options: on failure prints "<program>: <what is wrong>" on stderr
 * and returns -1 (`options` left empty); else returns 0. */
int storage_options_init(StorageOptions* options, int* argc, char** argv, const char* program);

/* The entries as "--storage-option" "key=value" argument pairs, for the
 * command line of a child process that reads them back with
 * storage_options_from_args(): malloc'd and NULL-terminated (2 entries per
 * key and value); free with storage_options_args_free().  NULL when out of
 * memory. */
char** storage_options_to_args(const StorageOptions* options);
void storage_options_args_free(char** args);

/* The array to pass as `storage_opts`: NULL when there are no entries.
 * Borrowed from `options`. */
const char* const* storage_options_array(const StorageOptions* options);

/* Frees the entries; the struct may be reused as empty. */
void storage_options_free(StorageOptions* options);

#ifdef __cplusplus
}
#endif

#endif
