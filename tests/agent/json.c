/*
 * The guest agent protocol's JSON (json.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "json.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* deeper than any reply of the agent; bounds the parser's recursion */
#define JSON_MAX_DEPTH  32

/* --- requests ------------------------------------------------------------ */

static void add_string(Buf *b, const char *s)
{
    buf_adds(b, "\"");
    for (; *s; s++) {
        unsigned char c = *s;

        if (c == '"' || c == '\\') {
            buf_printf(b, "\\%c", c);
        } else if (c < 0x20) {
            buf_printf(b, "\\u%04x", c);
        } else {
            buf_add(b, s, 1);
        }
    }
    buf_adds(b, "\"");
}

/* The argument's key, after a comma unless it is the first. */
static void add_key(Buf *b, const char *key)
{
    if (b->data[b->len - 1] != '{') {
        buf_adds(b, ",");
    }
    add_string(b, key);
    buf_adds(b, ":");
}

void req_begin(Buf *b, const char *command)
{
    buf_adds(b, "{\"execute\":");
    add_string(b, command);
    buf_adds(b, ",\"arguments\":{");
}

void req_str(Buf *b, const char *key, const char *value)
{
    add_key(b, key);
    add_string(b, value);
}

void req_strv(Buf *b, const char *key, char *const *values, int n)
{
    add_key(b, key);
    buf_adds(b, "[");
    for (int i = 0; i < n; i++) {
        if (i) {
            buf_adds(b, ",");
        }
        add_string(b, values[i]);
    }
    buf_adds(b, "]");
}

void req_int(Buf *b, const char *key, long long value)
{
    add_key(b, key);
    buf_printf(b, "%lld", value);
}

void req_bool(Buf *b, const char *key, bool value)
{
    add_key(b, key);
    buf_adds(b, value ? "true" : "false");
}

void req_end(Buf *b)
{
    buf_adds(b, "}}");
}

/* --- replies ------------------------------------------------------------- */

static bool is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

long json_frame(const char *data, size_t len)
{
    size_t i = 0;
    long depth = 0;
    bool in_string = false;

    while (i < len && is_blank(data[i])) {
        i++;
    }
    if (i == len) {
        return 0;
    }
    if (data[i] != '{' && data[i] != '[') {
        return -1;
    }
    for (; i < len; i++) {
        char c = data[i];

        if (in_string) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if ((c == '}' || c == ']') && --depth == 0) {
            return i + 1;
        }
    }
    return 0;
}

typedef struct Parser {
    const char *p, *end;
    const char *err;
} Parser;

static Json *parse_value(Parser *ps, int depth);

static void skip_blanks(Parser *ps)
{
    while (ps->p < ps->end && is_blank(*ps->p)) {
        ps->p++;
    }
}

static bool fail(Parser *ps, const char *err)
{
    if (!ps->err) {
        ps->err = err;
    }
    return false;
}

static bool take(Parser *ps, const char *word)
{
    size_t n = strlen(word);

    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) {
        return fail(ps, "not JSON");
    }
    ps->p += n;
    return true;
}

static int hex4(const char *p)
{
    int v = 0;

    for (int i = 0; i < 4; i++) {
        char c = p[i];

        v <<= 4;
        if (c >= '0' && c <= '9') {
            v |= c - '0';
        } else if (c >= 'a' && c <= 'f') {
            v |= c - 'a' + 10;
        } else if (c >= 'A' && c <= 'F') {
            v |= c - 'A' + 10;
        } else {
            return -1;
        }
    }
    return v;
}

static void add_utf8(Buf *b, uint32_t cp)
{
    char u[4];
    size_t n;

    if (cp < 0x80) {
        u[0] = cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = 0xc0 | cp >> 6;
        u[1] = 0x80 | (cp & 0x3f);
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = 0xe0 | cp >> 12;
        u[1] = 0x80 | (cp >> 6 & 0x3f);
        u[2] = 0x80 | (cp & 0x3f);
        n = 3;
    } else {
        u[0] = 0xf0 | cp >> 18;
        u[1] = 0x80 | (cp >> 12 & 0x3f);
        u[2] = 0x80 | (cp >> 6 & 0x3f);
        u[3] = 0x80 | (cp & 0x3f);
        n = 4;
    }
    buf_add(b, u, n);
}

/* \uXXXX at ps->p (after the backslash and the u), a surrogate pair whole */
static bool parse_escape_u(Parser *ps, Buf *out)
{
    int hi, lo;

    if (ps->end - ps->p < 4 || (hi = hex4(ps->p)) < 0) {
        return fail(ps, "bad \\u escape");
    }
    ps->p += 4;
    if (hi < 0xd800 || hi > 0xdfff) {
        add_utf8(out, hi);
        return true;
    }
    if (hi > 0xdbff || ps->end - ps->p < 6 || ps->p[0] != '\\' ||
        ps->p[1] != 'u' || (lo = hex4(ps->p + 2)) < 0xdc00 || lo > 0xdfff) {
        return fail(ps, "a lone surrogate in a \\u escape");
    }
    ps->p += 6;
    add_utf8(out, 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
    return true;
}

/* A string at ps->p (its opening quote), decoded into a fresh buffer. */
static char *parse_string(Parser *ps, size_t *len)
{
    Buf out = { 0 };

    buf_add(&out, NULL, 0);
    ps->p++;
    while (ps->p < ps->end && *ps->p != '"') {
        const char *run = ps->p;

        while (ps->p < ps->end && *ps->p != '"' && *ps->p != '\\') {
            if ((unsigned char)*ps->p < 0x20) {
                fail(ps, "a control character in a string");
                goto bad;
            }
            ps->p++;
        }
        buf_add(&out, run, ps->p - run);
        if (ps->p == ps->end || *ps->p == '"') {
            break;
        }
        if (++ps->p == ps->end) {
            break;
        }
        switch (*ps->p++) {
        case '"': buf_adds(&out, "\""); break;
        case '\\': buf_adds(&out, "\\"); break;
        case '/': buf_adds(&out, "/"); break;
        case 'b': buf_adds(&out, "\b"); break;
        case 'f': buf_adds(&out, "\f"); break;
        case 'n': buf_adds(&out, "\n"); break;
        case 'r': buf_adds(&out, "\r"); break;
        case 't': buf_adds(&out, "\t"); break;
        case 'u':
            if (!parse_escape_u(ps, &out)) {
                goto bad;
            }
            break;
        default:
            fail(ps, "a bad escape in a string");
            goto bad;
        }
    }
    if (ps->p == ps->end) {
        fail(ps, "an unterminated string");
        goto bad;
    }
    ps->p++;
    *len = out.len;
    return out.data;
bad:
    buf_free(&out);
    return NULL;
}

static bool parse_number(Parser *ps, double *out)
{
    char text[64], *end;
    size_t n = 0;

    while (ps->p + n < ps->end && n < sizeof(text) - 1 && ps->p[n] &&
           strchr("+-0123456789.eE", ps->p[n])) {
        n++;
    }
    memcpy(text, ps->p, n);
    text[n] = '\0';
    *out = strtod(text, &end);
    if (n == 0 || end != text + n || !isfinite(*out)) {
        return fail(ps, "a bad number");
    }
    ps->p += n;
    return true;
}

/* The members of an array or object, after its opening bracket. */
static bool parse_members(Parser *ps, Json *v, int depth)
{
    char close = v->type == JSON_OBJECT ? '}' : ']';
    Json **tail = &v->child;

    skip_blanks(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        size_t key_len;
        Json *m;

        skip_blanks(ps);
        if (v->type == JSON_OBJECT) {
            if (ps->p == ps->end || *ps->p != '"') {
                return fail(ps, "an object member without a name");
            }
            key = parse_string(ps, &key_len);
            if (!key) {
                return false;
            }
            skip_blanks(ps);
            if (ps->p == ps->end || *ps->p++ != ':') {
                free(key);
                return fail(ps, "no ':' after a member's name");
            }
        }
        m = parse_value(ps, depth + 1);
        if (!m) {
            free(key);
            return false;
        }
        m->key = key;
        *tail = m;
        tail = &m->next;
        skip_blanks(ps);
        if (ps->p == ps->end) {
            return fail(ps, "an unterminated array or object");
        }
        if (*ps->p == close) {
            ps->p++;
            return true;
        }
        if (*ps->p++ != ',') {
            return fail(ps, "no ',' between members");
        }
    }
}

static Json *parse_value(Parser *ps, int depth)
{
    Json *v;

    if (depth > JSON_MAX_DEPTH) {
        fail(ps, "nested too deep");
        return NULL;
    }
    skip_blanks(ps);
    if (ps->p == ps->end) {
        fail(ps, "a value missing");
        return NULL;
    }
    v = calloc(1, sizeof(*v));
    if (!v) {
        out_of_memory();
    }
    switch (*ps->p) {
    case '{':
    case '[':
        v->type = *ps->p++ == '{' ? JSON_OBJECT : JSON_ARRAY;
        if (!parse_members(ps, v, depth)) {
            goto bad;
        }
        break;
    case '"':
        v->type = JSON_STRING;
        v->string = parse_string(ps, &v->len);
        if (!v->string) {
            goto bad;
        }
        break;
    case 't':
    case 'f':
        v->type = JSON_BOOL;
        v->boolean = *ps->p == 't';
        if (!take(ps, v->boolean ? "true" : "false")) {
            goto bad;
        }
        break;
    case 'n':
        if (!take(ps, "null")) {
            goto bad;
        }
        break;
    default:
        v->type = JSON_NUMBER;
        if (!parse_number(ps, &v->number)) {
            goto bad;
        }
    }
    return v;
bad:
    json_free(v);
    return NULL;
}

Json *json_parse(const char *text, size_t len, const char **err)
{
    Parser ps = { .p = text, .end = text + len };
    Json *v = parse_value(&ps, 0);

    skip_blanks(&ps);
    if (v && ps.p != ps.end) {
        fail(&ps, "more after the value");
        json_free(v);
        v = NULL;
    }
    *err = ps.err;
    return v;
}

void json_free(Json *v)
{
    while (v) {
        Json *next = v->next;

        json_free(v->child);
        free(v->string);
        free(v->key);
        free(v);
        v = next;
    }
}

Json *json_get(const Json *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT) {
        return NULL;
    }
    for (Json *m = v->child; m; m = m->next) {
        if (!strcmp(m->key, key)) {
            return m;
        }
    }
    return NULL;
}

bool json_int(const Json *v, long long *out)
{
    /* 2^63 is exact as a double; every whole double below it fits */
    if (!v || v->type != JSON_NUMBER || v->number != trunc(v->number) ||
        fabs(v->number) >= 9223372036854775808.0) {
        return false;
    }
    *out = (long long)v->number;
    return true;
}
