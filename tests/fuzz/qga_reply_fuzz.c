/*
 * libFuzzer harness for the guest agent client (tests/agent): what a
 * guest writes into its agent channel, read as the client reads it.
 * - On a socket, the stream is skipped up to its first 0xff, as
 *   guest-sync-delimited's answer starts, then arrives in chunks and is
 *   framed into values.
 * - Through virsh, the whole of it is one reply.
 * Each reply is parsed and searched for the members the client uses, and
 * base64 members are decoded.  None of it may crash, leak or read out of
 * bounds, whatever the guest sends.
 *
 * An input: one byte, the chunk the stream arrives in (1 to 256 bytes),
 * then the stream.  With SOFTHCA_FUZZ_SEEDS set to a folder, the harness
 * writes its seed corpus there (replies of the agent's commands) and exits.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base64.h"
#include "json.h"

#define CHECK(cond) \
    do { if (!(cond)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); abort(); } } while (0)

/*
 * TEXT in a block of its own length, so that ASan sees a read past it: a
 * Buf's block is often longer than what it holds.
 */
static char *exact(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1);

    CHECK(copy);
    memcpy(copy, text, len);
    return copy;
}

/* Every node's string ends where its length says. */
static void walk(const Json *v)
{
    for (; v; v = v->next) {
        if (v->type == JSON_STRING) {
            CHECK(v->string && v->string[v->len] == '\0');
        }
        CHECK(!v->child || v->type == JSON_ARRAY || v->type == JSON_OBJECT);
        walk(v->child);
    }
}

/* Decode member KEY as the client would; what decodes must encode back. */
static void decode(const Json *ret, const char *key)
{
    Json *data = json_get(ret, key);
    Buf bytes = { 0 }, text = { 0 }, again = { 0 };
    char *b64;

    if (!data || data->type != JSON_STRING) {
        return;
    }
    b64 = exact(data->string, data->len);
    if (base64_decode(&bytes, b64, data->len)) {
        base64_encode(&text, bytes.data, bytes.len);
        CHECK(base64_decode(&again, buf_text(&text), text.len));
        CHECK(again.len == bytes.len && !memcmp(buf_text(&again), buf_text(&bytes), bytes.len));
    }
    buf_free(&bytes);
    buf_free(&text);
    buf_free(&again);
    free(b64);
}

static void reply(const char *text, size_t len)
{
    static const char *const ints[] = { "exitcode", "signal", "pid", "count" };
    static const char *const data[] = { "out-data", "err-data", "buf-b64" };
    const char *err = NULL;
    char *copy = exact(text, len);
    Json *v = json_parse(copy, len, &err);
    Json *ret, *error;
    long long n;

    free(copy);     /* the client drops the text before it reads the tree */
    if (!v) {
        CHECK(err != NULL);
        return;
    }
    walk(v);
    ret = json_get(v, "return");
    error = json_get(v, "error");
    (void)json_get(error, "desc");
    (void)json_int(ret, &n);
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        (void)json_int(json_get(ret, ints[i]), &n);
    }
    for (size_t i = 0; i < sizeof(data) / sizeof(data[0]); i++) {
        decode(ret, data[i]);
    }
    json_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
    const char *stream = (const char *)input + 1, *delim;
    size_t chunk, left;
    Buf in = { 0 };

    if (size < 1) {
        return 0;
    }
    chunk = input[0] + 1;
    left = size - 1;
    reply(stream, left);
    delim = memchr(stream, 0xff, left);
    if (delim) {
        left -= delim + 1 - stream;
        stream = delim + 1;
    }
    for (;;) {
        char *copy = exact(buf_text(&in), in.len);
        long n = json_frame(copy, in.len);

        free(copy);
        if (n < 0) {
            break;
        }
        if (n > 0) {
            CHECK((size_t)n <= in.len);
            reply(in.data, n);
            buf_drop(&in, n);
            continue;
        }
        if (!left) {
            break;
        }
        n = left < chunk ? left : chunk;
        buf_add(&in, stream, n);
        stream += n;
        left -= n;
    }
    buf_free(&in);
    return 0;
}

/* --- seeds: the replies of the commands the client sends ------------------ */

static const char *const seeds[][2] = {
    { "sync", "\xff{\"return\": 1193046}\n" },
    { "sync-after-stale", "{\"return\": {\"pid\": 7}}\n\xff{\"return\": 1193046}\n" },
    { "ping", "{\"return\": {}}\n" },
    { "exec", "{\"return\": {\"pid\": 812}}\n" },
    { "exec-status-running", "{\"return\": {\"exited\": false}}\n" },
    { "exec-status-exited", "{\"return\": {\"exitcode\": 0, \"out-data\": "
      "\"c29mdGhjYTAK\", \"err-data\": \"\", \"exited\": true}}\n" },
    { "exec-status-signal", "{\"return\": {\"signal\": 9, \"exited\": true, "
      "\"err-data\": \"a2lsbGVk\\u00e9\\ud83d\\ude00\"}}\n" },
    { "file-open", "{\"return\": 1000}\n" },
    { "file-write", "{\"return\": {\"count\": 65536, \"eof\": false}}\n" },
    { "file-read", "{\"return\": {\"count\": 2, \"buf-b64\": \"aGk=\", \"eof\": true}}\n" },
    { "error", "{\"error\": {\"class\": \"GenericError\", \"desc\": "
      "\"Guest agent command failed, error was 'Failed to execute child process'\"}}\n" },
    { "cut-off", "{\"return\": {\"exited\": true, \"err-data\": \"\\ud83d\\ude00" },
    { "nested", "{\"return\": [1, -2.5e3, null, true, [[]], {\"a\": {\"b\": []}}]}\n" },
};

static void write_seeds(const char *dir)
{
    for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        char path[4096];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, seeds[i][0]);
        f = fopen(path, "wb");
        if (!f || fputc(i * 37 % 256, f) == EOF ||
            fputs(seeds[i][1], f) == EOF || fclose(f)) {
            perror(path);
            _exit(1);
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *dir = getenv("SOFTHCA_FUZZ_SEEDS");

    (void)argc;
    (void)argv;
    if (dir) {
        write_seeds(dir);
        _exit(0);      /* libFuzzer takes exit() for a crash */
    }
    return 0;
}
