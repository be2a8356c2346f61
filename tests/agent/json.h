/*
 * The JSON of the QEMU guest agent's protocol: requests written into a
 * growing buffer, and replies read as a tree.  A reply comes from the
 * guest, so the reader takes any bytes: what is not one whole JSON value
 * is an error, never a crash.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef QGA_JSON_H
#define QGA_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "buf.h"

/*
 * A request: {"execute": COMMAND, "arguments": {...}}.  req_begin starts
 * it; each req_* adds an argument; req_end closes it.
 */
void req_begin(Buf *b, const char *command);
void req_str(Buf *b, const char *key, const char *value);
void req_strv(Buf *b, const char *key, char *const *values, int n);
void req_int(Buf *b, const char *key, long long value);
void req_bool(Buf *b, const char *key, bool value);
void req_end(Buf *b);

typedef enum JsonType {
    JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT,
} JsonType;

typedef struct Json Json;
struct Json {
    JsonType type;
    bool boolean;
    double number;
    char *string;               /* decoded, NUL-terminated */
    size_t len;                 /* of string */
    char *key;                  /* the member's name, in an object */
    Json *child, *next;         /* an array's or object's members */
};

/*
 * json_frame: the length of the first whole JSON value in data[0..len),
 * with the blanks before it; 0 if it is not all there yet, -1 if data
 * holds no value's start.  Brackets are counted, nothing is checked: the
 * framed text goes to json_parse.
 */
long json_frame(const char *data, size_t len);

/* The value in text[0..len), all of it, or NULL with *err set. */
Json *json_parse(const char *text, size_t len, const char **err);
void json_free(Json *v);

/* Member KEY of object V, or NULL. */
Json *json_get(const Json *v, const char *key);
/* V as a whole number that fits a long long, or false. */
bool json_int(const Json *v, long long *out);

#endif
