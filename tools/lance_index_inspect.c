/* lance-index list, coverage and search: what an index holds and answers. */
#include "lance_index.h"

static const char* jstr(const JValue* o, const char* key) {
    const JValue* v = json_get(o, key);
    return v && v->type == J_STRING ? v->string : "-";
}

/* The library's segment listing of `ds`, parsed; NULL with the exit status
 * in *rc. */
static JValue* segment_listing(const LanceDataset* ds, int* rc) {
    const char* text = lance_dataset_index_segments_json(ds);
    if (!text) {
        *rc = lib_error("listing the segments");
        return NULL;
    }
    JValue* doc = json_parse(text);
    lance_free_string(text);
    if (!doc || doc->type != J_ARRAY) {
        json_free(doc);
        fprintf(stderr, "lance-index: the library's segment listing is not a JSON array\n");
        *rc = exit_status(LANCE_ERR_INTERNAL);
        return NULL;
    }
    return doc;
}

static int cmd_list(const Args* a) {
    if (a->npos != 1) return usage("list needs URI");
    LanceDataset* ds = NULL;
    int rc = open_dataset(a->pos[0], arg(a, "--version"), &ds);
    if (rc) return rc;
    if (arg(a, "--json")) {
        const char* text = lance_dataset_index_segments_json(ds);
        if (!text) rc = lib_error("listing the segments");
        else printf("%s\n", text);
        lance_free_string(text);
    } else {
        JValue* doc = segment_listing(ds, &rc);
        if (doc) {
            printf("%-16s %-12s %-36s %-24s %10s %12s %s\n", "index", "type", "segment", "fragments", "rows", "bytes",
                   "model");
            for (size_t i = 0; i < doc->count; i++) {
                const JValue* e = doc->items[i];
                char fragment_ids[25] = "";
                const JValue* f = json_get(e, "fragment_ids");
                size_t used = 0;
                for (size_t j = 0; f && j < f->count && used < sizeof fragment_ids; j++)
                    used += (size_t)snprintf(fragment_ids + used, sizeof fragment_ids - used, "%s%.0f", j ? "," : "",
                                             f->items[j]->number);
                if (used >= sizeof fragment_ids - 1) memcpy(fragment_ids + sizeof fragment_ids - 4, "...", 4);
                const JValue* rows = json_get(e, "num_rows");
                const JValue* size = json_get(e, "size_bytes");
                printf("%-16s %-12s %-36s %-24s %10.0f %12.0f %.12s\n", jstr(e, "name"), jstr(e, "type"),
                       jstr(e, "uuid"), fragment_ids, rows && rows->type == J_NUMBER ? rows->number : -1,
                       size && size->type == J_NUMBER ? size->number : -1, jstr(e, "model_fingerprint"));
            }
            printf("%zu segments, dataset version %llu\n", doc->count, (unsigned long long)lance_dataset_version(ds));
            json_free(doc);
        }
    }
    lance_dataset_close(ds);
    return rc;
}

static const Option list_options[] = {{"--json", 0}, {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(list_options);

const Command list_command = {"list",
                              cmd_list,
                              "URI [--json]",
                              "the segments of every index",
                              "lance-index list URI [--json] [--version V]\n"
                              "  One line per index segment: index, type, uuid, fragments, rows, size, model.\n"
                              "  --json prints the library's segment listing as it is.",
                              list_options,
                              1};

/* Prints a JSON array of numbers as "0,1,5", or "none" when empty. */
static void print_ids(const JValue* ids) {
    if (!ids || ids->type != J_ARRAY || ids->count == 0) {
        printf("none");
        return;
    }
    for (size_t i = 0; i < ids->count; i++) printf("%s%.0f", i ? "," : "", ids->items[i]->number);
}

static void print_rows(const JValue* rows) {
    if (rows && rows->type == J_NUMBER) printf(" (%.0f rows)", rows->number);
    else printf(" (rows not recorded)");
}

/* The next segment of index `name` in a segment listing at or after
 * *next (advanced past it); NULL after the last. */
static const JValue* next_segment_of(const JValue* listing, const char* name, size_t* next) {
    while (*next < listing->count) {
        const JValue* e = listing->items[(*next)++];
        const JValue* n = json_get(e, "name");
        if (n && n->type == J_STRING && !strcmp(n->string, name)) return e;
    }
    return NULL;
}

/* The library's coverage report `text` with a "segments" member first:
 * each segment of index `name` with its fragments. */
static void print_coverage_json(const char* text, const JValue* listing, const char* name) {
    /* `text` is one JSON object: the report's members follow the added one. */
    const char* rest = strchr(text, '{') + 1;
    while (*rest == ' ' || *rest == '\n' || *rest == '\t' || *rest == '\r') rest++;
    printf("{\"segments\": [");
    size_t next = 0, shown = 0;
    for (const JValue* e; (e = next_segment_of(listing, name, &next));) {
        printf("%s{\"uuid\": ", shown++ ? ", " : "");
        json_write_string(stdout, jstr(e, "uuid"));
        printf(", \"fragment_ids\": [");
        const JValue* f = json_get(e, "fragment_ids");
        for (size_t j = 0; f && j < f->count; j++) printf("%s%.0f", j ? ", " : "", f->items[j]->number);
        printf("]}");
    }
    printf("]%s%s\n", *rest == '}' ? "" : ", ", rest);
}

static void print_coverage_text(const JValue* report, const JValue* listing, const char* name) {
    const JValue* segments = json_get(report, "num_segments");
    const JValue* version = json_get(report, "dataset_version");
    printf("index %s, dataset version %.0f: %.0f segments\n", name,
           version && version->type == J_NUMBER ? version->number : -1,
           segments && segments->type == J_NUMBER ? segments->number : -1);
    size_t next = 0;
    for (const JValue* e; (e = next_segment_of(listing, name, &next));) {
        printf("  segment %s (%s): fragments ", jstr(e, "uuid"), jstr(e, "type"));
        print_ids(json_get(e, "fragment_ids"));
        printf("\n");
    }
    printf("indexed fragments:   ");
    print_ids(json_get(report, "indexed_fragments"));
    print_rows(json_get(report, "indexed_rows"));
    printf("\nunindexed fragments: ");
    print_ids(json_get(report, "unindexed_fragments"));
    print_rows(json_get(report, "unindexed_rows"));
    printf("\nstale fragments:     ");
    print_ids(json_get(report, "stale_fragments"));
    printf("\n");
}

static int cmd_coverage(const Args* a) {
    const char* name = arg(a, "--name");
    if (a->npos != 1 || !name) return usage("coverage needs URI and --name");
    LanceDataset* ds = NULL;
    int rc = open_dataset(a->pos[0], arg(a, "--version"), &ds);
    if (rc) return rc;
    const char* text = lance_dataset_index_coverage_json(ds, name);
    JValue* report = NULL;
    JValue* listing = NULL;
    if (!text) {
        rc = lib_error("coverage");
    } else if (!(report = json_parse(text)) || report->type != J_OBJECT) {
        fprintf(stderr, "lance-index: the library's coverage report is not a JSON object\n");
        rc = exit_status(LANCE_ERR_INTERNAL);
    } else if ((listing = segment_listing(ds, &rc)) != NULL) {
        if (arg(a, "--json")) print_coverage_json(text, listing, name);
        else print_coverage_text(report, listing, name);
    }
    json_free(listing);
    json_free(report);
    lance_free_string(text);
    lance_dataset_close(ds);
    return rc;
}

static const Option coverage_options[] = {{"--name", 1}, {"--json", 0}, {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(coverage_options);

const Command coverage_command = {"coverage",
                                  cmd_coverage,
                                  "URI --name N [--json]",
                                  "indexed, unindexed, stale fragments",
                                  "lance-index coverage URI --name N [--json] [--version V]\n"
                                  "  Which fragments of the dataset's version the index covers: each segment with its\n"
                                  "  fragments, then the indexed fragments, the unindexed ones (appended since: the\n"
                                  "  ones to index next) and the stale ones (covered, but no longer in the dataset).\n"
                                  "  --json prints the library's coverage report with a \"segments\" member added:\n"
                                  "  [{\"uuid\": U, \"fragment_ids\": [...]}, ...].",
                                  coverage_options,
                                  1};

/* Prints one batch's rows: every column, int64, float32 or utf8. */
static void print_batch(const struct ArrowArray* a, const struct ArrowSchema* s, int header) {
    if (header) {
        for (int64_t c = 0; c < s->n_children; c++) printf("%s%s", c ? "\t" : "", s->children[c]->name);
        printf("\n");
    }
    for (int64_t r = 0; r < a->length; r++) {
        for (int64_t c = 0; c < s->n_children; c++) {
            const struct ArrowArray* col = a->children[c];
            const char* fmt = s->children[c]->format;
            int64_t i = col->offset + r;
            printf("%s", c ? "\t" : "");
            if (!strcmp(fmt, "l")) printf("%lld", (long long)((const int64_t*)col->buffers[1])[i]);
            else if (!strcmp(fmt, "f")) printf("%g", ((const float*)col->buffers[1])[i]);
            else if (!strcmp(fmt, "u")) {
                const int32_t* off = col->buffers[1];
                printf("%.*s", (int)(off[i + 1] - off[i]), (const char*)col->buffers[2] + off[i]);
            } else printf("?");
        }
        printf("\n");
    }
}

/* "0.1,0.2,..." -> a malloc'd vector; NULL (after saying why) when the text
 * is not comma-separated numbers. */
static float* parse_query(const char* text, size_t* dim) {
    size_t cap = 64, n = 0;
    float* q = must(malloc(cap * sizeof *q));
    const char* p = text;
    for (;;) {
        char* end = NULL;
        float v = strtof(p, &end);
        if (end == p || (*end && *end != ',')) {
            free(q);
            usage("--query must be comma-separated numbers");
            return NULL;
        }
        if (n == cap) q = must(realloc(q, (cap *= 2) * sizeof *q));
        q[n++] = v;
        if (!*end) break;
        p = end + 1;
    }
    *dim = n;
    return q;
}

static int cmd_search(const Args* a) {
    const char* column = arg(a, "--column");
    const char* qt = arg(a, "--query");
    if (a->npos != 1 || !column || !qt) return usage("search needs URI, --column and --query");
    long long k = arg(a, "--k") ? number(arg(a, "--k")) : 10;
    long long nprobes = arg(a, "--nprobes") ? number(arg(a, "--nprobes")) : 0;
    long long refine = arg(a, "--refine") ? number(arg(a, "--refine")) : 0;
    if (k <= 0 || nprobes < 0 || nprobes > UINT32_MAX || refine < 0 || refine > UINT32_MAX)
        return usage("--k, --nprobes and --refine must be numbers (k > 0)");
    LanceMetricType m = LANCE_METRIC_L2;
    const char* mt = arg(a, "--metric");
    if (mt && metric(mt, &m) != 0) return usage("unknown --metric %s", mt);
    size_t dim = 0;
    float* q = parse_query(qt, &dim);
    if (!q) return EXIT_USAGE;
    /* --select a,b -> a NULL-terminated list of every name given. */
    char* select = must(strdup(arg(a, "--select") ? arg(a, "--select") : "id"));
    size_t nc = 1;
    for (const char* c = select; *c; c++) nc += *c == ',';
    const char** cols = must(calloc(nc + 1, sizeof *cols));
    nc = 0;
    for (char* tok = strtok(select, ","); tok; tok = strtok(NULL, ",")) cols[nc++] = tok;
    LanceDataset* ds = NULL;
    LanceScanner* s = NULL;
    int rc = open_dataset(a->pos[0], arg(a, "--version"), &ds);
    if (rc == 0 && !(s = lance_scanner_new(ds, cols, NULL))) rc = lib_error("scanner");
    if (rc == 0 && (lance_scanner_nearest(s, column, q, dim, LANCE_DTYPE_FLOAT32, (size_t)k) != 0 ||
                    (nprobes && lance_scanner_set_nprobes(s, (uint32_t)nprobes) != 0) ||
                    (refine && lance_scanner_set_refine_factor(s, (uint32_t)refine) != 0) ||
                    (mt && lance_scanner_set_metric(s, m) != 0)))
        rc = lib_error("search settings");
    for (int header = 1; rc == 0;) {
        LanceBatch* batch = NULL;
        int next = lance_scanner_next(s, &batch);
        if (next == 1) break;
        if (next != 0) {
            rc = lib_error("search");
            break;
        }
        struct ArrowArray a;
        struct ArrowSchema sc;
        if (lance_batch_to_arrow(batch, &a, &sc) != 0) {
            rc = lib_error("reading the results");
        } else {
            print_batch(&a, &sc, header);
            header = 0;
            a.release(&a);
            sc.release(&sc);
        }
        lance_batch_free(batch);
    }
    lance_scanner_close(s);
    lance_dataset_close(ds);
    free(cols);
    free(select);
    free(q);
    return rc;
}

static const Option search_options[] = {{"--column", 1},  {"--query", 1},   {"--k", 1},
                                        {"--nprobes", 1}, {"--refine", 1},  {"--select", 1},
                                        {"--metric", 1},  {"--version", 1}, {NULL, 0}};
OPTIONS_FIT(search_options);

const Command search_command = {
    "search",
    cmd_search,
    "URI --column C --query V [options]",
    "k-NN through the index",
    "lance-index search URI --column C --query 0.1,0.2,... [--k 10] [--nprobes N] [--refine R]\n"
    "        [--metric l2|cosine|dot] [--select id,tag] [--version V]\n"
    "  k-NN through the column's index: one tab-separated line per row, the selected\n"
    "  columns (default: id) and _distance, nearest first.",
    search_options,
    1};
