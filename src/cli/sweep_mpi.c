/* sweep_mpi.c — a sweep over MPI ranks (./configure --with-mpi).
 *
 * The points go to the ranks by warm-start blocks (sweep_run.h): block k
 * of those from `first` on goes to rank k mod size, so each rank knows its
 * points without asking, and a point's warm starts come from the point
 * before it on the same rank.  Every rank, rank 0 too, runs its points in order; the
 * others send each result to rank 0 as it ends (non-blocking, so they go
 * on with the next point).  Rank 0 writes the results in point order, each
 * as soon as those before it are in: points.csv grows exactly as a single
 * process writes it, and what it holds after any interruption is a prefix
 * that --resume continues. */
#include <config.h>

#ifdef NESTMAP_MPI

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sweep_cli.h"
#include "nestmap/alloc.h"

enum { TAG_POINT = 1, TAG_STOP = 2 };

/* [u64 point][u32 len, bytes] for the row and each workload's layers
 * (len 0xffffffff: none). */
static char *pack(const nm_sweep_run *run, const nm_sweep_point_out *o, size_t *size)
{
    size_t n = 8 + 4 + strlen(o->row);
    for (int w = 0; w < run->sw.nworkloads; w++)
        n += 4 + (o->layers[w] ? strlen(o->layers[w]) : 0);
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    uint64_t pt = o->point;
    memcpy(p, &pt, 8);
    p += 8;
    for (int k = -1; k < run->sw.nworkloads; k++) {
        const char *s = k < 0 ? o->row : o->layers[k];
        uint32_t len = s ? (uint32_t)strlen(s) : 0xffffffffu;
        memcpy(p, &len, 4);
        p += 4;
        if (s) {
            memcpy(p, s, len);
            p += len;
        }
    }
    *size = n;
    return buf;
}

static int unpack(const nm_sweep_run *run, const char *buf, size_t size, nm_sweep_point_out *o)
{
    memset(o, 0, sizeof *o);
    const char *p = buf, *end = buf + size;
    if (size < 8)
        return 0;
    memcpy(&o->point, p, 8);
    p += 8;
    for (int k = -1; k < run->sw.nworkloads; k++) {
        uint32_t len;
        if (end - p < 4)
            return 0;
        memcpy(&len, p, 4);
        p += 4;
        if (len == 0xffffffffu)
            continue;
        if ((size_t)(end - p) < len)
            return 0;
        char *s = malloc((size_t)len + 1);
        if (!s)
            return 0;
        memcpy(s, p, len);
        s[len] = '\0';
        p += len;
        if (k < 0)
            o->row = s;
        else
            o->layers[k] = s;
    }
    return o->row != NULL;
}

/* Rank 0: results waiting for those before them. */
typedef struct collector {
    const nm_sweep_run *run;
    nm_sweep_dir *d;
    char **rows;
    nm_sweep_point_out *pending; /* by point - first */
    uint64_t first, next, total;
    int tty;
    int failed;
} collector;

static void flush(collector *c)
{
    while (c->next < c->total && c->pending[c->next - c->first].row) {
        nm_sweep_point_out *o = &c->pending[c->next - c->first];
        if (c->d && !c->failed && !nm_sweep_dir_add(c->d, c->run, o))
            c->failed = 1;
        if (c->rows) {
            c->rows[c->next] = o->row;
            o->row = NULL;
        }
        nm_sweep_point_out_free(o);
        c->next++;
        if (c->tty) {
            fprintf(stderr, "\rsweep: %llu of %llu points (MPI)\033[K",
                    (unsigned long long)c->next, (unsigned long long)c->total);
            fflush(stderr);
        }
    }
}

/* Takes one message; blocking when wait.  Returns 0 when none came, 1 for
 * a result, 2 when a rank stopped. */
static int receive(collector *c, int wait)
{
    MPI_Status stt;
    int flag = 1;
    if (wait)
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &stt);
    else
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &stt);
    if (!flag)
        return 0;
    int count;
    MPI_Get_count(&stt, MPI_CHAR, &count);
    char *buf = malloc(count > 0 ? (size_t)count : 1);
    if (!buf)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Recv(buf, count, MPI_CHAR, stt.MPI_SOURCE, stt.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int got = 2;
    if (stt.MPI_TAG == TAG_POINT) {
        nm_sweep_point_out o;
        if (!unpack(c->run, buf, (size_t)count, &o) || o.point < c->first || o.point >= c->total)
            MPI_Abort(MPI_COMM_WORLD, 2);
        c->pending[o.point - c->first] = o;
        got = 1;
    }
    free(buf);
    return got;
}

int sweep_mpi_run(const nm_sweep_run *run, nm_sweep_dir *d, char **rows, uint64_t first, int tty)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t total = run->sw.npoints;
    collector c;
    memset(&c, 0, sizeof c);
    c.run = run;
    c.d = d;
    c.rows = rows;
    c.first = c.next = first;
    c.total = total;
    c.tty = tty;
    if (rank == 0 && !(c.pending = nm_calloc(total > first ? total - first : 1, sizeof *c.pending)))
        MPI_Abort(MPI_COMM_WORLD, 2);
    /* This rank's points: the blocks from first's on, every size-th. */
    uint64_t mine = 0;
    for (uint64_t p = first, k = 0; p < total; p = nm_sweep_block_end(run, p), k++)
        if (k % (uint64_t)size == (uint64_t)rank)
            mine += nm_sweep_block_end(run, p) - p;
    /* Sends in flight (workers). */
    MPI_Request *req = nm_calloc(mine ? mine : 1, sizeof *req);
    char **sent = nm_calloc(mine ? mine : 1, sizeof *sent);
    if (!req || !sent)
        MPI_Abort(MPI_COMM_WORLD, 2);
    uint64_t nsent = 0;
    int rc = 0, stopped = 0;
    nm_sweep_point_out prev; /* the point before, for warm starts */
    memset(&prev, 0, sizeof prev);
    for (uint64_t p = first, k = 0; p < total && !stopped; p = nm_sweep_block_end(run, p), k++) {
        if (k % (uint64_t)size != (uint64_t)rank)
            continue;
        for (uint64_t q = p, e = nm_sweep_block_end(run, p); q < e && !stopped; q++) {
            nm_sweep_point_out o;
            int r = nm_sweep_run_next(run, q, &prev, &o);
            if (r != 0) {
                nm_sweep_point_out_free(&o);
                rc = r == 1 ? 130 : 2;
                stopped = 1;
                if (rank != 0) {
                    char b = 0;
                    MPI_Send(&b, 1, MPI_CHAR, 0, TAG_STOP, MPI_COMM_WORLD);
                }
            } else if (rank == 0) {
                c.pending[q - first] = o;
                while (receive(&c, 0) == 1)
                    ;
                flush(&c);
            } else {
                size_t n = 0;
                char *buf = pack(run, &o, &n);
                nm_sweep_point_out_free(&o);
                if (!buf || n > (size_t)0x7fffffff)
                    MPI_Abort(MPI_COMM_WORLD, 2);
                MPI_Isend(buf, (int)n, MPI_CHAR, 0, TAG_POINT, MPI_COMM_WORLD, &req[nsent]);
                sent[nsent++] = buf;
            }
        }
    }
    nm_sweep_point_out_free(&prev);
    if (rank == 0) {
        /* The rest from the others, in whatever order they come. */
        while (!stopped && c.next < total) {
            if (receive(&c, 1) == 2) {
                rc = 130;
                stopped = 1;
            }
            flush(&c);
        }
        flush(&c);
        if (tty)
            fputc('\n', stderr);
        if (stopped) {
            fprintf(stderr, "nestmap sweep: interrupted after %llu of %llu points%s\n",
                    (unsigned long long)c.next, (unsigned long long)total,
                    d ? "; --resume goes on from there" : "");
            /* The others may still be running or sending: end them. */
            nm_free(c.pending);
            MPI_Abort(MPI_COMM_WORLD, rc);
        }
        if (c.failed)
            rc = 2;
    } else {
        MPI_Waitall((int)nsent, req, MPI_STATUSES_IGNORE);
    }
    for (uint64_t i = 0; i < nsent; i++)
        free(sent[i]);
    nm_free(sent);
    nm_free(req);
    for (uint64_t i = 0; rank == 0 && i < total - first; i++)
        nm_sweep_point_out_free(&c.pending[i]);
    nm_free(c.pending);
    /* Everyone ends together; rank 0's code is the run's. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

#else
/* Without MPI this file compiles to nothing. */
typedef int nm_sweep_mpi_unused;
#endif
