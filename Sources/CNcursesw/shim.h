#ifndef GATEPASS_CNCURSESW_SHIM_H
#define GATEPASS_CNCURSESW_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
// pkg-config's -D_XOPEN_SOURCE is refused by SwiftPM for system libraries; the wide-character
// API (add_wch, get_wch, cchar_t) needs it, so it is defined here.
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif
#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <locale.h>
#include <ncursesw/curses.h>
#endif
