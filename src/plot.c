/* plot.c — what the writers of plots share (plot.h): gnuplot scripts are
 * written next to their data (so a user can restyle them) and rendered here
 * when gnuplot is installed. */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nestmap/plot.h"

void nm_plot_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
    fputc('\'', f);
}

void nm_plot_terminals(FILE *f, int width, int height)
{
    fprintf(f,
            "do for [k = 1:2] {\n"
            "  if (k == 1) { set terminal pngcairo noenhanced size %d,%d font ',10'; "
            "set output base.'.png' }\n"
            "  else { set terminal svg noenhanced size %d,%d font ',10' dynamic; "
            "set output base.'.svg' }\n",
            width, height, width, height);
}

void nm_plot_series_styles(FILE *f)
{
    /* Okabe and Ito's colour-universal-design set ("Color Universal Design:
     * how to make figures and presentations that are friendly to colorblind
     * people", 2002/2008), black first. */
    fputs("colours = '#000000 #E69F00 #56B4E9 #009E73 #0072B2 #D55E00 #CC79A7 #999999'\n"
          "do for [k = 1:16] { set linetype k lc rgb word(colours, (k - 1) % 8 + 1) "
          "lw 1.5 dt 1 + (k > 8) pt 7 - (k > 8) ps 1.2 }\n", f);
}

FILE *nm_plot_open(const char *dir, const char *name)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return fopen(path, "w");
}

int nm_plot_have_gnuplot(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(buf, sizeof buf, "%.*s/gnuplot", (int)n, path);
        if (n && access(buf, X_OK) == 0)
            return 1;
        path += n + (path[n] == ':');
    }
    return 0;
}

nm_status nm_plot_render(const char *dir, const char *const *names, int n, nm_error *err)
{
    char log[4200];
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);
    unlink(log);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0)
            return nm_error_set(err, NM_ERR_IO, dir, 0, 0, "cannot start gnuplot");
        if (pid == 0) {
            char script[4096];
            snprintf(script, sizeof script, "%s.gp", names[i]);
            int fd = -1;
            if (chdir(dir) == 0)
                fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0666);
            if (fd >= 0) {
                dup2(fd, STDERR_FILENO);
                dup2(fd, STDOUT_FILENO);
                execlp("gnuplot", "gnuplot", script, (char *)NULL);
            }
            _exit(127);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            return nm_error_set(err, NM_ERR_IO, NULL, 0, 0, "gnuplot failed on %s/%s.gp (see "
                                "%s/gnuplot.log)", dir, names[i], dir);
        }
    }
    return NM_OK;
}
