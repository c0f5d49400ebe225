/* check_template.c — Timeloop users' files as timeloopfe reads them: Jinja2
 * templates (rendered text, located errors, includes), `<<<` merges,
 * `variables:` and attribute expressions, compound classes over several
 * files, and the v0.4 containers and inline constraints. */
#include <config.h>

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nestmap/alloc.h"
#include "nestmap/mapspace.h"
#include "nestmap/spec.h"
#include "nestmap/template.h"
#include "nestmap/yaml.h"
#include "testutil.h"

/* A scratch folder per test, its files written by put(). */
static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/nestmap-tmpl.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *put(const char *name, const char *text)
{
    static char path[8][320];
    static int k;
    char *p = path[k++ % 8];
    snprintf(p, 320, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return p;
}

static nm_status render(const char *text, const nm_tmpl_var *vars, size_t n, nm_tmpl_out *out,
                        nm_error *err)
{
    const char *path = put("t.yaml.jinja2", text);
    nm_arena *a = nm_arena_new();
    nm_status st = nm_tmpl_render(path, 1, text, strlen(text), vars, n, NULL, 0, NULL, a, out, err);
    /* The line map's file names live in the arena: copy what the tests read. */
    static char file0[320];
    snprintf(file0, sizeof file0, "%s", out->nlines ? out->lines[0].file : "");
    if (out->nlines)
        out->lines[0].file = file0;
    for (size_t i = 1; i < out->nlines; i++)
        out->lines[i].file = file0;
    nm_arena_free(a);
    return st;
}

START_TEST(expressions_and_blocks)
{
    nm_tmpl_var v[] = {{"mac_class", "intmac"}, {"width", "16"}, {"flag", "True"}};
    nm_tmpl_out o;
    nm_error err;
    ck_assert_int_eq(render("class: {{mac_class}}\n"
                            "w: {{ width * 2 + 1 }}\n"
                            "{% set n = 'pe' ~ width %}name: {{n | upper}}\n"
                            "{% if flag and width > 8 %}big: {{ width // 3 }}{% else %}small{% endif %}\n"
                            "{% for x in [1, 2, 3] %}- {{loop.index}}:{{x}}{% if not loop.last %},{% endif %}{% endfor %}\n"
                            "d: {{ missing | default('none') }} {{ 'yes' if missing is not defined else 'no' }}\n"
                            "{# a comment #}f: {{ 1e-9 }} {{ 7 / 2 }} {{ [1, 'a'] }}\n"
                            "t: {%- if True %} x {%- endif %}\n",
                            v, 3, &o, &err),
                     NM_OK);
    ck_assert_str_eq(o.text, "class: intmac\n"
                             "w: 33\n"
                             "name: PE16\n"
                             "big: 5\n"
                             "- 1:1,- 2:2,- 3:3\n"
                             "d: none yes\n"
                             "f: 1e-09 3.5 [1, 'a']\n"
                             "t: x\n");
    ck_assert_uint_eq(o.nlines, 9);
    ck_assert_int_eq(o.lines[3].line, 4);
    nm_tmpl_out_fini(&o);
}
END_TEST

START_TEST(errors_point_into_the_template)
{
    nm_tmpl_out o;
    nm_error err;
    ck_assert_int_eq(render("a: 1\nb: {{ 2 +\n   undefined_thing }}\n", NULL, 0, &o, &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 3);
    ck_assert_int_eq(err.col, 4);
    ck_assert_ptr_nonnull(strstr(err.msg, "undefined variable 'undefined_thing'"));
    ck_assert_ptr_nonnull(strstr(err.msg, "--jinja undefined_thing=VALUE"));
    ck_assert_int_eq(render("a: 1\n{% if x %}\nb: 2\n", (nm_tmpl_var[]){{"x", "1"}}, 1, &o, &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "never closed by '{% endif %}'"));
    ck_assert_int_eq(render("{{ x | frobnicate }}", (nm_tmpl_var[]){{"x", "1"}}, 1, &o, &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown filter 'frobnicate'"));
    ck_assert_int_eq(render("a: {{ 'open }}\n", NULL, 0, &o, &err), NM_ERR_INPUT);
    ck_assert_int_eq(render("{% endfor %}", NULL, 0, &o, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "'endfor' with no block open"));
    ck_assert_int_eq(render("{% while x %}", NULL, 0, &o, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown statement 'while'"));
    /* A runaway template ends with an error, not a hang. */
    ck_assert_int_eq(render("{% for a in range(100000) %}{% for b in range(100000) %}"
                            "{% set x = 1 %}{% endfor %}{% endfor %}", NULL, 0, &o, &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "more than 2000000 steps"));
    /* A template given as text (not read from a file) reads no files. */
    nm_ydoc doc;
    nm_ydoc_init(&doc);
    const char *text = "a: {{ include_text('/etc/hostname') }}\n";
    ck_assert_int_eq(nm_ydoc_load_string(&doc, "text.yaml", text, strlen(text), &err),
                     NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "a template given as text has none to read"));
    nm_ydoc_fini(&doc);
}
END_TEST

/* A whole input through the YAML stage: include_text keeps the included
 * file's lines (an error there points there), include() puts a subtree in,
 * include_all() joins lists, `<<<` merges all the way down. */
START_TEST(includes_and_merges)
{
    put("base.yaml", "base_ignore: &base\n  instance: {C: 1, M: 1, P: 1}\n"
                     "  shape: {name: s, dimensions: [C, M, P]}\n");
    put("arch.yaml", "architecture: {version: 0.4, nodes: [x]}\n");
    put("c1.yaml", "compound_components: {classes: [{name: one}]}\n");
    put("c2.yaml", "compound_components: {classes: [{name: two}, {name: three}]}\n");
    const char *top = put("top.yaml", "{{include_text('base.yaml')}}\n"
                                      "problem:\n  <<<: *base\n  instance: {C: 8}\n"
                                      "architecture: {{include('arch.yaml', 'architecture')}}\n"
                                      "components:\n  classes: {{include_all('c*.yaml', "
                                      "'compound_components.classes')}}\n");
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(nm_ydoc_load_file(&doc, top, &err), NM_OK);
    const nm_ynode *inst = nm_ymap_get(nm_ymap_get(doc.root, "problem"), "instance");
    ck_assert_str_eq(nm_ymap_get(inst, "C")->str, "8");
    ck_assert_str_eq(nm_ymap_get(inst, "M")->str, "1");
    ck_assert_ptr_nonnull(strstr(nm_ymap_get(inst, "M")->file, "base.yaml"));
    ck_assert_int_eq(nm_ymap_get(inst, "M")->line, 2);
    ck_assert_ptr_nonnull(nm_ymap_get(nm_ymap_get(doc.root, "problem"), "shape"));
    ck_assert_str_eq(nm_ymap_get(nm_ymap_get(doc.root, "architecture"), "version")->str, "0.4");
    const nm_ynode *cls = nm_ymap_get(nm_ymap_get(doc.root, "components"), "classes");
    ck_assert_uint_eq(cls->n, 3);
    nm_ydoc_fini(&doc);

    /* A YAML error in text a template rendered: at the template's line. */
    const char *bad = put("bad.yaml", "a: 1\n{% if True %}\nb: [1, 2\n{% endif %}\n");
    nm_ydoc_init(&doc);
    ck_assert_int_eq(nm_ydoc_load_file(&doc, bad, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.file, "bad.yaml"));
    ck_assert_int_ge(err.line, 3);
    nm_ydoc_fini(&doc);

    /* Compound classes given in two files are both read. */
    const char *files[] = {put("d1.yaml", "compound_components: {classes: [{name: a}]}\n"),
                           put("d2.yaml", "compound_components: {classes: [{name: b}]}\n")};
    nm_ydoc_init(&doc);
    ck_assert_int_eq(nm_ydoc_load_file(&doc, files[0], &err), NM_OK);
    ck_assert_int_eq(nm_ydoc_load_file(&doc, files[1], &err), NM_OK);
    ck_assert_uint_eq(nm_ymap_get(nm_ymap_get(doc.root, "compound_components"), "classes")->n, 2);
    ck_assert_uint_eq(doc.nwarnings, 0);
    nm_ydoc_fini(&doc);
}
END_TEST

static const char v04[] =
    "variables: {version: 0.4, DW: 8, W2: DW * 2, technology: 45nm}\n"
    "architecture:\n"
    "  version: 0.4\n"
    "  nodes:\n"
    "  - !Container {name: sys}\n"
    "  - !Component {name: DRAM, class: DRAM, attributes: {width: 64, datawidth: DW}}\n"
    "  - !Component\n"
    "    name: buf\n"
    "    class: SRAM\n"
    "    attributes:\n"
    "      depth: 64 * 16\n"
    "      width: max(W2, 16)\n"
    "      datawidth: DW\n"
    "    constraints:\n"
    "      dataspace: {keep: [Inputs, Outputs], bypass: [Weights]}\n"
    "      temporal: {factors: [N=1], permutation: [M, C, P]}\n"
    "  - !Container\n"
    "    name: PE\n"
    "    spatial: {meshX: 4}\n"
    "    constraints:\n"
    "      spatial: {factors: [C=1], permutation: [M, P, C]}\n"
    "  - !Nothing {}\n"
    "  - !Component {name: rf, class: regfile, attributes: {depth: 16, width: DW, datawidth: DW}}\n"
    "  - !Component {name: mac, class: intmac, attributes: {width: DW}}\n"
    "problem: {conv2d: {N: 1, C: 8, M: 8, P: 8}}\n";

START_TEST(variables_containers_and_inline_constraints)
{
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(nm_spec_load_string(&spec, "v04.yaml", v04, NM_NEED_ARCH | NM_NEED_PROBLEM, &err),
                     NM_OK);
    const nm_arch *a = &spec.arch;
    /* Levels, innermost first: rf, the PE fan-out, buf, DRAM. */
    ck_assert_int_eq(a->nlevels, 4);
    ck_assert_str_eq(a->level[1].name, "inter_PE_spatial");
    ck_assert_str_eq(a->level[1].container, "PE");
    ck_assert_int_eq(a->level[1].fanoutX, 4);
    ck_assert_int_eq(a->level[0].instances, 4);
    ck_assert_int_eq(nm_arch_level(a, "PE"), 1);
    /* Expressions: depth 64 * 16 words, width max(8 * 2, 16) bits of 8. */
    ck_assert_int_eq(a->level[2].word_bits, 8);
    ck_assert_int_eq(a->level[2].block_size, 2);
    ck_assert_int_eq(a->level[2].size, 2048);
    /* The variables are the design's top attributes: technology 45nm. */
    ck_assert_ptr_nonnull(a->level[0].tech);
    ck_assert_str_eq(a->level[0].tech->str, "45nm");
    /* The inline constraints, as timeloopfe lists them. */
    ck_assert_ptr_nonnull(a->constraints);
    ck_assert_uint_eq(a->constraints->n, 3);
    nm_mapspace *ms = nm_calloc(1, sizeof *ms);
    ck_assert_int_eq(nm_mapspace_init(ms, a, &spec.wl, spec.constraints, spec.constraints2, &err),
                     NM_OK);
    /* buf keeps Inputs and Outputs, bypasses Weights; the fan-out keeps nothing. */
    int w = nm_workload_ds(&spec.wl, "Weights"), in = nm_workload_ds(&spec.wl, "Inputs");
    ck_assert(ms->level[2].bypass & (1u << w));
    ck_assert(ms->level[2].keep & (1u << in));
    ck_assert_uint_eq(ms->level[1].bypass, (1u << spec.wl.nds) - 1u);
    /* The container's spatial constraint reaches the fan-out's spatial slot. */
    int c = nm_workload_dim(&spec.wl, "C");
    int slot = -1;
    for (int i = 0; i < ms->nslots; i++)
        if (ms->slot[i].level == 1 && ms->slot[i].spatial)
            slot = i;
    ck_assert_int_ge(slot, 0);
    ck_assert_int_eq(ms->dim[c].fixed[slot], 1);
    nm_free(ms);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(located_errors)
{
    static const struct {
        const char *text, *msg;
        int line;
    } bad[] = {
        {"variables: {X: Y * 2}\n", "variable 'X'", 1},
        {"architecture:\n  nodes:\n  - !Component\n    name: b\n    class: SRAM\n"
         "    attributes: {depth: nope * 2}\n",
         "attribute 'depth'", 6},
        {"architecture:\n  nodes:\n  - !Component\n    name: b\n    class: SRAM\n"
         "    constraints: {temporal: {target: b, factors: N=1}}\n",
         "drop 'target' and 'type'", 6},
        {"architecture:\n  nodes:\n  - !Component\n    name: b\n    class: SRAM\n"
         "    constraints: {temporl: {factors: N=1}}\n",
         "unknown key 'temporl'", 6},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        nm_spec spec;
        nm_error err;
        ck_assert_int_eq(nm_spec_load_string(&spec, "bad.yaml", bad[i].text, NM_NEED_ARCH, &err),
                         NM_ERR_INPUT);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "case %zu: %s", i, err.msg);
        ck_assert_int_eq(err.line, bad[i].line);
        nm_spec_fini(&spec);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("template");
    TCase *tc = tcase_create("timeloopfe");
    tcase_add_checked_fixture(tc, setup, teardown);
    /* The runaway template runs its 2,000,000 steps: 2.5 s under ASan
     * alone, past Check's default 4 s beside another suite (a CI run). */
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, expressions_and_blocks);
    tcase_add_test(tc, errors_point_into_the_template);
    tcase_add_test(tc, includes_and_merges);
    tcase_add_test(tc, variables_containers_and_inline_constraints);
    tcase_add_test(tc, located_errors);
    suite_add_tcase(s, tc);
    return s;
}

TEST_MAIN(suite)
