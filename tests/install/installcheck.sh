#!/bin/sh
# installcheck.sh — the installed nestmap as a user meets it (run by
# `make installcheck`, and so by `make distcheck`, with the install's
# directories in the environment): designs and workloads found by name from
# any directory, the man page, bash completion, and a C program built
# against libnestmap with pkg-config.  Prints one line per check and a
# closing "N passed, M failed".

name=installcheck
. "${NESTMAP_SRCDIR:-.}/tests/harness.sh"
: "${bindir:?}" "${libdir:?}" "${mandir:?}" "${pkgdatadir:?}" "${datadir:?}"
nm="$bindir/nestmap"
cd "$tmp" || exit 99

# By name, from a directory that holds neither.
if "$nm" network -q eyeriss/eyeriss mobilenet_v1 >out 2>err; then
    ok "network eyeriss/eyeriss mobilenet_v1 from $tmp"
else
    bad "network by name: exit $?"; cat err
fi
grep -q "^dw2 " out && ok "the network's layers are mapped" || { bad "no MobileNet layer in the output"; head -5 out; }
if NESTMAP_PATH="$NESTMAP_SRCDIR/tests/data/network" "$nm" network -q design small_net >out 2>err; then
    ok "NESTMAP_PATH is searched"
else
    bad "NESTMAP_PATH: exit $?"; cat err
fi
"$nm" bound no_such_design resnet50_conv1 >out 2>err
rc=$?
if [ "$rc" -eq 2 ] && grep -q "no_such_design: error: no such file, nor a design or workload of that name under" err &&
    grep -q "$pkgdatadir" err; then
    ok "an unknown name says where it was looked for (exit 2)"
else
    bad "unknown name: exit $rc"; cat err
fi
for f in arch/eyeriss/eyeriss.yaml workloads/networks/resnet50.yaml workloads/layers/tutorial_conv.yaml; do
    [ -f "$pkgdatadir/$f" ] && ok "installed $f" || bad "$pkgdatadir/$f missing"
done

# The course, from the installed copy, with the installed nestmap: every
# key's commands print what the key shows, and grade.py grades.
if NESTMAP_BIN="$nm" COURSE_DIR="$pkgdatadir/examples/course" NESTMAP_PATH= \
    sh "$NESTMAP_SRCDIR/tests/course.sh" >course.log 2>&1; then
    ok "the installed course runs as its keys show ($(tail -1 course.log))"
else
    bad "the installed course:"; grep -v "^ok" course.log | head -40
fi

# The man page.
if [ -f "$mandir/man1/nestmap.1" ]; then ok "man page installed"; else bad "no $mandir/man1/nestmap.1"; fi
if command -v man >/dev/null 2>&1; then
    if MANPATH="$mandir" MANPAGER=cat MANWIDTH=80 man nestmap >man.txt 2>err && grep -q "nestmap network" man.txt; then
        ok "man nestmap shows the page"
    else
        bad "man nestmap"; cat err
    fi
else
    echo "skip - man is not installed; the page's rendering is checked by tests/manpage.sh"
fi

# Bash completion, driven as bash-completion would (its helpers stubbed).
comp="$datadir/bash-completion/completions/nestmap"
if [ -f "$comp" ]; then
    ok "bash completion installed"
    cat >drive.bash <<EOS
_init_completion() { cur=\${COMP_WORDS[COMP_CWORD]}; prev=\${COMP_WORDS[COMP_CWORD-1]}; words=("\${COMP_WORDS[@]}"); cword=\$COMP_CWORD; }
_filedir() { :; }
PATH="$bindir:\$PATH"
. "$comp"
COMP_WORDS=(nestmap sw); COMP_CWORD=1; _nestmap; echo "\${COMPREPLY[*]}"
COMP_WORDS=(nestmap map --thr); COMP_CWORD=2; _nestmap; echo "\${COMPREPLY[*]}"
COMP_WORDS=(nestmap map --algorithm o); COMP_CWORD=3; _nestmap; echo "\${COMPREPLY[*]}"
EOS
    bash drive.bash >comp.txt 2>err
    if [ "$(sed -n 1p comp.txt)" = sweep ] && [ "$(sed -n 2p comp.txt)" = --threads ] &&
        [ "$(sed -n 3p comp.txt)" = optimal ]; then
        ok "completion of commands, options and option values"
    else
        bad "completion gave:"; cat comp.txt err
    fi
else
    bad "no $comp"
fi

# A program against the installed library.
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
if flags=$(pkg-config --cflags --libs nestmap) &&
    ${CC:-cc} -std=c11 -Wall -Werror -o libdemo "$NESTMAP_SRCDIR/tests/install/libdemo.c" $flags 2>err; then
    ok "libdemo builds with pkg-config --cflags --libs nestmap"
    ex="$NESTMAP_SRCDIR/examples/conv1d_os.yaml"
    if LD_LIBRARY_PATH="$libdir" ./libdemo "$ex" >demo.txt 2>err; then
        ok "libdemo loads a design and evaluates its mapping"
        want=$("$nm" model -q --json "$ex" | python3 -c 'import json, sys; print(int(json.load(sys.stdin)["summary"]["cycles"]))')
        got=$(awk '{ print $2 }' demo.txt)
        [ -n "$want" ] && [ "$got" = "$want" ] && ok "libdemo's cycles match nestmap model ($got)" ||
            bad "libdemo cycles '$got', nestmap model '$want'"
    else
        bad "libdemo: exit $?"; cat err
    fi
    if LD_LIBRARY_PATH="$libdir" ldd ./libdemo | grep -q "libnestmap.so.0 => $libdir"; then
        ok "libdemo is linked to the shared libnestmap.so.0"
    else
        bad "libdemo is not linked to $libdir/libnestmap.so.0"; LD_LIBRARY_PATH="$libdir" ldd ./libdemo
    fi
else
    bad "libdemo does not build"; cat err
fi

# The Python module, when built: imported from where it was installed, it
# finds the shipped designs by name and equals the command line.
if [ -n "${pythondir:-}" ]; then
    if PYTHONPATH="$pyexecdir:$pythondir" "$PYTHON" -c '
import json, subprocess, sys
import nestmap
r = nestmap.network("eyeriss/eyeriss", "mobilenet_v1", max_evals=2000, no_refine=True)
cli = subprocess.run([sys.argv[1], "network", "-q", "--json", "--max-evals", "2000", "--no-refine",
                      "eyeriss/eyeriss", "mobilenet_v1"], capture_output=True, check=True)
sys.exit(0 if r == json.loads(cli.stdout) else 1)' "$nm" >out 2>err; then
        ok "import nestmap from $pythondir: a network by name, as the command line maps it"
    else
        bad "the installed Python module: exit $?"; cat err
    fi
    case $(PYTHONPATH="$pyexecdir:$pythondir" "$PYTHON" -c 'import nestmap._nestmap as m; print(m.__file__)' 2>&1) in
    "$pyexecdir"/nestmap/_nestmap*.so) ok "nestmap._nestmap is installed in $pyexecdir" ;;
    *) bad "nestmap._nestmap is not where it was installed" ;;
    esac
fi

finish
