/* A program that includes Arrow's own definition of the C Data Interface
 * first (the specification's header, restated: its guards, its flag macros
 * and its three structs) and then one lance-c header (HYGIENE_HEADER).
 * header_hygiene.sh compiles it as C and as C++: the lance-c header must
 * take Arrow's structs as they are and define none of them again. */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    const char* format;
    const char* name;
    const char* metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema** children;
    struct ArrowSchema* dictionary;
    void (*release)(struct ArrowSchema*);
    void* private_data;
};

struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void** buffers;
    struct ArrowArray** children;
    struct ArrowArray* dictionary;
    void (*release)(struct ArrowArray*);
    void* private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
    int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
    const char* (*get_last_error)(struct ArrowArrayStream*);
    void (*release)(struct ArrowArrayStream*);
    void* private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

#ifdef __cplusplus
}
#endif

#include HYGIENE_HEADER

/* Arrow's structs go through lance-c's declarations unchanged. */
int32_t hygiene_schema(const LanceDataset* dataset, struct ArrowSchema* out);
int32_t hygiene_schema(const LanceDataset* dataset, struct ArrowSchema* out) {
    int32_t rc = lance_dataset_schema(dataset, out);
    if (rc == 0) out->flags |= ARROW_FLAG_NULLABLE;
    return rc;
}

int32_t hygiene_stream(LanceScanner* scanner, struct ArrowArrayStream* out);
int32_t hygiene_stream(LanceScanner* scanner, struct ArrowArrayStream* out) {
    return lance_scanner_to_arrow_stream(scanner, out);
}
