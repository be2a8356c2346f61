/*
 * Unit tests of the guest agent client (tests/agent): its JSON, which
 * reads what a guest sends and must refuse what is not JSON without a
 * crash; its base64; and how often it polls a running command.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "base64.h"
#include "json.h"
#include "poll.h"
#include "unit.h"

static Json *parse(const char *text)
{
    const char *err;
    Json *v = json_parse(text, strlen(text), &err);

    if (!v) {
        CHECK(err != NULL);
    }
    return v;
}

static void test_qga_json_exec_status(void)
{
    Json *v = parse(" {\"return\": {\"exitcode\": 3, \"out-data\": \"aGk=\","
                    " \"exited\": true, \"signal\": -9, \"nested\": [1, [2, {}]],"
                    " \"n\": null, \"f\": false, \"big\": 1e3}}\n");
    Json *ret = json_get(v, "return");
    long long n;

    CHECK(v != NULL);
    CHECK(json_int(json_get(ret, "exitcode"), &n) && n == 3);
    CHECK(json_int(json_get(ret, "signal"), &n) && n == -9);
    CHECK(json_int(json_get(ret, "big"), &n) && n == 1000);
    CHECK(json_get(ret, "exited")->type == JSON_BOOL && json_get(ret, "exited")->boolean);
    CHECK(json_get(ret, "f")->type == JSON_BOOL && !json_get(ret, "f")->boolean);
    CHECK(json_get(ret, "n")->type == JSON_NULL);
    CHECK(!strcmp(json_get(ret, "out-data")->string, "aGk="));
    CHECK(json_get(ret, "missing") == NULL);
    CHECK(json_get(json_get(ret, "exitcode"), "x") == NULL);
    json_free(v);
}

static void test_qga_json_strings(void)
{
    Json *v = parse("[\"a\\\"b\\\\c\\/d\\n\\t\", \"\\u00e9\\u2713\\ud83d\\ude00\", \"\xc3\xa9\"]");

    CHECK(v != NULL);
    if (v) {
        CHECK(!strcmp(v->child->string, "a\"b\\c/d\n\t"));
        CHECK(!strcmp(v->child->next->string, "\xc3\xa9\xe2\x9c\x93\xf0\x9f\x98\x80"));
        CHECK(!strcmp(v->child->next->next->string, "\xc3\xa9"));
    }
    json_free(v);
    /* a NUL escaped in a string keeps its length */
    v = parse("\"a\\u0000b\"");
    CHECK(v && v->len == 3 && v->string[2] == 'b');
    json_free(v);
}

static void test_qga_json_refuses(void)
{
    static const char *bad[] = {
        "", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1 2]", "{a:1}",
        "\"open", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"",
        "\"tab\there\"", "tru", "nul", "1e999", "-", "{} {}", "[1]]",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    };
    long long n;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        Json *v = parse(bad[i]);

        if (v) {
            fprintf(stderr, "parsed: %s\n", bad[i]);
        }
        CHECK(v == NULL);
        json_free(v);
    }
    /* whole numbers only, and only those a long long holds */
    for (const char **t = (const char *[]){ "1.5", "1e19", "\"1\"", "true", NULL }; *t; t++) {
        Json *v = parse(*t);

        CHECK(v && !json_int(v, &n));
        json_free(v);
    }
}

/* The framing of a stream: a value is whole only at its last bracket. */
static void test_qga_json_frame(void)
{
    const char *s = " {\"a\": \"}]\\\"{\", \"b\": [1, {}]}{\"next\"";

    CHECK_EQ(json_frame(s, strlen(s)), strlen(" {\"a\": \"}]\\\"{\", \"b\": [1, {}]}"));
    for (size_t n = 0; n < strlen(" {\"a\": \"}]\\\"{\", \"b\": [1, {}]}"); n++) {
        CHECK_EQ(json_frame(s, n), 0);
    }
    CHECK_EQ(json_frame("  \n", 3), 0);
    CHECK_EQ(json_frame(" x{}", 4), -1);
    CHECK_EQ(json_frame("\"s\"", 3), -1);
}

static void test_qga_request(void)
{
    char *argv[] = { "a\"b", "tab\there", "\x01", "\xc3\xa9" };
    Buf b = { 0 };
    const char *err;
    Json *v, *arg;

    req_begin(&b, "guest-exec");
    req_str(&b, "path", "/bin/sh");
    req_strv(&b, "arg", argv, 4);
    req_int(&b, "pid", -12345678901LL);
    req_bool(&b, "capture-output", true);
    req_end(&b);
    v = json_parse(b.data, b.len, &err);
    CHECK(v != NULL);
    CHECK(!strcmp(json_get(v, "execute")->string, "guest-exec"));
    arg = json_get(json_get(v, "arguments"), "arg");
    CHECK(arg && !strcmp(arg->child->string, "a\"b"));
    CHECK(arg && !strcmp(arg->child->next->string, "tab\there"));
    CHECK(arg && !strcmp(arg->child->next->next->string, "\x01"));
    CHECK(arg && !strcmp(arg->child->next->next->next->string, "\xc3\xa9"));
    json_free(v);
    buf_free(&b);

    req_begin(&b, "guest-ping");
    req_end(&b);
    CHECK(!strcmp(b.data, "{\"execute\":\"guest-ping\",\"arguments\":{}}"));
    buf_free(&b);
}

static void test_qga_base64(void)
{
    static const char *plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
    static const char *coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
    unsigned char all[256];

    for (int i = 0; i < 7; i++) {
        Buf e = { 0 }, d = { 0 };

        base64_encode(&e, plain[i], strlen(plain[i]));
        CHECK(!strcmp(buf_text(&e), coded[i]));
        CHECK(base64_decode(&d, coded[i], strlen(coded[i])));
        CHECK(d.len == strlen(plain[i]) && !memcmp(buf_text(&d), plain[i], d.len));
        buf_free(&e);
        buf_free(&d);
    }
    for (int i = 0; i < 256; i++) {
        all[i] = i;
    }
    for (size_t n = 0; n <= sizeof(all); n++) {
        Buf e = { 0 }, d = { 0 };

        base64_encode(&e, all, n);
        CHECK(base64_decode(&d, buf_text(&e), e.len));
        CHECK(d.len == n && (!n || !memcmp(d.data, all, n)));
        buf_free(&e);
        buf_free(&d);
    }
    for (const char **t = (const char *[]){ "Zm9v!", "Zg==Zg", "Z g==", NULL }; *t; t++) {
        Buf d = { 0 };

        CHECK(!base64_decode(&d, *t, strlen(*t)));
        buf_free(&d);
    }
}

/*
 * A command of DURATION seconds, polled as qga polls: a poll at time t
 * finds it done if t >= DURATION.  The polls until it was seen done, and
 * how long after its end that was.
 */
static int simulate(double duration, double *lag)
{
    double t = 0, delay = 0;
    int polls = 1;

    while (t < duration) {
        delay = qga_poll_delay(delay, t);
        t += delay;
        polls++;
    }
    *lag = t - duration;
    return polls;
}

/* Commands of under a second are seen done within 0.1 s. */
static void test_qga_poll_short_commands(void)
{
    static const double durations[] = { 0.01, 0.05, 0.3, 0.9 };
    double lag;

    for (int i = 0; i < 4; i++) {
        simulate(durations[i], &lag);
        CHECK(lag <= 0.1 + 1e-9);
    }
}

/* A long command is seen done a tenth of its time late at most (0.1 to
 * 1 s), and takes few polls: every 0.1 s, a 20-s one took 200. */
static void test_qga_poll_long_commands(void)
{
    static const double durations[] = { 2, 7, 20, 60, 400 };
    double lag, bound;

    for (int i = 0; i < 5; i++) {
        bound = durations[i] / 10;
        bound = bound < 0.1 ? 0.1 : bound > 1 ? 1 : bound;
        simulate(durations[i], &lag);
        CHECK(lag <= bound + 1e-9);
    }
    CHECK(simulate(20, &lag) <= 60);
    /* the packages layout's DKMS build */
    CHECK(simulate(400, &lag) <= 450);
}

int main(void)
{
    RUN(test_qga_json_exec_status);
    RUN(test_qga_json_strings);
    RUN(test_qga_json_refuses);
    RUN(test_qga_json_frame);
    RUN(test_qga_request);
    RUN(test_qga_base64);
    RUN(test_qga_poll_short_commands);
    RUN(test_qga_poll_long_commands);
    return unit_summary();
}
