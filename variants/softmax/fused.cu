/* fused.cu - softmax in one read of x and one write of y: each row is loaded
 * into registers once, reduced there, and written from there.
 *
 * Idea: the model's traffic (2 * size bytes per element) and nothing more.
 * Each thread issues all its 16-byte loads (LDG.E.128) before using any, so a
 * thread has up to 128 bytes in flight; it takes the max of its slice, then
 * the sum of exp(x - its max), and the (max, sum) pairs of the row's threads
 * merge with the online-normaliser rule (shuffles, then one float2 per warp in
 * shared memory): a single block reduction per row. The write scales each exp
 * by exp(own max - row max) / sum and stores 16-byte vectors (STG.E.128).
 * Up to 32 elements per thread the registers hold floats and the exps
 * overwrite them; 64 16-bit elements per thread stay packed (max taken two at
 * a time, exp recomputed at the write), so 65536 16-bit elements fit in 1024
 * threads x 32 registers. The shape picks a configuration from a table
 * (launch_fused):
 *
 *   row fits, 16-byte aligned (cols % (16 / size) == 0), chunk = 16 bytes:
 *     chunks  <= 16: a sub-warp of 1..16 lanes per row, 256-thread blocks
 *     chunks  <= 256: a warp per row holding 1, 2, 4 or 8 chunks, 8 rows/block
 *     chunks  <= 512: 128 threads x 4;  <= 1024: 256 x 4;  <= 2048: 256 x 8;
 *     <= 4096: 512 x 8;  <= 8192: 1024 x 8   (a block per row)
 *     so fp32 rows up to 32768 and 16-bit rows up to 65536 stay in registers;
 *   short rows off 16-byte boundaries (cols % (16 / size) != 0): up to 40
 *     columns the thread-row path, a thread a row (1000000 x 33 lands here),
 *     up to 256 the tile path, 4-32 lanes a row, both with a block's rows
 *     staged through shared memory with 16-byte copies;
 *   longer rows off 16-byte boundaries, up to 32768 (fp32) / 65536: the
 *     register ladder again, each row peeled: head elements up to the first
 *     16-byte boundary and tail elements one a thread, the body in 16-byte
 *     vectors (4099 x 3001 lands here);
 *   buffers themselves off 16-byte boundaries, chunk = 1 element: the same
 *     ladder with up to 32 elements per thread, rows up to 32768;
 *   longer aligned rows, up to 16 blocks' registers (fp32 524288, 16-bit
 *     1048576): the register path over a thread-block cluster, CL = 2..16
 *     blocks of 1024 threads x 8 vectors a row, one SM each, the blocks'
 *     (max, sum) pairs met through distributed shared memory; CL doubled
 *     while rows x CL leave SMs idle (rows=3); fp32 rows of up to 1048576
 *     with 8 more vectors a thread in shared memory; 16-bit rows that need
 *     16 blocks too since the exchange is pushed (measured below); rows that
 *     16 blocks of 512 threads hold (fp32 262144, 16-bit 524288) take two
 *     blocks of 512 an SM, longer rows one of 1024;
 *   aligned rows longer than 16 blocks of 512 threads hold (the 1048576
 *     rows of the sweep), up to 64 blocks' worth (fp32 2097152, 16-bit
 *     4194304): the register path over ordinary blocks of a grid, 512
 *     threads x 8 vectors in registers + 8 in shared memory a block (128 KB
 *     of the row), two an SM, the blocks' pairs met in the L2
 *     (src/kernels/grid_rows.cuh; measured below);
 *   longer rows still, or unaligned ones: the streaming path below (two
 *     reads), a cluster of 8 blocks per row (16 when rows x 8 < 2 x SMs and
 *     the GPU places 16-block clusters), peeled to 16-byte alignment (the
 *     `cluster` rung holds such rows in shared memory instead and reads them
 *     once).
 *
 * A/B switches (environment, read once per process): KBENCH_SOFTMAX_TILE=0 sends
 * short unaligned rows back to the peeled/one-element ladder, =2 takes short
 * aligned rows through the tile path too; KBENCH_SOFTMAX_PEEL=0 sends
 * unaligned rows back to one-element chunks (the old path); KBENCH_SOFTMAX_TROW=0
 * sends rows of up to 40 columns back to the tile path;
 * KBENCH_SOFTMAX_CLUSTER_REGS=0 sends the long aligned rows back to the
 * streaming path, =1 sends 16-bit rows that need 16 blocks back to it (by
 * default, =2, they take the clusters too); KBENCH_SOFTMAX_SPLIT=8 keeps the
 * streaming path at 8 blocks a row when rows are few (by default 16 when rows
 * x 8 < 2 x SMs: rows=3 x 262144 then spreads over 48 SMs instead of 24,
 * predicted ~1.6x), =16 forces 16;
 * KBENCH_CLUSTER_PUSH=0 has the cluster register kernels pull their (max, sum)
 * pairs through a cluster barrier instead of pushing them (below; softmax and
 * layernorm); KBENCH_SOFTMAX_CREG_THREADS=1024 puts those kernels in one
 * block of 1024 threads an SM instead of two of 512 (below);
 * KBENCH_SOFTMAX_GRID=0 sends the rows past 16 blocks of 512 threads from
 * the grid back to the clusters, KBENCH_SOFTMAX_GRID_NS=8 gives the grid's
 * threads 8 vectors in shared memory instead of 12 (below),
 * KBENCH_SOFTMAX_GRID_TRIM=0 takes grid_rows.cuh's trimmed exit (the
 * default since the H200's A/B, below) back to the full exit,
 * KBENCH_SOFTMAX_GRID_PIPE=1 sends those rows to the
 * pipelined grid (slower than the grid so far: above that kernel);
 * KBENCH_SOFTMAX_CREG_NS=0 sends fp32 rows of 262145-524288 and 16-bit rows
 * of 524289-1048576 columns back from one cluster of 16 blocks of 512
 * threads with 8 vectors a thread in shared memory (the default) to the
 * grid (below);
 * KBENCH_SOFTMAX_WIDE=0 sends 16-bit rows of 121-128 vectors back from blocks
 * of 512 threads to blocks of 256, =2 takes rows of 97-128 vectors to 512
 * (below);
 * KBENCH_SOFTMAX_DEEP=0|1 gives aligned rows of 9-32 vectors one vector a lane
 * (9-32 lanes) or 4 vectors a lane (4 or 8 lanes a row); by default 16-bit rows
 * take 4 and fp32 rows 1. Prediction (before any measurement): the sweep's 128
 * columns sit below their neighbours (fp32 97.1%, bf16 93.4% against 98-99%
 * at 32 and 768, report of 21:29 UTC) with one 16-byte load in flight a thread
 * and 4-5 shuffle levels a reduction; 4 loads a thread and 2-3 levels: fp32 to
 * ~98.5% (PyTorch's eager softmax ran 98.4% there, 1.4% ahead of kbench), bf16
 * to ~97%. Measured (H200, 2026-12-01 23:30 UTC, no counters, L2 flushed, % of
 * copy bandwidth, 1 -> 4 a lane): bf16 2097152 x 128 93.2 -> 97.2, 1048576 x
 * 256 91.5 -> 97.3, 3001 x 200 (L2-resident) 12.5 -> 12.4; fp32 1048576 x 128
 * 97.0 -> 96.8, 2097152 x 64 98.3 -> 95.9, 100001 x 36 (L2-resident) 55.6 ->
 * 62.1. The 16-bit rows gained what was predicted; fp32 did not: its 128
 * columns were not short of loads in flight, and at 64 columns (16 vectors, 4
 * lanes a row) it lost 2.4 points, for reasons not yet measured. Prediction for
 * the change, written before it was measured: 1000000 x 33 from 36% (fp32) / 18% (bf16) of
 * the copy bandwidth to ~80% / ~70% (a warp per 33-element row spent 10
 * shuffles and 2 loads a lane on 1 element; the tile path spends 3 shuffles on
 * 5 elements a lane and moves the span in 16-byte vectors); 4099 x 3001 bf16
 * from 52% to ~85% (16-byte vectors instead of 2-byte loads, 8x fewer load
 * instructions), fp32 from 86% to ~92%. Measured (H200, 2026-12-01, without
 * counters, L2 flushed, rows x cols = 2^27): 4067203 x 33 72% fp32 / 53% bf16,
 * 4099 x 3001 83% / 74%; short aligned rows 97-99% (32, 128, 768, 1024); the
 * streaming path 55% fp32 / 90% bf16 at 65536 columns, 67% / 66% at 262144,
 * 62% / 61% at 1048576. Below the prediction at 33 columns: a block's 4
 * rounds of 32 rows held 4224 elements of its 8192-element tile, and each
 * thread stored a span vector before loading the next. Next step: as many
 * rounds as fill the tile (7 at 33 columns) and every load of a thread issued
 * before its first store (kb_span_in), predicted ~85% / ~75%. Measured
 * (same method, 2026-12-01, 10:35 UTC): 4067203 x 33 80.1% fp32 / 52.0% bf16;
 * 4099 x 3001 83.6% / 74.4%; 32 columns 99.0% / 96.5%, 128 96.8% / 92.5%, 768
 * 98.0% / 98.6%. fp32 moved most of the way; bf16 at 33 columns not at all:
 * its rows are 66 bytes, so most 16-byte vectors of a span straddle two rows
 * and the tile's element-wise pass, not the loads, is the limit (to confirm
 * with the stall counters).
 *
 * Long rows in a cluster's registers (prediction, before any measurement).
 * The streaming path read x twice and reached 55% fp32 at 2048 x 65536 and
 * 67% / 66% at 512 x 262144; the `cluster` rung, one read through shared
 * memory, 72% / 67% there. The one-block register path holds 97.7% at 8192 x
 * 32768 fp32 with a lone 1024-thread block an SM: 128 KB of loads in flight
 * an SM is what it lives on. Split over CL blocks, the same 128 KB a block is
 * in flight; what is new is one cluster barrier and CL distributed-shared-
 * memory reads between a block's loads and its stores (~1 us against ~8 us a
 * block at full bandwidth) and clusters placed whole. Predicted: fp32 65536
 * (CL 2) and 262144 (CL 8), bf16 131072-1048576 (CL 2-16): 85-92% of the copy
 * bandwidth; rows=3 x 262144 over 48 SMs in one read instead of two: about
 * 1.5x the streaming path. fp32 rows of up to 1048576 (4 MB, 32 SMs'
 * registers) take 16 blocks holding 8 more vectors a thread in shared memory
 * (NS = 8, 128 KB a block, copied in by cp.async beside the register loads):
 * 128 x 1048576 from 62% (streaming) to ~80%; longer rows stream.
 * Measured (H200, 2026-12-01 14:45 UTC, one round, no counters, L2 flushed,
 * % of copy bandwidth, streaming -> cluster registers): fp32 2048 x 65536
 * 55.2 -> 90.0, 512 x 262144 67.8 -> 83.1, 128 x 1048576 (shared memory too)
 * 62.4 -> 67.9; bf16 512 x 262144 66.5 -> 72.5, but 128 x 1048576 (CL 16)
 * 61.7 -> 57.0; rows=3 x 262144 level (13-14% fp32; 7-8% bf16, one launch's
 * latency with the row in L2). The 16-block bf16 row lost: with one block an
 * SM and 16 SMs waiting on one cluster barrier, a block's loads stop for the
 * whole exchange. So 16-bit rows that needed 16 blocks streamed (until the
 * push, below). Few rows
 * (same method, 15:00 UTC, streaming -> cluster registers, us): 8 x 262144
 * fp32 14.2 -> 19.6, bf16 12.2 -> 18.9; 16 x 262144 21.3 -> 27.8, 17.2 ->
 * 27.1; 3 x 1048576 20.3 -> 21.0, 15.4 -> 14.9: where rows x 8 leave SMs
 * idle the streaming path spreads a row over 16 blocks of 512 threads and
 * wins, so those rows stream too. Not yet near the prediction at 262144 and
 * 1048576: the cluster's DSMEM exchange and the clusters' placement, to read
 * in the stall counters next.
 * Tried and not kept (17:30 UTC, two rounds, same method, % of copy
 * bandwidth, this kernel -> a persistent one): clusters that stay resident
 * and copy the next row's slice into 128 KB of shared memory by cp.async
 * while the current row is reduced, exchanged and written, on the theory
 * that the time lost was the gap between one cluster's last store and the
 * next cluster's first load. fp32 2048 x 65536 90.9 -> 87.2, 512 x 262144
 * 83.1 -> 83.0, 128 x 1048576 68.1 -> 68.0, 137 x 65536 62.8 -> 56.1; bf16
 * 512 x 262144 72.9 -> 72.7, 128 x 1048576 61.9 -> 60.7, 33 x 262144 35.6 ->
 * 32.7. Nothing moved where it was predicted to (262144 fp32 to ~92%, bf16
 * to ~90%): the gap between rows is not where the time goes, and the extra
 * pass through shared memory cost a little everywhere.
 * Tried and not kept (H200, 2026-12-01 23:30 UTC, two rounds, same method,
 * % of copy bandwidth, this path -> split rows; code in commit dad9dff): no
 * cluster, a persistent cooperative grid of one 512-thread block an SM
 * walking (row, 64 KB chunk) items, each chunk held in registers while its
 * (max, sum) met the row's others through global memory (a counter a row),
 * the next item's loads issued before the wait; predicted 85-92% at the long
 * rows. fp32 512 x 262144 83.1 -> 60.9, 82.6 -> 61.4; 128 x 1048576 67.6 ->
 * 59.4, 67.4 -> 59.6; bf16 1024 x 262144 74.9 -> 57.8, 74.6 -> 57.9; 256 x
 * 1048576 64.5 -> 54.7, 64.3 -> 54.6. Worse everywhere, by 8-22 points; one
 * block of 512 threads an SM with 64 KB in flight, each waiting on the
 * slowest of a row's 16-64 chunks, moved less than the clusters do (why in
 * the counters was not measured).
 * Tried and not kept (H200, 2026-12-02 00:35 UTC, two rounds, same method,
 * % of copy bandwidth; code in commit 97f5c44): the cluster register kernel
 * in blocks of 512 threads, two an SM, twice as many a row, on the theory
 * that an SM whose one block waits (for its cluster's placement, at the
 * barrier, through the exchange) moves no bytes; predicted fp32 2048 x 65536
 * 90.3 -> ~94, 512 x 262144 82.6 -> ~90, bf16 1024 x 262144 74.9 -> ~85.
 * 1024 -> 512 threads: fp32 2048 x 65536 90.1 -> 85.5, 90.0 -> 85.4; 512 x
 * 262144 82.9 -> 76.8, 82.9 -> 77.0; bf16 1024 x 262144 75.0 -> 75.8, 74.6 ->
 * 75.5. The stall counters (fp32 512 x 262144) moved the wrong way with it:
 * long_scoreboard 25 -> 29%, barrier 23 -> 24%, membar 13 -> 16% of the
 * warps' cycles; a row over twice the blocks waits on a longer exchange, and
 * idle SMs were not where the time went. At 8192 x 32768 (one block a row,
 * 98.0%) the same counters read long_scoreboard 39%, barrier 15%, membar
 * under 5%: the cluster kernels' membar and barrier shares are the cost of
 * the exchange itself. Under --metrics sol the 8-block cluster at 512 x
 * 262144 keeps DRAM 70.8% busy with the SMs at 24.9%: neither is the limit.
 * Also measured (same session): the streaming path at 16 blocks a row
 * instead of 8 (KBENCH_SOFTMAX_SPLIT=16), on the theory that with half the
 * rows in flight the second read would come from the L2: DRAM bytes over the
 * model 1.50 -> 1.42 (bf16 256 x 1048576), 1.50 -> 1.50 (fp32 128 x
 * 1048576), and % of copy bandwidth 64.4 -> 61.6, 62.2 -> 62.1, 67.4 -> 61.0
 * (fp32 512 x 262144). The second read still comes from DRAM; 8 stays.
 * The exchange pushed (by default since the report of 2026-12-02;
 * KBENCH_CLUSTER_PUSH=0 pulls as before). The pull above is a cluster barrier with
 * release and acquire around a read of each peer's pair, then a second
 * release arrival; in the SASS each release arrival is a MEMBAR.ALL.GPU in
 * every warp (a GPU-scope fence: the warp waits until its memory operations
 * are visible to the whole GPU), and the second stands between the row's
 * statistics and its first store. With the push (kb_xchg in
 * src/kernels/cluster.cuh) thread 0 writes the block's pair into every
 * block's slot with st.async, counted by the receiver's mbarrier, and each
 * block waits on its own barrier; both cluster arrivals are relaxed and no
 * warp fences. Prediction (before the run): membar (13% of the warps' cycles
 * at fp32 512 x 262144) to ~0 and +1-3% where the fence had been on the
 * path to the stores. Measured (H200, 2026-12-02 01:10 UTC, two rounds, L2
 * flushed, no counters, % of copy bandwidth, pull -> push): fp32 2048 x 65536
 * 90.3 -> 96.2, 90.5 -> 96.3; 512 x 262144 83.0 -> 91.2, 82.9 -> 90.7; 128 x
 * 1048576 (16 blocks, shared memory too) 67.8 -> 71.5, 67.8 -> 71.6; bf16
 * 1024 x 262144 74.7 -> 79.3, 74.9 -> 79.3; fp32 8 x 262144 (L2-resident)
 * level. Stall shares at fp32 512 x 262144, pull -> push: membar 13.0% -> 0,
 * barrier 22.5 -> 7.1%, long_scoreboard 25.6 -> 34.3% (the loads are the
 * wait again, as in the one-block kernel). Three to four times the predicted
 * gain: the barrier's share was mostly the fences too, each warp's fence
 * holding back the block's arrival and so every block of the cluster. Every
 * variant passed at awkward cluster shapes (1 x 40000, 7 x 100008, 129 x
 * 65544, 133 x 262144, 5 x 1048576, 140 x 1000000; fp32 and bf16) and under
 * compute-sanitizer memcheck. The streaming path's clusters (8 or 16 blocks
 * a row, two full cluster barriers a row) take the same switch. Measured
 * (H200, 2026-12-02 02:25 UTC, two rounds, same method, pull -> push, % of
 * copy bandwidth): bf16 256 x 1048576 65.0 -> 64.8, 64.8 -> 64.8; fp32 64 x
 * 2097152 58.7 -> 58.9, 58.8 -> 58.9; few rows, L2-resident, us: fp32 3 x
 * 262144 10.66 -> 9.41, 10.72 -> 9.50; bf16 3 x 262144 9.15 -> 7.78, 9.15
 * -> 7.97. Level where the rows stream from DRAM, 12-15% faster where the
 * exchange is the launch's critical path; it stays pushed.
 * With the push, 16-bit rows that need 16 blocks were measured in the
 * clusters again (same call, two rounds, streaming -> cluster registers):
 * bf16 256 x 1048576 64.9 -> 69.7, 64.9 -> 69.7; fp16 256 x 1048576 65.0 ->
 * 72.2, 64.8 -> 72.2; bf16 512 x 524288 (8 blocks either way) 77.9 -> 78.0.
 * The 16-block row that lost 5 points with the pull gains 5-7 with the push
 * (its one barrier a row no longer fences every warp): they take the
 * clusters by default (KBENCH_SOFTMAX_CLUSTER_REGS=2).
 * Two blocks an SM again, with the push (by default;
 * KBENCH_SOFTMAX_CREG_THREADS=1024 keeps one block an SM: the 512-thread
 * kernel measured above with the pull and not kept, twice as many blocks a
 * row; fp32 rows past 262144 and 16-bit rows past 524288 keep one block an
 * SM). With the pull a row over twice the blocks waited on a longer
 * exchange (membar 13 -> 16% of the warps' cycles); the push took the fences
 * out (barrier 22.5 -> 7.1%), so the theory that an SM whose one block waits
 * moves no bytes can be tried again: with two blocks an SM one loads while
 * the other reduces, exchanges and stores. Prediction (before the run): fp32
 * 512 x 262144 90.2 -> ~93%, bf16 1024 x 262144 79.0 -> ~85% (with the pull
 * it had gained 0.8 points where fp32 lost 6), fp32 2048 x 65536 level
 * (96.1%). Measured (H200, 2026-12-02 03:50-04:00 UTC, two calls, two
 * rounds each, no counters, L2 flushed, % of copy bandwidth, 1024 -> 512
 * threads): fp32 512 x 262144 90.6 -> 94.2, 90.6 -> 94.6; bf16 1024 x 262144
 * 79.1 -> 94.5, 79.2 -> 94.5; fp16 1024 x 262144 83.5 -> 96.0, 84.0 -> 95.5;
 * fp32 2048 x 65536 96.2 -> 97.2, 96.1 -> 97.1; bf16 4096 x 65536 92.7 ->
 * 93.1, 92.6 -> 92.6; fp32 8192 x 32768 (one block a row either way) 97.8,
 * 97.8. Past the prediction at 262144 (16-bit by 15 points, where the
 * prediction was 6): the theory holds, an SM whose only block waits on its
 * exchange moves no bytes. It is the default.
 * Tried and not kept (same calls; code in commit 91ffeb2): persistent
 * clusters of 1024-thread blocks that prefetch the next row into shared
 * memory by cp.async, the pairs pushed through two slot sets by row parity
 * (kb_xring), predicted fp32 512 x 262144 90.2 -> ~94%, bf16 256 x 1048576
 * 69.7 -> ~80%. Measured (default -> persistent): fp32 512 x 262144 90.9 ->
 * 85.4, 90.6 -> 84.6; bf16 1024 x 262144 79.5 -> 82.2, 79.4 -> 82.5 (the
 * 512-thread blocks: 94.5); bf16 256 x 1048576 70.1 -> 70.9, 69.7 -> 71.7.
 * With the push as with the pull the gap between rows is not where the time
 * goes; 1-2 points at the one shape where 512-thread blocks do not reach did
 * not pay for a second persistent kernel.
 * Rows past the clusters, split over a grid (by default; KBENCH_SOFTMAX_GRID=0
 * for the clusters). A row of 1048576 elements (4 MB fp32, 2 MB 16-bit) is
 * more than 16 blocks of 512 threads hold, so it took 16 blocks of 1024, one
 * an SM (fp32 with 8 vectors a thread in shared memory): 71.2% fp32, 69.2%
 * bf16 in the report of 2026-12-02 04:08 UTC, where the 262144 rows in two
 * blocks an SM reach 94%. The 16-block clusters also leave SMs idle (7 fit
 * on 132 SMs). Here the row is split over ordinary blocks of 512 threads,
 * two an SM, each holding 8 vectors a thread in registers and 8 in shared
 * memory (128 KB of the row; 16 blocks a row fp32, 8 16-bit), on any SM;
 * the blocks' (max, sum) pairs meet in the L2 through a slot a row and an
 * arrival counter (src/kernels/grid_rows.cuh: the work item from an atomic
 * ticket, so a block waits only on blocks already running; thread 0
 * publishes with a release add and polls with acquire loads, no warp
 * fences). An earlier split over a persistent grid of one block an SM, 64
 * KB a block, lost 8-22 points (above, 2026-12-01 23:30 UTC); what is new is
 * two blocks an SM and twice the bytes a block. Prediction (before the run):
 * fp32 128 x 1048576 71 -> 85-90%, bf16 256 x 1048576 69 -> 85-90%, near
 * the 262144 rows' 94%; at 262144 itself (KBENCH_SOFTMAX_GRID=2 then, now
 * gone) below the clusters, whose exchange costs less than the L2's.
 * Measured (H200, 2026-12-02 06:05-06:22 UTC, two calls, two rounds each,
 * no counters, L2 flushed, % of copy bandwidth, clusters -> grid): fp32 128
 * x 1048576 71.6 -> 79.9, 71.4 -> 80.2, again 71.4 -> 80.0, 71.5 -> 80.1;
 * bf16 256 x 1048576 69.8 -> 77.6, 69.9 -> 77.8; fp16 72.0 -> 78.6, 72.2 ->
 * 78.5; fp32 64 x 2097152 (the streaming path before) 58.5 -> 75.1, 58.7
 * -> 75.2. 8-17 points, half the predicted gain: the longest rows still
 * stop 14-19 points short of the 262144 rows. The same grid with 64 KB a
 * block (registers only; fp32 1048576 then needs 64 blocks a row): 68.1,
 * 68.0 (lost). At 262144, where the clusters hold the row: fp32 94.3 ->
 * 84.3, 94.2 -> 84.6, bf16 94.9 -> 73.0, 94.4 -> 72.5: the cluster's DSMEM
 * exchange is cheaper than the L2's, and the grid takes only the rows the
 * clusters cannot hold. Checked (same calls) at 3 x 300000, 3 x 600000, 133
 * x 1000000, 2 x 2097152, 7 x 524296, 1 x 1048576 in fp32, bf16 and fp16,
 * and under memcheck, racecheck and synccheck at 3 x 300000 and 3 x 600000.
 * 12 vectors a thread in shared memory (the default since 2026-12-02;
 * KBENCH_SOFTMAX_GRID_NS=8 for the 128 KB block). 64 KB a block gave
 * 68%, 128 KB 80% at fp32 128 x 1048576, so the bytes a block holds, over
 * which its exchange is spread, look like the lever; 12 vectors a thread in
 * shared memory make it 160 KB (192 KB of shared memory an SM for its two
 * blocks; fp32 1048576 over 26 blocks, 16-bit over 13). Predicted: fp32 and
 * bf16 1048576 80 / 78 -> ~83%, if the trend holds; level if the 128 KB
 * step was the end of it. To read beside it: the grid kernel's stall
 * reasons (--metrics stalls) at fp32 128 x 1048576.
 * Measured (H200, 2026-12-02 07:25-07:28 UTC, two rounds, no counters, L2
 * flushed, % of copy bandwidth, 8 -> 12): fp32 128 x 1048576 79.4 -> 82.4,
 * 79.6 -> 82.3; bf16 256 x 1048576 77.6 -> 80.1, 77.7 -> 80.0; fp16 79.5 ->
 * 81.6, 78.6 -> 81.5; fp32 64 x 2097152 75.1 -> 77.8, 75.4 -> 77.7. The
 * predicted 3 points in fp32, 2-3 in 16-bit. The stall counters of the 128
 * KB form at fp32 128 x 1048576 (same call): barrier 36%, long scoreboard
 * 35% of the warps' stalls: the block's threads wait at the barrier behind
 * thread 0's poll for the row's other partials about as long as they wait
 * for DRAM, so the bytes a block holds, over which that wait is spread, are
 * still the lever; 192 KB of shared memory an SM is as far as two blocks an
 * SM go. More, smaller blocks, so that fewer SMs have every block waiting
 * at once: 256 threads (4 an SM, 80 KB of the row each) and 128 (8 an SM,
 * 40 KB), predicted +1-4 points if the waits of a block an SM overlap less;
 * measured (H200, 2026-12-04 05:36 UTC, two rounds, no counters, % of copy
 * bandwidth, 512 / 256 / 128 threads): fp32 128 x 1048576 80.8, 80.3 /
 * 78.4, 78.7 / 75.9, 75.9; bf16 256 x 1048576 78.5, 77.9 / 76.2, 76.1 /
 * 73.1, 73.1: more blocks a row (26 -> 53 -> 105 fp32) lose more to the
 * row's wait for its slowest block than the overlap wins (code in commit
 * 87d081a). The default's counters the same day (06:53 UTC, 1980 MHz,
 * 82.7%, DRAM excess 1.00): long_scoreboard 35%, barrier 32% of stalls,
 * issue 28%, as on 2026-12-02. 14 vectors a thread in shared memory (176 KB
 * of the row a block, 224 KB of shared memory an SM, still two blocks an
 * SM; fp32 1048576 over 24 blocks), predicted ~+1 point if the trend of 64
 * -> 128 -> 160 KB held: level (H200, 2026-12-04 17:24 UTC, two rounds, % of
 * copy bandwidth, 12 -> 14): fp32 128 x 1048576 82.0, 82.1 -> 82.1, 82.0;
 * 200 x 600000 84.3, 84.3 -> 84.6, 84.8; 64 x 2097152 77.4, 77.6 -> 78.4,
 * 78.4 (checked: the grid group at 14, all three sanitizers clean). The
 * bytes a block holds stopped being the lever at 160 KB; not kept.
 * Where a block's time goes (bench/grid_trace.cu: thread 0's global-timer
 * stamps at its item's edges; H200, 2026-12-04 15:12 UTC, fp32 128 x
 * 1048576, 322 us without the stamps, 325 with; means): taken -> its loads
 * landed 7.7 us, the sum and the block's reduction 2.8, publish and wait 4.5,
 * the pairs read 3.7, the stores issued 3.0 (a lifetime of 21.7 us), and 2.5
 * us from a block's end to the next block's item on the same SM (exit,
 * launch, the ticket); of the 264 resident blocks 82 are loading, 48 waiting
 * and 32 writing on average; a row's 26 blocks start within 2.6 us and
 * publish within 5.2. bf16 256 x 1048576: 7.5 / 5.1 / 4.3 / 2.9 / 3.2 (22.9
 * us), gap 2.5. Three changes aimed at those phases, each behind a switch
 * and A/B'd the same day (two interleaved rounds, no counters, % of copy
 * bandwidth, default -> change; code in commit f29b13f):
 *   - the pairs in one trip (KBENCH_SOFTMAX_GRID_XCHG=2, kb_grid_post and
 *     kb_grid_collect in grid_rows.cuh then: a block's pair one 64-bit word
 *     that warp 0 polls itself, no counter to acquire first). Predicted: the 3.7
 *     us of the pairs' read gone, +5-10%. The pairs' read fell to 0.15 us,
 *     but publish-and-wait grew to 6.4 and the stores to 4.8 (the lifetime
 *     the same, 21.9 us; 50 blocks writing instead of 32): fp32 128 x
 *     1048576 81.8, 81.6 -> 80.1, 79.9; bf16 256 x 1048576 0.995x; fp32 64 x
 *     2097152 0.972x. Checked (the sanitizers at 3 x 600000 clean).
 *   - persistent blocks (KBENCH_SOFTMAX_GRID_PERSIST=1, softmax_fused_gridp:
 *     as many blocks as the GPU holds, the next ticket taken once a row's
 *     pairs are in, the next item's loads issued as the stores go out).
 *     Predicted: the 2.5 us gap gone, +2-5%. Measured 82.2 -> 74.2, 74.5
 *     (fp32 128 x 1048576), 0.974x bf16 256 x 1048576, 0.868x fp32 64 x
 *     2097152. Its timeline (15:33 UTC) said why: thread 0 took the ticket
 *     between the wait and a barrier, so the whole block waited out the
 *     atomic's round trip holding its row, and a row's blocks then started
 *     within 11 us instead of 2.7 (an item began when the block's writes
 *     ended), their publishes within 11 us, waits 6.7 us. A second form
 *     (15:35-15:40 UTC) kept the ticket in thread 0's register, taken after
 *     the pairs or before the shared-memory part's writes, and issued the
 *     next item's loads after the writes: 0.974 and 0.994x fp32 128 x
 *     1048576, 0.977 and 0.981x bf16; the rows' blocks still started within
 *     7-11 us and a block still spent 3.0-4.2 us between items: under this
 *     load the ticket's atomic takes longer than a block's 3 us of stores.
 *   - the row read twice, the second time from the L2 (KBENCH_SOFTMAX_WAVE,
 *     wave_rows.cuh then): stats items (a 64 KB chunk reduced, its pair
 *     published without waiting) and out items lag rows later in the ticket order
 *     (the chunk read again, the pairs waited for warp by warp after the
 *     loads, y written), so that no block holds the row across a wait.
 *     Predicted 88-92%. Measured fp32 128 x 1048576 82.5 -> 66.8 (512 x 8
 *     vectors, lag 16 MB), 63.2 (256 x 8), 49.8 (512 x 4), 37.6 (lag 8 MB),
 *     60.2 (28 MB); bf16 256 x 1048576 79.7 -> 68.1, 66.5, 52.1, 42.2,
 *     60.4; DRAM read 1.04-1.05 of the model's (the L2 served most of the
 *     second read). Two blocks an SM of 64 KB chunks keep 128 KB an SM in
 *     flight against the grid's 320 KB, at a lag that must exceed what all
 *     resident blocks have in flight (264 x 64 KB = 17 MB) and stay within
 *     the L2: below it the out items waited for their stats, above it the
 *     L2 lost the chunks.
 * In the first two the time a block saves in one phase reappears in
 * another (the stores, the wait): the phases of a block are not what sets
 * the grid's rate. None was kept.
 * 16-bit rows of up to 1048576 columns fit one cluster of 16 blocks of 512
 * threads, two an SM, with 8 vectors a thread in shared memory beside the 8
 * in registers (128 KB of the row a block, 2 MB a cluster;
 * launch_cluster_regs_ns, the default): the exchange of the
 * 262144 rows' clusters (94% there) instead of the L2's, and no ticket.
 * Predicted (before the run): bf16 256 x 1048576 80 -> 85-90%. Measured
 * (H200, 2026-12-04 15:45 UTC, two interleaved rounds, no counters, % of
 * copy bandwidth, grid -> cluster): bf16 256 x 1048576 80.1, 80.2 -> 87.1,
 * 87.6; fp16 81.5, 81.2 -> 87.4, 86.9; bf16 300 x 1000000 79.5, 79.1 ->
 * 88.0, 88.2; bf16 3 x 600000 10.5 -> 17.0, 17.3. Counters (bf16 256 x
 * 1048576, 1980 MHz): 87.5%, DRAM bytes as the model's, long_scoreboard 31%,
 * not_selected 15%, mio_throttle 13% of stalls; 64 registers, no spills.
 * Checked the same call (the creg-ns group of tests/gpu/row_lengths.sh:
 * fp32 / fp16 / bf16 at 1 x 1048576, 3 x 600000, 133 x 1000000, 40 x
 * 524296; memcheck, racecheck, synccheck at 3 x 600000 clean), and the
 * GPU test suite's awkward sizes for softmax with the switch on (558 cases,
 * 15:52 UTC, none failed). The default since; KBENCH_SOFTMAX_CREG_NS=0
 * sends these rows back to the grid.
 * fp32 rows of 262145-524288 columns fit the same cluster (2 MB) and went
 * to the grid too. Measured (H200, 2026-12-04 16:47-16:49 UTC, two
 * interleaved rounds, fp32, % of copy bandwidth, grid -> cluster): 320 x
 * 400000 85.4, 85.8 -> 91.0, 91.3 (1.065x); 128 x 1048576 (still the grid's)
 * 0.998x. Checked the same call (the creg-ns32 group: 1 x 524288, 3 x
 * 300000, 133 x 400000, 40 x 262148 in fp32, fp16 and bf16; memcheck at 3 x
 * 300000 clean). The default since (KBENCH_SOFTMAX_CREG_NS=0 sends them to
 * the grid too).
 * fp32 rows past 524288 columns over several such clusters, the clusters'
 * (max, sum) pairs met in the L2 as the grid's blocks' are (a row's two
 * clusters of 16 blocks at 1048576 instead of its 26 blocks; the item from a
 * ticket taken by each cluster's block 0, or from the cluster's index).
 * Predicted (before the run): fp32 128 x 1048576 82.5 -> 85-88%. Measured
 * (same call, grid -> clusters with a ticket / by index): 128 x 1048576
 * 82.5, 82.5 -> 70.3, 70.4 / 71.3, 71.0; 64 x 2097152 77.8, 77.9 -> 66.9,
 * 67.1 / 65.6, 65.6; and at 320 x 400000, one cluster a row, the same
 * kernel as the one-cluster path above but for the ticket and the L2 round
 * trip with a single party: 91.2 (no L2) -> 68.8 / 74.7. The round trip
 * (the publish's atomic, the poll, the pair's read) costs a cluster ~18%
 * and the ticket another ~8%: a cluster's 8 SMs hold nothing else while
 * their one row waits, where the grid's two blocks an SM come from
 * different moments of different rows and overlap their waits with the
 * other's loads. Checked (row_lengths.sh groups xcl-1 and xcl-2, fp32 at 1 x
 * 1048576 up to 3 x 4194304 and 1030 x 524296; memcheck, racecheck and
 * synccheck clean), not kept (code in commit 4b2c104).
 * The grid's fp32 exps kept (tried 2026-12-05; code in commit f20845a,
 * KBENCH_SOFTMAX_GRID_KEEP=1 there). A thread's 8 register vectors
 * keep their exps for the write (y = e scale); its 12 shared-memory vectors
 * took exp(x - m) for the sum and again, exp(x - M) / s, for the write: 48
 * MUFU.EX2 and about 100 more instructions a thread in the stores' phase
 * (3.0 us of a block's 21.7 in the trace above), 24576 EX2 a block, about
 * 0.8 us of the SM's EX2 pipe (16 a clock). That form's sum pass wrote its
 * exps back into the thread's own slots (12 STS.128; fp32, whose exps fit
 * the slot) and the write multiplied them by the same scale as the register
 * vectors'. SASS: the two loops' bodies 8 MUFU fewer an unrolled pair, 2 STS
 * more; 64 registers, no spills (both). Prediction (before any run): fp32 128
 * x 1048576 82.4 -> 83-85% if the stores' phase waits on the EX2 pipe, level
 * if it waits on the stores; 16-bit unchanged (the slot holds 16-bit x).
 * Measured (H200, 2026-12-05 01:42 UTC, two interleaved rounds, no check, %
 * of the copy bandwidth, grid -> keep): fp32 128 x 1048576 82.4, 82.4 ->
 * 82.0, 81.7 (0.994x); 200 x 600000 82.8, 83.0 -> 84.1, 83.9 (1.013x); 64 x
 * 2097152 78.2, 77.5 -> 76.7, 76.2 (0.982x): level, so the stores' phase
 * waits on the stores, not on the EX2 pipe. Not kept.
 * The grid's round trips to the L2 that nothing needs to wait for
 * (KBENCH_SOFTMAX_GRID_TRIM=1, softmax_fused_grid_r8_s12_trim; grid_rows.cuh,
 * "the trimmed exit"). Every block ends in kb_grid_leave, a block barrier
 * behind thread 0's add to one global count (the last block out resets the
 * exchange's counters), and warp 0 waits out the add that releases the
 * row's slot before its stores; the publish is an add whose return thread
 * 0 awaits before its first poll. Under the grid's traffic one such trip
 * is a microsecond or more (the persistent form's ticket, above, outlasted
 * 3 us of stores), and the trace's 2.5 us from a block's end to the next
 * item on its SM holds two of them (the leave and the next block's ticket).
 * Here the block drawing the last ticket resets the ticket, the last
 * release of each slot (by its count) resets the slot, read from the add's
 * old value at the block's end, and the publish is a reduction: no block
 * waits for the leave, warp 0 stores at once, the poll starts a trip
 * earlier. SASS: the same 64 registers, no spills; the default kernels'
 * SASS unchanged. Prediction (before any run): a block's lifetime 24 ->
 * 22.5-23.5 us, fp32 128 x 1048576 82.4 -> 84-86%, 64 x 2097152 77.8 ->
 * 79-81%, 200 x 600000 83-84 -> 85-87%; level if the trips overlap other
 * blocks' work already (the pairs-in-one-trip A/B above moved time between
 * phases without shortening a lifetime). Checked and measured by the next
 * GPU run (tests/gpu/row_lengths.sh: the grid-trim group and its A/B).
 * Measured on an H100 (80GB HBM3; no H200 was lent; 2026-12-05 09:18 UTC,
 * two interleaved rounds, no check, % of that GPU's copy bandwidth, grid ->
 * trimmed): fp32 128 x 1048576 93.0, 93.2 -> 93.8, 93.4 (1.006x); 200 x
 * 600000 93.8, 94.1 -> 94.9, 94.2 (1.006x); 512 x 1048576 95.6, 95.6 ->
 * 96.9, 97.0 (1.014x); 64 x 2097152 89.3, 89.3 -> 91.3, 91.1 (1.022x). The
 * direction predicted, a quarter to a half of the size on this GPU, whose
 * copy bandwidth the grid nearly fills already. The checks (the grid-trim
 * group: fp32, fp16 and bf16 at six shapes, 1030 rows among them, the three
 * sanitizers) clean. bench/pc_stalls at fp32 128 x 1048576 (same GPU, the
 * default grid) put 20.6% of the samples at the barrier behind thread 0's
 * wait for the row's pairs and 10.4% at kb_grid_leave's barrier, which the
 * trimmed exit removes. Again at 09:36 UTC (another H100 of the same kind):
 * 128 x 1048576 92.7, 93.2 -> 93.6, 93.7 (1.007x), 200 x 600000 1.005x, 64 x
 * 2097152 89.2, 89.4 -> 90.8, 90.9 (1.017x). On the H200 (2026-12-05
 * 19:49-19:50 UTC, kbench ef8fff6, two interleaved rounds, no check, % of
 * the copy bandwidth, KBENCH_SOFTMAX_GRID_TRIM=0 -> trimmed): fp32 128 x
 * 1048576 82.3, 82.4 -> 84.7, 85.0 (1.030x); 512 x 1048576 85.5, 85.4 ->
 * 88.9, 89.0 (1.041x). Inside the prediction at 128 x 1048576 (84-86%),
 * and twice the H100's gain where the DRAM is further from full: the
 * trips the trimmed exit removes were a larger share of a block's lifetime
 * there. The default since; the report of 19:50-19:56 UTC holds 128 x
 * 1048576 at 85.2% (82.4% in 8485299's).
 * The grid's end, halved (tried 2026-12-05: KBENCH_SOFTMAX_GRID_TAIL=N,
 * softmax_fused_grid_r8_s12_tail, and _trim_tail with the trimmed exit).
 * fp32 128 x 1048576 is 3328 items of 26 blocks a row over 264 block slots:
 * 12.6 lifetimes of ~22 us each, so once the ticket runs out the last
 * lifetime's items finish one by one with ever fewer slots busy, and the
 * launch's end waits for the last of them (the 10.4% of pc_stalls' samples
 * at kb_grid_leave's barrier on the H100 include that wait). Here the last
 * N rows are split over 2 nb blocks of half the bytes each (52 a row at
 * 1048576; the kernel finds N from its grid, (rows + N) nb blocks): the items
 * that end the launch are half as long, so the slots stand idle for about
 * half as long at the end. Only where 2 nb <= KB_GRID_MAXB (not fp32 rows
 * past 1310720) and no slot of the exchange is taken twice (rows <= 1024).
 * bench/grid_trace.py now reports the block slots left idle in the ramp and
 * the tail, to measure what there is to win. Prediction (before any run):
 * fp32 128 x 1048576 +1-3% with N = 5 (260 of the last items halved, about
 * one lifetime's), if the trace's tail holds 3% or more of the slot time;
 * 200 x 600000 the same or less; 512 x 1048576 half of it (a launch four
 * times as long); level where the tail is small or halved items cost more
 * than they save (a block's exchange per byte doubles).
 * Measured on an H100 (80GB HBM3; the H200s were not lent; 2026-12-05
 * 10:10-10:17 UTC). bench/grid_trace at fp32 128 x 1048576: of the 264 block
 * slots' time over the launch 13.5% idle, 0.1% in the ramp, 2.6% in the tail
 * (17.2 us from the last item's start to the end), the rest the 3.5 us
 * between a block's end and the next block's item on its SM; with the
 * trimmed exit 7.5% idle (1.6 us between blocks), tail 2.2%; with N = 5
 * the tail 1.6% (10.5 us), but the launch no shorter (396.8 against 394.9
 * us). A/B (interleaved, no check, % of that GPU's copy bandwidth; the
 * trimmed exit's arms one round): 128 x 1048576 92.9, 92.9 -> N = 5 92.3
 * (0.994x), trimmed 93.6, trimmed + N = 5 93.4, + N = 10 92.8; 200 x
 * 600000 0.999x; 512 x 1048576 0.996x (the trimmed exit 1.012x, with N = 5
 * or 10 1.008x). The tail's idle slots shrank as predicted and bought
 * nothing: the halved items' extra exchanges cost what the shorter end
 * saved, and with the DRAM nearly busy (93%) the slots idle at the end do
 * not hold back bytes. Checked (group grid-tail: fp32, fp16, bf16 at six
 * shapes; memcheck, racecheck and synccheck at 7 x 600000 clean). Not kept
 * (code in commit 53e4191).
 * Rows of 32 and 128 vectors, another shape of block (KBENCH_SOFTMAX_VEC=1..6 in the A/B:
 * 128 or 512 threads with 32 lanes a row, or 16 lanes a row with twice the
 * vectors a lane, beside the default's 256 threads and 32 lanes). PyTorch's
 * eager softmax has been 1.0-1.4% faster at fp32 1048576 x 128 in four
 * reports in a row (its warp softmax: 128-thread blocks, two rows a warp,
 * eight 4-byte loads a lane), and its compiled one 0.5% faster at bf16
 * 262144 x 1024 in the last. What moves these rows is not known: the 4
 * vectors a lane that won for 16-bit rows of 9-32 vectors did not move fp32.
 * Prediction (before the run): within 1% either way; kept only if one of
 * them is ahead of the default by more than the spread in both rounds.
 * Measured (H200, 2026-12-02 03:50-04:00 UTC, two rounds, same method, % of
 * copy bandwidth; code in commit 1c3fc43): fp32 1048576 x 128, 256 threads
 * 32 lanes 96.8, 96.8 -> 128 threads 32 lanes 99.1, 99.5, 512 threads 92.7,
 * 92.4, 16 lanes 2 vectors 97.9, 98.0; fp32 2097152 x 100 87.4, 87.5 ->
 * (128 threads) 89.4, 89.2; bf16 1048576 x 256 97.2, 97.3 -> 97.0, 97.5;
 * bf16 262144 x 1024, 256 threads 32 lanes 4 vectors 98.0, 98.0 -> 128
 * threads 97.9, 98.1, 512 threads 98.5, 98.6, 16 lanes 8 vectors 97.5, 97.7;
 * with 512 threads bf16 349525 x 768 99.1 -> 97.1, 96.9, fp16 262144 x 1024
 * 97.9, 98.3 -> 98.3, 98.5. fp32 rows of 17-32 vectors take 128-thread
 * blocks, 2.0-2.7 points ahead (16-bit rows of that length take 4 vectors a
 * lane, above, and did not move); rows of 65-128 vectors keep 256 threads,
 * the 512-thread gain at 1024 columns being smaller than its loss at 768.
 * 512-thread blocks for 16-bit rows of 121-128 vectors (by default since
 * 2026-12-02; KBENCH_SOFTMAX_WIDE=0 for 256 threads, =2 for 97-128 vectors),
 * first written for 16-bit rows of 97-128 vectors
 * 16-bit rows of 97-128 vectors (bf16 1024 columns, not 768, which is 96
 * vectors). PyTorch's compiled softmax has been 0.5-0.6% ahead at bf16
 * 262144 x 1024 in three reports (98.4% against 97.9%), and 512 threads
 * measured 98.5-98.6% there above. Predicted: bf16 and fp16 262144 x 1024
 * 97.9 -> ~98.5%, level with PyTorch or just ahead; nothing else moves.
 * Measured (H200, 2026-12-02 07:25-07:28 UTC, two rounds, no counters, L2
 * flushed, % of copy bandwidth, 256 -> 512 threads): bf16 262144 x 1024
 * 97.94 -> 98.38, 97.97 -> 98.25; fp16 262144 x 1024 97.82 -> 98.68, 97.88
 * -> 98.40; but bf16 300000 x 800 (100 vectors) 98.23 -> 96.91, 98.22 ->
 * 96.96. Kept only for rows of 121-128 vectors (1024 columns and just
 * under); 97-120 are not measured past 100 and keep 256 threads.
 *
 * Short unaligned rows, 5 elements a lane (prediction, before any
 * measurement). The tile kernel's lanes took 8 elements each whatever the
 * row: at 33 columns, 8 lanes a row, 64 slots for 33 elements, and an idle
 * slot costs what a busy one does (its load, max, exp, sum, scale and store
 * run, predicated by value only). The stall counters put bf16 33 columns at
 * not_selected 36% (issue-bound: 51.8% of the copy bandwidth) and fp32 at
 * 80%. Rows of at most 5 G elements now take a kernel of 5 a lane (40 slots
 * at 33 columns): about 35% fewer instructions in the row pass. Predicted:
 * bf16 33 columns 52% -> 65-70%, fp32 80% -> 85-90%; nothing elsewhere in
 * the sweep (32 and 128 columns are aligned and take the register path).
 * KBENCH_TILE_NARROW=0 keeps 8 a lane. Beside it, the group's (max, sum) no
 * longer merge online over the shuffles (each of log2(G) steps an exp pair, a
 * max and a rescale: 13 MUFU in the 5-a-lane loop of 145 instructions) but
 * as a max butterfly, then the exps against the row's max and a sum
 * butterfly: ~20 instructions fewer a row; measured against the committed
 * build (the old kernel) and KBENCH_TILE_NARROW=0 (the 8-a-lane kernel with
 * the new reductions), so each change shows on its own.
 * Measured (same run, % of copy bandwidth, old kernel -> new reductions at 8
 * a lane -> 5 a lane): 4067203 x 33 fp32 80.2 -> 81.7 -> 87.2, bf16 52.0 ->
 * 63.9 -> 73.2; 1743087 x 77 fp32 87.1 -> 94.7 -> 96.7, bf16 53.9 -> 66.4 ->
 * 78.8. Both changes moved what was predicted; bf16 at 33 columns remains
 * short of 85% (66-byte rows: most vectors straddle two rows).
 * Tried and not kept (17:30 UTC, two rounds, same method, tile -> flat): a
 * kernel holding a block's rows as one run of 16-byte chunks in registers
 * (no vector straddling rows is split: each chunk's per-row maxima and sums
 * go to shared memory and a thread a row combines its chunks' partials in
 * order). 4067203 x 33 fp32 87.3 -> 90.1, bf16 73.3 -> 52.5; 1743087 x 77
 * fp32 96.5 -> 87.5, bf16 79.0 -> 51.9. At 16 bits it took 240 us whatever
 * the row, fp32 or not: bound by the chunk-to-row bookkeeping and the
 * serial combine, not by memory.
 *
 * Budget (ptxas, sm_90): a cap of 64 registers per thread everywhere
 * (__launch_bounds__(T, 1024 / T)), no spills, no stack, no local memory.
 * fp32 vectors: 4 per thread 32-36 registers (256 x 4: 6 blocks, 1536
 * threads per SM), 8 per thread 56 (1024 threads per SM: one 1024-thread
 * block, two of 512 or four of 256). 16-bit vectors: 4 per thread 48-56,
 * 8 (packed) 64. One-element chunks: 11-32 up to 8 per thread, 47-55 for 16,
 * 64 for 32. Peeled: the same plus 0-2 registers (the head and tail exps
 * wait in shared memory, 2 W floats a row, so none spill). Tile: 30-40
 * registers, 32 KB (fp32) / 16 KB of static shared memory. Streaming 28-48.
 * Shared memory: one float2 per warp (32-256 bytes), plus 8 bytes in the
 * cluster kernel.
 *
 * Bytes per element: 2 * size, the model, on the register path; the
 * streaming path reads x twice (3 * size, the second read mostly from L2:
 * each block's slice is 1/8 of a row).
 *
 * Prediction at 32768 x 4096 fp32: about 90% of the copy bandwidth (3.9 TB/s).
 * 256 threads x 4 vectors per row, 6 blocks and 96 KB of loads in flight per
 * SM, far above the ~35 KB per SM that 4.3 TB/s at ~1 us latency needs; the
 * losses are the gap between a block's loads and its stores (the barrier of
 * the block reduction) and the block turnover, mostly hidden by the 5 other
 * blocks. 8192 x 32768 fp32 (1024 x 8, one block per SM) should land a few
 * points lower (85-90%): a lone block per SM has no loads in flight while it
 * reduces and stores, and 8192 rows are 62.1 waves of 132. bf16 at 4096
 * (128 x 4, widened to floats, 8 blocks per SM) about the same as fp32; the
 * packed 16-bit configurations (rows of 1025-2048 and 8193-65536 elements,
 * bf16 8192 x 32768 among them: 512 x 8, two blocks per SM) pay a second exp
 * per element, about half of the 16 MUFU/clk/SM at full bandwidth: expect
 * them within a few points of fp32.
 *
 * Measured (H200, 2026-11-29, L2 flushed before each sample): 258.9 us at
 * 32768 x 4096 fp32, 98.8% of the 4196 GB/s copy bandwidth; bf16 99.2%; at
 * 8192 x 32768, 99.8% fp32 and 99.1% bf16 (the predicted 85-90% for the lone
 * 1024-thread block per SM was too pessimistic: its 128 KB of loads in flight
 * are several times what the latency needs, and the gap while it reduces and
 * stores costs less than feared). DRAM excess 1.00x everywhere; achieved
 * occupancy 46-70% of a 50-75% theoretical. The unaligned 4099 x 3001 case
 * takes the one-element path: 86.1% fp32, 51.9% bf16 (2-byte scalar loads;
 * peeling the rows to 16-byte alignment is the next step there). */
#include <cooperative_groups.h>

#include "kernels/cluster.cuh"
#include "kernels/grid_pipe.cuh"
#include "softmax.cuh"

namespace cg = cooperative_groups;

/* The max of the 16-bit elements of the packed vectors r[0..N), as float:
 * two elements per instruction (three-input VHMNMX), no widening. */
template <typename T, int N> static __device__ __forceinline__ float packed_max(const uint4 *r)
{
    using T2 = typename std::conditional<std::is_same<T, __half>::value, __half2,
                                         __nv_bfloat162>::type;
    const unsigned ninf = kb_vec_neg_inf<T>().x;
    T2 a;
    memcpy(&a, &ninf, sizeof a);
#pragma unroll
    for (int k = 0; k < N; k++) {
        T2 h[4];
        memcpy(h, &r[k], sizeof h);
#pragma unroll
        for (int j = 0; j < 4; j++)
            a = __hmax2(a, h[j]);
    }
    return fmaxf(kb_to_float(a.x), kb_to_float(a.y));
}

/* Makes the packed registers r[0..N) opaque to the compiler: each word goes
 * through (w ^ z) ^ z inside an asm statement, an identity for any z that
 * the compiler cannot see through. Without it the compiler keeps the floats
 * widened for the sum alive until the write (twice the registers, spills)
 * instead of widening again. One LOP3 per word. */
template <int N> static __device__ __forceinline__ void launder(uint4 *r, unsigned z)
{
#pragma unroll
    for (int k = 0; k < N; k++) {
        asm volatile("xor.b32 %0, %0, %4;\n\txor.b32 %0, %0, %4;\n\t"
                     "xor.b32 %1, %1, %4;\n\txor.b32 %1, %1, %4;\n\t"
                     "xor.b32 %2, %2, %4;\n\txor.b32 %2, %2, %4;\n\t"
                     "xor.b32 %3, %3, %4;\n\txor.b32 %3, %3, %4;"
                     : "+r"(r[k].x), "+r"(r[k].y), "+r"(r[k].z), "+r"(r[k].w)
                     : "r"(z));
    }
}

/* A row's nb (max, sum) pairs published through grid_rows.cuh, merged in one
 * fixed order (lane r takes blocks r, r + 32, ..., then the warp), so every
 * warp that calls it gets the same bits. All 32 lanes call it. */
static __device__ __forceinline__ float2 grid_pairs(int64_t row, int nb, int lane)
{
    float2 p = kb_online_empty();
    for (int r = lane; r < nb; r += 32) {
        const float4 q = kb_grid_get(row, r);
        p = kb_online_merge(p, make_float2(q.x, q.y));
    }
    return kb_warp_online<32>(p);
}

/* bench/grid_trace.cu builds this file with SOFTMAX_GRID_TRACE: thread 0 of
 * each block of the grid path stamps the global timer and the SM's clock at
 * the edges of its item (grid_trace[item][i] and [8 + i], i < 6; [6] the SM,
 * [7] the row), where the trace buffer is set. The kernel reads the
 * buffer's address once, into grid_trace_at at its start, so that a stamp
 * is two clock reads and stores: a load of it at every stamp would wait
 * behind the stores before it and lengthen the phase it closes (as
 * gpipe_trace's stamps did until 2026-12-06, grid_pipe.cuh). */
#ifdef SOFTMAX_GRID_TRACE
static __device__ unsigned long long *grid_trace;
static __device__ __forceinline__ void grid_stamp(unsigned long long *trace, unsigned item,
                                                  int64_t row, int i)
{
    if (threadIdx.x != 0 || trace == nullptr)
        return;
    const unsigned long long g = kb_globaltimer(), c = (unsigned long long)clock64();
    trace[(size_t)item * 16 + i] = g;
    trace[(size_t)item * 16 + 8 + i] = c;
    if (i == 0) {
        trace[(size_t)item * 16 + 6] = kb_smid();
        trace[(size_t)item * 16 + 7] = (unsigned long long)row;
    }
}
#define GRID_STAMP(i)                                                                      \
    do {                                                                                   \
        if constexpr (GRID)                                                                \
            grid_stamp(grid_trace_at, item, row, i);                                       \
    } while (0)
#else
#define GRID_STAMP(i)                                                                      \
    do {                                                                                   \
    } while (0)
#endif

/* ---- the register path: one read of x, one write of y ------------------------------
 *
 * A group of TPR threads owns a row (TPR <= 32: a sub-warp or a warp, THREADS /
 * TPR rows per block; TPR = THREADS: the whole block). Thread t of the group
 * holds chunks t, t + TPR, ..., t + (NVEC - 1) * TPR of the row, a chunk being
 * one 16-byte vector (CW = 16 / sizeof(T) elements, rows 16-byte aligned) or
 * one element (CW = 1, any alignment). Chunks past the row's end read as
 * -inf, whose exp is 0, and are not written.
 * CL > 1: the row is held by the CL blocks of a thread-block cluster (TPR =
 * THREADS), one SM's registers each: thread t of block `rank` holds chunks
 * rank TPR + t + k CL TPR, so each warp still reads 512 contiguous bytes; the
 * blocks' (max, sum) pairs meet through distributed shared memory.
 * NS > 0 (fp32, with a cluster): each thread holds NS more chunks, k = NVEC ..
 * NVEC + NS - 1, in its own dynamic shared-memory slots (copied in by
 * cp.async while the register chunks load; their exps are computed again at
 * the write), so a 16-block cluster holds 16 x 256 KB rows.
 * GRID: the row is held by nb ordinary blocks (TPR = THREADS), block `rank`
 * as a cluster's block would be, the item (row, rank) from the ticket and
 * the pairs met in the L2 (kernels/grid_rows.cuh); NS > 0 in any dtype.
 * TRIM (GRID): grid_rows.cuh's trimmed exit, the partial published by a
 * reduction that is not waited for. */
template <typename T, int THREADS, int TPR, int NVEC, int CW, bool PEEL = false, int CL = 1,
          int NS = 0, bool PUSH = false, bool GRID = false, bool TRIM = false>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS)
    softmax_fused_regs(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols)
{
    constexpr int W = kb_vec_width<T>();
    static_assert(CW == 1 || CW == W, "a chunk is one element or one 16-byte vector");
    static_assert(TPR <= 32 ? THREADS % TPR == 0 : TPR == THREADS,
                  "a row is a sub-warp, a warp or the whole block");
    static_assert(!PEEL || (CW == W && TPR >= W - 1),
                  "a peeled row is 16-byte vectors, its head and tail one element a thread");
    static_assert(CL == 1 || (TPR == THREADS && !PEEL && CW == W),
                  "a cluster's row is whole blocks of aligned 16-byte chunks");
    static_assert(NS == 0 || CL > 1 || GRID,
                  "shared-memory chunks: rows over a cluster or a grid");
    static_assert(!GRID || (CL == 1 && TPR == THREADS && !PEEL && CW == W && !PUSH),
                  "a grid's row is whole blocks of aligned 16-byte chunks, no cluster");
    static_assert(!TRIM || GRID, "the trimmed exit is the grid's");
    /* Up to 32 elements per thread, the registers hold floats and the exps
     * overwrite them. 64 16-bit elements stay packed (32 registers instead of
     * 64) and the exp is computed again at the write. */
    constexpr bool PACKED = CW > 1 && sizeof(T) == 2 && NVEC * CW > 32;
    constexpr int RPB = THREADS / TPR;

    const int t = threadIdx.x % TPR;
    /* GRID: nb blocks a row, the block's item (row, rank) from the ticket
     * (grid_rows.cuh); a cluster: CL blocks a row, the rank the cluster's. */
    int nb = CL;
    unsigned item = 0, done = 0; /* TRIM: thread 0's count of the slot's releases */
    if constexpr (GRID) {
        nb = (int)kb_grid_row_blocks(cols / CW, (int64_t)THREADS * (NVEC + NS));
        item = kb_grid_take<TRIM>();
    }
    const int64_t row = GRID     ? (int64_t)(item / (unsigned)nb)
                        : CL > 1 ? (int64_t)(blockIdx.x / CL)
                                 : (int64_t)blockIdx.x * RPB + threadIdx.x / TPR;
    const int rank = GRID ? (int)(item % (unsigned)nb) : CL > 1 ? (int)kb_cluster_rank() : 0;
#ifdef SOFTMAX_GRID_TRACE
    unsigned long long *const grid_trace_at = GRID ? grid_trace : nullptr; /* GRID_STAMP's */
#endif
    GRID_STAMP(0);
    /* The thread's first chunk in the row and the chunks between its chunks. */
    const int tc = rank * TPR + t;
    const int stride = nb * TPR;
    /* Chunk k of this thread starts at element k * TPR * CW + t * CW of the row
     * and is in range iff k * TPR * CW < lim: one compare with a constant per
     * chunk. A group past the last row (only in the last block) owns no
     * elements but still takes part in the shuffles. cols <= 65536 here
     * (1048576 with a cluster, 4194304 over a grid: offsets stay below 2^22). */
    const int64_t first = row < rows ? row * cols : 0;
    /* PEEL: the row (not 16-byte aligned, as when cols % W != 0) is head
     * elements up to the first 16-byte boundary, a body of whole vectors and
     * tail elements; thread t < head holds head element t, t < tail tail
     * element t, one element each (TPR >= W - 1), and the chunks cover the
     * body alone. Without PEEL, head = tail = 0 and the body is the row. */
    int head = 0, tail = 0, body = (int)cols;
    if constexpr (PEEL) {
        const int mis = (int)(first % W);
        head = mis ? W - mis : 0;
        head = head < cols ? head : (int)cols;
        body = ((int)cols - head) / W * W;
        tail = (int)cols - head - body;
        if (row >= rows)
            head = tail = 0;
    }
    const int lim = row < rows ? body - tc * CW : 0;
    const T *xr = x + first + head + tc * CW;
    T *yr = y + first + head + tc * CW;
    const T *xt = x + first + head + body; /* the tail */
    float eh = kb_neg_inf(), et = kb_neg_inf();
    __shared__ float peel_e[PEEL ? RPB : 1][2][W]; /* a group's head and tail exps */
    if constexpr (PEEL) {
        eh = t < head ? kb_load(x + first, t) : kb_neg_inf();
        et = t < tail ? kb_load(xt, t) : kb_neg_inf();
    }

    uint4 raw[PACKED ? NVEC : 1];
    float v[PACKED ? 1 : NVEC * CW];

    /* NS > 0: the shared-memory chunks first, so that they fly with the
     * register chunks' loads (past the row's end: no bytes read). */
    extern __shared__ __align__(16) uint4 sm_xs[];
    if constexpr (NS > 0) {
#pragma unroll
        for (int k = 0; k < NS; k++) {
            const int c = (NVEC + k) * stride * CW;
            kb_cp_async16(kb_smem_u32(&sm_xs[k * THREADS + threadIdx.x]), c < lim ? xr + c : x,
                          c < lim ? 16 : 0);
        }
        kb_cp_async_commit();
    }

    /* Every load is issued before any is used: NVEC independent loads in flight. */
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        const int c = k * stride * CW;
        if constexpr (PACKED) {
            raw[k] = c < lim ? kb_ld128(xr + c) : kb_vec_neg_inf<T>();
        } else if constexpr (CW > 1) {
            kb_unpack<T>(c < lim ? kb_ld128(xr + c) : kb_vec_neg_inf<T>(), &v[k * CW]);
        } else {
            v[k] = c < lim ? kb_load(xr, c) : kb_neg_inf();
        }
    }
    /* The cluster's exchange (CL > 1), set up while the loads fly. */
    __shared__ kb_xchg<CL, PUSH> xc;
    kb_xchg_open(xc);

    /* The thread's max: packed, or over the floats in four independent chains. */
    float m;
    if constexpr (PACKED) {
        m = packed_max<T, NVEC>(raw);
    } else {
        float mx[4] = {kb_neg_inf(), kb_neg_inf(), kb_neg_inf(), kb_neg_inf()};
#pragma unroll
        for (int i = 0; i < NVEC * CW; i++)
            mx[i % 4] = fmaxf(mx[i % 4], v[i]);
        m = fmaxf(fmaxf(mx[0], mx[1]), fmaxf(mx[2], mx[3]));
    }
    if constexpr (PEEL)
        m = fmaxf(m, fmaxf(eh, et));
    if constexpr (NS > 0) {
        kb_cp_async_wait<0>(); /* this thread's own copies, read by it alone */
#pragma unroll 2 /* fully unrolled, the hoisted shared loads spill */
        for (int k = 0; k < NS; k++) {
            float f[CW];
            kb_unpack<T>(sm_xs[k * THREADS + threadIdx.x], f);
            const bool in = (NVEC + k) * stride * CW < lim;
#pragma unroll
            for (int j = 0; j < CW; j++)
                m = in ? fmaxf(m, f[j]) : m;
        }
    }
    /* A thread with no elements subtracts 0, so its -inf entries give exp 0. */
    const float ms = m == kb_neg_inf() ? 0.0f : m;
    GRID_STAMP(1);

    /* The thread's sum of exp(x - m); the float registers keep the exps. */
    float sm[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        if constexpr (PACKED) {
            float g[CW];
            kb_unpack<T>(raw[k], g);
#pragma unroll
            for (int j = 0; j < CW; j++)
                sm[j % 4] += kb_exp2((g[j] - ms) * KB_LOG2E);
        } else {
#pragma unroll
            for (int j = 0; j < CW; j++) {
                const int i = k * CW + j;
                v[i] = kb_exp2((v[i] - ms) * KB_LOG2E);
                sm[i % 4] += v[i];
            }
        }
    }
    if constexpr (NS > 0) {
#pragma unroll 2
        for (int k = 0; k < NS; k++) {
            if ((NVEC + k) * stride * CW < lim) {
                float f[CW];
                kb_unpack<T>(sm_xs[k * THREADS + threadIdx.x], f);
#pragma unroll
                for (int j = 0; j < CW; j++) {
                    f[j] = kb_exp2((f[j] - ms) * KB_LOG2E);
                    sm[j % 4] += f[j];
                }
            }
        }
    }
    if constexpr (PACKED)
        launder<NVEC>(raw, (unsigned)lim);
    if constexpr (PEEL) {
        /* exp(-inf) = 0 for a thread without one. The two exps wait for the
         * write in this thread's own shared-memory slots, not in registers (at
         * 32 floats a thread those would spill). */
        eh = kb_exp2((eh - ms) * KB_LOG2E);
        et = kb_exp2((et - ms) * KB_LOG2E);
        sm[0] += eh;
        sm[1] += et;
        /* Only threads t < W can hold a head or tail element; the others
         * write nothing (a shared sink slot written by many threads at once
         * would be a data race, which racecheck reports). */
        if (t < W) {
            peel_e[threadIdx.x / TPR][0][t] = eh;
            peel_e[threadIdx.x / TPR][1][t] = et;
        }
    }

    /* The row's (max, sum): shuffles within the group, then across the warps. */
    float2 s = make_float2(m, (sm[0] + sm[1]) + (sm[2] + sm[3]));
    if constexpr (TPR <= 32) {
        s = kb_warp_online<TPR>(s);
    } else {
        __shared__ float2 red[THREADS / 32];
        s = kb_block_online<THREADS>(s, red);
    }
    if constexpr (CL > 1) {
        /* The cluster's pairs (kb_xchg): lane r of every warp takes block
         * r's, and the warp merges them in one fixed order, so every warp of
         * every block gets the same bits; the wait before the exit keeps this
         * block's slots alive for its peers. */
        const int lane = threadIdx.x % 32;
        kb_xchg_put(xc, make_float4(s.x, s.y, 0.0f, 0.0f));
        float2 p = kb_online_empty();
        if (lane < CL) {
            const float4 q = kb_xchg_get(xc, lane);
            p = make_float2(q.x, q.y);
        }
        s = kb_warp_online<32>(p);
        kb_xchg_done(xc);
    }
    if constexpr (GRID) {
        /* The row's nb pairs, met in the L2 (grid_rows.cuh): lane r merges
         * blocks r, r + 32, ..., then the warp, in one fixed order. */
        const int lane = threadIdx.x % 32;
        GRID_STAMP(2);
        kb_grid_put<TRIM>(row, rank, nb, make_float4(s.x, s.y, 0.0f, 0.0f));
        GRID_STAMP(3);
        s = grid_pairs(row, nb, lane);
        if constexpr (TRIM)
            done = kb_grid_done_count(row);
        else
            kb_grid_done(row);
        GRID_STAMP(4);
    }
    const float inv = kb_rcp(s.y);
    /* exp(x - M) = exp(x - m) * exp(m - M) <= exp(x - m) for a thread with elements. */
    const float scale = kb_exp2((ms - s.x) * KB_LOG2E) * inv;

#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        const int c = k * stride * CW;
        if (c < lim) {
            if constexpr (PACKED) {
                float g[CW];
                kb_unpack<T>(raw[k], g);
#pragma unroll
                for (int j = 0; j < CW; j++)
                    g[j] = kb_exp2((g[j] - s.x) * KB_LOG2E) * inv;
                kb_st128(yr + c, kb_pack<T>(g));
            } else if constexpr (CW > 1) {
                float g[CW];
#pragma unroll
                for (int j = 0; j < CW; j++)
                    g[j] = v[k * CW + j] * scale;
                kb_st128(yr + c, kb_pack<T>(g));
            } else {
                kb_store(yr, c, v[k] * scale);
            }
        }
    }
    if constexpr (PEEL) {
        if (t < head)
            kb_store(y + first, t, peel_e[threadIdx.x / TPR][0][t] * scale);
        if (t < tail)
            kb_store(y + first + head + body, t, peel_e[threadIdx.x / TPR][1][t] * scale);
    }
    if constexpr (NS > 0) {
#pragma unroll 2
        for (int k = 0; k < NS; k++) {
            const int c = (NVEC + k) * stride * CW;
            if (c < lim) {
                float f[CW];
                kb_unpack<T>(sm_xs[k * THREADS + threadIdx.x], f);
#pragma unroll
                for (int j = 0; j < CW; j++)
                    f[j] = kb_exp2((f[j] - s.x) * KB_LOG2E) * inv;
                kb_st128(yr + c, kb_pack<T>(f));
            }
        }
    }
    if constexpr (CL > 1)
        kb_cluster_wait();
    GRID_STAMP(5);
    if constexpr (TRIM) {
        if (threadIdx.x == 0)
            kb_grid_finish(row, rows, nb, done);
    } else if constexpr (GRID) {
        kb_grid_leave(rows);
    }
}

/* ---- the tile path: short rows of any length ------------------------------------
 *
 * Rows of up to 8 G elements (G = 4, 8, 16, 32 lanes a row) whose length is no
 * multiple of the vector width (cols = 33, 7, 100): the rows a block owns are
 * one contiguous span of x, so the block copies the span into shared memory
 * with 16-byte loads (the span's first and last vectors, which stick out of
 * it, element by element), groups of G lanes compute their rows from there
 * (up to 8 elements a lane, the group's (max, sum) by log2(G) shuffles) and
 * write y back in place, and the block stores the span with 16-byte stores.
 * The span sits in shared memory as it sits against 16-byte boundaries in
 * global memory (offset by the span's misalignment), so both copies are
 * aligned vector moves. A block takes as many rounds of 256 / G rows as fill
 * KB_TILE_ELEMS elements (4 rounds of the longest rows, 7 of 33-element rows in
 * groups of 8): 32 KB of fp32 (16 KB of 16-bit) shared memory; each thread
 * issues all its loads of the span before storing any (kb_span_in). */

template <typename T, int G, int NPL>
__global__ void __launch_bounds__(KB_TILE_THREADS)
    softmax_fused_tile(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols)
{
    constexpr int W = kb_vec_width<T>();
    constexpr int RPR = KB_TILE_THREADS / G; /* rows a round */
    __shared__ __align__(16) T tile[KB_TILE_ELEMS + W]; /* + the misalignment */
    const int tid = threadIdx.x, t = tid % G;
    const int span = (int)kb_span_rows(KB_TILE_ELEMS, RPR, cols); /* rows a block */
    const kb_span sp = kb_span_of<T>(rows, cols, span);
    const int nrows = sp.nrows, mis = sp.mis;

    /* The span in: whole vectors inside it as vectors, the edges element-wise. */
    kb_span_in<T, KB_TILE_THREADS, kb_span_maxv<T>(KB_TILE_THREADS, KB_TILE_ELEMS)>(tile, x, sp);
    __syncthreads();

    /* Each group its rows, in place. Groups past the span's rows compute on
     * nothing and write nothing, but take part in the shuffles. */
    for (int k = 0; k < span / RPR; k++) {
        const int r = k * RPR + tid / G;
        const int lim = r < nrows ? (int)cols : 0;
        T *row = &tile[mis + (r < nrows ? r : 0) * (int)cols];
        float v[NPL];
        float m = kb_neg_inf();
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            const int c = t + i * G;
            v[i] = c < lim ? kb_to_float(row[c]) : kb_neg_inf();
            m = fmaxf(m, v[i]);
        }
        /* The row's max first, then the exps against it and their sum: two
         * plain butterflies (2 log2(G) instructions) instead of the online
         * merge's (an exp pair, a max and a rescale a step). A group past
         * the span's rows has m = -inf and subtracts 0. */
        m = kb_warp_max<G>(m);
        const float ms = m == kb_neg_inf() ? 0.0f : m;
        float sm = 0.0f;
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            v[i] = kb_exp2((v[i] - ms) * KB_LOG2E);
            sm += v[i];
        }
        const float inv = kb_rcp(kb_warp_sum<G>(sm));
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            const int c = t + i * G;
            if (c < lim)
                row[c] = kb_from_float<T>(v[i] * inv);
        }
    }
    __syncthreads();

    /* The span out, as it came in. */
    kb_span_out<T, KB_TILE_THREADS>(y, tile, sp);
}

/* ---- the thread-row path: short unaligned rows, a thread a row -----------------------
 *
 * The tile kernel at 33 columns, 8 lanes of 5 a row, spends its issue slots on
 * the group as much as on the row: per round of 32 rows two butterflies of 3
 * shuffles, the row's address, and a range check around every element slot
 * (the slot's lane and row vary within the warp), for 5 elements a lane.
 * Here a thread takes a whole row of cols <= NPL elements (the first NPL - 8
 * known to be in the row, the last 8 checked against cols, the same for the
 * whole block: a uniform branch) from the same span in shared memory, 256
 * rows a block, with no shuffles. Rows of 33 elements start 33 banks apart
 * (fp32) or 16.5 (16-bit): a warp's 32 rows read 32 different banks.
 * Prediction (before any measurement): 4067203 x 33 bf16 from 73.3% to
 * 85-90% (the element's load, max, exp, sum, scale and store and little
 * else), fp32 from 87% to 90%. KBENCH_SOFTMAX_TROW=0 keeps the tile kernel.
 * Measured (H200, 2026-12-01 20:00 UTC, two interleaved rounds, no counters,
 * x of 512 MB at 33 columns, % of copy bandwidth, tile -> thread-row, the
 * rounds within 0.3): 4067203 x 33 fp32 87.1 -> 97.2, 8134406 x 33 bf16 74.4
 * -> 89.3, 2000000 x 17 fp32 93.5 -> 96.5, 3000000 x 39 bf16 79.6 -> 89.6,
 * 8000000 x 7 bf16 45.7 -> 60.4. As predicted; at 33 columns bf16 now uses
 * 65% of issue slots (long_sb 28% of stalls: waiting on DRAM, as a
 * memory-bound kernel should). 64 registers (16-bit), 80 (fp32); no spills. */

template <typename T, int NPL>
__global__ void __launch_bounds__(KB_TROW_THREADS)
    softmax_fused_trow(const T *__restrict__ x, T *__restrict__ y, int64_t rows, int64_t cols)
{
    constexpr int W = kb_vec_width<T>(), E = KB_TROW_THREADS * NPL; /* a span's most elements */
    __shared__ __align__(16) T tile[E + W]; /* + the misalignment */
    const int tid = threadIdx.x, n = (int)cols;
    const kb_span sp = kb_span_of<T>(rows, cols, KB_TROW_THREADS);
    kb_span_in<T, KB_TROW_THREADS, kb_span_maxv<T>(KB_TROW_THREADS, E)>(tile, x, sp);
    __syncthreads();

    const auto in = [&](int i) { return kb_trow_in<NPL>(i, n); };
    if (tid < sp.nrows) {
        T *row = &tile[sp.mis + tid * n];
        float v[NPL];
        float m = kb_neg_inf();
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            v[i] = in(i) ? kb_to_float(row[i]) : kb_neg_inf();
            m = fmaxf(m, v[i]);
        }
        float sm = 0.0f;
#pragma unroll
        for (int i = 0; i < NPL; i++) {
            v[i] = kb_exp2((v[i] - m) * KB_LOG2E);
            sm += in(i) ? v[i] : 0.0f;
        }
        const float inv = kb_rcp(sm);
#pragma unroll
        for (int i = 0; i < NPL; i++)
            if (in(i))
                row[i] = kb_from_float<T>(v[i] * inv);
    }
    __syncthreads();

    kb_span_out<T, KB_TROW_THREADS>(y, tile, sp);
}

/* ---- the streaming path: rows too long for the registers -----------------------------
 *
 * Two reads of x: pass one folds the online normaliser over the row, pass two
 * writes. CL blocks (a thread-block cluster) share a row: each streams one
 * CL-th of it, so a few long rows still spread over CL SMs and each block's
 * slice is small enough to be still in L2 when pass two reads it again. The
 * blocks' (max, sum) pairs meet through distributed shared memory. With CW > 1
 * the row is peeled to 16-byte alignment: up to CW - 1 head and tail elements
 * are done one by one (by block rank 0), the body in vectors. */
#define STREAM_THREADS 512
#define STREAM_UNROLL 4 /* chunks each thread loads before using them */
#define STREAM_CLUSTER 8

/* The U chunks of CW elements i0 + u STREAM_THREADS (below hi) of xb into f;
 * chunks past hi read as -infinity (neg_inf: the max and sum pass) or 0. */
template <typename T, int U, int CW>
__device__ __forceinline__ void stream_fetch(const T *__restrict__ xb, int64_t i0, int64_t hi,
                                             bool neg_inf, float (&f)[U][CW])
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        const int64_t i = i0 + (int64_t)u * STREAM_THREADS;
        if constexpr (CW > 1)
            kb_unpack<T>(i < hi ? kb_ld128(xb + i * CW)
                                : (neg_inf ? kb_vec_neg_inf<T>() : make_uint4(0, 0, 0, 0)),
                         f[u]);
        else
            f[u][0] = i < hi ? kb_load(xb, i) : (neg_inf ? kb_neg_inf() : 0.0f);
    }
}

template <typename T, int CL, int CW, bool PUSH = false>
__device__ __forceinline__ void fused_stream_row(const T *__restrict__ x, T *__restrict__ y,
                                                 int64_t cols, int64_t row, int rank)
{
    constexpr int U = STREAM_UNROLL;
    constexpr int64_t STEP = (int64_t)U * STREAM_THREADS;
    __shared__ float2 red[STREAM_THREADS / 32];
    __shared__ kb_xchg<CL, PUSH> xc; /* CL > 1: the cluster's exchange */
    if constexpr (CL > 1)
        kb_xchg_open(xc);
    const int tid = threadIdx.x;
    const int64_t first = row * cols;
    const T *xr = x + first;
    T *yr = y + first;

    /* Row = head elements, nv chunks, tail elements. */
    int64_t head = 0;
    if constexpr (CW > 1) {
        const int64_t mis = first % CW;
        head = mis ? CW - mis : 0;
        head = head < cols ? head : cols;
    }
    const int64_t nv = (cols - head) / CW;
    const int64_t tail0 = head + nv * CW;
    const int64_t tail = cols - tail0;
    /* This block's chunks [lo, hi). */
    const int64_t per = (nv + CL - 1) / CL;
    const int64_t lo = (int64_t)rank * per < nv ? (int64_t)rank * per : nv;
    const int64_t hi = lo + per < nv ? lo + per : nv;
    const T *xb = xr + head;
    T *yb = yr + head;

    float2 s = kb_online_empty();
    for (int64_t i0 = lo + tid; i0 < hi; i0 += STEP) {
        float f[U][CW];
        stream_fetch<T, U, CW>(xb, i0, hi, true, f);
        /* Chunk 0 is in range, so gm and m are finite: no exp of inf - inf. */
        float gm = f[0][0];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < CW; j++)
                gm = fmaxf(gm, f[u][j]);
        const float m = fmaxf(s.x, gm);
        float d[2] = {s.y * kb_exp2((s.x - m) * KB_LOG2E), 0.0f};
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int j = 0; j < CW; j++)
                d[j % 2] += kb_exp2((f[u][j] - m) * KB_LOG2E);
        s = make_float2(m, d[0] + d[1]);
    }
    if (rank == 0) {
        if (tid < head)
            s = kb_online_add(s, kb_load(xr, tid));
        if (tid < tail)
            s = kb_online_add(s, kb_load(xr, tail0 + tid));
    }
    s = kb_block_online<STREAM_THREADS>(s, red);

    if constexpr (CL > 1) {
        /* Every block merges the CL pairs in rank order, so all get the same
         * bits (kb_xchg). Pulled, the block then waits for its peers at once
         * (they may still read its slot); pushed, before its exit. */
        kb_xchg_put(xc, make_float4(s.x, s.y, 0.0f, 0.0f));
        float2 all = kb_online_empty();
#pragma unroll
        for (int r = 0; r < CL; r++) {
            const float4 q = kb_xchg_get(xc, r);
            all = kb_online_merge(all, make_float2(q.x, q.y));
        }
        kb_xchg_done(xc);
        if constexpr (!PUSH)
            kb_cluster_wait();
        s = all;
    }

    const float mx = s.x, inv = kb_rcp(s.y);
    for (int64_t i0 = lo + tid; i0 < hi; i0 += STEP) {
        float f[U][CW];
        stream_fetch<T, U, CW>(xb, i0, hi, false, f);
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t i = i0 + (int64_t)u * STREAM_THREADS;
            if (i < hi) {
#pragma unroll
                for (int j = 0; j < CW; j++)
                    f[u][j] = kb_exp2((f[u][j] - mx) * KB_LOG2E) * inv;
                if constexpr (CW > 1)
                    kb_st128(yb + i * CW, kb_pack<T>(f[u]));
                else
                    kb_store(yb, i, f[u][0]);
            }
        }
    }
    if (rank == 0) {
        if (tid < head)
            kb_store(yr, tid, kb_exp2((kb_load(xr, tid) - mx) * KB_LOG2E) * inv);
        if (tid < tail)
            kb_store(yr, tail0 + tid, kb_exp2((kb_load(xr, tail0 + tid) - mx) * KB_LOG2E) * inv);
    }
    if constexpr (CL > 1 && PUSH)
        kb_cluster_wait(); /* meets kb_xchg_put's arrival */
}

/* One block per row. */
template <typename T, int CW>
__global__ void __launch_bounds__(STREAM_THREADS, 2)
    softmax_fused_stream(const T *__restrict__ x, T *__restrict__ y, int64_t cols)
{
    fused_stream_row<T, 1, CW>(x, y, cols, blockIdx.x, 0);
}

/* A cluster of STREAM_CLUSTER blocks per row. */
template <typename T, int CW, bool PUSH>
__global__ void __cluster_dims__(STREAM_CLUSTER, 1, 1) __launch_bounds__(STREAM_THREADS, 2)
    softmax_fused_cluster(const T *__restrict__ x, T *__restrict__ y, int64_t cols)
{
    fused_stream_row<T, STREAM_CLUSTER, CW, PUSH>(x, y, cols, blockIdx.x / STREAM_CLUSTER,
                                                  (int)cg::this_cluster().block_rank());
}

/* A cluster of STREAM_CLUSTER_WIDE blocks per row (non-portable: launched with
 * the cluster-size attribute where the GPU places it), for rows too few to
 * fill the GPU at STREAM_CLUSTER blocks each. */
#define STREAM_CLUSTER_WIDE 16
template <typename T, int CW, bool PUSH>
__global__ void __launch_bounds__(STREAM_THREADS, 2)
    softmax_fused_cluster_wide(const T *__restrict__ x, T *__restrict__ y, int64_t cols)
{
    fused_stream_row<T, STREAM_CLUSTER_WIDE, CW, PUSH>(
        x, y, cols, blockIdx.x / STREAM_CLUSTER_WIDE, (int)cg::this_cluster().block_rank());
}

/* ---- launchers ---------------------------------------------------------------------- */

typedef cudaError_t (*fused_launch_fn)(const kb_args *a, cudaStream_t s, const char *name);

/* One register-path configuration: rows of up to chunks * CW elements. */
typedef struct fused_cfg {
    int chunks;            /* chunks per row the configuration holds: TPR * NVEC */
    fused_launch_fn launch;
    const char *name;      /* the kernel's name in launch notes */
} fused_cfg;

template <typename T, int THREADS, int TPR, int NVEC, int CW, bool PEEL = false>
static cudaError_t launch_regs(const kb_args *a, cudaStream_t s, const char *name)
{
    const sm_rows_kernel<T> k = softmax_fused_regs<T, THREADS, TPR, NVEC, CW, PEEL>;
    return sm_launch<T>(a, s, k, name, THREADS, THREADS / TPR);
}

template <typename T, int G, int NPL>
static cudaError_t launch_tile(const kb_args *a, cudaStream_t s, const char *name)
{
    const sm_rows_kernel<T> k = softmax_fused_tile<T, G, NPL>;
    const int64_t span = kb_span_rows(KB_TILE_ELEMS, KB_TILE_THREADS / G, a->shape[SM_COLS]);
    return sm_launch<T>(a, s, k, name, KB_TILE_THREADS, (int)span);
}

template <typename T, int NPL>
static cudaError_t launch_trow(const kb_args *a, cudaStream_t s, const char *name)
{
    return sm_launch<T>(a, s, softmax_fused_trow<T, NPL>, name, KB_TROW_THREADS, KB_TROW_THREADS);
}

/* Rows longer than one SM's registers hold (1024 threads x 8 vectors): a
 * cluster of CL blocks a row, each holding its share in registers
 * (softmax_fused_regs with CL > 1). cudaErrorNotSupported when this GPU does
 * not place such clusters (asked once a process: the query costs host time in
 * the timed region). */
template <typename T, int CL, int NV, int NS, bool PUSH, int THREADS>
static cudaError_t launch_cluster_regs_k(const kb_args *a, cudaStream_t s, const char *name)
{
    constexpr size_t SMEM = (size_t)NS * THREADS * 16;
    const auto k =
        softmax_fused_regs<T, THREADS, THREADS, NV, kb_vec_width<T>(), false, CL, NS, PUSH>;
    static const bool placed = kb_cluster_placed((const void *)k, THREADS, CL, SMEM);
    if (!placed)
        return cudaErrorNotSupported;
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    const kb_dim3 grid = {(unsigned)(rows * CL), 1, 1}, block = {THREADS, 1, 1};
    return kb_launch_cluster(a, s, k, name, grid, block, SMEM, CL, (const T *)a->in[0],
                             (T *)a->out[0], rows, cols);
}

/* The same, the blocks' pairs pushed (kb_xchg) or, with KBENCH_CLUSTER_PUSH=0,
 * pulled through a cluster barrier (header comment). */
template <typename T, int CL, int NV = 8, int NS = 0, int THREADS = 1024>
static cudaError_t launch_cluster_regs_cl(const kb_args *a, cudaStream_t s, const char *name)
{
    return kb_cluster_push() ? launch_cluster_regs_k<T, CL, NV, NS, true, THREADS>(a, s, name)
                             : launch_cluster_regs_k<T, CL, NV, NS, false, THREADS>(a, s, name);
}

/* Elements of T a block of the cluster register path holds: 1024 threads x
 * 8 vectors. */
template <typename T> static constexpr int64_t creg_per(void)
{
    return 1024 * 8 * kb_vec_width<T>();
}

/* softmax_fused_regs in clusters of cl blocks of THREADS (8 vectors a thread
 * in registers), named names[0..3] for cl = 2, 4, 8, 16.
 * cudaErrorNotSupported for another cl or where the GPU does not place them. */
template <typename T, int THREADS>
static cudaError_t launch_cluster_regs_n(const kb_args *a, cudaStream_t s, int cl,
                                         const char *const (&names)[4])
{
    switch (cl) {
    case 2:
        return launch_cluster_regs_cl<T, 2, 8, 0, THREADS>(a, s, names[0]);
    case 4:
        return launch_cluster_regs_cl<T, 4, 8, 0, THREADS>(a, s, names[1]);
    case 8:
        return launch_cluster_regs_cl<T, 8, 8, 0, THREADS>(a, s, names[2]);
    case 16:
        return launch_cluster_regs_cl<T, 16, 8, 0, THREADS>(a, s, names[3]);
    default:
        return cudaErrorNotSupported;
    }
}

/* The cluster register path in blocks of 512 threads, two an SM, so twice
 * as many a row (the default, header comment);
 * cudaErrorNotSupported when 16 such blocks do not hold the row. */
template <typename T> static cudaError_t launch_cluster_regs_half(const kb_args *a, cudaStream_t s)
{
    static constexpr const char *names[4] = {
        "softmax_fused_regs_c2_t512", "softmax_fused_regs_c4_t512", "softmax_fused_regs_c8_t512",
        "softmax_fused_regs_c16_t512"};
    return launch_cluster_regs_n<T, 512>(
        a, s, kb_cluster_blocks(a->shape[SM_ROWS], a->shape[SM_COLS], creg_per<T>() / 2), names);
}

/* The cluster size for a row of cols elements: the fewest blocks whose
 * registers hold it, doubled while rows x blocks leave SMs idle (at most
 * KB_CLUSTER_MAX); 16 blocks fall back to 8 where the GPU does not place
 * them and 8 hold the row. cudaErrorNotSupported when no cluster holds it. */
template <typename T> static cudaError_t launch_cluster_regs(const kb_args *a, cudaStream_t s)
{
    constexpr int64_t PER = creg_per<T>();
    static constexpr const char *names[4] = {"softmax_fused_regs_c2", "softmax_fused_regs_c4",
                                             "softmax_fused_regs_c8", "softmax_fused_regs_c16"};
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    if (rows > INT32_MAX / KB_CLUSTER_MAX)
        return cudaErrorNotSupported;
    static const int threads = kb_env_int("KBENCH_SOFTMAX_CREG_THREADS", 512, 512, 1024);
    if (threads == 512) {
        const cudaError_t e = launch_cluster_regs_half<T>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    const int cl = kb_cluster_blocks(rows, cols, PER);
    if (cl == 0) {
        /* fp32 rows of up to 16 x 64K elements: 16 vectors a thread, 8 in
         * registers and 8 in shared memory (128 KB a block; 55 registers) */
        if constexpr (sizeof(T) == 4)
            if (cols <= 2 * KB_CLUSTER_MAX * PER)
                return launch_cluster_regs_cl<T, KB_CLUSTER_MAX, 8, 8>(
                    a, s, "softmax_fused_regs_c16_r8_s8");
        return cudaErrorNotSupported;
    }
    if (cl == 16) {
        const cudaError_t e = launch_cluster_regs_n<T, 1024>(a, s, 16, names);
        if (e != cudaErrorNotSupported || 8 * PER < cols)
            return e;
        return launch_cluster_regs_n<T, 1024>(a, s, 8, names);
    }
    return launch_cluster_regs_n<T, 1024>(a, s, cl, names);
}

/* Rows of up to 16 x creg_per elements (fp32 524288, 16-bit 1048576) in one
 * cluster of 16 blocks of 512 threads, two an SM, 8 vectors a thread in
 * registers and 8 in shared memory (128 KB of the row a block); the grid
 * with KBENCH_SOFTMAX_CREG_NS=0. */
template <typename T> static cudaError_t launch_cluster_regs_ns(const kb_args *a, cudaStream_t s)
{
    if (a->shape[SM_COLS] > KB_CLUSTER_MAX * creg_per<T>() ||
        a->shape[SM_ROWS] > INT32_MAX / KB_CLUSTER_MAX)
        return cudaErrorNotSupported;
    return launch_cluster_regs_cl<T, KB_CLUSTER_MAX, 8, 8, 512>(a, s,
                                                              "softmax_fused_regs_c16_t512_s8");
}

/* Rows longer than 16 blocks of 512 threads hold in registers: split over
 * ordinary blocks of 512 threads, two an SM, 8 vectors a thread in
 * registers and NS in shared memory, the blocks' pairs met in the L2
 * (softmax_fused_regs with GRID, grid_rows.cuh). cudaErrorNotSupported when a
 * row needs more than KB_GRID_MAXB blocks or the GPU holds fewer than twice
 * a row's blocks at once. */
template <typename T, int NS, bool TRIM = false>
static cudaError_t launch_grid_rows_ns(const kb_args *a, cudaStream_t s)
{
    constexpr int THREADS = 512, NV = 8;
    constexpr size_t SMEM = (size_t)NS * THREADS * 16;
    const auto k = softmax_fused_regs<T, THREADS, THREADS, NV, kb_vec_width<T>(), false, 1, NS,
                                      false, true, TRIM>;
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    const int nb = kb_grid_blocks(cols / kb_vec_width<T>(), (int64_t)THREADS * (NV + NS));
    static int64_t cap = -1;
    if (nb == 0 || kb_grid_capacity_once((const void *)k, THREADS, SMEM, &cap) < 2 * (int64_t)nb ||
        rows > INT32_MAX / nb)
        return cudaErrorNotSupported;
    const kb_dim3 grid = {(unsigned)(rows * nb), 1, 1}, block = {THREADS, 1, 1};
    const char *name = TRIM      ? "softmax_fused_grid_r8_s12_trim"
                       : NS == 8 ? "softmax_fused_grid_r8_s8"
                                 : "softmax_fused_grid_r8_s12";
    return kb_launch(a, s, k, name, grid, block, SMEM, (const T *)a->in[0], (T *)a->out[0], rows,
                     cols);
}

/* The grid path with NS = 12 vectors a thread in shared memory (160 KB of
 * the row a block, 192 KB of shared memory an SM) and grid_rows.cuh's
 * trimmed exit, or 8 vectors with KBENCH_SOFTMAX_GRID_NS=8, the full exit
 * with KBENCH_SOFTMAX_GRID_TRIM=0 (header comment). */
template <typename T> static cudaError_t launch_grid_rows(const kb_args *a, cudaStream_t s)
{
    static const int ns = kb_env_int("KBENCH_SOFTMAX_GRID_NS", 12, 8, 12);
    static const int trim = kb_env_int("KBENCH_SOFTMAX_GRID_TRIM", 1, 0, 1);
    if (trim && ns == 12)
        return launch_grid_rows_ns<T, 12, true>(a, s);
    return ns == 12 ? launch_grid_rows_ns<T, 12>(a, s) : launch_grid_rows_ns<T, 8>(a, s);
}

/* ---- the pipelined grid (rows past the clusters; a switch) ----------------------- *
 *
 * The grid path above stalls its warps at the barrier behind thread 0's wait
 * for the row's other blocks about as often as on DRAM (36% and 35% at fp32
 * 128 x 1048576): every block waits, once, for the slowest of its row. Here
 * the wait is moved L rows later (src/kernels/grid_pipe.cuh, as in
 * layernorm's pipelined grid): persistent blocks of 512 threads, one an SM,
 * each own a slice of 16384 columns (S = cols / 16384 a row, at most 64)
 * and keep a ring of D row slices of x in shared memory (192 KB: D = 3 fp32,
 * 6 16-bit; L = D / 2). A slice's (max, sum of exp(x - max)) is published at
 * once; L rows later warp 0 merges the row's S pairs in one fixed order into
 * its max and 1 / sum, and the block writes its part of y from the ring.
 * Prediction (before any run, % of the copy bandwidth): fp32 128 x 1048576
 * 82 -> 85-90, bf16 256 x 1048576 80 -> 85-90 (the 262144 rows' 94% is the
 * ceiling of what the exchange costs).
 * Measured (H200, 2026-12-02, kbench compare in one process each, pipe /
 * grid): the first form (thread 0 publishing, waiting and merging between
 * two block barriers every row) fp32 128 x 1048576 405 / 307 us, 256 x
 * 1048576 810 / 596, bf16 128 x 1048576 277 / 168, 256 x 1048576 551 /
 * 314: 26-62% of the copy bandwidth, barrier 44% of the stall samples, no
 * DRAM excess. Every global round trip of the exchange sat between those
 * barriers. With the exchange moved to a warp of its own (grid_pipe.cuh,
 * 09:50 UTC): fp32 389 / 305 (0.78x), 778 / 595, bf16 220 / 167, 429 / 314
 * (0.73-0.78x); stall samples now long_sb 52%, short_sb 17%: the streaming
 * threads wait for their own cp.async copies of x with two rows (128 KB) of
 * them in flight an SM at 64% of the copy bandwidth, where the grid
 * kernel's plain loads keep 160 KB in flight and reach 82%. With the ring
 * filled by the copy engine (10:16 UTC, one process each): fp32 392 / 306,
 * bf16 256 x 1048576 519 / 313; the copies were not what held it: one
 * exchange warp took ~4 us a row (grid_pipe.cuh's header), the pace of
 * every cell. With four exchange warps whose adds are not waited for
 * (predicted: fp32 128 x 1048576 64 -> 75-90%; measured 11:10 UTC, pipe /
 * grid): bf16 128 x 1048576 202 / 167 us, 256 x 1048576 399 / 312 (0.78-
 * 0.83x); fp32 trapped in the exchange's wait: its partial ring had three
 * slots for four exchange warps (grid_pipe.cuh, KB_GPIPE_R; mended, not yet
 * measured). KBENCH_SOFTMAX_GRID_PIPE=1 sends the grid's rows here (off by
 * default).
 * Tried and not kept (2026-12-04): layernorm's deeper ring (its pipelined
 * grid's header) here, slices of 16 elements a thread (8192 fp32 columns,
 * S = 128) in a ring of 224 KB, 7 slices, L = 3-6. Measured (H200, 18:11 and
 * 18:17 UTC, two interleaved rounds each, no counters, % of the copy
 * bandwidth): fp32 128 x 1048576 grid 82.1, 82.6 | 82.5, 82.5; this form
 * (D = 3, L = 1) 72.1, 73.2; L = 3 70.7, 70.9; L = 4 76.1, 76.2 | 76.4,
 * 75.9; L = 5 77.8, 78.2; L = 6 55.5, 56.0 (64 x 1048576: grid 77.1, 77.5,
 * L = 4 75.4, 74.8). The grid's plain loads, 160 KB a block and two blocks
 * an SM, stay ahead. With warp partials and out's rows read a second time
 * from the L2 instead (the lag apart from the ring: grid_pipe.cuh, "the
 * L2's lag"; 2026-12-05 02:41-02:47 UTC, two rounds, lags 5-7): fp32 128 x
 * 1048576 0.68x the grid, 64 x 2097152 0.76x; the second read came from
 * DRAM. Not kept (code in commit cfdd9f7).
 * Nor a deep form (commit 940b0c5): slices of four vectors a thread (8192
 * fp32 columns, S = 128) in a ring of 224 KB, 7 of them, L = 4 slack, warp
 * partials, and a fifth row of slack held in registers (grid_pipe.cuh's
 * kb_gpipe_run then took a row h whose slot it freed one row before its
 * out), so three rows are still copied ahead. Prediction (before the run):
 * 83-88% at fp32 128 x 1048576, where the grid path is at 82% (H200).
 * Measured (H100 80GB HBM3, 2026-12-05 17:21-17:23 UTC, two interleaved
 * rounds, % of the copy bandwidth, grid / held / the same without the held
 * row): fp32 128 x 1048576 93.2, 93.3 / 78.7, 79.0 / 79.5, 79.4; 256 x
 * 1048576 94.8, 95.0 / 79.1, 79.4 / 79.6, 79.6 (0.84x the grid either way).
 * The fifth row of slack changes nothing: the pipelined grid's pace here is
 * not its lag. On the H100 the grid path is at 93%, where the H200 has it
 * at 82%. The held form's checks (12 cases) and the three sanitizers were
 * clean. */
#define SGP_THREADS 512
#define SGP_ELEMS 32 /* elements of a row a thread: a slice is 16384 columns */
#define SGP_RING_BYTES (192 * 1024)

template <typename T> struct sgp_cfg {
    static constexpr int V = kb_vec_width<T>(), NV = SGP_ELEMS / V;
    static constexpr int SLOT = NV * SGP_THREADS; /* uint4s a row slice takes */
    static constexpr int D = SGP_RING_BYTES / (SLOT * 16), L = D / 2, P = D - L;
    static constexpr size_t SMEM = (size_t)D * SLOT * 16;
};

template <typename T>
__global__ void __launch_bounds__(KB_GPIPE_BLOCK(SGP_THREADS), 1)
    softmax_fused_gpipe(const T *__restrict__ x, T *__restrict__ y, int rows, int cols, int S)
{
    using C = sgp_cfg<T>;
    constexpr int V = C::V, NV = C::NV, THREADS = SGP_THREADS;
    __shared__ float2 red[2][THREADS / 32];
    extern __shared__ __align__(16) uint4 sgp_sm[];
    const kb_gpipe<NV, THREADS, C::D> p(sgp_sm, nullptr, rows, cols / V, S);

    /* The slice's (max, sum of exp(x - max)), over the block: its elements
     * unpacked once, then the two passes over them in registers. */
    auto stats = [&](int i) {
        float f[NV][V], m = kb_neg_inf(), d = 0.0f;
        const uint4 *sr = p.slot_row(i);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (p.in(k)) {
                kb_unpack<T>(sr[k * THREADS], f[k]);
#pragma unroll
                for (int e = 0; e < V; e++)
                    m = fmaxf(m, f[k][e]);
            }
        }
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (p.in(k)) {
#pragma unroll
                for (int e = 0; e < V; e++)
                    d += kb_exp2((f[k][e] - m) * KB_LOG2E);
            }
        }
        const float2 w = kb_gpipe_reduce<THREADS>(make_float2(m, d), red, i, kb_online_empty(),
                                                  kb_warp_online_op());
        return make_float4(w.x, w.y, 0.0f, 0.0f);
    };
    /* The row's S pairs in one fixed order: its max and 1 / sum. */
    auto merge = [&](int64_t row) {
        const float2 q = grid_pairs(row, S, (int)threadIdx.x & 31);
        return make_float4(q.x, kb_rcp(q.y), 0.0f, 0.0f);
    };
    auto out = [&](int j, float4 st) {
        uint4 *yv = reinterpret_cast<uint4 *>(y + p.row_of(j) * cols) + p.tv;
        const uint4 *sr = p.slot_row(j);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (p.in(k)) {
                float f[V];
                kb_unpack<T>(sr[k * THREADS], f);
#pragma unroll
                for (int e = 0; e < V; e++)
                    f[e] = kb_exp2((f[e] - st.x) * KB_LOG2E) * st.y;
                kb_st128(yv + k * p.stride, kb_pack<T>(f));
            }
        }
    };
    kb_gpipe_run<C::L, C::P, THREADS>(p, reinterpret_cast<const uint4 *>(x), rows, stats, merge,
                                      out);
}

/* Launches softmax_fused_gpipe over as many groups of S blocks as the GPU
 * holds at once (at most one a row). cudaErrorNotSupported when a row needs
 * more than KB_GRID_MAXB blocks or the GPU holds fewer than S. */
template <typename T> static cudaError_t launch_gpipe(const kb_args *a, cudaStream_t s)
{
    using C = sgp_cfg<T>;
    const auto k = softmax_fused_gpipe<T>;
    const int64_t rows = a->shape[SM_ROWS], cols = a->shape[SM_COLS];
    const int S = kb_grid_blocks(cols / C::V, (int64_t)SGP_THREADS * C::NV);
    static int64_t cap = -1;
    const int64_t blocks =
        kb_gpipe_blocks((const void *)k, SGP_THREADS, C::SMEM, S, rows, &cap, false);
    if (blocks == 0 || rows > INT32_MAX || cols > INT32_MAX)
        return cudaErrorNotSupported;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1}, block = {KB_GPIPE_BLOCK(SGP_THREADS), 1, 1};
    return kb_launch(a, s, k, "softmax_fused_gpipe", grid, block, C::SMEM, (const T *)a->in[0],
                     (T *)a->out[0], (int)rows, (int)cols, S);
}

/* Whether rows x STREAM_CLUSTER blocks are fewer than two an SM (false when
 * the GPU cannot say): the streaming path then spreads a row over 16 blocks,
 * and beats the cluster register path (header comment). */
static bool stream_rows_few(int64_t rows)
{
    int sms = 0;
    return kb_current_sms(&sms) == cudaSuccess && rows * STREAM_CLUSTER < 2 * (int64_t)sms;
}

template <typename T, int CW, bool PUSH>
static cudaError_t launch_stream_k(const kb_args *a, cudaStream_t s)
{
    const int64_t rows = a->shape[0], cols = a->shape[1];
    const kb_dim3 block = {STREAM_THREADS, 1, 1};
    const T *x = (const T *)a->in[0];
    T *y = (T *)a->out[0];
    /* Few rows: 16 blocks a row where the GPU forms such clusters (A/B:
     * KBENCH_SOFTMAX_SPLIT=8 keeps 8, =16 asks for 16 whatever the rows). */
    static const int split = kb_env_int("KBENCH_SOFTMAX_SPLIT", 0, 8, STREAM_CLUSTER_WIDE);
    if (split != STREAM_CLUSTER && rows <= INT32_MAX / STREAM_CLUSTER_WIDE &&
        (split == STREAM_CLUSTER_WIDE || stream_rows_few(rows))) {
        const auto k = softmax_fused_cluster_wide<T, CW, PUSH>;
        /* Whether this GPU places the wide clusters, asked once (a case's
         * process keeps its device): the query costs host time in the timed
         * region. */
        static int wide = -1;
        if (wide < 0) {
            int active = 0;
            wide = cudaFuncSetAttribute((const void *)k,
                                        cudaFuncAttributeNonPortableClusterSizeAllowed,
                                        1) == cudaSuccess &&
                   kb_active_clusters((const void *)k, STREAM_THREADS, STREAM_CLUSTER_WIDE, 0,
                                      &active) == cudaSuccess &&
                   active > 0;
            (void)cudaGetLastError(); /* a refusal is an answer, not this launch's error */
        }
        if (wide) {
            const kb_dim3 grid = {(unsigned)(rows * STREAM_CLUSTER_WIDE), 1, 1};
            return kb_launch_cluster(a, s, k,
                                     CW > 1 ? "softmax_fused_cluster16_vec"
                                            : "softmax_fused_cluster16_sca",
                                     grid, block, 0, STREAM_CLUSTER_WIDE, x, y, cols);
        }
    }
    if (rows <= INT32_MAX / STREAM_CLUSTER) {
        const kb_dim3 grid = {(unsigned)(rows * STREAM_CLUSTER), 1, 1};
        softmax_fused_cluster<T, CW, PUSH><<<grid.x, block.x, 0, s>>>(x, y, cols);
        /* A cluster that cannot be placed (a GPU partition with small GPCs) fails
         * at launch; the one-block-per-row kernel below then does the work. */
        if (cudaGetLastError() == cudaSuccess) {
            kb_note_launch(a->log, (const void *)softmax_fused_cluster<T, CW, PUSH>,
                           CW > 1 ? "softmax_fused_cluster_vec" : "softmax_fused_cluster_sca",
                           grid, block, 0);
            return cudaSuccess;
        }
    }
    const sm_row_kernel<T> k = softmax_fused_stream<T, CW>;
    return sm_launch<T>(a, s, k, CW > 1 ? "softmax_fused_stream_vec" : "softmax_fused_stream_sca",
                        STREAM_THREADS, 1);
}

/* The streaming path, its clusters' pairs pushed (kb_xchg) or, with
 * KBENCH_CLUSTER_PUSH=0, pulled through cluster barriers (header comment). */
template <typename T, int CW> static cudaError_t launch_stream(const kb_args *a, cudaStream_t s)
{
    return kb_cluster_push() ? launch_stream_k<T, CW, true>(a, s)
                             : launch_stream_k<T, CW, false>(a, s);
}

/* A table row: THREADS per block, TPR threads per row, NVEC chunks per thread. */
#define FUSED_REGS(THREADS, TPR, NVEC, CW, TAG)                                             \
    {                                                                                      \
        TPR * NVEC, launch_regs<T, THREADS, TPR, NVEC, CW>,                                \
            "softmax_fused_regs_b" #THREADS "_g" #TPR "_n" #NVEC "_" TAG                   \
    }
/* The same for peeled rows: NVEC 16-byte vectors a thread for the body. */
#define FUSED_PEEL(THREADS, TPR, NVEC)                                                      \
    {                                                                                      \
        TPR * NVEC, launch_regs<T, THREADS, TPR, NVEC, W, true>,                           \
            "softmax_fused_regs_b" #THREADS "_g" #TPR "_n" #NVEC "_peel"                   \
    }
/* A tile row: G lanes a row, rows of up to NPL G elements (NPL a lane). */
#define FUSED_TILE(G, NPL)                                                                  \
    {                                                                                      \
        NPL * G, launch_tile<T, G, NPL>, "softmax_fused_tile_g" #G "_n" #NPL                  \
    }

/* A thread-row row: rows of NPL - 7 .. NPL elements. */
#define FUSED_TROW(NPL)                                                                    \
    {                                                                                      \
        NPL, launch_trow<T, NPL>, "softmax_fused_trow_n" #NPL                                 \
    }

template <typename T> static cudaError_t launch_fused(const kb_args *a, cudaStream_t s)
{
    constexpr int W = kb_vec_width<T>();
    /* Rows 16-byte aligned: 16-byte chunks, 4 (fp32) or 8 (16-bit) elements. */
    static const fused_cfg vec[] = {
        FUSED_REGS(256, 1, 1, W, "vec"),     FUSED_REGS(256, 2, 1, W, "vec"),
        FUSED_REGS(256, 4, 1, W, "vec"),     FUSED_REGS(256, 8, 1, W, "vec"),
        FUSED_REGS(256, 16, 1, W, "vec"),    FUSED_REGS(128, 32, 1, W, "vec"), /* header */
        FUSED_REGS(256, 32, 2, W, "vec"),    FUSED_REGS(256, 32, 4, W, "vec"),
        FUSED_REGS(256, 32, 8, W, "vec"),    FUSED_REGS(128, 128, 4, W, "vec"),
        FUSED_REGS(256, 256, 4, W, "vec"),   FUSED_REGS(256, 256, 8, W, "vec"),
        FUSED_REGS(512, 512, 8, W, "vec"),   FUSED_REGS(1024, 1024, 8, W, "vec"),
    };
    /* Rows off 16-byte boundaries (buffers aligned): the same ladder, peeled;
     * at least 8 threads a row, so the W - 1 head and tail elements have one
     * thread each. */
    static const fused_cfg peel[] = {
        FUSED_PEEL(256, 8, 1),    FUSED_PEEL(256, 16, 1),   FUSED_PEEL(256, 32, 1),
        FUSED_PEEL(256, 32, 2),   FUSED_PEEL(256, 32, 4),   FUSED_PEEL(256, 32, 8),
        FUSED_PEEL(128, 128, 4),  FUSED_PEEL(256, 256, 4),  FUSED_PEEL(256, 256, 8),
        FUSED_PEEL(512, 512, 8),  FUSED_PEEL(1024, 1024, 8),
    };
    /* Short rows (buffers aligned), any length: through shared memory. */
    static const fused_cfg tile8[] = {
        FUSED_TILE(4, 8),
        FUSED_TILE(8, 8),
        FUSED_TILE(16, 8),
        FUSED_TILE(32, 8),
    };
    /* ... and with 5 elements a lane for rows of at most 5 G (the header
     * comment; KBENCH_TILE_NARROW=0: 8 a lane everywhere, as before) */
    static const fused_cfg tile58[] = {
        FUSED_TILE(4, 5),  FUSED_TILE(4, 8),  FUSED_TILE(8, 5),  FUSED_TILE(8, 8),
        FUSED_TILE(16, 5), FUSED_TILE(16, 8), FUSED_TILE(32, 5), FUSED_TILE(32, 8),
    };
    static const int narrow = kb_env_int("KBENCH_TILE_NARROW", 1, 0, 1);
    /* Short rows off 16-byte boundaries (buffers aligned): a thread a row,
     * NPL - 7 .. NPL elements a kernel. */
    static const fused_cfg trow[] = {
        FUSED_TROW(8), FUSED_TROW(16), FUSED_TROW(24), FUSED_TROW(32), FUSED_TROW(40),
    };
    /* Any alignment: one-element chunks. */
    static const fused_cfg sca[] = {
        FUSED_REGS(256, 1, 1, 1, "sca"),     FUSED_REGS(256, 2, 1, 1, "sca"),
        FUSED_REGS(256, 4, 1, 1, "sca"),     FUSED_REGS(256, 8, 1, 1, "sca"),
        FUSED_REGS(256, 16, 1, 1, "sca"),    FUSED_REGS(256, 32, 1, 1, "sca"),
        FUSED_REGS(256, 32, 2, 1, "sca"),    FUSED_REGS(256, 32, 4, 1, "sca"),
        FUSED_REGS(256, 32, 8, 1, "sca"),    FUSED_REGS(256, 32, 16, 1, "sca"),
        FUSED_REGS(128, 128, 8, 1, "sca"),   FUSED_REGS(128, 128, 16, 1, "sca"),
        FUSED_REGS(256, 256, 16, 1, "sca"),  FUSED_REGS(256, 256, 32, 1, "sca"),
        FUSED_REGS(512, 512, 32, 1, "sca"),  FUSED_REGS(1024, 1024, 32, 1, "sca"),
    };
    const int64_t rows = a->shape[0], cols = a->shape[1];
    if (rows <= 0 || cols <= 0)
        return cudaSuccess;
    /* The A/B switches (header comment): 0 turns a path off; tile 2 takes
     * 16-byte-multiple short rows through shared memory too. */
    static const int use_tile = kb_env_int("KBENCH_SOFTMAX_TILE", 1, 0, 2);
    static const int use_peel = kb_env_int("KBENCH_SOFTMAX_PEEL", 1, 0, 1);
    static const int use_creg = kb_env_int("KBENCH_SOFTMAX_CLUSTER_REGS", 2, 0, 2);
    const bool aligned = ((uintptr_t)a->in[0] | (uintptr_t)a->out[0]) % 16 == 0;
    /* Rows of up to 40 elements off 16-byte boundaries: a thread a row, unless
     * KBENCH_SOFTMAX_TROW=0 (above the kernel). */
    static const int use_trow = kb_env_int("KBENCH_SOFTMAX_TROW", 1, 0, 1);
    if (aligned && use_trow && use_tile == 1 && cols % W != 0)
        for (const fused_cfg &c : trow)
            if (cols <= c.chunks)
                return c.launch(a, s, c.name);
    if (aligned && use_tile && (cols % W != 0 || use_tile == 2)) {
        const fused_cfg *tile = narrow ? tile58 : tile8;
        const size_t ntile =
            narrow ? sizeof tile58 / sizeof tile58[0] : sizeof tile8 / sizeof tile8[0];
        for (size_t i = 0; i < ntile; i++)
            if (cols <= tile[i].chunks)
                return tile[i].launch(a, s, tile[i].name);
    }
    /* Rows of 9-32 vectors with 4 vectors a lane: 16-bit rows, unless
     * KBENCH_SOFTMAX_DEEP=0|1 says otherwise (measured: header comment) */
    static const int deep_env = kb_env_int("KBENCH_SOFTMAX_DEEP", -1, 0, 1);
    const bool deep = deep_env < 0 ? sizeof(T) == 2 : deep_env == 1;
    static const fused_cfg vec_deep[] = {
        FUSED_REGS(256, 4, 4, W, "vec"),
        FUSED_REGS(256, 8, 4, W, "vec"),
    };
    if (aligned && cols % W == 0 && deep && cols > 8 * W)
        for (const fused_cfg &c : vec_deep)
            if (cols <= (int64_t)c.chunks * W)
                return c.launch(a, s, c.name);
    /* 16-bit rows of 121-128 vectors in 512-thread blocks; 97-128 with
     * KBENCH_SOFTMAX_WIDE=2, none with =0 (measured: header comment) */
    static const int wide = kb_env_int("KBENCH_SOFTMAX_WIDE", 1, 0, 2);
    static const fused_cfg vec_wide = FUSED_REGS(512, 32, 4, W, "vec");
    if (aligned && cols % W == 0 && wide && sizeof(T) == 2 &&
        cols > (wide == 2 ? 96 : 120) * W && cols <= 128 * W)
        return vec_wide.launch(a, s, vec_wide.name);
    if (aligned && cols % W == 0)
        for (const fused_cfg &c : vec)
            if (cols <= (int64_t)c.chunks * W)
                return c.launch(a, s, c.name);
    if (aligned && use_peel)
        for (const fused_cfg &c : peel)
            if (cols <= (int64_t)c.chunks * W)
                return c.launch(a, s, c.name);
    for (const fused_cfg &c : sca)
        if (cols <= c.chunks)
            return c.launch(a, s, c.name);
    /* Not 16-bit rows that need 16 blocks with KBENCH_SOFTMAX_CLUSTER_REGS=1,
     * nor rows the streaming path spreads over 16 blocks (measured: header
     * comment) */
    /* Rows longer than 16 blocks of 512 threads hold (fp32 262144, 16-bit
     * 524288 elements) split over a grid, unless KBENCH_SOFTMAX_GRID=0
     * (header comment). */
    static const int use_grid = kb_env_int("KBENCH_SOFTMAX_GRID", 1, 0, 1);
    /* ... over the pipelined grid with KBENCH_SOFTMAX_GRID_PIPE=1 (slower so
     * far: measured above the kernel) */
    static const int use_gpipe = kb_env_int("KBENCH_SOFTMAX_GRID_PIPE", 0, 0, 1);
    /* Those of up to 16 blocks of 512 threads with 8 more vectors a thread
     * in shared memory (fp32 524288, 16-bit 1048576 elements) in one cluster
     * of them, unless KBENCH_SOFTMAX_CREG_NS=0 (measured: header comment) */
    static const int creg_ns = kb_env_int("KBENCH_SOFTMAX_CREG_NS", 1, 0, 1);
    const bool past = aligned && cols % W == 0 && cols > KB_CLUSTER_MAX * creg_per<T>() / 2;
    if (past && creg_ns) {
        const cudaError_t e = launch_cluster_regs_ns<T>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    if (past && use_grid) {
        const cudaError_t e = use_gpipe ? launch_gpipe<T>(a, s) : launch_grid_rows<T>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    if (aligned && cols % W == 0 && use_creg &&
        (sizeof(T) == 4 || use_creg == 2 || cols <= 8 * creg_per<T>()) &&
        !stream_rows_few(rows)) {
        const cudaError_t e = launch_cluster_regs<T>(a, s);
        if (e != cudaErrorNotSupported)
            return e;
    }
    return aligned ? launch_stream<T, W>(a, s) : launch_stream<T, 1>(a, s);
}

/* Launches the fused softmax of a->in[0] into a->out[0] on stream s: the row
 * in registers when it fits, else the streaming two-read path. Returns the
 * launch's error, or cudaErrorInvalidValue for an unknown dtype. */
extern "C" cudaError_t kb_softmax_fused(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE(launch_fused, a, s)
}
