/* sparse_banded.c — the banded density model (sparse.h, sparse_int.h).
 *
 * A square tensor of side W whose nonzeros are the elements (r, c) with
 * |r - c| <= band: a diagonal matrix at band 0, a tridiagonal one at 1.
 * Unlike the other models, a tile's count depends on where the band
 * crosses it, so every question is asked of a tile's box ("mold": rows x
 * cols, anchored at the origin) and answered over the tile positions of
 * the tensor's grid of such boxes:
 *
 *          cols ->
 *   rows  [X X . . .]   row group 0   (warm-up: the band enters)
 *     |   [X X X . .]   row group 1
 *     v   [. X X X .]   row group 2   (steady: one representative row
 *         [. . X X X]                  stands for the rest)
 *         [. . . X X]   cool-down: the warm-up's mirror image
 *
 * Semantics learnt from Timeloop's BandedDistribution (NVlabs/timeloop,
 * src/workload/density-models/banded-distribution.cpp, read at its HEAD;
 * written here): the distribution of a box's count is taken over the
 * first ceil(band / rows) row groups (each counted twice: itself and its
 * mirror) and one steady-state row group counted for all the others; a
 * box's count given that its enclosing tile holds o nonzeros is read off
 * a representative tile holding o, the first such in that scan; the
 * expected count is the box's size times the band's density; a compressed
 * tile's capacity is one row of the band.
 *
 * Where Timeloop's code slips, nestmap takes what it plainly means (no
 * Timeloop run exercises these; the conformance corpus holds no banded
 * case):
 *   - with no steady state (2 ceil(band / rows) >= the row groups) the
 *     warm-up rows and their mirrors overlap and Timeloop's counts exceed
 *     the grid (probabilities summing above 1): every row group is counted
 *     once instead;
 *   - the sub-boxes of a representative tile are placed from its corner
 *     (Timeloop adds the corner's offset twice);
 *   - the nonempty element tiles of a fiber are its element tiles times
 *     the probability that one is nonempty (Timeloop multiplies by the
 *     probability that one is empty);
 *   - a band wider than the tensor holds the whole tensor (Timeloop's
 *     unsigned count wraps); counts no tile position has are never the
 *     largest (Timeloop's map can keep a key with no tile).
 */
#include "sparse_int.h"

#include <math.h>
#include <string.h>

#include "nestmap/alloc.h"

uint64_t nm_band_total(int64_t side, int64_t band)
{
    if (side <= 0)
        return 0;
    int64_t b = band < side - 1 ? band : side - 1;
    /* the diagonal, and 2 diagonals of W - d for d = 1..b */
    return (uint64_t)side + 2u * (uint64_t)(b * side - b * (b + 1) / 2);
}

uint64_t nm_band_box_nnz(int64_t band, int64_t r0, int64_t r1, int64_t c0, int64_t c1)
{
    /* elements (r, c), r0 <= r < r1, max(c0, 0) <= c < c1, |r - c| <= band:
     * row by row or diagonal by diagonal, whichever is fewer */
    if (c0 < 0)
        c0 = 0;
    if (r1 <= r0 || c1 <= c0 || c0 > r1 - 1 + band || c1 - 1 < r0 - band)
        return 0;
    uint64_t n = 0;
    if (r1 - r0 <= 2 * band + 1) {
        for (int64_t r = r0; r < r1; r++) {
            int64_t lo = r - band > c0 ? r - band : c0, hi = r + band + 1 < c1 ? r + band + 1 : c1;
            if (lo < hi)
                n += (uint64_t)(hi - lo);
        }
    } else {
        for (int64_t d = -band; d <= band; d++) { /* c = r + d */
            int64_t lo = r0 > c0 - d ? r0 : c0 - d, hi = r1 < c1 - d ? r1 : c1 - d;
            if (lo < hi)
                n += (uint64_t)(hi - lo);
        }
    }
    return n;
}

/* The grid of a box over the tensor and the row groups scanned, each with
 * its weight (how many row groups it stands for). */
typedef struct band_grid {
    int64_t rows, cols;  /* the box */
    int64_t nr, nc;      /* row and column groups */
    int64_t scan;        /* row groups scanned */
    int64_t warm;        /* warm-up row groups; -1: every row scanned once */
    int64_t steady;
} band_grid;

static band_grid grid_of(const nm_density *dm, int64_t rows, int64_t cols)
{
    band_grid g;
    g.rows = rows > 0 ? rows : 1;
    g.cols = cols > 0 ? cols : 1;
    g.nr = dm->side / g.rows;
    g.nc = dm->side / g.cols;
    if (g.nr < 1)
        g.nr = 1;
    if (g.nc < 1)
        g.nc = 1;
    g.warm = (dm->band + g.rows - 1) / g.rows;
    if (2 * g.warm >= g.nr) { /* no steady state: every row group once */
        g.warm = -1;
        g.steady = 0;
        g.scan = g.nr;
    } else {
        g.steady = g.nr - 2 * g.warm;
        g.scan = g.warm + 1;
    }
    return g;
}

static uint64_t row_weight(const band_grid *g, int64_t rg)
{
    if (g->warm < 0)
        return 1;
    return rg >= g->warm ? (uint64_t)g->steady : 2u;
}

/* Whether column group cg of row group rg lies wholly right of the band
 * (and so do all after it). */
static int right_of_band(const nm_density *dm, const band_grid *g, int64_t rg, int64_t cg)
{
    return cg * g->cols > rg * g->rows + g->rows - 1 + dm->band;
}

static uint64_t box_at(const nm_density *dm, const band_grid *g, int64_t rg, int64_t cg)
{
    return nm_band_box_nnz(dm->band, rg * g->rows, (rg + 1) * g->rows, cg * g->cols,
                           (cg + 1) * g->cols);
}

double nm_band_p_empty(const nm_density *dm, int64_t rows, int64_t cols)
{
    band_grid g = grid_of(dm, rows, cols);
    uint64_t empty = 0;
    for (int64_t rg = 0; rg < g.scan; rg++) {
        uint64_t w = row_weight(&g, rg);
        for (int64_t cg = 0; cg < g.nc; cg++) {
            if (right_of_band(dm, &g, rg, cg)) {
                empty += w * (uint64_t)(g.nc - cg);
                break;
            }
            if (!box_at(dm, &g, rg, cg))
                empty += w;
        }
    }
    return (double)empty / ((double)g.nr * (double)g.nc);
}

uint64_t nm_band_max(const nm_density *dm, int64_t rows, int64_t cols)
{
    band_grid g = grid_of(dm, rows, cols);
    uint64_t most = 0;
    for (int64_t rg = 0; rg < g.scan; rg++) {
        if (!row_weight(&g, rg))
            continue;
        for (int64_t cg = 0; cg < g.nc && !right_of_band(dm, &g, rg, cg); cg++) {
            uint64_t k = box_at(dm, &g, rg, cg);
            if (k > most)
                most = k;
        }
    }
    return most;
}

/* Adds weight w to count k in the ascending table. */
static int table_add(nm_band_pdf *t, uint64_t k, uint64_t w)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->occ[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->n && t->occ[lo] == k) {
        t->w[lo] += w;
        return 1;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        uint64_t *o = nm_realloc_array(t->occ, cap, sizeof *o);
        if (!o)
            return 0;
        t->occ = o;
        uint64_t *ww = nm_realloc_array(t->w, cap, sizeof *ww);
        if (!ww)
            return 0;
        t->w = ww;
        double *p = nm_realloc_array(t->p, cap, sizeof *p);
        if (!p)
            return 0;
        t->p = p;
        t->cap = cap;
    }
    memmove(t->occ + lo + 1, t->occ + lo, (t->n - lo) * sizeof *t->occ);
    memmove(t->w + lo + 1, t->w + lo, (t->n - lo) * sizeof *t->w);
    t->occ[lo] = k;
    t->w[lo] = w;
    t->n++;
    return 1;
}

int nm_band_pdf_make(const nm_density *dm, int64_t rows, int64_t cols, nm_band_pdf *t)
{
    t->n = 0;
    band_grid g = grid_of(dm, rows, cols);
    for (int64_t rg = 0; rg < g.scan; rg++) {
        uint64_t w = row_weight(&g, rg);
        if (!w)
            continue;
        for (int64_t cg = 0; cg < g.nc; cg++) {
            if (right_of_band(dm, &g, rg, cg)) {
                if (!table_add(t, 0, w * (uint64_t)(g.nc - cg)))
                    return 0;
                break;
            }
            if (!table_add(t, box_at(dm, &g, rg, cg), w))
                return 0;
        }
    }
    double all = (double)g.nr * (double)g.nc;
    for (size_t i = 0; i < t->n; i++)
        t->p[i] = (double)t->w[i] / all;
    return 1;
}

void nm_band_pdf_fini(nm_band_pdf *t)
{
    nm_free(t->occ);
    nm_free(t->w);
    nm_free(t->p);
    memset(t, 0, sizeof *t);
}

double nm_band_p_empty_given(const nm_density *dm, const nm_dtile *sub, const nm_dtile *tile,
                             uint64_t o)
{
    /* the representative: the first tile of the scan holding o */
    band_grid g = grid_of(dm, tile->rows, tile->cols);
    int64_t r0 = -1, c0 = -1;
    for (int64_t rg = 0; rg < g.scan && r0 < 0; rg++) {
        if (!row_weight(&g, rg))
            continue;
        for (int64_t cg = 0; cg < g.nc; cg++) {
            int right = right_of_band(dm, &g, rg, cg);
            if (right ? o == 0 : box_at(dm, &g, rg, cg) == o) {
                r0 = rg * g.rows;
                c0 = cg * g.cols;
                break;
            }
            if (right)
                break;
        }
    }
    if (r0 < 0) /* no tile holds o (never asked by the model) */
        return 0.0;
    int64_t sr = sub->rows > 0 ? sub->rows : 1, sc = sub->cols > 0 ? sub->cols : 1;
    int64_t nr = g.rows / sr, nc = g.cols / sc;
    if (nr < 1 || nc < 1)
        return 0.0;
    /* a box [ra, rb) x [ca, cb) meets the band iff c - r, which takes every
     * value between its least and its most over the box, reaches [-band,
     * band]: ca - (rb - 1) <= band and (cb - 1) - ra >= -band.  Per row of
     * boxes, the columns j that do form one run. */
    uint64_t nonempty = 0;
    for (int64_t i = 0; i < nr; i++) {
        int64_t ra = r0 + i * sr, rb = ra + sr;
        /* c0 + j sc <= rb - 1 + band, and c0 + (j + 1) sc - 1 >= ra - band */
        int64_t hi = rb - 1 + dm->band - c0, lo = ra - dm->band - c0 + 1 - sc;
        if (hi < 0)
            continue;
        int64_t jhi = hi / sc, jlo = lo <= 0 ? 0 : (lo + sc - 1) / sc;
        if (jhi > nc - 1)
            jhi = nc - 1;
        if (jlo <= jhi)
            nonempty += (uint64_t)(jhi - jlo + 1);
    }
    return (double)((uint64_t)nr * (uint64_t)nc - nonempty) / ((double)nr * (double)nc);
}

uint64_t nm_band_elements(const nm_density *dm, const nm_dtile *fiber, const nm_dtile *elem)
{
    if (!elem->n)
        return 0;
    uint64_t most = nm_band_max(dm, fiber->rows, fiber->cols);
    double p = nm_band_p_empty_given(dm, elem, fiber, most);
    return (uint64_t)ceil((double)(fiber->n / elem->n) * (1.0 - p));
}
