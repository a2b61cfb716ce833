#ifndef FOB_CNCURSES_SHIM_H
#define FOB_CNCURSES_SHIM_H
// get_wch and wint_t are declared only with the wide-character API switched on.
#define NCURSES_WIDECHAR 1
#define _XOPEN_SOURCE_EXTENDED 1
#include <locale.h>
#include <wchar.h>
#include <ncursesw/curses.h>
#include <sys/ioctl.h>

// Swift 6 rejects C globals such as stdscr: read them through functions,
// which also load ncurses at first use (ncurses.c).
WINDOW *fob_stdscr(void);
WINDOW *fob_curscr(void);
// getmaxyx is a macro.
int fob_lines(void);
int fob_cols(void);
// Attribute macros do not import.
static inline attr_t fob_a_bold(void) { return A_BOLD; }
static inline attr_t fob_a_reverse(void) { return A_REVERSE; }
static inline attr_t fob_a_underline(void) { return A_UNDERLINE; }
static inline attr_t fob_a_dim(void) { return A_DIM; }
// A_NORMAL is built from NCURSES_BITS, a macro expression that does not import.
static inline attr_t fob_a_normal(void) { return A_NORMAL; }
// wcwidth is declared only under _XOPEN_SOURCE, which the Glibc module does not set.
static inline int fob_wcwidth(unsigned int c) { return wcwidth((wchar_t)c); }

// ioctl is variadic, which Swift cannot call: the window size (TIOCGWINSZ) of fd in rows and columns.
static inline int fob_winsize(int fd, int *rows, int *cols) { struct winsize w; int r = ioctl(fd, TIOCGWINSZ, &w); if (r == 0) { *rows = w.ws_row; *cols = w.ws_col; } return r; }
// The mouse events the terminal UI asks for (the button macros do not
// import): the left button pressed, the wheel turned up (4) and down (5).
static inline mmask_t fob_mouse_events(void) { return BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED; }
// The mouse event ncurses read (after KEY_MOUSE): its cell and which of
// fob_mouse_events it is (1 left button, 4 wheel up, 5 wheel down, 0
// another); -1 when there is none.
static inline int fob_read_mouse(int *row, int *column, int *button) {
    MEVENT event;
    if (getmouse(&event) != OK) return -1;
    *row = event.y;
    *column = event.x;
    *button = (event.bstate & BUTTON4_PRESSED) ? 4 : (event.bstate & BUTTON5_PRESSED) ? 5
        : (event.bstate & BUTTON1_PRESSED) ? 1 : 0;
    return 0;
}
#endif
