#define _POSIX_C_SOURCE 200809L /* strndup */
#include "storage_options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push(StorageOptions* o, char* key, char* value) {
    char** grown = realloc(o->items, (o->count + 3) * sizeof *grown);
    if (!grown) return -1;
    o->items = grown;
    o->items[o->count++] = key;
    o->items[o->count++] = value;
    o->items[o->count] = NULL;
    return 0;
}

/* Adds text[0..len) as one "key=value" entry. */
static int add_span(StorageOptions* o, const char* text, size_t len, char* error, size_t cap) {
    const char* eq = memchr(text, '=', len);
    if (!eq || eq == text) {
        if (cap)
            snprintf(error, cap, "storage option \"%.*s\" is not key=value%s", (int)len, text,
                     eq ? " (the key is empty)" : "");
        return -1;
    }
    char* key = strndup(text, (size_t)(eq - text));
    char* value = strndup(eq + 1, len - (size_t)(eq - text) - 1);
    if (!key || !value || push(o, key, value) != 0) {
        free(key);
        free(value);
        if (cap) snprintf(error, cap, "out of memory");
        return -1;
    }
    return 0;
}

int storage_options_add(StorageOptions* options, const char* key_value, char* error, size_t error_cap) {
    return add_span(options, key_value, strlen(key_value), error, error_cap);
}

int storage_options_from_env(StorageOptions* options, char* error, size_t error_cap) {
    const char* text = getenv(STORAGE_OPTIONS_ENV);
    if (!text) return 0;
    while (*text) {
        size_t len = strcspn(text, ",");
        if (len && add_span(options, text, len, error, error_cap) != 0) {
            size_t used = strlen(error);
            if (error_cap > used) snprintf(error + used, error_cap - used, " (in %s)", STORAGE_OPTIONS_ENV);
            return -1;
        }
        text += len;
        if (*text == ',') text++;
    }
    return 0;
}

int storage_options_from_args(StorageOptions* options, int* argc, char** argv, char* error, size_t error_cap) {
    int kept = 0;
    for (int i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--storage-option") != 0) {
            argv[kept++] = argv[i];
            continue;
        }
        if (i + 1 >= *argc) {
            if (error_cap) snprintf(error, error_cap, "--storage-option needs a key=value");
            return -1;
        }
        if (storage_options_add(options, argv[++i], error, error_cap) != 0) return -1;
    }
    argv[kept] = NULL;
    *argc = kept;
    return 0;
}

int storage_options_from_command_line(StorageOptions* options, int* argc, char** argv, char* error, size_t error_cap) {
    if (storage_options_from_env(options, error, error_cap) == 0 &&
        storage_options_from_args(options, argc, argv, error, error_cap) == 0)
        return 0;
    storage_options_free(options);
    return -1;
}

int storage_options_init(StorageOptions* options, int* argc, char** argv, const char* program) {
    char why[200];
    if (storage_options_from_command_line(options, argc, argv, why, sizeof why) == 0) return 0;
    fprintf(stderr, "%s: %s\n", program, why);
    return -1;
}

/* The flag every pair of storage_options_to_args() starts with; never freed. */
static char option_flag[] = "--storage-option";

char** storage_options_to_args(const StorageOptions* options) {
    char** args = calloc(options->count + 1, sizeof *args);
    for (size_t i = 0; args && i + 1 < options->count; i += 2) {
        size_t len = strlen(options->items[i]) + strlen(options->items[i + 1]) + 2;
        args[i] = option_flag;
        if (!(args[i + 1] = malloc(len))) {
            storage_options_args_free(args);
            return NULL;
        }
        snprintf(args[i + 1], len, "%s=%s", options->items[i], options->items[i + 1]);
    }
    return args;
}

void storage_options_args_free(char** args) {
    for (size_t i = 0; args && args[i]; i += 2) free(args[i + 1]);
    free(args);
}

const char* const* storage_options_array(const StorageOptions* options) {
    return options->count ? (const char* const*)options->items : NULL;
}

void storage_options_free(StorageOptions* options) {
    for (size_t i = 0; i < options->count; i++) free(options->items[i]);
    free(options->items);
    options->items = NULL;
    options->count = 0;
}
