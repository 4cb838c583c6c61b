#ifndef GATEPASS_CPOSTGRES_SHIM_H
#define GATEPASS_CPOSTGRES_SHIM_H
// libpq's client API. Debian's libpq-dev installs it in /usr/include/postgresql, which
// `pkg-config --cflags libpq` names, so the header is found by its plain name.
#include <libpq-fe.h>
// poll(2), for waiting on the connection's socket for notifications.
#include <poll.h>
#endif
