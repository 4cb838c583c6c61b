#ifndef GATEPASS_CMICROHTTPD_SHIM_H
#define GATEPASS_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <sys/select.h>
#include <microhttpd.h>

// MHD_start_daemon and MHD_get_daemon_info are variadic, which Swift cannot call.
// Each use the project makes of them is fixed here, with the options spelled out.

/// The callbacks a daemon is started with; every one gets the same `context`.
struct gatepass_mhd_callbacks {
    MHD_AcceptPolicyCallback accept_policy;
    MHD_AccessHandlerCallback access;
    MHD_RequestCompletedCallback completed;
    MHD_NotifyConnectionCallback connection;
    void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);
    size_t (*unescape)(void *cls, struct MHD_Connection *connection, char *text);
    /// Every message libmicrohttpd would print on stderr comes here instead.
    MHD_LogCallback log;
    void *context;
};

/// Starts a daemon bound to `address` (port 0 picks a free one) with an internal thread
/// pool of `pool_size` threads (1 = a single internal polling thread).
/// libmicrohttpd's default SO_REUSEADDR lets a restarted server take its port back at once;
/// SO_REUSEPORT is deliberately not asked for, so two live servers can never share a port.
/// The logger comes first, as libmicrohttpd asks, so that not even a message of the start
/// (a port in use) reaches stderr in the library's words: the caller reports it in its own.
static inline struct MHD_Daemon *gatepass_mhd_start(unsigned int flags,
                                                    const struct sockaddr *address,
                                                    unsigned int pool_size,
                                                    unsigned int connection_timeout_seconds,
                                                    size_t connection_memory_limit,
                                                    unsigned int connection_limit,
                                                    const struct gatepass_mhd_callbacks *callbacks) {
    // A pool of one is a single internal polling thread: the pool option is left out then.
    unsigned int pool = pool_size > 1 ? pool_size : 0;
    return MHD_start_daemon(flags, 0, callbacks->accept_policy, callbacks->context,
                            callbacks->access, callbacks->context,
                            MHD_OPTION_EXTERNAL_LOGGER, callbacks->log, callbacks->context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_NOTIFY_COMPLETED, callbacks->completed, callbacks->context,
                            MHD_OPTION_NOTIFY_CONNECTION, callbacks->connection, callbacks->context,
                            MHD_OPTION_URI_LOG_CALLBACK, callbacks->uri_log, callbacks->context,
                            MHD_OPTION_UNESCAPE_CALLBACK, callbacks->unescape, callbacks->context,
                            pool > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, pool,
                            MHD_OPTION_END);
}

/// The peer's IPv4 address in network byte order, or 0 when it is not IPv4 or unknown
/// (the daemon listens on IPv4 only). MHD_get_connection_info is variadic.
static inline uint32_t gatepass_mhd_connection_ipv4(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || info->client_addr->sa_family != AF_INET) return 0;
    return ((const struct sockaddr_in *)info->client_addr)->sin_addr.s_addr;
}

/// The IPv4 address of an accept-policy `sockaddr` in network byte order, 0 if not IPv4.
static inline uint32_t gatepass_sockaddr_ipv4(const struct sockaddr *address) {
    if (address == NULL || address->sa_family != AF_INET) return 0;
    return ((const struct sockaddr_in *)address)->sin_addr.s_addr;
}

/// The connection's socket context (set by the connection-notify callback), or NULL.
static inline void *gatepass_mhd_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : info->socket_context;
}

/// The port the daemon really listens on (useful after binding port 0).
static inline uint16_t gatepass_mhd_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The content reader's "the stream has ended" and a body of unknown size; both are macros
/// with casts, which Swift does not import.
static inline ssize_t gatepass_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
static inline uint64_t gatepass_mhd_size_unknown(void) { return MHD_SIZE_UNKNOWN; }

/// The socket of a connection (MHD_get_connection_info is variadic); -1 if unknown.
static inline int gatepass_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

static inline enum MHD_Result gatepass_mhd_yes(void) { return MHD_YES; }
static inline enum MHD_Result gatepass_mhd_no(void) { return MHD_NO; }
#endif
