/* Every object store of the library's build reaches its client (issue 24).
 *
 * For each URI scheme the build registers (s3://, gs:// through both of its
 * clients, az://, abfss://, oss://, cos://; tos:// and hf:// when built with
 * their features, LANCE_C_CARGO_FEATURES=tos,huggingface), an open with the
 * store's endpoint option (hf://: the HF_ENDPOINT variable, the only endpoint
 * setting its client has) at http://store.test:PORT, a closed port of
 * 127.0.0.1, fails with LANCE_ERR_IO, and the message names that address:
 * the request went out and was refused.  None says the scheme is unknown or
 * unsupported.  (A write fails the same way: its first request is the same
 * listing of the versions.)  Static credentials keep every client from
 * looking for credentials elsewhere first.
 *
 * A scheme whose feature the build leaves out (docs/building.md "Features")
 * is refused with LANCE_ERR_INVALID_ARGUMENT naming the scheme and the
 * feature.  Bad input: oss://, cos:// and tos:// without their endpoint
 * option fail with LANCE_ERR_INVALID_ARGUMENT naming it; goosefs:// (in the Lance core's
 * default build, left out of this library's), s3+ddb:// and an unknown
 * scheme are refused with LANCE_ERR_INVALID_ARGUMENT naming the scheme.
 *
 * Run by isolated.sh: a network namespace whose only interface is loopback,
 * so nothing can leave the machine whatever a client tries, and where
 * store.test and the bucket host names below it (oss://, cos:// and tos://
 * put the bucket in the host name) resolve to 127.0.0.1. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_util.h"

/* The emulator's published account key: any valid base64 key would do. */
#define AZ_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
#define AZ_ACCOUNT_OPTIONS "azure_storage_account_name", "devstoreaccount1", "azure_storage_account_key", AZ_KEY
/* A service account key whose "disable_oauth" makes object_store's GCS client
 * send requests without asking a token service (or the VM metadata service)
 * for a token; the other fields are required and unused. */
#define GCS_KEY                                                      \
    "{\"private_key\": \"unused\", \"private_key_id\": \"unused\", " \
    "\"client_email\": \"lance-test@store.test\", \"disable_oauth\": true}"
/* The endpoints' host, and the host names the virtual-hosted clients make of
 * it (isolated.sh --host resolves each to 127.0.0.1). */
#define HOST "store.test"
static const char* const bucket_hosts[] = {HOST, "lance." HOST, "lance-1250000000." HOST};

typedef struct {
    const char* name;
    const char* feature; /* the cargo feature that brings the store (Cargo.toml) */
    const char* uri;
    const char* endpoint_key;  /* the option that takes the endpoint; NULL: endpoint_env */
    const char* endpoint_env;  /* the variable that takes it otherwise */
    const char* endpoint_path; /* appended to "http://store.test:PORT" */
    const char* options[12];   /* the other options, key and value, NULL-terminated */
} StoreCase;

/* A table laid out by hand: clang-format leaves it as it is. */
/* clang-format off */
static const StoreCase cases[] = {
    {"s3", "aws", "s3://lance/schemes.lance", "aws_endpoint", NULL, "",
     {"aws_region", "us-east-1", "aws_access_key_id", "key", "aws_secret_access_key", "secret", "allow_http", "true",
      NULL}},
    {"gs (object_store)", "gcp", "gs://lance/schemes.lance", "google_base_url", NULL, "",
     {"google_service_account_key", GCS_KEY, "allow_http", "true", NULL}},
    {"gs (OpenDAL)", "gcp", "gs://lance/schemes.lance", "endpoint", NULL, "",
     {"use_opendal", "true", "google_skip_signature", "true", "disable_vm_metadata", "true", NULL}},
    {"az", "azure", "az://lance/schemes.lance", "azure_storage_endpoint", NULL, "/devstoreaccount1",
     {AZ_ACCOUNT_OPTIONS, "allow_http", "true", NULL}},
    {"abfss", "azure", "abfss://lance@devstoreaccount1.dfs.core.windows.net/schemes.lance", "azure_storage_endpoint", NULL,
     "/devstoreaccount1", {AZ_ACCOUNT_OPTIONS, "allow_http", "true", NULL}},
    {"oss", "oss", "oss://lance/schemes.lance", "oss_endpoint", NULL, "",
     {"oss_access_key_id", "key", "oss_secret_access_key", "secret", NULL}},
    {"cos", "tencent", "cos://lance-1250000000/schemes.lance", "cos_endpoint", NULL, "",
     {"cos_secret_id", "key", "cos_secret_key", "secret", NULL}},
    {"tos", "tos", "tos://lance/schemes.lance", "tos_endpoint", NULL, "",
     {"tos_region", "cn-beijing", "tos_access_key_id", "key", "tos_secret_access_key", "secret", NULL}},
    {"hf", "huggingface", "hf://datasets/lance/schemes/schemes.lance", NULL, "HF_ENDPOINT", "", {"hf_token", "token", NULL}},
};
/* clang-format on */
#define NCASES (sizeof cases / sizeof cases[0])

static char address[64]; /* "store.test:PORT", the closed port */
static char endpoint[128];
static const char* opts[24];

/* A port of 127.0.0.1 that refuses connections: bound (so no other process
 * takes it) and never listened on. */
static int closed_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr*)&a, sizeof a) != 0 || getsockname(fd, (struct sockaddr*)&a, &len) != 0) {
        perror("test_store_schemes: a closed port on 127.0.0.1");
        exit(1);
    }
    snprintf(address, sizeof address, HOST ":%u", (unsigned)ntohs(a.sin_port));
    return fd;
}

/* Each host name the clients will use resolves to 127.0.0.1 (isolated.sh
 * --host), or the test stops here. */
static void require_hosts(void) {
    for (size_t i = 0; i < sizeof bucket_hosts / sizeof bucket_hosts[0]; i++) {
        struct addrinfo hints = {0}, *found = NULL;
        hints.ai_family = AF_INET;
        int ok = getaddrinfo(bucket_hosts[i], NULL, &hints, &found) == 0 &&
                 ((struct sockaddr_in*)found->ai_addr)->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
        if (found) freeaddrinfo(found);
        if (!ok) {
            fprintf(stderr, "FAIL: %s does not resolve to 127.0.0.1: run under tests/stores/isolated.sh --host %s\n",
                    bucket_hosts[i], bucket_hosts[i]);
            exit(1);
        }
    }
}

/* The case's options with the endpoint at the closed port (set in the
 * environment when the store reads it from there). */
static const char* const* case_options(const StoreCase* c) {
    size_t n = 0;
    snprintf(endpoint, sizeof endpoint, "http://%s%s", address, c->endpoint_path);
    if (c->endpoint_key) {
        opts[n++] = c->endpoint_key;
        opts[n++] = endpoint;
    } else {
        setenv(c->endpoint_env, endpoint, 1);
    }
    for (size_t i = 0; c->options[i]; i++) opts[n++] = c->options[i];
    opts[n] = NULL;
    return opts;
}

/* Case-insensitive: the words a message would use to refuse a scheme. */
static int says_unsupported(const char* message) {
    static const char* words[] = {"unsupported", "not supported", "no object store provider", "unknown scheme",
                                  "invalid scheme"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t w = strlen(words[i]);
        for (const char* p = message; *p; p++)
            if (!strncasecmp(p, words[i], w)) return 1;
    }
    return 0;
}

/* Whether the library is built with a cargo feature: CMake passes the
 * build's list (Cargo.toml's defaults and LANCE_C_CARGO_FEATURES). */
static int built_with(const char* feature) {
    char mark[32];
    snprintf(mark, sizeof mark, ",%s,", feature);
    return strstr(LANCE_C_BUILD_FEATURES, mark) != NULL;
}

/* The scheme of `uri` (what precedes its ':'). */
static void scheme_of(const char* uri, char scheme[16]) { snprintf(scheme, 16, "%.*s", (int)strcspn(uri, ":"), uri); }

/* A scheme whose feature the build leaves out: refused before any request,
 * LANCE_ERR_INVALID_ARGUMENT naming the scheme and the feature to build. */
static void check_left_out(const char* uri, const char* feature) {
    char scheme[16];
    scheme_of(uri, scheme);
    const TuError* e = tu_last_error();
    CHECK(e->code == LANCE_ERR_INVALID_ARGUMENT);
    CHECK(tu_error_mentions(scheme));
    char named[48];
    snprintf(named, sizeof named, "\"%s\"", feature);
    CHECK(tu_error_mentions(named));
    CHECK(strstr(e->message ? e->message : "", address) == NULL);
}

/* The open fails with LANCE_ERR_IO naming the closed address, not saying
 * the scheme is unsupported; a store whose feature the build leaves out is
 * refused naming the feature.  Prints each error, for the log. */
static void test_open_reaches_the_client(void) {
    for (size_t i = 0; i < NCASES; i++) {
        double t0 = tu_now();
        LanceDataset* ds = lance_dataset_open(cases[i].uri, case_options(&cases[i]), 0);
        CHECK(ds == NULL);
        const TuError* e = tu_last_error();
        const char* m = e->message ? e->message : "";
        printf("    %-18s %6.0f ms  error %d: %s\n", cases[i].name, (tu_now() - t0) * 1000, (int)e->code, m);
        if (!built_with(cases[i].feature)) {
            printf("    %-18s (feature \"%s\" left out of this build)\n", "", cases[i].feature);
            check_left_out(cases[i].uri, cases[i].feature);
        } else {
            CHECK(e->code == LANCE_ERR_IO);
            CHECK(strstr(m, address) != NULL);
            CHECK(!says_unsupported(m));
        }
        lance_dataset_close(ds);
    }
}

/* oss://, cos:// and tos:// have no default endpoint: without the option
 * (and without the variable it may come from) the open is refused before
 * any request, naming the option. */
static void test_endpoint_required(void) {
    static const struct {
        const char* uri;
        const char* feature;
        const char* option;
        const char* variable;
    } stores[] = {
        {"oss://lance/schemes.lance", "oss", "oss_endpoint", "OSS_ENDPOINT"},
        {"cos://lance-1250000000/schemes.lance", "tencent", "cos_endpoint", "COS_ENDPOINT"},
        {"tos://lance/schemes.lance", "tos", "tos_endpoint", "TOS_ENDPOINT"},
    };
    for (size_t i = 0; i < sizeof stores / sizeof stores[0]; i++) {
        unsetenv(stores[i].variable);
        CHECK(lance_dataset_open(stores[i].uri, NULL, 0) == NULL);
        const TuError* e = tu_last_error();
        printf("    %-18s error %d: %s\n", stores[i].uri, (int)e->code, e->message ? e->message : "");
        if (!built_with(stores[i].feature)) {
            check_left_out(stores[i].uri, stores[i].feature);
            continue;
        }
        CHECK(e->code == LANCE_ERR_INVALID_ARGUMENT);
        CHECK(tu_error_mentions(stores[i].option));
    }
}

/* Schemes this build has no store for: refused as an invalid argument that
 * names the scheme, before any request.  goosefs:// is in the Lance core's
 * default build and left out of this library's; s3+ddb:// (S3 with a
 * DynamoDB commit table) needs the core's dynamodb feature, in neither
 * default build; it gets s3://'s options, region included, because its S3
 * client is built first and would otherwise look the region up
 * (docs/object-storage.md). */
static void test_refused_schemes(void) {
    static const char* uris[] = {"goosefs://lance/schemes.lance", "s3+ddb://lance/schemes.lance?ddbTableName=t",
                                 "nosuch://lance/schemes.lance"};
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        const char* const* options = !strncmp(uris[i], "s3+ddb:", 7) ? case_options(&cases[0]) : NULL;
        CHECK(lance_dataset_open(uris[i], options, 0) == NULL);
        const TuError* e = tu_last_error();
        printf("    %-18s error %d: %s\n", uris[i], (int)e->code, e->message ? e->message : "");
        CHECK(e->code == LANCE_ERR_INVALID_ARGUMENT);
        char scheme[16];
        scheme_of(uris[i], scheme);
        CHECK(tu_error_mentions(scheme));
    }
}

int main(void) {
    require_hosts();
    int fd = closed_port();
    printf("endpoints at %s (closed)\n", address);
    RUN(test_open_reaches_the_client);
    RUN(test_endpoint_required);
    RUN(test_refused_schemes);
    close(fd);
    return tu_finish("test_store_schemes");
}
