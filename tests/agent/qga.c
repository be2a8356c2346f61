/*
 * qga: a client of the QEMU guest agent, for the lab's nodes and libvirt's
 * domains.
 *
 *   qga [--timeout S] SOCKET ping           exit 0 once the agent answers
 *                                           (S: in all, default 10)
 *   qga [--timeout S] SOCKET exec [-b] [--] CMD [ARG...]
 *                                           run CMD in the guest
 *   qga [--timeout S] SOCKET push FILE PATH copy FILE to PATH in the guest
 *
 * exec copies the command's stdout and stderr to ours and exits with its
 * status (128+N if signal N killed it); with -b it starts CMD and returns
 * at once.  S bounds each request to the agent (ping: all of them).  125:
 * the agent could not be reached, or answered with an error.
 *
 * Every request has a connection of its own: QEMU's chardev takes one
 * client at a time, so holding the socket while a long command runs would
 * keep every other client of the guest out.  SOCKET virsh:DOMAIN reaches
 * the agent of a libvirt domain through `virsh qemu-agent-command`, since
 * libvirt holds the agent's socket itself.
 *
 * C, not a script: a test run makes thousands of calls, and an
 * interpreter's start cost each about 50 ms of the host's CPU.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base64.h"
#include "json.h"
#include "poll.h"

#define EXIT_UNREACHED  125
/* a file goes in pieces of this size: each reply stays quick, and the
 * agent takes requests of at most 48 MiB */
#define PUSH_CHUNK      (1 << 20)
#define DELIMITER       '\xff'

typedef struct Agent {
    const char *path;           /* the socket, or NULL through virsh */
    const char *domain;         /* virsh:DOMAIN */
    double timeout;
    int fd;
    Buf in;                     /* read and not yet taken */
    char err[256];
} Agent;

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_for(double seconds)
{
    struct timespec ts = {
        .tv_sec = (time_t)seconds,
        .tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
    };

    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static bool failf(Agent *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static bool failf(Agent *a, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(a->err, sizeof(a->err), fmt, ap);
    va_end(ap);
    return false;
}

/* --- the socket ---------------------------------------------------------- */

/* A socket call failed: errno, where EAGAIN is the timeout running out. */
static bool fail_errno(Agent *a)
{
    return failf(a, "%s", errno == EAGAIN ? "timed out" : strerror(errno));
}

static bool send_all(Agent *a, const char *data, size_t len)
{
    while (len) {
        ssize_t n = send(a->fd, data, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return fail_errno(a);
        }
        data += n;
        len -= n;
    }
    return true;
}

static bool read_more(Agent *a)
{
    char chunk[65536];
    ssize_t n;

    do {
        n = recv(a->fd, chunk, sizeof(chunk), 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        return fail_errno(a);
    }
    if (n == 0) {
        return failf(a, "agent socket closed");
    }
    buf_add(&a->in, chunk, n);
    return true;
}

/* The next JSON value the agent sends. */
static Json *read_message(Agent *a)
{
    const char *err;
    long n;
    Json *v;

    while ((n = json_frame(buf_text(&a->in), a->in.len)) == 0) {
        if (!read_more(a)) {
            return NULL;
        }
    }
    if (n < 0) {
        failf(a, "the agent sent no JSON: %.40s", a->in.data);
        return NULL;
    }
    v = json_parse(a->in.data, n, &err);
    if (!v) {
        failf(a, "the agent's reply: %s", err);
        return NULL;
    }
    buf_drop(&a->in, n);
    return v;
}

/*
 * A leading 0xff resets the agent's parser, and its answer to
 * guest-sync-delimited starts with 0xff: whatever an earlier client left
 * unread in the channel is skipped up to it.
 */
static bool sync_agent(Agent *a)
{
    uint32_t token;
    long long got;
    Buf req = { 0 };
    bool sent;

    if (getrandom(&token, sizeof(token), 0) != sizeof(token)) {
        token = (uint32_t)getpid() ^ (uint32_t)(now() * 1e6);
    }
    token = token >> 1 | 1;
    buf_add(&req, "\xff", 1);
    req_begin(&req, "guest-sync-delimited");
    req_int(&req, "id", token);
    req_end(&req);
    sent = send_all(a, req.data, req.len);
    buf_free(&req);
    if (!sent) {
        return false;
    }
    for (;;) {
        char *delim;
        Json *reply;
        bool synced;

        while (!(delim = memchr(buf_text(&a->in), DELIMITER, a->in.len))) {
            a->in.len = 0;
            if (!read_more(a)) {
                return false;
            }
        }
        buf_drop(&a->in, delim - a->in.data + 1);
        reply = read_message(a);
        if (!reply) {
            return false;
        }
        synced = json_int(json_get(reply, "return"), &got) && got == token;
        json_free(reply);
        if (synced) {
            return true;
        }
    }
}

static void agent_close(Agent *a)
{
    if (a->fd >= 0) {
        close(a->fd);
        a->fd = -1;
    }
    buf_free(&a->in);
}

static bool agent_open(Agent *a)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    struct timeval tv = {
        .tv_sec = (time_t)a->timeout,
        .tv_usec = (long)((a->timeout - (time_t)a->timeout) * 1e6),
    };

    if (a->domain) {
        return true;
    }
    if (strlen(a->path) >= sizeof(sa.sun_path)) {
        return failf(a, "socket path too long");
    }
    strcpy(sa.sun_path, a->path);
    a->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (a->fd < 0) {
        return failf(a, "socket: %s", strerror(errno));
    }
    /* a unix connect waits for room in the listener's backlog up to the
     * send timeout */
    if (setsockopt(a->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
        setsockopt(a->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0 ||
        connect(a->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        fail_errno(a);
        close(a->fd);
        a->fd = -1;
        return false;
    }
    if (!sync_agent(a)) {
        agent_close(a);
        return false;
    }
    return true;
}

/* --- virsh --------------------------------------------------------------- */

/* virsh qemu-agent-command's stdout, or false with its stderr as the error */
static bool virsh_call(Agent *a, const char *request, Buf *out)
{
    int pout[2], perr[2], status;
    struct pollfd fds[2];
    char timeout[32];
    Buf err = { 0 }, *to[2] = { out, &err };
    pid_t pid;

    snprintf(timeout, sizeof(timeout), "%d", a->timeout < 1 ? 1 : (int)a->timeout);
    if (pipe2(pout, O_CLOEXEC) < 0 || pipe2(perr, O_CLOEXEC) < 0) {
        return failf(a, "pipe: %s", strerror(errno));
    }
    pid = fork();
    if (pid < 0) {
        return failf(a, "fork: %s", strerror(errno));
    }
    if (pid == 0) {
        dup2(pout[1], STDOUT_FILENO);
        dup2(perr[1], STDERR_FILENO);
        execlp("virsh", "virsh", "qemu-agent-command", "--timeout", timeout,
               a->domain, request, (char *)NULL);
        fprintf(stderr, "virsh: %s\n", strerror(errno));
        _exit(127);
    }
    close(pout[1]);
    close(perr[1]);
    /* both pipes at once: a command's output can fill either */
    fds[0] = (struct pollfd){ .fd = pout[0], .events = POLLIN };
    fds[1] = (struct pollfd){ .fd = perr[0], .events = POLLIN };
    while (fds[0].fd >= 0 || fds[1].fd >= 0) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR) {
            break;
        }
        for (int i = 0; i < 2; i++) {
            char chunk[65536];
            ssize_t n;

            if (fds[i].fd < 0 || !fds[i].revents) {
                continue;
            }
            n = read(fds[i].fd, chunk, sizeof(chunk));
            if (n > 0) {
                buf_add(to[i], chunk, n);
            } else if (n == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;     /* poll skips it */
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        if (fds[i].fd >= 0) {
            close(fds[i].fd);
        }
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        buf_free(&err);
        return true;
    }
    while (err.len && (err.data[err.len - 1] == '\n' || err.data[err.len - 1] == ' ')) {
        err.data[--err.len] = '\0';
    }
    if (err.len) {
        failf(a, "%s", err.data);
    } else {
        failf(a, "virsh exited with %d", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    }
    buf_free(&err);
    return false;
}

/* --- requests ------------------------------------------------------------ */

/*
 * Send request REQ (freed here), on the open connection or through virsh;
 * the reply's "return" value, which the caller frees with *reply, or NULL.
 */
static Json *call(Agent *a, Buf *req, Json **reply)
{
    Json *ret = NULL, *error;
    bool sent;

    *reply = NULL;
    if (a->domain) {
        Buf out = { 0 };
        const char *err;

        sent = virsh_call(a, req->data, &out);
        if (sent) {
            *reply = json_parse(buf_text(&out), out.len, &err);
            if (!*reply) {
                failf(a, "virsh's reply: %s", err);
            }
        }
        buf_free(&out);
    } else {
        sent = send_all(a, req->data, req->len);
        if (sent) {
            *reply = read_message(a);
        }
    }
    buf_free(req);
    if (!*reply) {
        return NULL;
    }
    error = json_get(*reply, "error");
    if (error) {
        Json *desc = json_get(error, "desc");

        failf(a, "%s", desc && desc->type == JSON_STRING ? desc->string : "the agent failed");
    } else if (!(ret = json_get(*reply, "return"))) {
        failf(a, "a reply with neither return nor error");
    }
    if (!ret) {
        json_free(*reply);
        *reply = NULL;
    }
    return ret;
}

/* One request on a connection of its own. */
static Json *call_once(Agent *a, Buf *req, Json **reply)
{
    Json *ret;

    if (!agent_open(a)) {
        buf_free(req);
        *reply = NULL;
        return NULL;
    }
    ret = call(a, req, reply);
    agent_close(a);
    return ret;
}

static int ping(Agent *a)
{
    double deadline = now() + a->timeout;

    a->timeout = 2;
    for (;;) {
        Buf req = { 0 };
        Json *reply;

        req_begin(&req, "guest-ping");
        req_end(&req);
        if (call_once(a, &req, &reply)) {
            json_free(reply);
            return 0;
        }
        if (now() > deadline) {
            return 1;
        }
        sleep_for(0.5);
    }
}

static bool write_decoded(Agent *a, const Json *status, const char *key, int fd)
{
    Json *data = json_get(status, key);
    Buf bytes = { 0 };
    bool ok;

    if (!data) {
        return true;
    }
    ok = data->type == JSON_STRING && base64_decode(&bytes, data->string, data->len);
    for (size_t done = 0; ok && done < bytes.len;) {
        ssize_t n = write(fd, bytes.data + done, bytes.len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            break;      /* our reader left: the status still counts */
        }
        done += n;
    }
    buf_free(&bytes);
    return ok || failf(a, "the agent's %s is not base64", key);
}

static int run(Agent *a, char **argv, int argc, bool background)
{
    Json *reply, *ret, *v;
    long long pid, code;
    double start, delay = 0;
    Buf req = { 0 };
    int rc;

    req_begin(&req, "guest-exec");
    req_str(&req, "path", argv[0]);
    req_strv(&req, "arg", argv + 1, argc - 1);
    req_bool(&req, "capture-output", !background);
    req_end(&req);
    ret = call_once(a, &req, &reply);
    if (!ret) {
        return -1;
    }
    if (!json_int(json_get(ret, "pid"), &pid)) {
        failf(a, "guest-exec answered no pid");
        json_free(reply);
        return -1;
    }
    json_free(reply);
    if (background) {
        return 0;
    }
    start = now();
    for (;;) {
        req_begin(&req, "guest-exec-status");
        req_int(&req, "pid", pid);
        req_end(&req);
        ret = call_once(a, &req, &reply);
        if (!ret) {
            return -1;
        }
        v = json_get(ret, "exited");
        if (!v || v->type != JSON_BOOL) {
            failf(a, "guest-exec-status answered no exited");
            json_free(reply);
            return -1;
        }
        if (v->boolean) {
            break;
        }
        json_free(reply);
        delay = qga_poll_delay(delay, now() - start);
        sleep_for(delay);
    }
    if (!write_decoded(a, ret, "out-data", STDOUT_FILENO) ||
        !write_decoded(a, ret, "err-data", STDERR_FILENO)) {
        json_free(reply);
        return -1;
    }
    if (((v = json_get(ret, "out-truncated")) && v->boolean) ||
        ((v = json_get(ret, "err-truncated")) && v->boolean)) {
        fputs("qga: output truncated by the guest agent\n", stderr);
    }
    if (json_int(json_get(ret, "signal"), &code)) {
        rc = 128 + (int)(code & 127);
    } else if (json_int(json_get(ret, "exitcode"), &code)) {
        rc = (int)(code & 255);
    } else {
        rc = 1;
    }
    json_free(reply);
    return rc;
}

static int push(Agent *a, const char *local, const char *remote)
{
    static char chunk[PUSH_CHUNK];
    Json *reply, *ret;
    long long handle;
    bool ok = false;
    Buf req = { 0 };
    int fd;

    fd = open(local, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        failf(a, "%s: %s", local, strerror(errno));
        return -1;
    }
    if (!agent_open(a)) {
        close(fd);
        return -1;
    }
    req_begin(&req, "guest-file-open");
    req_str(&req, "path", remote);
    req_str(&req, "mode", "w");
    req_end(&req);
    ret = call(a, &req, &reply);
    if (ret && !json_int(ret, &handle)) {
        failf(a, "guest-file-open answered no handle");
        ret = NULL;
    }
    json_free(reply);
    while (ret) {
        ssize_t n = read(fd, chunk, sizeof(chunk));

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            failf(a, "%s: %s", local, strerror(errno));
            break;
        }
        req_begin(&req, n ? "guest-file-write" : "guest-file-close");
        req_int(&req, "handle", handle);
        if (n) {
            Buf b64 = { 0 };

            base64_encode(&b64, chunk, n);
            req_str(&req, "buf-b64", b64.data);
            buf_free(&b64);
        }
        req_end(&req);
        ret = call(a, &req, &reply);
        json_free(reply);
        if (ret && !n) {
            ok = true;
            break;
        }
    }
    close(fd);
    agent_close(a);
    return ok ? 0 : -1;
}

static void usage(void)
{
    fputs("usage: qga [--timeout S] SOCKET ping\n"
          "       qga [--timeout S] SOCKET exec [-b] [--] CMD [ARG...]\n"
          "       qga [--timeout S] SOCKET push FILE PATH\n", stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    Agent a = { .timeout = 10, .fd = -1 };
    const char *socket_name, *action;
    int i = 1, rc;

    for (; i < argc && !strncmp(argv[i], "--timeout", 9); i++) {
        const char *v = argv[i][9] == '=' ? argv[i] + 10 : argv[i][9] ? NULL : argv[++i];
        char *end;

        if (!v || i >= argc || (a.timeout = strtod(v, &end)) <= 0 || *end) {
            usage();
        }
    }
    if (argc - i < 2) {
        usage();
    }
    socket_name = argv[i++];
    action = argv[i++];
    if (!strncmp(socket_name, "virsh:", 6)) {
        a.domain = socket_name + 6;
    } else {
        a.path = socket_name;
    }
    signal(SIGPIPE, SIG_IGN);

    if (!strcmp(action, "ping") && i == argc) {
        return ping(&a);
    } else if (!strcmp(action, "push") && argc - i == 2) {
        rc = push(&a, argv[i], argv[i + 1]);
    } else if (!strcmp(action, "exec")) {
        bool background = i < argc && !strcmp(argv[i], "-b");

        i += background;
        i += i < argc && !strcmp(argv[i], "--");
        if (i == argc) {
            usage();
        }
        rc = run(&a, argv + i, argc - i, background);
    } else {
        usage();
    }
    if (rc < 0) {
        fprintf(stderr, "qga: %s: %s\n", socket_name, a.err);
        return EXIT_UNREACHED;
    }
    return rc;
}
