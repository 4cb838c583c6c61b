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
#include <signal.h>
#include <stdio.h>
#include <wchar.h>
#include <ncursesw/curses.h>

// Swift cannot use these directly: `stdscr` is a mutable C global (refused under Swift 6
// concurrency checking) and the attribute masks are function-like macros with casts.
static inline WINDOW *gatepass_stdscr(void) { return stdscr; }
static inline attr_t gatepass_attr_normal(void) { return A_NORMAL; }
static inline attr_t gatepass_attr_bold(void) { return A_BOLD; }
static inline attr_t gatepass_attr_dim(void) { return A_DIM; }
static inline attr_t gatepass_attr_reverse(void) { return A_REVERSE; }
static inline attr_t gatepass_attr_underline(void) { return A_UNDERLINE; }
// `stdout` / `stdin` are mutable C globals too; newterm needs them as FILE *.
static inline FILE *gatepass_stdout(void) { return stdout; }
static inline FILE *gatepass_stdin(void) { return stdin; }
// The columns a wide character takes in the current locale (what ncurses itself uses). Glibc
// declares it only under _XOPEN_SOURCE, which Swift's Glibc module is built without.
extern int wcwidth(wchar_t character);
static inline int gatepass_wcwidth(wchar_t character) { return wcwidth(character); }
#endif
