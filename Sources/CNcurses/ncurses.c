// ncursesw (and the libtinfo it loads) loaded at the first call of one of
// these functions, when the terminal UI starts (see CLoader.h).
// The functions, not curses.h's macros of the same names.
#define NCURSES_NOMACROS 1
// wcwidth, which shim.h uses, is declared only with it.
#define _GNU_SOURCE 1
#include "CLoader.h"
#include "shim.h"

#define FUNCTIONS(F, P) \
    F(int, cbreak, (void), ()) \
    F(int, clearok, (WINDOW *w, bool on), (w, on)) \
    F(int, curs_set, (int visibility), (visibility)) \
    P(delscreen, (SCREEN *s), (s)) \
    F(int, doupdate, (void), ()) \
    F(int, endwin, (void), ()) \
    F(int, flushinp, (void), ()) \
    F(bool, has_colors, (void), ()) \
    F(int, init_pair, (short pair, short foreground, short background), (pair, foreground, background)) \
    F(int, intrflush, (WINDOW *w, bool on), (w, on)) \
    F(int, getmouse, (MEVENT *event), (event)) \
    F(int, keypad, (WINDOW *w, bool on), (w, on)) \
    F(int, mouseinterval, (int milliseconds), (milliseconds)) \
    F(mmask_t, mousemask, (mmask_t mask, mmask_t *old), (mask, old)) \
    F(int, mvwadd_wch, (WINDOW *w, int y, int x, const cchar_t *c), (w, y, x, c)) \
    F(SCREEN *, newterm, (const char *type, FILE *out, FILE *in), (type, out, in)) \
    F(int, nodelay, (WINDOW *w, bool on), (w, on)) \
    F(int, noecho, (void), ()) \
    F(int, nonl, (void), ()) \
    F(int, refresh, (void), ()) \
    F(int, resizeterm, (int lines, int columns), (lines, columns)) \
    F(int, set_escdelay, (int ms), (ms)) \
    F(SCREEN *, set_term, (SCREEN *s), (s)) \
    F(int, setcchar, (cchar_t *c, const wchar_t *text, const attr_t a, short pair, const void *options), \
        (c, text, a, pair, options)) \
    F(int, start_color, (void), ()) \
    F(char *, tigetstr, (const char *name), (name)) \
    F(int, use_default_colors, (void), ()) \
    F(int, werase, (WINDOW *w), (w)) \
    F(int, wget_wch, (WINDOW *w, wint_t *c), (w, c)) \
    F(int, wmove, (WINDOW *w, int y, int x), (w, y, x)) \
    F(int, wnoutrefresh, (WINDOW *w), (w))
#define VARIABLES(V) V(stdscr) V(curscr) V(LINES) V(COLS)

FOB_LIBRARY_DEFINE("libncursesw.so.6", FUNCTIONS, VARIABLES)

WINDOW *fob_stdscr(void) { return *(WINDOW **)FOB_LIBRARY_VARIABLE(stdscr); }
WINDOW *fob_curscr(void) { return *(WINDOW **)FOB_LIBRARY_VARIABLE(curscr); }
int fob_lines(void) { return *(int *)FOB_LIBRARY_VARIABLE(LINES); }
int fob_cols(void) { return *(int *)FOB_LIBRARY_VARIABLE(COLS); }
