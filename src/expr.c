/* expr.c — attribute expressions; see expr.h.
 *
 * A recursive-descent parser that evaluates as it parses.  `A if C else B`
 * reads A before C is known, so every rule takes a `live` flag: a branch
 * that is not taken is parsed for its syntax only (no lookups, no errors
 * from its values), and A is parsed again once C says it is taken.
 *
 *   ternary := or ['if' or 'else' ternary]
 *   or      := and {'or' and}          and := not {'and' not}
 *   not     := 'not' not | cmp         cmp := sum {relop sum}
 *   sum     := term {('+'|'-') term}   term := unary {('*'|'/'|'//'|'%') unary}
 *   unary   := ('-'|'+') unary | power power := atom ['**' unary]
 *   atom    := number | string | name | name '(' args ')' | '(' ternary ')'
 */
#include <config.h>

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nestmap/expr.h"
#include "nestmap/text.h"

#define MAX_DEPTH 64
#define MAX_ARGS 8

struct parser {
    const char *s;
    size_t len, pos;
    nm_expr_lookup lookup;
    void *ctx;
    nm_expr_error *e;
    int failed;      /* an evaluation error (in a live branch) */
    int syntax;      /* a syntax error: the text is not an expression */
    int unknown;     /* a name was not in scope */
    int depth;
};

static void fail(struct parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed || p->syntax)
        return;
    p->failed = 1;
    p->e->offset = at;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->e->msg, sizeof p->e->msg, fmt, ap);
    va_end(ap);
}

static void syntax(struct parser *p)
{
    if (!p->syntax) {
        p->syntax = 1;
        p->e->offset = p->pos;
    }
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->len && isspace((unsigned char)p->s[p->pos]))
        p->pos++;
}

static int is_name_char(char c, int first)
{
    return isalpha((unsigned char)c) || c == '_' || (!first && isdigit((unsigned char)c));
}

/* Whether the next token is the keyword kw (a whole word). */
static int keyword(struct parser *p, const char *kw)
{
    skip_ws(p);
    size_t n = strlen(kw);
    if (p->pos + n > p->len || strncmp(p->s + p->pos, kw, n))
        return 0;
    if (p->pos + n < p->len && is_name_char(p->s[p->pos + n], 0))
        return 0;
    p->pos += n;
    return 1;
}

/* Whether the next token is the operator op (and not a longer one). */
static int op(struct parser *p, const char *o)
{
    skip_ws(p);
    size_t n = strlen(o);
    if (p->pos + n > p->len || strncmp(p->s + p->pos, o, n))
        return 0;
    if (p->pos + n < p->len) {
        char next = p->s[p->pos + n];
        if ((!strcmp(o, "*") && next == '*') || (!strcmp(o, "/") && next == '/') ||
            ((!strcmp(o, "<") || !strcmp(o, ">")) && next == '='))
            return 0;
    }
    p->pos += n;
    return 1;
}

static nm_value num(double v)
{
    nm_value r = {0, v, NULL, 0, NULL};
    return r;
}

static nm_value qty(double v, const char *unit)
{
    nm_value r = {0, v, NULL, 0, unit};
    return r;
}

/* The units a number may carry (expr.h), longest first where one ends
 * another ("B/s" before "B"). */
static const char *const units[] = {"B/s", "B", "Hz", "s", NULL};

static int same_unit(const nm_value *a, const nm_value *b)
{
    return a->unit == b->unit; /* (the same static strings) */
}

static const char *unit_name(const char *u)
{
    return u ? u : "a plain number";
}

static int truthy(nm_value v)
{
    return v.is_str ? v.len > 0 : v.num != 0.0;
}

/* The number in v, or a located failure when it is a string. */
static double as_num(struct parser *p, nm_value v, size_t at, int live)
{
    if (!v.is_str)
        return v.num;
    if (live)
        fail(p, at, "'%.*s' is not a number", (int)(v.len > 40 ? 40 : v.len), v.str);
    return 0.0;
}

static nm_value ternary(struct parser *p, int live);

static nm_value call(struct parser *p, const char *name, size_t nlen, size_t at, int live)
{
    nm_value args[MAX_ARGS];
    int n = 0;
    skip_ws(p);
    if (!op(p, ")")) {
        for (;;) {
            nm_value v = ternary(p, live);
            if (n < MAX_ARGS)
                args[n] = v;
            n++;
            if (op(p, ")"))
                break;
            if (!op(p, ",")) {
                syntax(p);
                return num(0);
            }
        }
    }
    if (!live || p->syntax)
        return num(0);
    double a[MAX_ARGS];
    if (n > MAX_ARGS) {
        fail(p, at, "too many arguments");
        return num(0);
    }
    for (int i = 0; i < n; i++)
        a[i] = as_num(p, args[i], at, live);
    /* min, max, abs, ceil, floor, round, int and float keep a unit all
     * their arguments share; the others take plain numbers */
    const char *u = n && !args[0].is_str ? args[0].unit : NULL;
    for (int i = 1; i < n; i++)
        if (!args[i].is_str && args[i].unit != u) {
            fail(p, at, "%.*s() mixes %s and %s", (int)nlen, name, unit_name(u),
                 unit_name(args[i].unit));
            return num(0);
        }
    static const char *const keep[] = {"min", "max", "abs", "ceil", "floor", "round", "int",
                                       "float"};
    int keeps = 0;
    for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
        keeps |= strlen(keep[k]) == nlen && !strncmp(keep[k], name, nlen);
    if (u && !keeps) {
        fail(p, at, "%.*s() takes plain numbers (not %s)", (int)nlen, name, u);
        return num(0);
    }
    static const struct {
        const char *name;
        int nargs; /* -1: one or more */
    } fns[] = {{"log2", 1}, {"log10", 1}, {"log", -1}, {"exp", 1},  {"sqrt", 1},
               {"ceil", 1}, {"floor", 1}, {"round", 1}, {"abs", 1}, {"int", 1},
               {"float", 1}, {"min", -1}, {"max", -1}, {"pow", 2}};
    for (size_t f = 0; f < sizeof fns / sizeof *fns; f++) {
        if (strlen(fns[f].name) != nlen || strncmp(fns[f].name, name, nlen))
            continue;
        if ((fns[f].nargs >= 0 && n != fns[f].nargs) || (fns[f].nargs < 0 && n < 1) ||
            (!strcmp(fns[f].name, "log") && n > 2)) {
            fail(p, at, "%s() takes %s argument%s (got %d)", fns[f].name,
                 fns[f].nargs == 2 ? "2" : fns[f].nargs == 1 ? "1" : "1 or more",
                 fns[f].nargs == 1 ? "" : "s", n);
            return num(0);
        }
        const char *fn = fns[f].name;
        double r = 0.0;
        if (!strcmp(fn, "log2") || !strcmp(fn, "log10") || !strcmp(fn, "log") ||
            !strcmp(fn, "sqrt")) {
            if (a[0] < 0 || (a[0] == 0 && strcmp(fn, "sqrt"))) {
                fail(p, at, "%s() of %g is undefined", fn, a[0]);
                return num(0);
            }
        }
        if (!strcmp(fn, "log2"))
            r = log2(a[0]);
        else if (!strcmp(fn, "log10"))
            r = log10(a[0]);
        else if (!strcmp(fn, "log"))
            r = n == 2 ? log(a[0]) / log(a[1]) : log(a[0]);
        else if (!strcmp(fn, "exp"))
            r = exp(a[0]);
        else if (!strcmp(fn, "sqrt"))
            r = sqrt(a[0]);
        else if (!strcmp(fn, "ceil"))
            r = ceil(a[0]);
        else if (!strcmp(fn, "floor") || !strcmp(fn, "int"))
            r = !strcmp(fn, "int") ? trunc(a[0]) : floor(a[0]);
        else if (!strcmp(fn, "round"))
            r = nearbyint(a[0]); /* Python rounds halves to even, as does the default mode */
        else if (!strcmp(fn, "abs"))
            r = fabs(a[0]);
        else if (!strcmp(fn, "float"))
            r = a[0];
        else if (!strcmp(fn, "pow"))
            r = pow(a[0], a[1]);
        else { /* min, max */
            r = a[0];
            for (int i = 1; i < n; i++)
                r = !strcmp(fn, "min") ? fmin(r, a[i]) : fmax(r, a[i]);
        }
        return qty(r, u);
    }
    fail(p, at, "unknown function '%.*s'", (int)nlen, name);
    return num(0);
}

static nm_value atom(struct parser *p, int live)
{
    skip_ws(p);
    if (p->pos >= p->len) {
        syntax(p);
        return num(0);
    }
    size_t at = p->pos;
    char c = p->s[p->pos];
    if (c == '(') {
        p->pos++;
        nm_value v = ternary(p, live);
        if (!op(p, ")"))
            syntax(p);
        return v;
    }
    if (c == '"' || c == '\'') {
        size_t end = p->pos + 1;
        while (end < p->len && p->s[end] != c)
            end++;
        if (end >= p->len) {
            syntax(p);
            return num(0);
        }
        nm_value v = {1, 0.0, p->s + p->pos + 1, end - p->pos - 1, NULL};
        p->pos = end + 1;
        return v;
    }
    if (isdigit((unsigned char)c) || c == '.') {
        char buf[64];
        size_t n = 0;
        while (p->pos + n < p->len && n < sizeof buf - 1 &&
               (isalnum((unsigned char)p->s[p->pos + n]) || p->s[p->pos + n] == '.' ||
                ((p->s[p->pos + n] == '-' || p->s[p->pos + n] == '+') && n > 0 &&
                 (p->s[p->pos + n - 1] == 'e' || p->s[p->pos + n - 1] == 'E'))))
            n++;
        /* a rate's "/s" belongs to the number ("400GB/s") */
        if (n >= 1 && n + 2 < sizeof buf && p->s[p->pos + n - 1] == 'B' &&
            p->pos + n + 1 < p->len && p->s[p->pos + n] == '/' && p->s[p->pos + n + 1] == 's' &&
            (p->pos + n + 2 >= p->len || !is_name_char(p->s[p->pos + n + 2], 0)))
            n += 2;
        memcpy(buf, p->s + p->pos, n);
        buf[n] = '\0';
        char *end;
        double v = strtod(buf, &end);
        if (end != buf && *end) { /* a quantity with its unit ("64KiB"), or not a number */
            for (int u = 0; units[u]; u++) {
                double q;
                if (nm_text_unit_value(buf, units[u], &q)) {
                    p->pos += n;
                    return qty(q, units[u]);
                }
            }
        }
        if (end == buf || *end) { /* "45nm": not a number, so not an expression */
            syntax(p);
            return num(0);
        }
        p->pos += n;
        return num(v);
    }
    if (is_name_char(c, 1)) {
        size_t n = 0;
        while (p->pos + n < p->len && is_name_char(p->s[p->pos + n], n == 0))
            n++;
        const char *name = p->s + p->pos;
        p->pos += n;
        if (op(p, "("))
            return call(p, name, n, at, live);
        if (n == 4 && !strncmp(name, "True", 4))
            return num(1);
        if (n == 5 && !strncmp(name, "False", 5))
            return num(0);
        if (!live)
            return num(0);
        nm_value v;
        if (p->lookup && p->lookup(p->ctx, name, n, &v))
            return v;
        if (!p->unknown) {
            p->unknown = 1;
            snprintf(p->e->name, sizeof p->e->name, "%.*s", (int)(n < 63 ? n : 63), name);
        }
        fail(p, at, "unknown name '%.*s'", (int)(n < 60 ? n : 60), name);
        return num(0);
    }
    syntax(p);
    return num(0);
}

static nm_value unary(struct parser *p, int live);

static nm_value power(struct parser *p, int live)
{
    nm_value base = atom(p, live);
    size_t at = p->pos;
    if (op(p, "**")) {
        nm_value ex = unary(p, live);
        if (!live)
            return num(0);
        if (base.unit || ex.unit) {
            fail(p, at, "'**' takes plain numbers (not %s)", unit_name(base.unit ? base.unit
                                                                                  : ex.unit));
            return num(0);
        }
        return num(pow(as_num(p, base, at, live), as_num(p, ex, at, live)));
    }
    return base;
}

static nm_value unary(struct parser *p, int live)
{
    if (++p->depth > MAX_DEPTH) {
        syntax(p);
        return num(0);
    }
    size_t at = p->pos;
    nm_value r;
    if (op(p, "-")) {
        nm_value v = unary(p, live);
        r = qty(-as_num(p, v, at, live), v.is_str ? NULL : v.unit);
    } else if (op(p, "+")) {
        nm_value v = unary(p, live);
        r = qty(as_num(p, v, at, live), v.is_str ? NULL : v.unit);
    } else
        r = power(p, live);
    p->depth--;
    return r;
}

static nm_value term(struct parser *p, int live)
{
    nm_value l = unary(p, live);
    for (;;) {
        size_t at = p->pos;
        int o = op(p, "//") ? 'f' : op(p, "*") ? '*' : op(p, "/") ? '/' : op(p, "%") ? '%' : 0;
        if (!o)
            return l;
        nm_value r = unary(p, live);
        if (!live)
            continue;
        double a = as_num(p, l, at, live), b = as_num(p, r, at, live);
        if (o != '*' && b == 0.0) {
            fail(p, at, "division by zero");
            return num(0);
        }
        /* A quantity scales by a plain number; two of one unit divide to a
         * plain ratio (and % keeps the unit); nothing else has a unit here. */
        const char *u = NULL;
        if (o == '*' && l.unit && r.unit) {
            fail(p, at, "'*' multiplies %s by %s: one of them must be a plain number",
                 l.unit, r.unit);
            return num(0);
        } else if (o == '*') {
            u = l.unit ? l.unit : r.unit;
        } else if (o == '/' && !l.unit && (r.unit == units[2] || r.unit == units[3])) {
            u = r.unit == units[2] ? units[3] : units[2]; /* 1 / 1GHz is 1 ns, and back */
        } else if (r.unit && !same_unit(&l, &r)) {
            fail(p, at, "'%s' divides %s by %s", o == 'f' ? "//" : o == '%' ? "%" : "/",
                 unit_name(l.unit), r.unit);
            return num(0);
        } else {
            u = r.unit ? (o == '%' ? l.unit : NULL) : l.unit;
        }
        l = qty(o == '*' ? a * b : o == '/' ? a / b : o == 'f' ? floor(a / b)
                                                              : a - b * floor(a / b), u);
    }
}

static nm_value sum(struct parser *p, int live)
{
    nm_value l = term(p, live);
    for (;;) {
        size_t at = p->pos;
        int o = op(p, "+") ? '+' : op(p, "-") ? '-' : 0;
        if (!o)
            return l;
        nm_value r = term(p, live);
        if (!live)
            continue;
        if (!l.is_str && !r.is_str && !same_unit(&l, &r)) {
            fail(p, at, "'%c' %s %s and %s", o, o == '+' ? "adds" : "subtracts",
                 unit_name(l.unit), unit_name(r.unit));
            return num(0);
        }
        l = qty(o == '+' ? as_num(p, l, at, live) + as_num(p, r, at, live)
                         : as_num(p, l, at, live) - as_num(p, r, at, live), l.unit);
    }
}

static nm_value cmp(struct parser *p, int live)
{
    nm_value l = sum(p, live);
    int result = 1, any = 0;
    for (;;) {
        size_t at = p->pos;
        static const char *const ops[] = {"<=", ">=", "==", "!=", "<", ">"};
        int o = -1;
        for (int i = 0; i < 6 && o < 0; i++)
            if (op(p, ops[i]))
                o = i;
        if (o < 0)
            return any ? num(result) : l;
        nm_value r = sum(p, live);
        any = 1;
        if (!live)
            continue;
        int t;
        if (l.is_str && r.is_str && (o == 2 || o == 3)) {
            int eq = l.len == r.len && !strncmp(l.str, r.str, l.len);
            t = o == 2 ? eq : !eq;
        } else {
            if (!l.is_str && !r.is_str && !same_unit(&l, &r)) {
                fail(p, at, "compares %s with %s", unit_name(l.unit), unit_name(r.unit));
                return num(0);
            }
            double a = as_num(p, l, at, live), b = as_num(p, r, at, live);
            t = o == 0 ? a <= b : o == 1 ? a >= b : o == 2 ? a == b : o == 3 ? a != b
                : o == 4 ? a < b : a > b;
        }
        result = result && t;
        l = r;
    }
}

static nm_value not_(struct parser *p, int live)
{
    if (keyword(p, "not"))
        return num(!truthy(not_(p, live)));
    return cmp(p, live);
}

static nm_value and_(struct parser *p, int live)
{
    nm_value l = not_(p, live);
    while (keyword(p, "and")) {
        int go = live && truthy(l);
        nm_value r = not_(p, go);
        if (live)
            l = truthy(l) ? r : l;
    }
    return l;
}

static nm_value or_(struct parser *p, int live)
{
    nm_value l = and_(p, live);
    while (keyword(p, "or")) {
        int go = live && !truthy(l);
        nm_value r = and_(p, go);
        if (live)
            l = truthy(l) ? l : r;
    }
    return l;
}

static nm_value ternary(struct parser *p, int live)
{
    if (++p->depth > MAX_DEPTH) {
        syntax(p);
        return num(0);
    }
    size_t start = p->pos;
    nm_value a = or_(p, 0); /* syntax only until the condition is known */
    nm_value r = a;
    if (keyword(p, "if")) {
        nm_value c = or_(p, live);
        if (!keyword(p, "else")) {
            syntax(p);
            p->depth--;
            return num(0);
        }
        int take = live && truthy(c);
        nm_value b = ternary(p, live && !take);
        if (take) {
            size_t end = p->pos;
            p->pos = start;
            r = or_(p, 1);
            p->pos = end;
        } else {
            r = b;
        }
    } else if (live) {
        size_t end = p->pos;
        p->pos = start;
        r = or_(p, 1);
        p->pos = end;
    }
    p->depth--;
    return r;
}

nm_expr_status nm_expr_eval(const char *text, size_t len, nm_expr_lookup lookup, void *ctx,
                            nm_value *out, nm_expr_error *e)
{
    struct parser p = {text, len, 0, lookup, ctx, e, 0, 0, 0, 0};
    memset(e, 0, sizeof *e);
    nm_value v = ternary(&p, 1);
    skip_ws(&p);
    if (!p.syntax && p.pos < p.len)
        syntax(&p);
    /* Trimmed text, for the string cases. */
    size_t b = 0, n = len;
    while (b < n && isspace((unsigned char)text[b]))
        b++;
    while (n > b && isspace((unsigned char)text[n - 1]))
        n--;
    nm_value s = {1, 0.0, text + b, n - b, NULL};
    if (p.syntax) {
        *out = s;
        return NM_EXPR_STRING;
    }
    if (p.failed) {
        /* A lone unknown word is a string (`type: LPDDR4`). */
        int word = n > b && is_name_char(text[b], 1);
        for (size_t i = b; i < n && word; i++)
            word = is_name_char(text[i], 0);
        if (word && p.unknown) {
            *out = s;
            return NM_EXPR_STRING;
        }
        return NM_EXPR_ERROR;
    }
    *out = v;
    return NM_EXPR_OK;
}
