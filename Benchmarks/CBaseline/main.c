/*
 * wire-bench-c: the plain-C baseline for the Monarch frame round-trip benchmark.
 * A frame is a 4-byte big-endian length N (1 ... 16 MiB) followed by N opaque bytes.
 *
 *   wire-bench-c server ADDRESS
 *       Echo every frame back on its connection. Prints "listening" when ready;
 *       exits 0 on SIGINT/SIGTERM after closing every handle.
 *   wire-bench-c client ADDRESS [--inflight N] [--seconds S] [--payload BYTES] [--warmup W]
 *       Keep N frames in flight; after W seconds of warm-up count round trips for
 *       S seconds; print one JSON line of figures.
 *
 * ADDRESS is tcp:HOST:PORT or unix:PATH.
 */
#define _POSIX_C_SOURCE 200809L /* getaddrinfo, unlink, pthread types under strict -std=c11 */
#include <uv.h>

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_FRAME (16u * 1024 * 1024)
#define READ_BUF_SIZE (64 * 1024)

static uv_loop_t loop;

/* Allocation failure is not worth recovering from in a benchmark. */
static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n);
    if (p == NULL) { fputs("out of memory\n", stderr); abort(); }
    return p;
}

static void warn_uv(const char *what, int err) { fprintf(stderr, "%s: %s\n", what, uv_strerror(err)); }

/* ---- addresses ---------------------------------------------------------------------- */
typedef struct {
    int is_unix;
    const char *path;             /* unix */
    struct sockaddr_storage addr; /* tcp */
} address_t;

static int parse_address(const char *text, int passive, address_t *out) {
    memset(out, 0, sizeof *out);
    if (strncmp(text, "unix:", 5) == 0 && text[5] != '\0') {
        out->is_unix = 1;
        out->path = text + 5;
        return 0;
    }
    /* tcp:HOST:PORT, split at the last colon; HOST may be a bracketed IPv6 literal. */
    const char *h = text + 4, *colon = strrchr(text, ':');
    size_t hlen = strncmp(text, "tcp:", 4) == 0 && colon >= h && colon[1] ? (size_t)(colon - h) : 0;
    char host[256];
    if (hlen >= 2 && h[0] == '[' && h[hlen - 1] == ']') { h++; hlen -= 2; }
    if (hlen == 0 || hlen >= sizeof host) {
        fprintf(stderr, "bad address '%s' (want tcp:HOST:PORT or unix:PATH)\n", text);
        return -1;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';

    /* A NULL callback makes uv_getaddrinfo synchronous, which is fine at start-up. */
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                             .ai_flags = passive ? AI_PASSIVE : 0};
    uv_getaddrinfo_t req;
    int r = uv_getaddrinfo(&loop, &req, NULL, host, colon + 1, &hints);
    if (r < 0) { fprintf(stderr, "cannot resolve '%s': %s\n", text, uv_strerror(r)); return -1; }
    memcpy(&out->addr, req.addrinfo->ai_addr, req.addrinfo->ai_addrlen);
    uv_freeaddrinfo(req.addrinfo);
    return 0;
}

/* ---- connections and framing (shared by server and client) --------------------------- */
typedef struct {
    union { uv_tcp_t tcp; uv_pipe_t pipe; uv_stream_t stream; uv_handle_t handle; } h;
    char *acc;                /* accumulation buffer: bytes received, not yet consumed */
    size_t len, cap;
    char rbuf[READ_BUF_SIZE]; /* read buffer, reused for every read */
} conn_t;

static conn_t *conn_new(int is_unix) {
    conn_t *c = xrealloc(NULL, sizeof *c);
    c->acc = NULL, c->len = c->cap = 0;
    if (is_unix) uv_pipe_init(&loop, &c->h.pipe, 0);
    else uv_tcp_init(&loop, &c->h.tcp);
    c->h.handle.data = c; /* non-NULL data marks a connection (see close_walk_cb) */
    return c;
}

static void conn_closed_cb(uv_handle_t *h) { free(((conn_t *)h->data)->acc); free(h->data); }

static void conn_close(conn_t *c) {
    if (!uv_is_closing(&c->h.handle)) uv_close(&c->h.handle, conn_closed_cb);
}

static void conn_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    *buf = uv_buf_init(((conn_t *)h->data)->rbuf, READ_BUF_SIZE);
}

/*
 * Append `n` freshly read bytes and find the complete frames at the front of the
 * accumulation buffer. They are contiguous, so the caller handles them as one block:
 * returns the bytes they span and sets *count, or returns -1 on an invalid length
 * (zero, over MAX_FRAME, or, when `expect` is non-zero, anything but `expect`).
 * The caller then calls conn_consume with the span.
 */
static ptrdiff_t conn_received(conn_t *c, size_t n, uint32_t expect, size_t *count) {
    if (c->len + n > c->cap) {
        size_t cap = c->cap ? c->cap : READ_BUF_SIZE;
        while (cap < c->len + n) cap *= 2;
        c->acc = xrealloc(c->acc, cap);
        c->cap = cap;
    }
    memcpy(c->acc + c->len, c->rbuf, n);
    c->len += n;

    const unsigned char *p = (const unsigned char *)c->acc;
    size_t off = 0;
    *count = 0;
    while (c->len - off >= 4) {
        uint32_t len = (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 |
                       (uint32_t)p[off + 2] << 8 | (uint32_t)p[off + 3];
        if (len == 0 || len > MAX_FRAME || (expect != 0 && len != expect)) {
            fprintf(stderr, "protocol error: frame length %u (expected %s%u)\n", len,
                    expect ? "" : "1 to ", expect ? expect : MAX_FRAME);
            return -1;
        }
        if (c->len - off - 4 < len) break; /* partial frame: wait for more bytes */
        off += 4 + (size_t)len;
        (*count)++;
    }
    return (ptrdiff_t)off;
}

/* Drop the first `used` bytes, moving any partial frame to the front. */
static void conn_consume(conn_t *c, size_t used) {
    c->len -= used;
    if (c->len > 0 && used > 0) memmove(c->acc, c->acc + used, c->len);
}

/* ---- server ------------------------------------------------------------------------- */
static union { uv_tcp_t tcp; uv_pipe_t pipe; uv_stream_t stream; uv_handle_t handle; } listener;
static uv_signal_t sigint_handle, sigterm_handle;
static address_t server_addr;

/* A write request owning a copy of the bytes it writes; freed in the callback. */
typedef struct { uv_write_t req; char data[]; } echo_write_t;

static void echo_write_cb(uv_write_t *req, int status) {
    if (status < 0 && status != UV_ECANCELED) conn_close(req->handle->data);
    free(req);
}

static void server_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    conn_t *c = s->data;
    (void)buf;
    if (nread < 0) { /* EOF, or a client that went away with replies unread */
        if (nread != UV_EOF && nread != UV_ECONNRESET) warn_uv("server: read error", (int)nread);
        conn_close(c);
        return;
    }
    size_t count;
    ptrdiff_t span = conn_received(c, (size_t)nread, 0, &count);
    if (span < 0) { conn_close(c); return; }
    if (span == 0) return;
    /* Echo every complete frame of this read, prefixes and all, in one write. */
    echo_write_t *w = xrealloc(NULL, sizeof *w + (size_t)span);
    memcpy(w->data, c->acc, (size_t)span);
    uv_buf_t out = uv_buf_init(w->data, (unsigned)span);
    int r = uv_write(&w->req, s, &out, 1, echo_write_cb);
    if (r < 0) { warn_uv("server: write error", r); free(w); conn_close(c); return; }
    conn_consume(c, (size_t)span);
}

static void on_connection(uv_stream_t *server, int status) {
    if (status < 0) { warn_uv("server: accept error", status); return; }
    conn_t *c = conn_new(server_addr.is_unix);
    if (uv_accept(server, &c->h.stream) < 0) { conn_close(c); return; }
    if (!server_addr.is_unix) uv_tcp_nodelay(&c->h.tcp, 1);
    uv_read_start(&c->h.stream, conn_alloc_cb, server_read_cb);
}

/* Shutdown closes every handle on the loop; connections free their conn_t when closed. */
static void close_walk_cb(uv_handle_t *h, void *arg) {
    (void)arg;
    if (!uv_is_closing(h)) uv_close(h, h->data ? conn_closed_cb : NULL);
}

static void on_signal(uv_signal_t *sig, int signum) {
    (void)signum;
    uv_walk(sig->loop, close_walk_cb, NULL);
}

static int run_server(const char *addr_text) {
    if (parse_address(addr_text, 1, &server_addr) < 0) return 1;
    int r;
    if (server_addr.is_unix) {
        unlink(server_addr.path); /* a stale socket file from an earlier run */
        uv_pipe_init(&loop, &listener.pipe, 0);
        r = uv_pipe_bind(&listener.pipe, server_addr.path);
    } else {
        uv_tcp_init(&loop, &listener.tcp);
        r = uv_tcp_bind(&listener.tcp, (const struct sockaddr *)&server_addr.addr, 0);
    }
    listener.handle.data = NULL;
    if (r == 0) r = uv_listen(&listener.stream, SOMAXCONN, on_connection);
    if (r < 0) {
        fprintf(stderr, "server: cannot listen on %s: %s\n", addr_text, uv_strerror(r));
        uv_close(&listener.handle, NULL);
        uv_run(&loop, UV_RUN_DEFAULT);
        return 1;
    }
    /* A parent may have spawned us with these signals blocked; a server must see them. */
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    sigprocmask(SIG_UNBLOCK, &stop_signals, NULL);
    uv_signal_init(&loop, &sigint_handle);
    uv_signal_init(&loop, &sigterm_handle);
    uv_signal_start(&sigint_handle, on_signal, SIGINT);
    uv_signal_start(&sigterm_handle, on_signal, SIGTERM);
    printf("listening\n");
    fflush(stdout);
    uv_run(&loop, UV_RUN_DEFAULT);
    if (server_addr.is_unix) unlink(server_addr.path);
    return 0;
}

/* ---- client ------------------------------------------------------------------------- */
static struct {
    address_t addr;
    conn_t *conn;
    uv_connect_t connect_req;
    uv_timer_t timer;
    char *frame;      /* length prefix + payload, sent over and over */
    uint32_t payload; /* payload length */
    uv_buf_t *bufs;   /* `inflight` buffers, all pointing at `frame` */
    long inflight;
    double seconds, warmup, elapsed;
    int counting, finished, exit_code;
    uint64_t start_ns, round_trips;
} cl;

static void client_finish(int exit_code) {
    if (cl.finished) return;
    cl.finished = 1;
    cl.exit_code = exit_code;
    conn_close(cl.conn);
    uv_close((uv_handle_t *)&cl.timer, NULL);
}

static void client_write_cb(uv_write_t *req, int status) {
    if (status < 0 && status != UV_ECANCELED) { warn_uv("client: write error", status); client_finish(1); }
    free(req);
}

/* Send `n` frames (n <= inflight) in one write. No copy: `frame` outlives every write. */
static void client_send(size_t n) {
    uv_write_t *req = xrealloc(NULL, sizeof *req);
    int r = uv_write(req, &cl.conn->h.stream, cl.bufs, (unsigned)n, client_write_cb);
    if (r < 0) { warn_uv("client: write error", r); free(req); client_finish(1); }
}

static void client_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    if (nread < 0) { warn_uv("client: connection ended", (int)nread); client_finish(1); return; }
    size_t count;
    ptrdiff_t span = conn_received(s->data, (size_t)nread, cl.payload, &count);
    if (span < 0) { client_finish(1); return; } /* a reply whose length is not what we sent */
    conn_consume(s->data, (size_t)span);
    if (count == 0) return;
    if (count > (size_t)cl.inflight) { /* a broken echo server; would also overrun cl.bufs */
        fputs("client: more replies than requests\n", stderr);
        client_finish(1);
        return;
    }
    if (cl.counting) cl.round_trips += count;
    client_send(count); /* one new frame per reply keeps `inflight` outstanding */
}

/* Fires once at the end of the warm-up (start counting), once at the end of the measurement. */
static void timer_cb(uv_timer_t *t) {
    if (!cl.counting) {
        cl.counting = 1;
        cl.start_ns = uv_hrtime();
        uv_timer_start(t, timer_cb, (uint64_t)(cl.seconds * 1000 + 0.5), 0);
    } else {
        cl.elapsed = (double)(uv_hrtime() - cl.start_ns) / 1e9;
        client_finish(0);
    }
}

static void on_connect(uv_connect_t *req, int status) {
    (void)req;
    if (status < 0) { warn_uv("client: cannot connect", status); client_finish(1); return; }
    if (!cl.addr.is_unix) uv_tcp_nodelay(&cl.conn->h.tcp, 1);
    uv_read_start(&cl.conn->h.stream, conn_alloc_cb, client_read_cb);
    uv_timer_start(&cl.timer, timer_cb, (uint64_t)(cl.warmup * 1000 + 0.5), 0);
    client_send((size_t)cl.inflight);
}

static int run_client(int argc, char **argv) {
    long payload = 1024;
    cl.inflight = 1;
    cl.seconds = 3;
    cl.warmup = 0.5;
    for (int i = 1; i < argc; i += 2) {
        char *end = NULL;
        double v = i + 1 < argc ? strtod(argv[i + 1], &end) : 0;
        if (end == NULL || end == argv[i + 1] || *end != '\0') {
            fprintf(stderr, "client: missing or bad value for %s\n", argv[i]);
            return 2;
        }
        if (strcmp(argv[i], "--inflight") == 0) cl.inflight = (long)v;
        else if (strcmp(argv[i], "--seconds") == 0) cl.seconds = v;
        else if (strcmp(argv[i], "--payload") == 0) payload = (long)v;
        else if (strcmp(argv[i], "--warmup") == 0) cl.warmup = v;
        else { fprintf(stderr, "client: unknown option %s\n", argv[i]); return 2; }
    }
    if (cl.inflight < 1 || cl.inflight > 1000000 || !(cl.seconds > 0) || !(cl.warmup >= 0) || payload < 1 ||
        payload > (long)MAX_FRAME) {
        fputs("client: option out of range\n", stderr);
        return 2;
    }
    if (parse_address(argv[0], 0, &cl.addr) < 0) return 1;

    /* The payload: a request-shaped JSON object padded with 'x' to `payload` bytes. */
    static const char head[] = "{\"type\":\"request\",\"id\":0,\"path\":\"bench/item\",\"pad\":\"";
    size_t fixed = sizeof head - 1 + 2; /* head + "} */
    size_t pad = (size_t)payload > fixed ? (size_t)payload - fixed : 0;
    cl.payload = (uint32_t)(fixed + pad);
    unsigned char *f = xrealloc(NULL, 4 + (size_t)cl.payload);
    for (int i = 0; i < 4; i++) f[i] = (unsigned char)(cl.payload >> (24 - 8 * i)); /* big-endian */
    memcpy(f + 4, head, sizeof head - 1);
    memset(f + 4 + sizeof head - 1, 'x', pad);
    memcpy(f + 4 + cl.payload - 2, "\"}", 2);
    cl.frame = (char *)f;
    cl.bufs = xrealloc(NULL, sizeof *cl.bufs * (size_t)cl.inflight);
    for (long i = 0; i < cl.inflight; i++) cl.bufs[i] = uv_buf_init(cl.frame, 4 + cl.payload);

    cl.conn = conn_new(cl.addr.is_unix);
    uv_timer_init(&loop, &cl.timer);
    if (cl.addr.is_unix) {
        uv_pipe_connect(&cl.connect_req, &cl.conn->h.pipe, cl.addr.path, on_connect);
    } else {
        int r = uv_tcp_connect(&cl.connect_req, &cl.conn->h.tcp,
                               (const struct sockaddr *)&cl.addr.addr, on_connect);
        if (r < 0) on_connect(&cl.connect_req, r);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    free(cl.frame);
    free(cl.bufs);
    if (cl.exit_code == 0) {
        printf("{\"impl\":\"c\",\"transport\":\"%s\",\"inflight\":%ld,\"payload\":%u,"
               "\"roundTrips\":%llu,\"seconds\":%.6f,\"perSecond\":%.3f}\n",
               cl.addr.is_unix ? "unix" : "tcp", cl.inflight, cl.payload,
               (unsigned long long)cl.round_trips, cl.elapsed, (double)cl.round_trips / cl.elapsed);
    }
    return cl.exit_code;
}

/* ---- main --------------------------------------------------------------------------- */
int main(int argc, char **argv) {
    signal(SIGPIPE, SIG_IGN); /* a vanished peer must surface as EPIPE, not kill us */
    int server = argc == 3 && strcmp(argv[1], "server") == 0;
    if (!server && !(argc >= 3 && strcmp(argv[1], "client") == 0)) {
        fprintf(stderr,
                "usage: %s server ADDRESS\n"
                "       %s client ADDRESS [--inflight N] [--seconds S] [--payload BYTES] [--warmup W]\n"
                "ADDRESS is tcp:HOST:PORT or unix:PATH\n", argv[0], argv[0]);
        return 2;
    }
    uv_loop_init(&loop);
    int code = server ? run_server(argv[2]) : run_client(argc - 2, argv + 2);
    int r = uv_loop_close(&loop);
    if (r != 0) { warn_uv("uv_loop_close", r); if (code == 0) code = 3; }
    return code;
}
