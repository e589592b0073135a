#!/usr/bin/env bash
# The row-length checks of softmax and layernorm on the GPU machine (run from
# the repository root over a copy of the work tree with build/ carried):
#   check   the GPU test suite's operator test (every variant, awkward sizes,
#           rows of 33 and of a million elements, the cluster rung among
#           them), then compute-sanitizer (memcheck, racecheck, synccheck) on
#           the fused and cluster rungs at the shapes that take each new path;
#   sweep   fused, cluster (and layernorm's shared-memory) at every row
#           length of the sweep, fp32 and bf16, rows chosen so that x is about
#           512 MB, plus rows=3 x 262144 and rows=4099 x 3001;
#   ab      each A/B switch off against its default, at the shapes its path
#           serves, with `kbench compare` (old = switch off, new = default);
#           AB_ONLY=REGEX runs only the switches it matches
#           (AB_ONLY='GRID_NS|WIDE' tests/gpu/row_lengths.sh ab); CHECK_ONLY=REGEX
#           runs only the check groups whose tag it matches (CHECK_ONLY=gp: the
#           pipelined grids).
#   tests/gpu/row_lengths.sh [check|sweep|ab]...     default: all three
# Writes JSON reports, compare tables and logs to $OUT (default
# /tmp/kbench-out); the store is $OUT/kbench.db.
set -uo pipefail
out=${OUT:-/tmp/kbench-out}
mkdir -p "$out"
db="$out/kbench.db"
kb=build/kbench
[ $# -gt 0 ] || set -- check sweep ab
status=0
fail() { echo "row_lengths: $*" >&2; status=1; }

# rows so that a rows x cols matrix of esize-byte elements is about 512 MB
rows_for() { local cols=$1 esize=$2 r; r=$(( (512 << 20) / (cols * esize) )); echo $(( r < 1 ? 1 : r )); }

run() { # op dtype json-name [extra args...]
    local op=$1 dt=$2 name=$3
    shift 3
    $kb run "$op" --dtype "$dt" --db "$db" --json "$out/$name.json" --min-samples 10 \
        --timeout 3 "$@" >"$out/$name.txt" 2>&1 || fail "$name: kbench run exit $?"
    cat "$out/$name.txt"
}

for step in "$@"; do
    case $step in
    check)
        # CHECK_ONLY=REGEX: only the groups whose tag it matches (base: the
        # GPU test suite and the sanitizers at every path's shape; pull, deep,
        # pf, pf-wf, srow2, srow2-nosq, srow2-t512, srow2-early, srow2-tw,
        # srow2-tw-early, srow2-tw2, srow2-pc, srow2-pc-early, srow2-p24,
        # srow2-p24-early, srow2-g32, srow2-g32-early, srow2-pp1, srow2-pp2,
        # srow2-pp-early, srow2-pair, srow2-raw, srow2-fadd, srow2-c, gp (both
        # pipelined grids), gp-wide, gp-exact, gp-rr, gp-rr-exact, gp-rr-nosq,
        # gp-ahead, gp-f2, gp-whole16, gp-tn, gp-bar, gp-smem, peel, trow-w, half,
        # grid-8 and grid-12, grid-trim, creg-ns, wide: a path each)
        want() { [ -z "${CHECK_ONLY:-}" ] || [[ $1 =~ $CHECK_ONLY ]]; }
        san=${SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
        if want base; then
            build/tests/gpu/test_gpu_ops 2>&1 | tee "$out/test_gpu_ops.log" ||
                fail "test_gpu_ops failed"
            # memcheck at every path's shape; racecheck and synccheck (far slower:
            # a row of a million elements takes minutes) at small shapes that take
            # the same paths: tile, peel, a multi-block cluster of few rows
            small="rows=1001,cols=33 rows=999,cols=77 rows=4099,cols=3001 rows=3,cols=65536
                   rows=300,cols=2048 rows=41,cols=98312"
            for tool in memcheck racecheck synccheck; do
                shapes="$small"
                [ "$tool" = memcheck ] && shapes="$small rows=3,cols=262144 rows=2,cols=1048573 \
                    rows=3,cols=1048576 rows=64,cols=65536 rows=300,cols=32768"
                for s in $shapes; do
                    for op in softmax layernorm; do
                        timeout 120 "$san" --tool "$tool" --target-processes all \
                            --error-exitcode 9 $kb run "$op" --variants fused,cluster \
                            --dtype fp32,bf16 --shape "$s" --metrics none --min-samples 2 \
                            --max-samples 2 --db "$out/san.db" \
                            >>"$out/sanitizer.log" 2>&1 || fail "$tool $op $s: exit $?"
                        # the cluster rung's other ways to store y, their own kernels
                        for st in 0 1 2 3; do
                            KBENCH_CLUSTER_STORE=$st timeout 120 "$san" --tool "$tool" \
                                --target-processes all --error-exitcode 9 $kb run "$op" \
                                --variants cluster --dtype fp32,bf16 --shape "$s" --metrics none \
                                --min-samples 2 --max-samples 2 --db "$out/san.db" \
                                >>"$out/sanitizer.log" 2>&1 ||
                                fail "$tool $op $s (KBENCH_CLUSTER_STORE=$st): exit $?"
                        done
                    done
                done
            done
        fi
        # the clusters' pulled exchange (the default pushes): rows fewer
        # than, near and past the SMs, 2-16 blocks a row, under each tool
        if want pull; then
            for tool in memcheck racecheck synccheck; do
                for s in rows=3,cols=65536 rows=41,cols=98312 rows=3,cols=262144 \
                    rows=133,cols=262144; do
                    [ "$tool" != memcheck ] && [ "$s" = rows=133,cols=262144 ] && continue
                    for op in softmax layernorm; do
                        KBENCH_CLUSTER_PUSH=0 timeout 300 "$san" --tool "$tool" --error-exitcode 9 \
                            $kb run "$op" --variants fused --dtype fp32,bf16 --shape "$s" \
                            --metrics none --min-samples 2 --max-samples 2 --db "$out/san.db" \
                            >>"$out/sanitizer.log" 2>&1 ||
                            fail "$tool $op $s (pulled exchange): exit $?"
                    done
                done
            done
        fi
        # softmax's rows of 9-32 vectors 4 vectors a lane (16-bit by default),
        # forced on for fp32 too
        if want deep; then
            KBENCH_SOFTMAX_DEEP=1 $kb run softmax --variants fused --dtype fp32,fp16,bf16 \
                --shape rows=100001,cols=36 --shape rows=3001,cols=200 --shape rows=1,cols=128 \
                --shape rows=65537,cols=64 --metrics none --min-samples 3 --db "$out/deep.db" \
                >"$out/deep.txt" 2>&1 || fail "softmax deep: kbench run exit $?"
            KBENCH_SOFTMAX_DEEP=1 timeout 300 "$san" --tool memcheck --error-exitcode 9 \
                $kb run softmax --variants fused --dtype fp32,bf16 --shape rows=1001,cols=72 \
                --metrics none --min-samples 2 --max-samples 2 --db "$out/san.db" \
                >>"$out/sanitizer.log" 2>&1 || fail "memcheck softmax deep: exit $?"
        fi
        # a path behind a switch: op's fused rung at its shapes in every dtype
        # (checked against fp64), that its kernel ran, then each of the tools
        # at one shape (fp32 and bf16, or SAN_DTYPE's); several switches joined by '+'
        path() { # op tag switch=value[+switch=value] kernel-name sanitizer-shape "tools" shapes...
            local op=$1 tag=$2 sws=() kname=$4 sshape=$5 tools=$6 sh=() tool
            local sdt=${SAN_DTYPE:-fp32,bf16}
            IFS=+ read -ra sws <<<"$3"
            shift 6
            want "$tag" || return 0
            for s in "$@"; do sh+=(--shape "$s"); done
            env "${sws[@]}" $kb run "$op" --variants fused --dtype fp32,fp16,bf16 "${sh[@]}" \
                --metrics none --min-samples 3 --db "$out/$tag.db" --json "$out/$tag-$op.json" \
                >"$out/$tag-$op.txt" 2>&1 || fail "$tag $op: kbench run exit $?"
            grep -q "$kname" "$out/$tag-$op.json" || fail "$tag $op: $kname did not run"
            for tool in $tools; do
                env "${sws[@]}" timeout 300 "$san" --tool "$tool" --error-exitcode 9 \
                    $kb run "$op" --variants fused --dtype "$sdt" --shape "$sshape" \
                    --metrics none --min-samples 2 --max-samples 2 --db "$out/san.db" \
                    >>"$out/sanitizer.log" 2>&1 || fail "$tool $op $tag: exit $?"
            done
        }
        all="memcheck racecheck synccheck"
        # layernorm's persistent pushed clusters with staged parameters (fp32's
        # by default; =2 gives them 16-bit rows too), their block statistics
        # by plain sums: rows fewer than, near and past the clusters in
        # flight, rows that end inside a block, statistics, mean 10^4, tanh
        # (KBENCH_LAYERNORM_GRID_PIPE=0: the rows the pipelined grid takes by default
        # stay on the clusters)
        path layernorm pf KBENCH_LAYERNORM_CLUSTER_PF=2+KBENCH_LAYERNORM_GRID_PIPE=0 \
            'cluster_pf[0-9]*_plain' rows=70,cols=40008 "$all" \
            rows=9,cols=40000 rows=67,cols=100008 rows=300,cols=65544 rows=133,cols=262144 \
            rows=40,cols=196608,stats=1 rows=50,cols=131072,mean=10000 rows=31,cols=65536,gelu=1
        # the same clusters with the Welford merge at both levels (plain sums
        # by default), 16-bit rows too
        path layernorm pf-wf \
            KBENCH_LAYERNORM_CLUSTER_PF=2+KBENCH_LAYERNORM_PLAIN=0+KBENCH_LAYERNORM_GRID_PIPE=0 \
            'cluster_pf[0-9]*"' rows=70,cols=40008 memcheck rows=9,cols=40000 rows=67,cols=100008 \
            rows=133,cols=262144 rows=50,cols=131072,mean=10000
        # layernorm's 16-bit rows in the shared memory of a block or a cluster
        # (32769-1048576 columns, the default): rows fewer than and past the
        # SMs, one block and clusters of 2-16, rows that end inside a block,
        # statistics, mean 10^4, tanh; each tool at one block (bf16) and at a
        # cluster of 2 (bf16 only: fp32 takes the persistent clusters there).
        # The squares by the tensor cores (KBENCH_LAYERNORM_SQ=1, the default)
        # where the mean is within 8 sigma (mean 4: sigma is 0.58, the sums
        # cancel 5 bits), the centred pass past it (mean 5, mean 10^4)
        path layernorm srow2 KBENCH_LAYERNORM_SROW2=1 srow2_sq rows=70,cols=40008 \
            "$all" rows=9,cols=40000 rows=300,cols=65536 rows=67,cols=100008 \
            rows=133,cols=262144 rows=40,cols=196608,stats=1 rows=50,cols=131072,mean=10000 \
            rows=31,cols=65536,gelu=1 rows=17,cols=1000000 rows=12,cols=1048576,gelu=1 \
            rows=50,cols=65536,mean=4,stats=1 rows=50,cols=65536,mean=5,stats=1 \
            rows=20,cols=262144,mean=4,stats=1 rows=20,cols=131072,mean=-4
        # the same with the squares in the centred pass always (SQ=0)
        path layernorm srow2-nosq KBENCH_LAYERNORM_SROW2=1+KBENCH_LAYERNORM_SQ=0 \
            'layernorm_fused_srow2\(_exact\)*"' rows=70,cols=40008 memcheck rows=9,cols=40000 \
            rows=300,cols=65536 rows=133,cols=262144 rows=50,cols=131072,mean=10000 \
            rows=50,cols=65536,mean=4,stats=1
        # the same kernel in blocks of 512 threads, two an SM, in clusters
        # twice as large (KBENCH_LAYERNORM_SROW2_T=512; rows of up to 524288)
        SAN_DTYPE=bf16 path layernorm srow2-t512 \
            KBENCH_LAYERNORM_SROW2_T=512+KBENCH_LAYERNORM_GRID_PIPE=0 _t512 rows=70,cols=40008 \
            "$all" rows=9,cols=40000 rows=300,cols=65536 rows=67,cols=100008 \
            rows=133,cols=262144 rows=40,cols=196608,stats=1 rows=50,cols=131072,mean=10000 \
            rows=31,cols=65536,gelu=1 rows=17,cols=400000 rows=12,cols=524288,gelu=1
        # the same with the next row's first copies issued before the wait
        # for this row's bytes (KBENCH_LAYERNORM_SROW2_EARLY=1; one block a row)
        path layernorm srow2-early KBENCH_LAYERNORM_SROW2_EARLY=1 _early rows=70,cols=40008 \
            "$all" rows=9,cols=40000 rows=300,cols=65536 rows=133,cols=65536 rows=132,cols=65536 \
            rows=1,cols=65536 rows=2000,cols=50000 rows=31,cols=65536,gelu=1 \
            rows=50,cols=65536,mean=4,stats=1 rows=50,cols=65536,mean=10000
        # The one-block-a-row forms below at these shapes (one_row) or, with
        # the early copies as well, at these (one_row_e): rows fewer than and
        # past the SMs, one row, rows that end inside a block, tanh, the
        # squares (mean 4) with the statistics, the centred pass (mean 10^4)
        one_row="rows=9,cols=40000 rows=300,cols=65536 rows=133,cols=65536 rows=1,cols=65536
            rows=2000,cols=50000 rows=31,cols=65536,gelu=1 rows=50,cols=65536,mean=4,stats=1
            rows=50,cols=65536,mean=10000"
        one_row_e="rows=9,cols=40000 rows=300,cols=65536 rows=2000,cols=50000
            rows=31,cols=65536,gelu=1 rows=50,cols=65536,mean=10000"
        # the same with bf16's output pass widened by the tensor cores
        # (KBENCH_LAYERNORM_SROW2_TW=1; fp32 and fp16 keep their kernels)
        path layernorm srow2-tw KBENCH_LAYERNORM_SROW2_TW=1 _tw rows=70,cols=40008 "$all" $one_row
        # both: the widening and the early copies (KBENCH_LAYERNORM_SROW2_TW=1
        # with KBENCH_LAYERNORM_SROW2_EARLY=1); =2 takes rows of whole blocks only
        path layernorm srow2-tw-early KBENCH_LAYERNORM_SROW2_TW=1+KBENCH_LAYERNORM_SROW2_EARLY=1 \
            _tw_early rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-tw2 KBENCH_LAYERNORM_SROW2_TW=2 _exact_tw rows=70,cols=65536 "" \
            rows=300,cols=65536 rows=31,cols=65536,gelu=1 rows=9,cols=40000 rows=2000,cols=50000
        # the same with beta + b of each thread's first vector kept in shared
        # memory (KBENCH_LAYERNORM_SROW2_PC=1), and with the early copies too
        path layernorm srow2-pc KBENCH_LAYERNORM_SROW2_PC=1 _pc rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-pc-early KBENCH_LAYERNORM_SROW2_PC=1+KBENCH_LAYERNORM_SROW2_EARLY=1 \
            _pc_early rows=70,cols=40008 memcheck $one_row_e
        # the same with beta + b in 24 bits a column (KBENCH_LAYERNORM_SROW2_P24=1),
        # and with the early copies too
        path layernorm srow2-p24 KBENCH_LAYERNORM_SROW2_P24=1 _p24 rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-p24-early KBENCH_LAYERNORM_SROW2_P24=1+KBENCH_LAYERNORM_SROW2_EARLY=1 \
            _p24_early rows=70,cols=40008 memcheck $one_row_e
        # the same with gamma as floats from the scratch too
        # (KBENCH_LAYERNORM_SROW2_G32=1), and with the early copies too
        path layernorm srow2-g32 KBENCH_LAYERNORM_SROW2_G32=1 _g32 rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-g32-early KBENCH_LAYERNORM_SROW2_G32=1+KBENCH_LAYERNORM_SROW2_EARLY=1 \
            _g32_early rows=70,cols=40008 memcheck $one_row_e
        # the same with the parameters' first one or two vectors loaded before
        # pass 1's barrier (KBENCH_LAYERNORM_SROW2_PP=1 or 2), and with the
        # early copies too
        path layernorm srow2-pp1 KBENCH_LAYERNORM_SROW2_PP=1 _pp1 rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-pp2 KBENCH_LAYERNORM_SROW2_PP=2 _pp2 rows=70,cols=40008 "$all" $one_row
        path layernorm srow2-pp-early KBENCH_LAYERNORM_SROW2_PP=1+KBENCH_LAYERNORM_SROW2_EARLY=1 \
            _pp1_early rows=70,cols=40008 memcheck $one_row_e
        # the same with pairs of rows over clusters of two, each vector of the
        # parameters serving both rows (KBENCH_LAYERNORM_SROW2_PAIR=1): odd
        # rows (a last pair of one row), rows fewer than the clusters
        path layernorm srow2-pair KBENCH_LAYERNORM_SROW2_PAIR=1 _pair rows=70,cols=40008 \
            "$all" rows=9,cols=40000 rows=300,cols=65536 rows=133,cols=65536 rows=3,cols=65536 \
            rows=2,cols=65536 rows=1,cols=65536 rows=2000,cols=50000 rows=31,cols=65536,gelu=1 \
            rows=50,cols=65536,mean=4,stats=1 rows=51,cols=65536,mean=10000,stats=1 \
            rows=77,cols=33000
        # the same with beta + b raw (by default as floats from the scratch)
        path layernorm srow2-raw KBENCH_LAYERNORM_SROW2_PAR=0 layernorm_fused_srow2 \
            rows=70,cols=40008 memcheck rows=9,cols=40000 rows=300,cols=65536 \
            rows=133,cols=262144 rows=50,cols=131072,mean=10000 rows=17,cols=1000000
        # the same with the first pass's sum in FADDs (by default the tensor cores')
        path layernorm srow2-fadd KBENCH_LAYERNORM_SROW2_MMA=0 layernorm_fused_srow2 \
            rows=70,cols=40008 memcheck rows=9,cols=40000 rows=300,cols=65536 \
            rows=133,cols=262144 rows=50,cols=131072,mean=10000 rows=17,cols=1000000
        SAN_DTYPE=bf16 path layernorm srow2-c KBENCH_LAYERNORM_SROW2=1 \
            layernorm_fused_srow2_c2 rows=9,cols=65544 "$all" rows=20,cols=131064 \
            rows=150,cols=131072,stats=1
        # layernorm's pipelined grid (fp32 rows from 65536 columns by
        # default; =2 every aligned row past 32768, 16-bit too): a block's
        # rows fewer than, equal to and past the lag, rows that end inside a
        # block, the longest row it takes, more rows than the exchange's
        # ring, statistics, mean 10^4, tanh
        gp_shapes="rows=9,cols=40000 rows=67,cols=100008 rows=300,cols=65544 rows=133,cols=1048576
            rows=40,cols=196608,stats=1 rows=50,cols=131072,mean=10000 rows=31,cols=65536,gelu=1
            rows=2500,cols=40000 rows=17,cols=1000000"
        # (16-bit rows in slices of 8192 columns, as fp32's)
        path layernorm gp KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_WIDE=0 \
            layernorm_fused_gpipe_preg rows=70,cols=40008 "$all" $gp_shapes
        # 16-bit rows in slices of 16384 columns (the default for them; 131073
        # columns and more by default), the registers unmoved and the edge code
        # kept (KBENCH_LAYERNORM_GPIPE_REGS=0, EXACT=0)
        SAN_DTYPE=bf16 path layernorm gp-wide \
            KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_REGS=0+KBENCH_LAYERNORM_GPIPE_EXACT=0 \
            layernorm_fused_gpipe_wide rows=70,cols=40008 "$all" $gp_shapes
        # both without code for a row's edges where the row is whole slices
        # (KBENCH_LAYERNORM_GPIPE_EXACT=1; by default 16-bit only; here with
        # the registers unmoved, REGS=0): 3-128 slices a row, fewer rows than
        # and past the lag, more rows than the exchange's ring, statistics,
        # mean 10^4, tanh; a row of 40960 is 5 fp32 slices and 2.5 16-bit
        # ones (the edged kernel for 16-bit)
        gpx_shapes="rows=9,cols=49152 rows=67,cols=65536 rows=300,cols=131072 rows=133,cols=1048576
            rows=40,cols=262144,stats=1 rows=50,cols=131072,mean=10000 rows=31,cols=65536,gelu=1
            rows=2500,cols=49152 rows=5,cols=40960"
        path layernorm gp-exact \
            KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_EXACT=1+KBENCH_LAYERNORM_GPIPE_REGS=0 \
            'gpipe_[a-z]*_exact' rows=70,cols=49152 "$all" $gpx_shapes
        # 16-bit wide slices with registers moved from the exchange warps to
        # the streaming threads (KBENCH_LAYERNORM_GPIPE_REGS=1, sm_90a's
        # setmaxnreg; the default), with the edge code (EXACT=0): gp's shapes,
        # fp32 on its own kernel; the squares by the tensor cores (SQ, the
        # default) where a warp's mean is within 8 sigma (srow2's means)
        SAN_DTYPE=bf16 path layernorm gp-rr \
            KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_REGS=1+KBENCH_LAYERNORM_GPIPE_EXACT=0+KBENCH_LAYERNORM_GPIPE_AHEAD=0 \
            'layernorm_fused_gpipe_wide_rr_sq"' rows=70,cols=40008 "$all" $gp_shapes \
            rows=50,cols=65544,mean=4,stats=1 rows=50,cols=100008,mean=5,stats=1
        # the same without code for a row's edges (with
        # KBENCH_LAYERNORM_GPIPE_EXACT=1 too; 16-bit's default): gp-exact's shapes
        SAN_DTYPE=bf16 path layernorm gp-rr-exact \
            KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_EXACT=1+KBENCH_LAYERNORM_GPIPE_REGS=1+KBENCH_LAYERNORM_GPIPE_AHEAD=0 \
            'layernorm_fused_gpipe_wide_exact_rr_sq"' rows=70,cols=49152 "$all" $gpx_shapes \
            rows=50,cols=131072,mean=4,stats=1 rows=30,cols=262144,mean=5,stats=1 \
            rows=20,cols=1048576,mean=-4
        # both with the squares in the centred pass always (SQ=0)
        SAN_DTYPE=bf16 path layernorm gp-rr-nosq \
            KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_REGS=1+KBENCH_LAYERNORM_SQ=0 \
            'gpipe_wide_[a-z_]*rr"' rows=70,cols=49152 memcheck rows=9,cols=40000 \
            rows=133,cols=1048576 rows=50,cols=131072,mean=4,stats=1 rows=2500,cols=49152
        # the streaming warps' statistics of the rows ahead whose bytes are in,
        # taken while a row's merged statistics are not
        # (KBENCH_LAYERNORM_GPIPE_AHEAD=1; =-1, the default, gives them to
        # 16-bit wide slices only): fp32's kernel with the edge code and 16-bit's wide one
        # without it (rows of whole slices; the others keep their kernels),
        # gp's and gp-exact's shapes (gp-rr and gp-rr-exact keep the kernels
        # without it, AHEAD=0)
        path layernorm gp-ahead KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_AHEAD=1 \
            'gpipe_[a-z_]*ahead' rows=70,cols=49152 "$all" $gp_shapes $gpx_shapes
        # the exchange warps' fence to publish and a second to release a row's
        # slot (KBENCH_LAYERNORM_GPIPE_FENCES=2; by default one fence a row
        # does both): the two default forms, fp32's with the edge code and
        # 16-bit's wide one of rows of whole slices
        path layernorm gp-f2 KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_FENCES=2 \
            'gpipe_[a-z_]*_f2"' rows=70,cols=49152 "$all" $gp_shapes $gpx_shapes
        # 16-bit rows of whole slices from 81920 columns on the grid by
        # default (KBENCH_LAYERNORM_GPIPE_FROM16=65537, set here as the
        # default has it): 5-8 slices a row, rows past and within the grid's
        # groups (12 x 81920 too few to fill it: srow2's clusters), statistics,
        # mean 10^4, tanh
        whole16_shapes="rows=300,cols=81920 rows=67,cols=98304 rows=133,cols=114688
            rows=40,cols=131072,stats=1 rows=50,cols=98304,mean=10000 rows=31,cols=81920,gelu=1"
        SAN_DTYPE=bf16 path layernorm gp-whole16 KBENCH_LAYERNORM_GPIPE_FROM16=65537 \
            'layernorm_fused_gpipe_wide_exact_rr_sq_ahead"' rows=30,cols=81920 "$all" \
            $whole16_shapes rows=12,cols=81920
        # bf16 rows of whole slices with x widened by the tensor cores in the
        # output pass (KBENCH_LAYERNORM_GPIPE_TN=1): gp-whole16's shapes (not
        # 12 x 81920, srow2's), rows of 262144 and 1048576 columns, means of
        # 5, -4 and 10^4 (fp32 and fp16 rows on their own kernels)
        SAN_DTYPE=bf16 path layernorm gp-tn KBENCH_LAYERNORM_GPIPE_TN=1 \
            'layernorm_fused_gpipe_wide_exact_rr_sq_ahead_tw"' rows=30,cols=81920 "$all" \
            $whole16_shapes rows=30,cols=262144,mean=5,stats=1 rows=20,cols=1048576,mean=-4 \
            rows=40,cols=262144,mean=10000,gelu=1
        # both with the slice reduced behind a barrier instead of handing the
        # warps' partials to the exchange warp (KBENCH_LAYERNORM_GPIPE_WP=0)
        path layernorm gp-bar KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_WP=0 \
            layernorm_fused_gpipe_wide_bar rows=70,cols=40008 memcheck rows=9,cols=40000 \
            rows=67,cols=100008 rows=133,cols=1048576 rows=50,cols=131072,mean=10000 \
            rows=2500,cols=40000
        # the same with the parameters staged in shared memory beside a ring
        # of 4 fp32 slices (KBENCH_LAYERNORM_GPIPE_RING=0; by default they are
        # in registers and the ring holds 7)
        path layernorm gp-smem KBENCH_LAYERNORM_GRID_PIPE=2+KBENCH_LAYERNORM_GPIPE_RING=0 \
            'layernorm_fused_gpipe"' rows=70,cols=40008 memcheck rows=9,cols=40000 \
            rows=67,cols=100008 rows=133,cols=1048576 rows=2500,cols=40000
        # layernorm's rows off 16-byte boundaries in the peeled row kernel
        # (the default; KBENCH_LAYERNORM_PEEL=0 streams them): rows fewer
        # than the classes of row offsets, the shortest and the longest rows
        # it takes (fp32 16387: the last rung exactly), statistics, mean 10^4,
        # tanh; fp32 rows past its ladder (32767) fall back to streaming
        path layernorm peel KBENCH_LAYERNORM_PEEL=1 layernorm_fused_row_peel rows=999,cols=3001 \
            "$all" rows=4099,cols=3001 rows=3,cols=1001,gelu=1 rows=1000,cols=12345,stats=1 \
            rows=70,cols=32767,mean=10000 rows=257,cols=258 rows=5,cols=4097 \
            rows=2000,cols=1030,gelu=1,stats=1 rows=9,cols=16387 rows=20000,cols=1001
        # layernorm's 16-bit rows of up to 40 columns off 16-byte boundaries
        # in the word kernel (KBENCH_LAYERNORM_TROW=2; =3 with its spans by
        # the copy engine, the default past 8 columns; fp32 keeps the
        # thread-row kernel): each of its
        # lengths, odd and even columns (rows of both parities), a last block
        # partly filled, x ending inside a vector (1 x 3: no whole vector),
        # statistics, mean 10^4, tanh
        trow_shapes="rows=1001,cols=33 rows=100003,cols=33 rows=257,cols=39 rows=999,cols=34
            rows=511,cols=36 rows=3,cols=7 rows=1,cols=3 rows=70001,cols=17 rows=5,cols=9
            rows=300,cols=23,stats=1 rows=2000,cols=37,mean=10000 rows=1000,cols=31,gelu=1"
        SAN_DTYPE=bf16 path layernorm trow-w KBENCH_LAYERNORM_TROW=2 'layernorm_fused_trow_w[0-9]' \
            rows=1001,cols=33 "$all" $trow_shapes
        SAN_DTYPE=bf16 path layernorm trow-w KBENCH_LAYERNORM_TROW=3 layernorm_fused_trow_wb \
            rows=1001,cols=33 "$all" $trow_shapes
        # softmax's cluster register kernels in blocks of 512 threads, two an
        # SM (the default): rows fewer than, near and past the SMs, partial
        # last blocks; then memcheck
        path softmax half KBENCH_SOFTMAX_CREG_THREADS=512 _t512 rows=40,cols=40008 memcheck \
            rows=1,cols=40000 rows=7,cols=100008 rows=129,cols=65544 rows=133,cols=262144
        # softmax's rows over a grid (the default past 16 blocks of 512
        # threads), with 8 and 12 vectors a thread in shared memory and the
        # full exit (KBENCH_SOFTMAX_GRID_TRIM=0): rows
        # fewer than and past the SMs, a row's last block partly filled, the
        # longest row a grid takes; then each tool
        for ns in 8 12; do
            path softmax "grid-$ns" \
                "KBENCH_SOFTMAX_GRID_NS=$ns+KBENCH_SOFTMAX_GRID_TRIM=0+KBENCH_SOFTMAX_CREG_NS=0" \
                "softmax_fused_grid_r8_s$ns" \
                rows=3,cols=600000 "$all" rows=1,cols=1048576 rows=3,cols=600000 \
                rows=133,cols=1000000 rows=2,cols=2097152
        done
        # softmax's grid with the trimmed exit (KBENCH_SOFTMAX_GRID_TRIM=1, the
        # default; the groups above take it out): the grid's shapes and more rows than the
        # exchange's ring (slots taken twice, each reset by its last release);
        # every launch after the first finds the counters put back or traps
        path softmax grid-trim KBENCH_SOFTMAX_GRID_TRIM=1+KBENCH_SOFTMAX_CREG_NS=0 \
            softmax_fused_grid_r8_s12_trim rows=3,cols=600000 "$all" rows=1,cols=1048576 \
            rows=3,cols=600000 rows=133,cols=1000000 rows=2,cols=2097152 rows=1030,cols=524292
        # softmax's 16-bit rows past 524288 in one cluster of 16 blocks of 512
        # threads with 8 vectors a thread in shared memory (the default;
        # KBENCH_SOFTMAX_CREG_NS=0 sends them to the grid, which the groups
        # above check with 16-bit rows too): rows fewer than and past the clusters
        # in flight, a row's last block partly filled, the longest row; each
        # tool at 3 x 600000
        SAN_DTYPE=fp16,bf16 path softmax creg-ns KBENCH_SOFTMAX_CREG_NS=1 \
            softmax_fused_regs_c16_t512_s8 rows=3,cols=600000 "$all" rows=1,cols=1048576 \
            rows=3,cols=600000 rows=133,cols=1000000 rows=40,cols=524296
        # the same clusters for fp32 rows of 262145-524288 (the default too):
        # rows fewer than and past the clusters in flight, partly filled blocks
        path softmax creg-ns32 KBENCH_SOFTMAX_CREG_NS=1 softmax_fused_regs_c16_t512_s8 \
            rows=3,cols=300000 memcheck rows=1,cols=524288 rows=3,cols=300000 \
            rows=133,cols=400000 rows=40,cols=262148
        # softmax's pipelined grid (KBENCH_SOFTMAX_GRID_PIPE=1; off by default):
        # a block's rows fewer than, equal to and past the lag, a row's last
        # slice partly filled, more rows than the exchange's ring; each tool
        # at 7 x 600000
        path softmax gp KBENCH_SOFTMAX_GRID_PIPE=1+KBENCH_SOFTMAX_CREG_NS=0 softmax_fused_gpipe \
            rows=7,cols=600000 "$all" \
            rows=1,cols=1048576 rows=3,cols=600000 rows=133,cols=1000000 rows=1500,cols=524296
        # softmax's 16-bit rows of 97-128 vectors in 512-thread blocks
        if want wide; then
            KBENCH_SOFTMAX_WIDE=2 $kb run softmax --variants fused --dtype fp16,bf16 \
                --shape rows=1,cols=1024 --shape rows=3001,cols=1000 --shape rows=65537,cols=784 \
                --metrics none --min-samples 3 --db "$out/wide.db" >"$out/wide.txt" 2>&1 ||
                fail "softmax wide: kbench run exit $?"
        fi
        grep -E "ERROR SUMMARY|mismatch|failed" "$out/sanitizer.log" | sort | uniq -c
        ;;
    sweep)
        for op in softmax layernorm; do
            variants=fused,cluster
            [ "$op" = layernorm ] && variants=fused,cluster,shared-memory
            for dt in fp32 bf16; do
                es=4
                [ "$dt" = bf16 ] && es=2
                shapes=()
                for c in 32 33 128 768 1024 4096 16384 65536 262144 1048576; do
                    shapes+=(--shape "rows=$(rows_for "$c" "$es"),cols=$c")
                done
                # shellcheck disable=SC2054 # commas inside a shape, not between elements
                shapes+=(--shape rows=3,cols=262144 --shape rows=4099,cols=3001)
                run "$op" "$dt" "sweep-$op-$dt" --variants "$variants" "${shapes[@]}"
            done
        done
        ;;
    ab)
        # switch=value op variant shapes...: the switch's old path against the default
        ab() {
            local sw=$1 op=$2 var=$3
            shift 3
            # AB_ONLY=REGEX: only the switches it matches (a short GPU call)
            [ -n "${AB_ONLY:-}" ] && ! [[ $sw =~ $AB_ONLY ]] && return 0
            local sh=()
            for s in "$@"; do sh+=(--shape "$s"); done
            for dt in fp32 bf16; do
                local tag="ab-${sw//=/-}-$op-$dt"
                env "$sw" $kb run "$op" --variants "$var" --dtype "$dt" "${sh[@]}" --db "$db" \
                    --json "$out/$tag-old.json" --timeout 3 >"$out/$tag-old.txt" 2>&1 ||
                    fail "$tag old: exit $?"
                $kb run "$op" --variants "$var" --dtype "$dt" "${sh[@]}" --db "$db" \
                    --json "$out/$tag-new.json" --timeout 3 >"$out/$tag-new.txt" 2>&1 ||
                    fail "$tag new: exit $?"
                $kb compare "$out/$tag-old.json" "$out/$tag-new.json" | tee "$out/$tag.compare"
            done
        }
        ab KBENCH_SOFTMAX_TILE=0 softmax fused rows=1000000,cols=33 rows=4000000,cols=7 \
            rows=500000,cols=100
        ab KBENCH_SOFTMAX_PEEL=0 softmax fused rows=4099,cols=3001 rows=20000,cols=1001 \
            rows=4000,cols=30001
        ab KBENCH_SOFTMAX_SPLIT=8 softmax fused rows=3,cols=262144 rows=5,cols=1048576 \
            rows=12,cols=100003
        ab KBENCH_LAYERNORM_TILE=0 layernorm fused rows=1000000,cols=33 rows=1000000,cols=32 \
            rows=500000,cols=100
        ab KBENCH_SOFTMAX_CLUSTER_REGS=0 softmax fused rows=2048,cols=65536 \
            rows=512,cols=262144 rows=128,cols=1048576 rows=3,cols=262144
        ab KBENCH_LAYERNORM_SUB=0 layernorm fused rows=4194304,cols=32 rows=1048576,cols=128 \
            rows=2000000,cols=64
        ab KBENCH_LAYERNORM_CLUSTER_REGS=0 layernorm fused rows=2048,cols=65536 \
            rows=512,cols=262144 rows=300,cols=65536,mean=10000
        ab KBENCH_TILE_NARROW=0 softmax fused rows=4067203,cols=33 rows=1000000,cols=77
        ab KBENCH_TILE_NARROW=0 layernorm fused rows=4067203,cols=33 rows=1000000,cols=77
        ab KBENCH_TILE_SWIZZLE=0 layernorm fused rows=4194304,cols=32 rows=1048576,cols=128
        ab KBENCH_TILE_SWIZZLE=1 layernorm fused rows=4067203,cols=33 rows=4194304,cols=32
        ab KBENCH_LAYERNORM_STREAM=0 layernorm fused rows=4096,cols=65536 rows=4099,cols=3001 \
            rows=300,cols=1000,mean=10000
        ab KBENCH_SOFTMAX_DEEP=0 softmax fused rows=2097152,cols=128 rows=1048576,cols=256
        # layernorm's rows off 16-byte boundaries: the streaming path ("old")
        # against the peeled row kernel (the default)
        ab KBENCH_LAYERNORM_PEEL=0 layernorm fused rows=4099,cols=3001 rows=20000,cols=1001 \
            rows=2000,cols=12345 rows=4000,cols=30001
        # layernorm's 16-bit short rows off 16-byte boundaries: the
        # thread-row kernel and the word kernel with the threads' copies
        # ("old") against the default (the word kernel with the copy
        # engine's spans past 8 columns)
        ab KBENCH_LAYERNORM_TROW=1 layernorm fused rows=8134407,cols=33 rows=3000000,cols=39 \
            rows=8000000,cols=7 rows=4000000,cols=17
        ab KBENCH_LAYERNORM_TROW=2 layernorm fused rows=8134407,cols=33 rows=3000000,cols=39 \
            rows=4000000,cols=17
        # the clusters' exchange pulled ("old") against pushed (the default)
        ab KBENCH_CLUSTER_PUSH=0 softmax fused rows=2048,cols=65536 rows=512,cols=262144 \
            rows=128,cols=1048576 rows=1024,cols=262144 rows=256,cols=1048576 rows=3,cols=262144
        ab KBENCH_CLUSTER_PUSH=0 layernorm fused rows=2048,cols=65536 rows=512,cols=262144 \
            rows=8,cols=262144 rows=20,cols=1048576 rows=3,cols=262144
        # softmax's 16-bit rows of 16 blocks streamed ("old"; the clusters by default)
        ab KBENCH_SOFTMAX_CLUSTER_REGS=1 softmax fused rows=256,cols=1048576
        # layernorm's 16-bit long rows into the cluster register kernel ("old"; fp32 unchanged)
        ab KBENCH_LAYERNORM_CLUSTER_REGS=2 layernorm fused rows=4096,cols=65536 \
            rows=1024,cols=262144
        # layernorm's fp32 long rows in the cluster register kernel ("old"; the
        # persistent clusters by default), and 16-bit rows in the persistent ones
        ab KBENCH_LAYERNORM_CLUSTER_PF=0 layernorm fused rows=2048,cols=65536 \
            rows=512,cols=262144
        # layernorm's 16-bit rows of one block's shared memory by the first
        # kernel and past 65536 columns streamed ("old"; by default the
        # reworked kernel, in clusters past 65536)
        ab KBENCH_LAYERNORM_SROW2=0 layernorm fused rows=4096,cols=65536 rows=3000,cols=40000 \
            rows=1024,cols=262144 rows=256,cols=1048576
        # the persistent clusters' block statistics by Welford merges ("old";
        # plain sums by default)
        ab KBENCH_LAYERNORM_PLAIN=0 layernorm fused rows=2048,cols=65536 \
            rows=1024,cols=131072 rows=512,cols=262144 rows=3000,cols=40000
        # layernorm's long rows: fp32 rows from 65536 columns without the
        # pipelined grid ("old"; the default takes them there), the grid
        # with its parameters staged in shared memory beside a shallower
        # ring ("old"; registers and 7 slices by default), and every aligned
        # row past 32768 in it ("old" = =2)
        ab KBENCH_LAYERNORM_GRID_PIPE=0 layernorm fused rows=128,cols=1048576 \
            rows=256,cols=1048576 rows=256,cols=524288 rows=200,cols=600000 rows=64,cols=1048576 \
            rows=512,cols=262144 rows=1024,cols=131072 rows=1500,cols=100008
        ab KBENCH_LAYERNORM_GPIPE_RING=0 layernorm fused rows=128,cols=1048576 \
            rows=256,cols=524288 rows=512,cols=262144
        # the grid's slices reduced behind a barrier ("old"; warp partials by
        # default), fp32 and 16-bit, and 16-bit slices of 8192 columns ("old";
        # 16384 by default)
        ab KBENCH_LAYERNORM_GPIPE_WP=0 layernorm fused rows=128,cols=1048576 \
            rows=512,cols=262144 rows=256,cols=1048576 rows=1024,cols=262144
        ab KBENCH_LAYERNORM_GPIPE_WIDE=0 layernorm fused rows=256,cols=1048576 \
            rows=1024,cols=262144
        ab KBENCH_LAYERNORM_GRID_PIPE=2 layernorm fused rows=2048,cols=65536 \
            rows=512,cols=262144 rows=4096,cols=65536 rows=1024,cols=262144
        # 16-bit rows of whole slices of 81920-131072 columns on srow2's
        # clusters of 2 ("old"; the grid by default), and those of 49152 and
        # 65536 on the grid too ("old" = =32769)
        ab KBENCH_LAYERNORM_GPIPE_FROM16=131073 layernorm fused rows=2048,cols=131072 \
            rows=2730,cols=98304
        ab KBENCH_LAYERNORM_GPIPE_FROM16=32769 layernorm fused rows=4096,cols=65536 \
            rows=8192,cols=49152
        ab KBENCH_LAYERNORM_CLUSTER_PF=2 layernorm fused rows=4096,cols=65536 \
            rows=1024,cols=262144
        # softmax's cluster register kernels in one 1024-thread block an SM ("old";
        # two 512-thread blocks by default)
        ab KBENCH_SOFTMAX_CREG_THREADS=1024 softmax fused rows=2048,cols=65536 \
            rows=512,cols=262144 rows=1024,cols=262144
        # softmax's longest rows in the clusters ("old"; split over a grid by
        # default), the grid with 8 vectors a thread in shared memory (12 by
        # default), and 16-bit rows of 121-128 vectors in 256-thread blocks
        # (512 by default)
        ab KBENCH_SOFTMAX_GRID=0 softmax fused rows=128,cols=1048576 rows=64,cols=2097152 \
            rows=3,cols=1048576
        ab KBENCH_SOFTMAX_GRID_NS=8 softmax fused rows=128,cols=1048576 rows=64,cols=2097152
        # layernorm's pipelined grid without edge code for rows of whole
        # slices ("old" = the switch; the default for 16-bit rows, =0 keeps
        # their edge code) and with the exchange warps' registers moved (RR,
        # the default; =0 keeps them)
        ab KBENCH_LAYERNORM_GPIPE_EXACT=1 layernorm fused rows=128,cols=1048576 \
            rows=256,cols=1048576 rows=1024,cols=262144 rows=512,cols=262144
        ab KBENCH_LAYERNORM_GPIPE_EXACT=0 layernorm fused rows=256,cols=1048576 \
            rows=1024,cols=262144
        ab KBENCH_LAYERNORM_GPIPE_REGS=0 layernorm fused rows=256,cols=1048576 \
            rows=1024,cols=262144
        # the statistics of the rows ahead out of the 16-bit wide slices
        # ("old" = =0, "new" the default) and in fp32 rows too ("old" = =1)
        ab KBENCH_LAYERNORM_GPIPE_AHEAD=0 layernorm fused rows=256,cols=1048576 \
            rows=1024,cols=262144
        ab KBENCH_LAYERNORM_GPIPE_AHEAD=1 layernorm fused rows=128,cols=1048576 \
            rows=512,cols=262144 rows=2048,cols=65536
        # the exchange warps' two fences a row ("old" = =2; by default one)
        ab KBENCH_LAYERNORM_GPIPE_FENCES=2 layernorm fused rows=128,cols=1048576 \
            rows=512,cols=262144 rows=2048,cols=65536 rows=256,cols=1048576 rows=1024,cols=262144
        # 16-bit rows' squares in the centred pass always ("old"; by default
        # the tensor cores take them where the mean is within 8 sigma)
        ab KBENCH_LAYERNORM_SQ=0 layernorm fused rows=4096,cols=65536 rows=1024,cols=262144 \
            rows=256,cols=1048576
        # the grid's trimmed exit ("old" = the switch, the full exit; the
        # trimmed one is the default)
        ab KBENCH_SOFTMAX_GRID_TRIM=0 softmax fused rows=128,cols=1048576 rows=64,cols=2097152 \
            rows=200,cols=600000
        # softmax's longest rows in the pipelined grid ("old" = the switch; off
        # by default)
        ab KBENCH_SOFTMAX_GRID_PIPE=1 softmax fused rows=128,cols=1048576 rows=256,cols=1048576
        ab KBENCH_SOFTMAX_WIDE=0 softmax fused rows=262144,cols=1024 rows=260000,cols=976
        # the cluster rung's own knobs: sizes forced against the plan's choice
        for sw in KBENCH_CLUSTER_STORE=0 KBENCH_CLUSTER_STORE=1 KBENCH_CLUSTER_STORE=2 \
                  KBENCH_CLUSTER_STORE=3 \
                  KBENCH_CLUSTER_SIZE=8 KBENCH_CLUSTER_SIZE=16 \
                  KBENCH_CLUSTER_BPS=1 KBENCH_CLUSTER_BPS=2; do
            ab "$sw" softmax cluster rows=512,cols=262144 rows=2048,cols=65536 \
                rows=128,cols=1048576 rows=3,cols=262144
            ab "$sw" layernorm cluster rows=512,cols=262144 rows=2048,cols=65536 \
                rows=128,cols=1048576
        done
        ;;
    *) echo "usage: $0 [check|sweep|ab]..." >&2; exit 2 ;;
    esac
done
exit $status
