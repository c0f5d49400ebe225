/* check_yaml.c — the YAML front end: merging, typed getters, unknown keys,
 * and exact file:line:col for malformed inputs. */
#include <config.h>

#include <check.h>
#include <string.h>

#include "nestmap/alloc.h"
#include "nestmap/spec.h"
#include "nestmap/text.h"
#include "nestmap/yaml.h"
#include "testutil.h"

static nm_status load(nm_ydoc *doc, const char *name, const char *text, nm_error *err)
{
    return nm_ydoc_load_string(doc, name, text, strlen(text), err);
}

START_TEST(merge_later_key_replaces)
{
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "a.yaml", "architecture: {x: 1}\nproblem: {p: 1}\n", &err), NM_OK);
    ck_assert_int_eq(load(&doc, "b.yaml", "mapping: []\nproblem: {p: 2}\n", &err), NM_OK);
    ck_assert_uint_eq(doc.root->n, 3);
    const nm_ynode *p = nm_ymap_get(nm_ymap_get(doc.root, "problem"), "p");
    ck_assert_str_eq(p->str, "2");
    ck_assert_str_eq(p->file, "b.yaml");
    ck_assert_ptr_nonnull(nm_ymap_get(doc.root, "architecture"));
    ck_assert_ptr_nonnull(nm_ymap_get(doc.root, "mapping"));
    /* The replacement is reported, located at the new key. */
    ck_assert_uint_eq(doc.nwarnings, 1);
    ck_assert_str_eq(doc.warnings[0].file, "b.yaml");
    ck_assert_int_eq(doc.warnings[0].line, 2);
    ck_assert_int_eq(doc.warnings[0].col, 1);
    ck_assert_ptr_nonnull(strstr(doc.warnings[0].msg, "a.yaml:2:1"));
    nm_ydoc_fini(&doc);
}
END_TEST

START_TEST(locations_and_tags)
{
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "t.yaml",
                          "architecture:\n  nodes:\n  - !Component\n    name: glb\n", &err),
                     NM_OK);
    const nm_ynode *nodes = nm_ymap_get(nm_ymap_get(doc.root, "architecture"), "nodes");
    ck_assert_int_eq(nodes->kind, NM_Y_SEQ);
    const nm_ynode *c = nodes->items[0];
    ck_assert_str_eq(c->tag, "!Component");
    const nm_ynode *name = nm_ymap_get(c, "name");
    ck_assert_int_eq(name->line, 4);
    ck_assert_int_eq(name->col, 11);
    ck_assert_ptr_null(name->tag);
    nm_ydoc_fini(&doc);
}
END_TEST

START_TEST(hyphen_underscore_keys)
{
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "k.yaml", "read-bandwidth: 4\nshared_bandwidth: 2\n", &err), NM_OK);
    ck_assert_ptr_nonnull(nm_ymap_get(doc.root, "read_bandwidth"));
    ck_assert_ptr_nonnull(nm_ymap_get(doc.root, "shared-bandwidth"));
    ck_assert_ptr_null(nm_ymap_get(doc.root, "write_bandwidth"));
    /* Two spellings of one key in the same mapping are duplicates. */
    nm_ydoc_fini(&doc);
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "d.yaml", "read-bandwidth: 4\nread_bandwidth: 2\n", &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "duplicate key"));
    nm_ydoc_fini(&doc);
}
END_TEST

START_TEST(typed_getters)
{
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "g.yaml",
                          "i: 42\nf: 16.0\nneg: -3\nnum: 1e-9\nq: 45nm\nb: True\ns: hello\n"
                          "bad: 16k\nlist: [1, 2]\nn: ~\n",
                          &err),
                     NM_OK);
    int64_t i;
    double d;
    int b;
    const char *s;
    ck_assert_int_eq(nm_yget_int(nm_ymap_get(doc.root, "i"), "i", &i, &err), NM_OK);
    ck_assert_int_eq(i, 42);
    ck_assert_int_eq(nm_yget_int(nm_ymap_get(doc.root, "f"), "f", &i, &err), NM_OK);
    ck_assert_int_eq(i, 16);
    ck_assert_int_eq(nm_yget_pos(nm_ymap_get(doc.root, "neg"), "neg", &i, &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 3);
    ck_assert_int_eq(err.col, 6);
    ck_assert_ptr_nonnull(strstr(err.msg, "positive integer (got \"-3\")"));
    ck_assert_int_eq(nm_yget_num(nm_ymap_get(doc.root, "num"), "num", &d, &err), NM_OK);
    ck_assert_double_eq(d, 1e-9);
    ck_assert_int_eq(nm_yget_quantity(nm_ymap_get(doc.root, "q"), "technology", "nm", &d, &err),
                     NM_OK);
    ck_assert_double_eq(d, 45.0);
    ck_assert_int_eq(nm_yget_quantity(nm_ymap_get(doc.root, "s"), "technology", "nm", &d, &err),
                     NM_ERR_INPUT);
    ck_assert_int_eq(nm_yget_bool(nm_ymap_get(doc.root, "b"), "b", &b, &err), NM_OK);
    ck_assert_int_eq(b, 1);
    ck_assert_int_eq(nm_yget_bool(nm_ymap_get(doc.root, "s"), "b", &b, &err), NM_ERR_INPUT);
    ck_assert_int_eq(nm_yget_str(nm_ymap_get(doc.root, "s"), "s", &s, &err), NM_OK);
    ck_assert_str_eq(s, "hello");
    ck_assert_int_eq(nm_yget_int(nm_ymap_get(doc.root, "bad"), "depth", &i, &err), NM_ERR_INPUT);
    ck_assert_str_eq(err.file, "g.yaml");
    ck_assert_int_eq(err.line, 8);
    ck_assert_int_eq(err.col, 6);
    ck_assert_str_eq(err.msg, "depth must be an integer (got \"16k\")");
    ck_assert_int_eq(nm_yget_int(nm_ymap_get(doc.root, "list"), "depth", &i, &err), NM_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "not a list"));
    ck_assert(nm_yis_null(nm_ymap_get(doc.root, "n")));
    ck_assert(!nm_yis_null(nm_ymap_get(doc.root, "s")));
    nm_ydoc_fini(&doc);
}
END_TEST

START_TEST(unknown_keys_suggest)
{
    nm_ydoc doc;
    nm_error err;
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "u.yaml", "dpeth: 1\nwidth: 2\n", &err), NM_OK);
    static const char *const allowed[] = {"depth", "width", "datawidth", NULL};
    ck_assert_int_eq(nm_ycheck_keys(doc.root, allowed, "buffer 'glb'", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 1);
    ck_assert_int_eq(err.col, 1);
    ck_assert_str_eq(err.msg, "unknown key 'dpeth' in buffer 'glb'; did you mean 'depth'?");
    nm_ydoc_fini(&doc);
    nm_ydoc_init(&doc);
    ck_assert_int_eq(load(&doc, "u.yaml", "width: 2\nzzzzzz: 1\n", &err), NM_OK);
    ck_assert_int_eq(nm_ycheck_keys(doc.root, allowed, "buffer 'glb'", &err), NM_ERR_INPUT);
    ck_assert_int_eq(err.line, 2);
    ck_assert_ptr_nonnull(strstr(err.msg, "known keys: depth, width, datawidth"));
    nm_ydoc_fini(&doc);
}
END_TEST

START_TEST(suggestions)
{
    static const char *const dims[] = {"C", "M", "P", "Q", "R", "S"};
    ck_assert_ptr_null(nm_text_suggest("X", dims, 6)); /* one letter off is no evidence */
    ck_assert_str_eq(nm_text_suggest("p", dims, 6), "P");
    static const char *const keys[] = {"permutation", "factors", "target"};
    ck_assert_str_eq(nm_text_suggest("permutaiton", keys, 3), "permutation");
    ck_assert_str_eq(nm_text_suggest("factor", keys, 3), "factors");
    ck_assert_ptr_null(nm_text_suggest("bandwidth", keys, 3));
    ck_assert_uint_eq(nm_text_distance("dpeth", "depth"), 1);
    ck_assert(nm_text_key_equal("read-bandwidth", "read_bandwidth"));
}
END_TEST

/* The malformed set: each file, and the exact place and words of its error. */
static const struct {
    const char *file;
    int line, col;
    const char *msg;
} bad[] = {
    {"indentation.yaml", 3, 2, "did not find expected key"},
    {"tab.yaml", 2, 1, "tab character"},
    {"duplicate_key.yaml", 3, 1, "duplicate key 'architecture' (first given at line 1)"},
    {"empty.yaml", 1, 1, "the file is empty"},
    {"binary_nul.yaml", 1, 8, "not a text file: NUL byte"},
    {"binary_utf8.yaml", 1, 4, "not a text file: invalid leading UTF-8 octet"},
    {"control_char.yaml", 1, 27, "control characters are not allowed"},
    {"unclosed_bracket.yaml", 4, 1, "starts at line 3, column 17"},
    {"unclosed_quote.yaml", 4, 1, "starts at line 3, column 11"},
    {"top_list.yaml", 1, 1, "the top level must be a mapping"},
    {"two_documents.yaml", 3, 1, "a second YAML document"},
    {"complex_key.yaml", 1, 3, "mapping keys must be plain names"},
    {"alias_bomb.yaml", 1, 12, "expands to more than"},
    {"depth_not_integer.yaml", 10, 27, "attribute 'depth' must be a positive integer (got \"16k\")"},
    {"misspelled_attribute.yaml", 10, 20, "unknown attribute 'dpeth' of 'Buffer'; did you mean 'depth'?"},
    {"misspelled_shape_key.yaml", 17, 5, "did you mean 'dimensions'?"},
    {"misspelled_top_key.yaml", 23, 1, "unknown top-level key 'mappping'; did you mean 'mapping'?"},
    {"misspelled_mapping_type.yaml", 25, 9, "did you mean 'temporal'?"},
    {"negative_bound.yaml", 22, 23, "a dimension size must be a positive integer (got \"-16\")"},
    {"unknown_target.yaml", 24, 11, "unknown storage level 'Bufer'; did you mean 'Buffer'?"},
    {"unknown_factor_dim.yaml", 26, 16, "unknown dimension 'X' (the problem's dimensions are R, P)"},
    {"unknown_projection_dim.yaml", 20, 42, "unknown dimension 'Q'"},
    {"repeated_factor.yaml", 26, 21, "dimension 'R' appears twice in factors"},
    {"unknown_class.yaml", 9, 14, "class 'wibble' is neither built in"},
};

START_TEST(malformed_located)
{
    char path[1024];
    test_data("bad/", path, sizeof path);
    strncat(path, bad[_i].file, sizeof path - strlen(path) - 1);
    nm_spec spec;
    nm_error err;
    nm_error_clear(&err);
    const char *files[] = {path};
    nm_status st = nm_spec_load(&spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM | NM_NEED_MAPPING,
                                &err);
    ck_assert_msg(st != NM_OK, "%s loaded without error", bad[_i].file);
    ck_assert_str_eq(err.file, path);
    ck_assert_msg(err.line == bad[_i].line && err.col == bad[_i].col,
                  "%s: error at %d:%d, expected %d:%d (%s)", bad[_i].file, err.line, err.col,
                  bad[_i].line, bad[_i].col, err.msg);
    ck_assert_msg(strstr(err.msg, bad[_i].msg), "%s: message '%s' lacks '%s'", bad[_i].file,
                  err.msg, bad[_i].msg);
    nm_spec_fini(&spec);
}
END_TEST

START_TEST(missing_file)
{
    nm_spec spec;
    nm_error err;
    const char *files[] = {"/nonexistent/nestmap.yaml"};
    ck_assert_int_eq(nm_spec_load(&spec, files, 1, NM_NEED_ARCH, &err), NM_ERR_IO);
    ck_assert_str_eq(err.file, "/nonexistent/nestmap.yaml");
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
    nm_spec_fini(&spec);
}
END_TEST

/* Every allocation failure while loading and parsing is reported as such
 * and leaks nothing (ASan/valgrind runs check the leaks). */
START_TEST(allocation_failures)
{
    char path[1024];
    test_data("good/conv1d_1level.yaml", path, sizeof path);
    const char *files[] = {path};
    int nomem = 0;
    for (long n = 0; n < 400; n++) {
        nm_spec spec;
        nm_error err;
        nm_alloc_fail_after(n);
        nm_status st = nm_spec_load(&spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM |
                                                     NM_NEED_MAPPING, &err);
        nm_alloc_fail_after(-1);
        nm_spec_fini(&spec);
        if (st == NM_OK)
            break;
        ck_assert_int_eq(st, NM_ERR_NOMEM);
        nomem++;
    }
    ck_assert_int_gt(nomem, 0);
}
END_TEST

START_TEST(good_file_parses)
{
    char path[1024];
    test_data("good/conv1d_1level.yaml", path, sizeof path);
    const char *files[] = {path};
    nm_spec spec;
    nm_error err;
    ck_assert_int_eq(nm_spec_load(&spec, files, 1, NM_NEED_ARCH | NM_NEED_PROBLEM |
                                                   NM_NEED_MAPPING, &err), NM_OK);
    ck_assert_int_eq(spec.arch.nlevels, 1);
    ck_assert_str_eq(spec.arch.level[0].name, "Buffer");
    ck_assert_int_eq(spec.arch.level[0].size, 64);
    ck_assert_str_eq(spec.arch.arith.name, "MACC");
    ck_assert_int_eq(spec.wl.ndims, 2);
    ck_assert_int_eq(spec.wl.nds, 3);
    ck_assert_int_eq(spec.map.level[0].tfactor[1], 16);
    ck_assert_uint_eq(spec.doc.nwarnings, 0);
    nm_spec_fini(&spec);
}
END_TEST

/* Flow-style output reads back to the same tree. */
START_TEST(emit_flow_round_trip)
{
    static const char text[] =
        "a: {depthwise: {C: 16, stride: 2}}\n"
        "b: [x, 'needs: quoting', \"q\\\"uote\", '', -1, -]\n"
        "c: [[1, 2], {k: v}]\n";
    nm_ydoc doc, back;
    nm_error err;
    nm_ydoc_init(&doc);
    nm_ydoc_init(&back);
    ck_assert_int_eq(nm_ydoc_load_string(&doc, "t.yaml", text, strlen(text), &err), NM_OK);
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    ck_assert_ptr_nonnull(f);
    nm_yemit_flow(f, doc.root);
    fclose(f);
    ck_assert_str_eq(out, "{a: {depthwise: {C: 16, stride: 2}}, b: [x, \"needs: quoting\", "
                          "\"q\\\"uote\", \"\", -1, \"-\"], c: [[1, 2], {k: v}]}");
    ck_assert_int_eq(nm_ydoc_load_string(&back, "back.yaml", out, len, &err), NM_OK);
    const nm_ynode *b = nm_ymap_get(back.root, "b");
    ck_assert_uint_eq(b->n, 6);
    ck_assert_str_eq(b->items[1]->str, "needs: quoting");
    ck_assert_str_eq(b->items[2]->str, "q\"uote");
    ck_assert_str_eq(b->items[5]->str, "-");
    free(out);
    nm_ydoc_fini(&doc);
    nm_ydoc_fini(&back);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("documents");
    tcase_add_test(tc, merge_later_key_replaces);
    tcase_add_test(tc, locations_and_tags);
    tcase_add_test(tc, hyphen_underscore_keys);
    tcase_add_test(tc, typed_getters);
    tcase_add_test(tc, unknown_keys_suggest);
    tcase_add_test(tc, suggestions);
    tcase_add_test(tc, missing_file);
    tcase_add_test(tc, good_file_parses);
    tcase_add_test(tc, emit_flow_round_trip);
    tcase_add_test(tc, allocation_failures);
    suite_add_tcase(s, tc);
    TCase *bad_tc = tcase_create("malformed");
    tcase_add_loop_test(bad_tc, malformed_located, 0, (int)(sizeof bad / sizeof *bad));
    tcase_set_timeout(bad_tc, 30);
    suite_add_tcase(s, bad_tc);
    return s;
}

TEST_MAIN(suite)
