// gatepass-ceiling: the bare libmicrohttpd responder `gatepass-bench server` measures the API
// against (issue 15). It is C on purpose: the ceiling must be libmicrohttpd alone, without
// our Swift wrapper (which the bench's secondary "wrapper ceiling" line measures instead).
//
// usage: gatepass-ceiling PORT THREADS [BODY]
//   PORT     0 binds any free port; the bound port is printed on stdout as one line.
//   THREADS  1 = one internal polling thread; N > 1 = a pool of N such threads.
//   BODY     the JSON answered to every request (default: one the size of a stats answer);
//            the bench passes the real stats answer it just read, so both carry the same bytes.
// Runs until standard input reaches end of file (the bench closes the pipe, or dies), then
// stops the daemon: a ceiling can never outlive the bench that started it.
//
// Thread model, as issue 15 names it: MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
// keep-alive (libmicrohttpd's default for HTTP/1.1), listening on 127.0.0.1 only.
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

// The same keys as GET /api/visitor-scanner/stats, so the default is the size of a real answer.
static const char default_body[] =
    "{\"checkedInToday\":0,\"checkedOutToday\":0,\"currentlyOnSite\":0,\"expectedToday\":10000}";

static enum MHD_Result answer(void *context, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **request_context) {
    (void)url; (void)method; (void)version; (void)upload_data;
    // The first call comes with the headers, before libmicrohttpd knows the request has ended:
    // a response queued then makes it discard the rest and close the connection (0.9.7x), so
    // it is queued on a later call, as libmicrohttpd's own examples do. A body is swallowed.
    static int headers_seen;
    if (*request_context == NULL) {
        *request_context = &headers_seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    return MHD_queue_response(connection, MHD_HTTP_OK, (struct MHD_Response *)context);
}

static int parse_count(const char *text, long low, long high, long *value) {
    char *end = NULL;
    errno = 0;
    long parsed = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || parsed < low || parsed > high) return 0;
    *value = parsed;
    return 1;
}

int main(int argc, char **argv) {
    long port = 0, threads = 1;
    if (argc < 3 || argc > 4 || !parse_count(argv[1], 0, 65535, &port) || !parse_count(argv[2], 1, 256, &threads)) {
        fprintf(stderr, "usage: gatepass-ceiling PORT THREADS [BODY] (PORT 0 = any free port; THREADS 1-256)\n");
        return 2;
    }
    const char *body = argc == 4 ? argv[3] : default_body;

    // One response shared by every request: libmicrohttpd reference-counts it under its own lock.
    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_PERSISTENT);
    if (response == NULL || MHD_add_response_header(response, "Content-Type", "application/json") != MHD_YES) {
        fprintf(stderr, "gatepass-ceiling: could not make the response\n");
        return 1;
    }

    struct sockaddr_in address;
    memset(&address, 0, sizeof address);
    address.sin_family = AF_INET;
    address.sin_port = htons((uint16_t)port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    // MHD_start_daemon is variadic: the pool option is only passed when there is a pool.
    struct MHD_Daemon *daemon = threads > 1
        ? MHD_start_daemon(flags, 0, NULL, NULL, answer, response,
                           MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                           MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads,
                           MHD_OPTION_END)
        : MHD_start_daemon(flags, 0, NULL, NULL, answer, response,
                           MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&address,
                           MHD_OPTION_END);
    if (daemon == NULL) {
        fprintf(stderr, "gatepass-ceiling: could not listen on 127.0.0.1:%ld\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("%u\n", info == NULL ? 0u : (unsigned int)info->port);
    fflush(stdout);

    char sink[256];
    for (;;) {
        ssize_t count = read(STDIN_FILENO, sink, sizeof sink);
        if (count > 0 || (count < 0 && errno == EINTR)) continue;
        break;
    }
    MHD_stop_daemon(daemon);
    MHD_destroy_response(response);
    return 0;
}
