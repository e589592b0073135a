/* flash_wgmma.cu - attention on Hopper's own machinery: K and V tiles brought
 * into shared memory by the copy engine (TMA) through an mbarrier ring, both
 * products on wgmma with fp32 accumulators in registers, one producer thread
 * feeding consumer warpgroups, each consumer's softmax of one tile overlapped
 * with the tensor cores' work on the next, and a persistent grid.
 *
 * Idea (FlashAttention-3's forward pass, written out step by step). A work
 * tile is BM = 64 x NC query rows of one (batch, head); the keys are walked in
 * tiles of BN = 128. A block's threads are NC + 1 warpgroups:
 *   producer   (warpgroup 0, setmaxnreg.dec to 32 registers; one thread
 *              works) copies Q, then K_j and V_j for every key tile, into a
 *              STAGES-deep ring of shared-memory slots with
 *              cp.async.bulk.tensor; each slot has a "full" mbarrier the copy
 *              engine completes (expect_tx: its bytes) and an "empty" one the
 *              consumers' warps arrive on once the tensor cores have read it;
 *   consumers  (warpgroups 1..NC, setmaxnreg.inc) each own 64 query rows:
 *              S_j = Q K_j^T   wgmma m64n128k16, A = Q and B = K both from
 *                              shared memory, K-major, D / 16 instructions;
 *              softmax         flash-tiled's online softmax on the accumulator
 *                              layout (rows lane / 4 and lane / 4 + 8 of each
 *                              warp's 16; a quad of lanes per row);
 *              O += P_j V_j    wgmma m64nDk16 with A = P from registers (the
 *                              accumulator layout of S is the A-fragment
 *                              layout) and B = V from shared memory read
 *                              MN-major (the transpose-B bit: V is used as it
 *                              lies in memory), BN / 16 instructions.
 *   overlap    in a warpgroup, S_{j+1} and P_j V_j are issued together and the
 *              softmax of tile j + 1 runs while P_j V_j is still on the tensor
 *              cores (wgmma.wait_group 1); across warpgroups (PP), named
 *              barriers make the consumers take turns issuing, so one's
 *              softmax runs beside the others' products.
 *   persistent one block per SM; each claims its next work tile from a
 *              device-wide counter (atomicAdd, in the variant's 8 bytes of
 *              scratch; the last block resets it) as soon as it starts the
 *              current one, and the producer loads the next tile's Q while the
 *              consumers finish the current one, so a block's start-up and
 *              store no longer sit between tiles. Work tiles run from each
 *              head's last query block (the most key tiles when causal) down,
 *              heads the slow index, so the blocks in flight share a few heads'
 *              K and V in the L2.
 * Every tile in shared memory is stored as 64-column (128-byte) slabs in the
 * 128-byte swizzle that TMA writes and wgmma reads; the wgmma descriptors step
 * 32 bytes along k inside a slab and one slab per 64 columns. Rows past the
 * sequence are zero-filled by TMA and keys past it masked to -inf. Causal:
 * key tiles wholly above a work tile's diagonal are neither loaded nor
 * computed; only tiles crossing a warpgroup's diagonal (or the end of the
 * sequence) are masked. O is normalised in registers and stored from them.
 *
 * Configurations (fw_cfg; the lists in fw_choose, KBENCH_FLASH_WGMMA_CONFIG
 * picks one, and the kernel's name says which ran: _pp_ ping-pong, _ov_,
 * _pd_, _ch_, _rs_, _lr_ the cuts below, _n176_ 176 keys a tile): dim 128
 * runs 2 consumers, ping-pong, OV, PD, LR, SF, OS, SK and SP (configuration
 * 18; with ST too, 20, on grids of fewer than two rounds of work tiles), with
 * 176 keys a tile and 2 stages (Q 32 KB + 2 x (44 + 44) KB + OS's 16 KB =
 * 224 KB of shared memory): 384 threads, one block per SM, consumers at 232
 * registers (S 88, O 64, P 44 a thread); dim 64
 * runs 3 consumers (BM 192), 4 stages, ping-pong, PD, CH and SK: 512 threads, 24 + 4 x (16 +
 * 16) KB = 152 KB, consumers at 160 registers; for grids of fewer than 4 such
 * blocks per SM, 2 consumers. ptxas: no spills, no stack.
 *
 * Prediction (default shape, bf16, 550 GFLOP): per 128-key tile and
 * consumer the tensor cores run 16 m64n128k16 (about 64 clk each at 4096
 * flop/clk/SM: 1024 clk) and the softmax needs 64 EX2 a thread, 8192 a
 * warpgroup at 16/clk/SM: 512 clk, hidden under the other consumer's
 * products. With the tensor pipe busy 75-80%: 600-650 TFLOP/s, near cuDNN
 * (607-666 through PyTorch on this GPU, cuDNN 9.19).
 *
 * Measured on the H200 (bf16, TFLOP/s, median; the GPU drops its clock under
 * this load, and the same kernel measured 600-680 at the default shape over
 * one session, so alternatives were compared in interleaved rounds and each
 * beside cuDNN in the same run), 2026-12-01:
 *   first version (one block a tile, 2 stages, ping-pong): 616 / 560 causal at
 *     the default shape, 439 / 404 at dim 64, all shapes checked; 1.7x
 *     flash-tiled. SASS: HGMMA.64x128x16.F32.BF16, UTMALDG.3D, USETMAXREG.
 *   ptxas first serialised the wgmmas (C7514/C7515): O's rescale and P's
 *     packing had sunk past wgmma.fence, and a branch sat between the two
 *     products; register fences before the fence and a peeled first tile fixed
 *     it.
 *   3 stages vs 2: +0-10% non-causal at dim 128, within the noise causal;
 *   BN 176 (FlashAttention-3's non-causal tile): no gain (627 vs 605-678; 4096
 *     is no multiple of 176, so the last tile is 27% full);
 *   ping-pong or not: within the noise alone; with the persistent grid,
 *     ping-pong was the steadiest (0.97-0.99x cuDNN at every dim-128 shape);
 *   persistent with a static round-robin of tiles: causal far slower (dim 64
 *     253 vs 400 TFLOP/s: with 22 query blocks a head and 132 SMs, each block
 *     kept meeting the same query block, the heaviest or the lightest); with
 *     the claimed-from-a-counter tiles: causal as fast as one block a tile or
 *     faster, non-causal unchanged;
 *   dim 64: 3 consumers beat 2 (480-510 vs 430), but at seq 4097 with 3
 *     heads 2 consumers win (149 vs 116: 66 blocks of 192 rows for 132 SMs).
 *   causal, a consumer taking the key tiles above its own 64 rows as empty
 *     turns (no products, only its ping-pong turn and the slots' release)
 *     instead of computing them masked: slower, dim 64 393 vs 426 and dim 128
 *     500 vs 528 beside cuDNN's 460 and 531 (its turns still wait for the
 *     other consumers'); not kept.
 * The committed report (results/h200/attention.json, kbench 1062f91), TFLOP/s
 * and the ratio to cuDNN 9.14 in the same run:
 *   B=4 H=16 S=4096 D=128    652.4 (1.06)   causal 528.5 (0.96)
 *   B=4 H=32 S=4096 D=64     509.6 (0.96)   causal 426.1 (0.91)
 *   B=1 H=16 S=16384 D=128   619.9 (1.00)   causal 583.4 (1.00)
 * 1.76x flash-tiled at the default shape; tensor pipe active 73.6% of cycles
 * (flash-tiled 58.9%, cuDNN 75.6%). At dim 128 that is parity within the
 * clock's variation (the same binary measured 0.94x and 0.99x cuDNN in two
 * later runs); dim 64 is behind, causal most: a tile's products there take as
 * long as its softmax's 64 MUFU.EX2 a thread, so the overlap has less to hide
 * behind, and the diagonal tiles are computed whole and masked.
 * Tried for dim 64 and dropped (2026-12-01, two interleaved rounds beside
 * cuDNN): a quarter or a half of each tile's exponentials on the FMA pipe (a
 * cubic for 2^f and an add into the exponent field, relative error 1e-4)
 * instead of MUFU.EX2, to share the exponentials' time between two pipes.
 * Slower everywhere: dim 64 causal 692-698 / 780-789 us against 659-661 with
 * MUFU alone, non-causal 1.17-1.25 / 1.33-1.37 ms against 1.09-1.12, dim 128
 * 979 / 952-1019 us against 911-928; the FMA pipe's extra instructions cost
 * the consumers more issue slots than MUFU's wait did.
 * The report of 2026-12-01 (results/h200/attention.json, kbench e267004,
 * cuDNN 9.14 in the same run; the sampling now stops on the mean's standard
 * error, so this kernel's jittery causal cases no longer run for seconds and
 * heat the GPU): dim 128 587 (0.90x) / causal 522 (0.96x), dim 64 473
 * (0.94x) / causal 411 (0.91x), S=16384 dim 128 638 (1.02x) / causal 570
 * (0.95x).
 * The SASS (nvdisasm of the sm_90a cubin, 2026-12-02) shows that the
 * overlap inside a warpgroup, as written above, does not happen: in every
 * configuration ptxas puts the wait for P_{j-1} V_{j-1} (WARPGROUP.DEPBAR.LE
 * gsb0, 0x0) above all 64 MUFU.EX2 of tile j's softmax (dim 128: the wait at
 * listing line 1289, the EX2 at 1343-1597; dim 64: 1163 and 1257-1472), so a
 * warpgroup's exponentials wait for its own products, and only the other
 * consumers' turns fill the tensor pipe meanwhile. fw_overlap (OV, "_ov_"
 * in the kernel's name) ends the
 * softmax's block with a branch that is never taken, and the wait follows
 * every EX2 (dim 128: EX2 at 1391-1560, wait at 1572; dim 64: 1254-1434,
 * wait 1446), 184 and 152 registers, no spills.
 * Prediction (before the run): dim 64 +5-10% (there a tile's products take
 * about as long as its exponentials, the case the overlap is for: causal
 * from 0.91x cuDNN toward 0.95-1.0x), dim 128 +0-5%. Measured (H200,
 * 2026-12-02 14:19-14:20 UTC, two interleaved rounds, counters off, cuDNN
 * in the default's runs; flop per SM cycle at the clock read after the
 * samples, since the power cap put these runs anywhere from 1680 to 1980
 * MHz; without -> with the overlap, pp persist in both): dim 128 S=4096
 * 2572, 2570 -> 2599, 2585 (cuDNN 2685, 2668), causal 2164, 2177 -> 2198,
 * 2169 (cuDNN 2265, 2318); S=16384 2701, 2663 -> 2740, 2726 (cuDNN 2756,
 * 2772), causal 2480, 2432 -> 2520, 2533 (cuDNN 2574, 2576); dim 64 1945,
 * 1953 -> 1898, 1913 (cuDNN 2076, 2067), causal 1606, 1607 -> 1585, 1589
 * (cuDNN 1777, 1788); dim 64's two consumers with it 1712, 1711 and 1541,
 * 1554; dim 128 without ping-pong with it 2525, 2572 and 2194, 2187. Dim
 * 128 gained 0.5-3%, the low end of its prediction; dim 64, where the
 * prediction was largest, lost 1-2%. With three consumers taking turns at
 * the tensor pipe, one warpgroup's exponentials already hide behind the
 * other two's products, and the never-taken branch only adds its compare
 * and a later wait; at dim 128 two consumers leave a gap that the overlap
 * fills in part. So dim 128's default became the overlapped kernel, and
 * dim 64 kept its kernels without it.
 * Tried on the build machine and not run (2026-12-02): dim 64 with two
 * consumers and 256 keys a tile, the shape of cuDNN's dim-64 kernel
 * (..._64x256x64_...), to halve the per-tile softmax and rescale work. S
 * (128 registers a thread), P (64) and O (32) are all live while S_j and
 * P_{j-1} V_{j-1} run, 224 of the 240 a consumer gets with a 24-register
 * producer; ptxas -v reports 180 bytes of spills, and the SASS puts a
 * WARPGROUP.DEPBAR (a wait for every product in flight) after each HGMMA
 * around the spill moves, so the products no longer overlap anything. A
 * tile that wide needs S and P to share registers, which this kernel's
 * overlap of S_j with P_{j-1} V_{j-1} rules out.
 * Where dim 64 loses (H200, 2026-12-02 14:52 UTC, --metrics full, one run,
 * flash-wgmma's three-consumer default against cuDNN's kernel; shares of the
 * warps' stall samples): causal 409.6 against 447.1 TFLOP/s, issue active
 * 55.2% against 49.8%, wait 22.9 / 18.7%, selected 17.1 / 22.2%,
 * not_selected 14.6 / 6.6%, mio_throttle 9.5% / under 3%, barrier 6.4 /
 * 20.8%; non-causal alike (476.2 against 507.6). This kernel issues more
 * instructions for the same products, and its warps wait more on the
 * shared-memory and barrier queue (mio_throttle: the ping-pong's named
 * barriers and the mbarrier polls of three consumers) and on each other
 * (not_selected), where cuDNN's mostly wait at a barrier. Dim 128 the same
 * day: 598.6 against 643.3, wait 31.7 / 17.1%, barrier 4.5 / 28.1%. The
 * next thing to cut is the consumers' instruction count a tile (the
 * softmax's max and sum chains, the mask arithmetic, the waits' polling).
 * Three cuts, predicted from the listing before they ran. PD (FW_PD,
 * "_pd_"): each
 * operand's descriptor was encoded from its address for every HGMMA (mask,
 * shift, or with the offsets, then R2UR into uniform registers: in the
 * nvdisasm listing of the key-tile loop, 101 uniform-datapath instructions
 * and R2UR at dim 64, 125 at dim 128). PD encodes Q's, K's and V's slot-0
 * descriptors once and moves them with one 32-bit add (kb_wgmma_desc_add):
 * the loop falls from 702 to 669 instructions at dim 64 (uniform 77) and
 * from 790 to 742 at dim 128 (uniform 93), of which the mask block, about
 * 200, runs only on the diagonal and the sequence's last tile; about 7% and
 * 8% fewer instructions a tile off the diagonal, no spills. Prediction: dim
 * 64 +2-4% (issue active 55% and not_selected 15% above: issue is part of
 * its limit), dim 128 +0-2% (its top stall is wait, not issue).
 * CH (FW_CH, "_ch_"), for the wait stalls: each row's max and sum were one chain of 32 FMNMX and 64 FADD a
 * tile, each waiting for the one before; CH runs them as four chains merged
 * at the end (12 more instructions a tile: 681 and 754 in the loop), the
 * sums in another order (fp32, the same terms). Prediction: wait from 23%
 * (dim 64) and 32% (dim 128) of the stalls toward 15-20%, +2-5%.
 * RS (FW_RS, "_rs_", dim 64 only, with PD and CH), which moves work to the
 * tensor pipe: P V as an n72 product whose last
 * 8 columns of "V" are a 16 KB slab of ones written once a block (after the
 * V slots; the descriptor's lbo reaches it), so O's registers 32-35 hold
 * each row's sum of P and the 64 FADD a row and tile are gone; O's rescale
 * takes the sums along (4 FMUL). The sum is then of P as rounded for the
 * product, the same P the numerator uses. The loop: 617 instructions
 * against 681 (PD and CH) and 702 (neither), no FADD left, no
 * spills; the products grow by 8/64 of P V, 6% of a tile's tensor work.
 * Prediction: +3-8% at dim 64 where issue, not the tensor pipe (47% of its
 * flop rate), is the limit.
 * Measured (H200, 2026-12-02 15:50-15:52 UTC, two interleaved rounds,
 * counters off, --warmup 1, flop per SM cycle at the clock read after each
 * case's samples; the same sustained clock, 1650-1850 MHz, for all):
 *                          before  PD          PD+CH       PD+CH+RS    cuDNN
 *   dim 128 S=4096         2575,   2613, 2603  2549, 2554              2697, 2689
 *                          2539
 *     causal               2215,   2239, 2219  2206, 2211              2338, 2356
 *                          2185
 *   S=16384                2686,   2707, 2730  2669, 2662              2743, 2742
 *                          2669
 *     causal               2507,   2521, 2518  2488, 2465              2572, 2556
 *                          2517
 *   dim 64                 1937,   1949, 1926  1992, 1980  1983, 1985  2054, 2078
 *                          1941
 *     causal               1615,   1614, 1621  1660, 1660  1675, 1677  1790, 1774
 *                          1615
 * PD: dim 128 +1-2% (predicted 0-2), dim 64 +0% (predicted 2-4: there the
 * cut instructions were uniform-datapath ones, which issue beside the
 * others more than they compete). CH: dim 64 +3%, as predicted; dim 128
 * -1%, against a predicted gain (its two rows a thread already give each
 * chain a partner, and the merges add to the critical path after the
 * wait). RS: dim 64 within 1% of CH alone (the run after: 1955, 1958 and
 * 1640, 1653 against CH's 1993, 2023 and 1676, 1682), far under its
 * predicted 3-8%: the FADDs it removes ran beside the EX2 chain, off the
 * critical path. Dim 128's default took PD, dim 64's PD and CH.
 * LR (FW_LR, "_lr_"), a fourth cut, from the listing: O's 64 (dim 128) or
 * 32 (dim 64) FMUL a tile rescale it for the row max just found, though
 * after the first few tiles the max seldom moves by much. With LR a row
 * keeps its stale max unless some row of the warp meets one more than
 * FW_LR_LOG2 = 8 above it (a vote): P = 2^(S - m) then stays <= 256, and P
 * and l share the stale max, which O / l cancels, so the result is the
 * same sum. The rescale becomes a warp-uniform branch (taken on the first
 * tile and when a max jumps), which skips its FMULs; the alpha EX2s are
 * predicated. Static loop 755 instructions against 742, about 690 run a
 * tile off the diagonal when the branch is not taken. Prediction: dim 128
 * +2-3%, dim 64 +1-3%. Measured (15:59-16:01 UTC, as above, flop per SM
 * cycle; "PD" and "PD+CH" here are the new build's, whose softmax takes
 * both rows' maxes before the exponentials):
 *                          PD          PD+LR       PD+CH+LR    cuDNN
 *   dim 128 S=4096         2505, 2566  2631, 2572  2574, 2573  2680, 2718
 *     causal               2186, 2202  2252, 2248  2201, 2217  2359, 2336
 *   S=16384                2672, 2648  2703, 2703  2689, 2663  2740, 2768
 *     causal               2481, 2447  2517, 2501  2485, 2474  2586, 2562
 *                          PD+CH       PD+CH+RS    +RS+LR      PD+CH+LR
 *   dim 64                 1993, 2023  1955, 1958  1932, 1938  1933, 1937
 *     causal               1676, 1682  1640, 1653  1636, 1648  1626, 1623
 * LR: dim 128 +1.5-2.5% over PD, within its prediction; dim 64 -1%: there
 * the vote sits between the row max and the exponentials, on the path the
 * three consumers' softmaxes already wait on, and a tile's 32 FMULs were
 * cheap. Dim 128's default is PD+LR (configuration 0), 0.96-0.98x cuDNN
 * per SM cycle; dim 64's PD+CH, 0.94-0.97x.
 * N176 (dim 128's configuration 10, "_n176_"): PD+LR with tiles of 176
 * keys, FlashAttention-3's non-causal tile, tried once before without PD
 * and LR (no gain, above, in runs whose clocks were not read). A tile's
 * fixed costs (the ring's waits, the turns, the descriptors, the vote, the
 * quad shuffles) spread over 176 keys instead of 128: the loop's listing,
 * without the mask block and the rescale, is about 610 instructions a tile
 * against 490, 3.5 a key against 3.8 (-9%), and 19 HGMMA against 16 (S is
 * m64n176k16, 88 registers). The cost: K and V tiles of 44 KB leave room for
 * 2 stages, not 3 (Q 32 KB + 2 x 88 KB = 208 KB), and 4096 keys take 24
 * tiles, the last 27% full (3% more products). 196 of the consumer's 240
 * registers hold S, P and O; no spills. Prediction: non-causal +2-4% per SM
 * cycle at S=4096 if issue is the limit and 2 stages hide the copies (3
 * stages gave 0-10% over 2 at 128 keys), more at S=16384.
 * Measured (H200, 2026-12-02 17:26-17:28 UTC, two interleaved rounds, as
 * above, flop per SM cycle; 128 keys (the default) / 176 keys / cuDNN):
 *   S=4096           2596, 2602 / 2595, 2632 / 2675, 2639
 *     causal         2252, 2238 / 2213, 2216 / 2314, 2336
 *   S=16384          2730, 2706 / 2798, 2819 / 2732, 2726
 *     causal         2518, 2531 / 2598, 2608 / 2567, 2558
 * +3% at S=16384 both ways, ahead of cuDNN there by 2-3%; level at S=4096
 * and 1.5% slower causal, where the last of 24 tiles is 27% full and a
 * causal work tile's few key tiles leave less to spread the fixed costs
 * over. Not yet the default: the report of the same call (kbench e56031d,
 * 17:21-17:26 UTC: 561.5 against cuDNN's 579.7 TFLOP/s at the default
 * shape, 0.97x; 1.00x causal; dim 64 0.98x, causal 0.97x; S=16384 0.98x,
 * causal 1.02x) ran configuration 0; a default that takes 176 keys for
 * long sequences waits for a report of its own.
 * UQ (FW_UQ, "_uq_"; configuration 11: dim 128's default with it, dim 64's
 * default with it), not yet run on a GPU: a consumer's warpgroup index w
 * comes from threadIdx, so ptxas keeps Q's address (sbase + 64 w rows) and
 * its descriptor in ordinary registers and moves them into uniform ones
 * (R2UR, IMAD.MOV) for every HGMMA. UQ calls the consumer once per
 * warpgroup with w a constant (the code is in the kernel NC times): the
 * loop's listing falls from 755 to 727 instructions at dim 128 (uniform
 * datapath and R2UR 93 -> 38 + 32) and from 681 to 671 at dim 64; no
 * spills. The cost is instruction-cache room: two (three) copies of a
 * ~12 KB loop, where before the consumers ran one. Prediction: +0.5-1.5% at
 * dim 128, +0-1% at dim 64, unless the copies' fetches show as
 * no_instruction stalls.
 * QP (FW_QP, "_qp_"; configuration 13, each dimension's default with it):
 * the gap between S=4096 and S=16384 at the same 2048 work tiles (2600
 * against 2730-2800 flop per SM cycle) is a cost paid once a work tile,
 * about 2.5 key tiles' worth. One candidate: Q's slot is released at the
 * last S of a work tile and only then loaded, from DRAM, while the
 * consumers finish their last softmax, P V and stores, so the first S of the
 * next tile may wait for it. QP has the producer, as soon as it claims the
 * next work tile, ask the TMA unit to bring that tile's Q into the L2
 * (cp.async.bulk.prefetch.tensor, UTMAPF.L2.3D), a whole work tile ahead, so
 * the real load hits the L2. Prediction: +1-3% at S=4096 if the wait for Q
 * is that cost, nothing at S=16384.
 * Measured (H200, 2026-12-03 11:33-11:36 UTC, two interleaved rounds,
 * counters off, --warmup 1, flop per SM cycle at the clock read after each
 * case's samples, 1605-1860 MHz; default (0) / N176 (10) / UQ (11) / N176 +
 * UQ (12) / QP (13) / cuDNN; dim 64: default / PD+CH+LR (10) / UQ (11) /
 * two consumers with UQ (12) / QP (13) / cuDNN):
 *   dim 128 S=4096   2581, 2610 / 2656, 2631 / 2499, 2500 / 2582, 2590 /
 *                    2599, 2596 / 2671, 2614
 *     causal         2213, 2240 / 2209, 2234 / 2174, 2164 / 2191, 2180 /
 *                    2235, 2235 / 2341, 2359
 *   S=16384          2735, 2712 / 2828, 2785 / 2599, 2649 / 2744, 2772 /
 *                    2726, 2730 / 2773, 2747
 *     causal         2553, 2505 / 2598, 2571 / 2424, 2447 / 2553, 2554 /
 *                    2536, 2530 / 2572, 2558
 *   dim 64           2031, 2030 / 1949, 1948 / 1827, 1821 / 1734, 1732 /
 *                    2011, 2018 / 2063, 2067
 *     causal         1674, 1669 / 1629, 1625 / 1504, 1507 / 1585, 1587 /
 *                    1668, 1680 / 1785, 1800
 * UQ lost 3-5% at dim 128 and 10% at dim 64, against a predicted gain: the
 * fewer instructions a tile did not pay for the copies of the loop (the
 * instruction cache, unmeasured). QP moved nothing (within 1% both ways):
 * the wait for Q is not the once-a-tile cost, which remains unexplained.
 * 176 keys again +2-3% at S=16384 both ways and, this time, +1.8% at S=4096
 * (it was level the day before), level causal at S=4096 (-1.5% the day
 * before): dim 128 takes 176 keys except causal sequences shorter than
 * FW_LONG_SEQ. Neither UQ nor QP is kept in a default. The report with
 * this default (results/h200/attention.json, kbench 354fa23, 2026-12-03
 * 11:40-11:46 UTC), against cuDNN in the same run, time (per SM cycle):
 * dim 128 S=4096 578.2 TFLOP/s, 0.97x (0.98x); causal 0.93x (0.95x); dim
 * 64 1.02x (1.01x), causal 0.93x (0.94x); S=16384 627.0, 1.02x (1.01x),
 * causal 1.02x (1.03x).
 * KE (FW_KE, "_ke_"; configuration 15 with QP, dim 64's 14 with QP and 15
 * without; dim 128's 14 was KE+QP at 176 keys, measured below, now SF):
 * the producer waited for Q's slot (the work tile's last S) before it
 * copied anything of the next work tile, so the next tile's first K tile
 * was asked for only then and reached shared memory a copy's latency after
 * the consumers' last softmax, P V and stores: a gap in the tensor pipe at
 * every work tile. KE copies the next work tile's first STAGES - 1 K tiles
 * as soon as their slots are free (up to STAGES - 1 key tiles earlier), then
 * waits for Q's slot and copies Q (from the L2 with QP). Prediction: +1-3%
 * at S=4096, where a work tile is 24-32 key tiles, +0-1% at S=16384.
 * Measured (H200, 2026-12-03 12:42-12:44 UTC, two interleaved rounds, same
 * method, flop per SM cycle; dim 128: 128 keys (0) / 176 keys (10) / 176
 * keys KE+QP (14) / 128 keys KE+QP (15) / cuDNN; dim 64: default (0) /
 * PD+CH+LR (10) / KE+QP (14) / KE (15) / cuDNN):
 *   dim 128 S=4096   2599, 2581 / 2615, 2619 / 2593, 2619 / 2605, 2591 /
 *                    2679, 2683
 *     causal         2231, 2226 / 2180, 2232 / 2154, 2220 / 2225, 2245 /
 *                    2327, 2323
 *   S=16384          2699, 2720 / 2822, 2798 / 2822, 2824 / 2709, 2721 /
 *                    2755, 2764
 *     causal         2524, 2529 / 2610, 2612 / 2625, 2602 / 2550, 2541 /
 *                    2556, 2566
 *   dim 64           2001, 1985 / 1950, 1950 / 1976, 2025 / 2022, 2008 /
 *                    2058, 2065
 *     causal         1670, 1670 / 1620, 1614 / 1684, 1684 / 1672, 1681 /
 *                    1769, 1785
 * KE moved nothing beyond the rounds' spread (-0.5 to +1%), so the next
 * work tile's first K tile was not late either: with QP level too, the
 * once-a-work-tile cost is not a copy's latency. Not kept; what remains to
 * look at is the consumers' own drain and refill (the last P V and the
 * stores, the first S alone, their softmax with no product of their own
 * beside it), which the stall counters of one work tile's edges would
 * show. The same call confirms 176 keys at S=4096 (+0.6-1.3%) and S=16384
 * (+3-4%, 1.02x cuDNN per cycle both ways).
 * The counters of the same day (12:55 UTC, --metrics full, 176 keys, beside
 * cuDNN): the tensor pipe active 75.9% of cycles at S=4096 (cuDNN 75.7%)
 * and 79.7% at S=16384 (cuDNN 77.4%), issue active 34.6-35.3% (cuDNN 44%);
 * 2627 flop per SM cycle at S=4096 against cuDNN's 2711 with the pipe as
 * busy: 4096 keys take 24 tiles of 176, the last with 48 keys, so 3.1% of
 * the products are on keys past the sequence, and 2627 x 1.031 = 2709.
 * SF (FW_SF, "_sf_"; configuration 14): where the sequence's last key tile
 * holds at most 64 keys (not causal), a work tile takes that tile first, as
 * its peeled tile 0, with S on m64n64k16 (4 of the 11 k-steps' columns), P's
 * other columns zero; the rest follow in order. P V still runs all 176
 * keys of it. Prediction: at S=4096 the products fall by 0.64 of a 48-unit
 * work tile, +1-1.5%; at S=16384 (16 keys in the last tile, 94 tiles)
 * +0.3%. Measured (H200, 2026-12-03 13:45-13:46 UTC, three interleaved rounds,
 * counters off, flop per SM cycle; 176 keys (10) / SF (14) / cuDNN):
 *   dim 128 S=4096   2623, 2627, 2626 / 2694, 2657, 2623 / 2688, 2696, 2684
 *   S=16384          2831, 2849, 2820 / 2857, 2850, 2836 / 2767, 2772, 2766
 * +1.2% at S=4096 on the rounds' mean (one round level, the spread of SF's
 * rounds 2.7%), +0.5% at S=16384: as predicted. It closes most of S=4096's
 * gap to cuDNN per cycle (0.976x -> 0.989x). The configuration test passed
 * its 160 cases, seq=900 at dim 128 (a last tile of 20 keys) among them. SF
 * is part of dim 128's default (14 where 10 was; SF does nothing when causal
 * or the last tile holds more than 64 keys, so 14 runs as 10 there). The
 * report with it (results/h200/attention.json, kbench 116ab2c, 2026-12-03
 * 13:59-14:04 UTC), against cuDNN in the same run, time (per SM cycle): dim
 * 128 S=4096 575.4 TFLOP/s, 0.96x (1.02x: 2691 against 2647 flop a cycle,
 * but 1620 MHz under the power cap against cuDNN's 1710); causal 1.02x
 * (0.97x); dim 64 0.97x (0.97x), causal 0.97x (0.94x); S=16384 621.1,
 * 1.01x (1.03x), causal 1.02x (1.02x).
 * What is left between S=4096 and S=16384 (the same 2048 work tiles of 128
 * rows; the A/B above: 2658 against 2848 flop a cycle with SF, 7%): if it
 * is all in the work tiles' edges (Q's wait, the first S and its softmax
 * alone, the last P V, the stores), each work tile loses about 2.3 key
 * tiles' time, 24 + 2.3 against 94 + 2.3. TR (FW_TR; bench/fw_trace.cu)
 * stamps those edges to find which of them it is.
 * The trace (H200, 2026-12-03 15:35 UTC, build/bench/fw_trace, the default
 * configuration 14; cycles, medians over every block's work tiles): the
 * loop's steady key tile costs 3618 cycles at S=4096 and 3605 at S=16384,
 * its waits (K, V, turns, S, P V) 0.2 key tiles' worth over a whole work
 * tile; a work tile's edges cost 0.94 key tiles at S=4096 and 0.95 at
 * S=16384 (the same once a tile: 3.8% of 24.9 key tiles' time against 1.0%
 * of 95); the tail (the mean block's span over the longest) 0.967 and 0.969.
 * With SF's short first tile, whose P V still runs all 176 keys, S=4096 does
 * 23.3 key tiles of work in 24.9 key tiles' time, S=16384 93.1 in 95.0:
 * 4.8% of the 7% per cycle between them. At each edge the tensor pipe idles
 * a median 3170 cycles from the last P V to the next first S, waiting for
 * Q (asked for when its slot frees, at the last S; in 4120 cycles) and tile
 * 0's K (asked for 450 cycles later; in 5640), against 1380 and 2020 at dim
 * 64 (t4), whose K and V are half the bytes a key tile: so the L2's load
 * looked like the cause.
 * MC (FW_MC, "_mc_"; configuration 16, dim 128 only: at dim 64 the producer
 * spills at 32 registers): clusters of two blocks take adjacent query blocks
 * of one head (statically: block b the work tiles b, b + grid, ...; a
 * head's query blocks counted up to an even number), and each block copies
 * half of every K and V tile (88 rows) into the slot of both with
 * cp.async.bulk.tensor's .multicast::cluster; a slot's empty barrier counts
 * the consumers of both blocks (each warp arrives on its own and on the
 * peer's, mapa + mbarrier.arrive.shared::cluster), so the pair walks its key
 * tiles in step. Causal pairs walk the later query block's key tiles (the
 * earlier one's extra tile masked whole). The L2's reads of K and V halve
 * (5.3 TB/s at the default shape and 1.9 GHz, to 2.7). Prediction: Q's and
 * K's latencies at the edges toward dim 64's, the edge from 0.95 to ~0.4
 * key tiles, +2% per cycle at S=4096, +0.5% at S=16384. Measured (H200,
 * 2026-12-03 15:50 UTC; the trace, then three interleaved rounds, flop per
 * SM cycle, 14 / 16 / cuDNN): Q in 3770 cycles, tile 0's K in 5270 (hardly
 * moved), the steady key tile 3687 cycles (+1.9%: the pair's lockstep);
 *   S=4096    2675, 2696, 2680 / 2645, 2621, 2647 / 2682, 2711, 2696
 *   S=16384   2828, 2856, 2826 / 2820, 2787, 2795 / 2767, 2738, 2767
 * -1.7% and -1.3%: the L2's bandwidth was not what kept Q and K waiting.
 * Not kept; the configuration stays to measure.
 * What did keep them: the consumers' stores of O. Traced with O not stored
 * at all (fw_trace's ns, 16:05 UTC), Q came in 1360 cycles and tile 0's K
 * in 1630, not 4120 and 5640: the two warpgroups' stores, 32 of 4 bytes a
 * thread, each warp instruction 8 rows' 16 bytes (2048 store instructions
 * and 8192 partial sectors a work tile), sit in the SM's path to the L2
 * just when Q and K are asked for, and take 1930 cycles to issue.
 * OS (FW_OS, "_os_"; configuration 17, dim 64's 16): each consumer warp
 * writes its 16 rows of O / l, 64 columns at a time, into a 2 KB stage of
 * its own with stmatrix (four 8 x 8 fragments an instruction, the 16-byte
 * chunks XOR-swizzled by row so neither the writes nor the reads back meet
 * on a bank), reads them back 16 bytes a thread and stores them whole: 8
 * 16-byte stores a thread, each warp instruction 4 rows' full 128 bytes
 * (fw_store_o). 16 KB of shared memory more (224 KB at dim 128). Prediction
 * (from the trace): the stores from 1930 cycles to ~600, Q's and K's waits
 * toward the ns trace's, the edge from 0.94 to ~0.5 key tiles: +1.8% per
 * cycle at S=4096, +0.5% at S=16384. Measured (H200, 2026-12-03 16:05-16:10
 * UTC): traced, the stores 809 cycles, Q in 2350, tile 0's K in 3070, the
 * pipe's idle gap at an edge 920 cycles (3170 before), the edge 0.25 key
 * tiles; three interleaved rounds, flop per SM cycle, 14 / 17 / cuDNN:
 *   S=4096    2691, 2699, 2682 / 2762, 2752, 2754 / 2670, 2667, 2667
 *   S=16384   2827, 2826, 2858 / 2867, 2842, 2870 / 2763, 2775, 2757
 * +2.5% and +0.8%, a little over the prediction; then (two rounds) causal,
 * 0 / 17 / cuDNN: S=4096 2234, 2241 / 2312, 2315 / 2332, 2334 (+3.4%: the
 * 176-key tiles, level with 128 causal before, now ahead), and 14 / 17 at
 * S=16384 causal 2616, 2618 / 2611, 2610 (level). Dim 64, 0 / 16 / cuDNN:
 * 2028, 1988 / 1976, 1992 / 2046, 2073, causal 1681, 1679 / 1673, 1675 /
 * 1791, 1773 (-1.2% and -0.3%: a dim-64 warp's O is half the stores, and
 * three consumers already overlap them). Dim 128 runs 17 everywhere, causal
 * included; dim 64 keeps its kernels. The report with it
 * (results/h200/attention.json, kbench 3800a29, 2026-12-03 16:23-16:29 UTC),
 * against cuDNN in the same run, time (per SM cycle): dim 128 S=4096 581.6
 * TFLOP/s, 1.01x (1.03x; 1577 MHz under the power cap, cuDNN 1620: 578.6);
 * causal 1.00x (0.98x); dim 64 0.97x (0.97x), causal 0.95x (0.94x); S=16384
 * 634.1, 1.05x (1.04x), causal 1.02x (1.02x). Where it is slow: dim 64,
 * most causal (the loop's issue: not_selected and mio_throttle above).
 * SP (FW_SP, "_sp_"; configuration 18, 17 with it): SF's short tile still
 * has its P V on all 176 keys, 7 of its 11 k-steps multiplying zeros. SP
 * runs the key-tile loop's first step (whose P V is the short tile's) as a
 * copy of its own with that product on 4 k-steps (fw_pv's KS): per
 * warpgroup and work tile 7 m64n128k16 fewer, 0.32 of a key tile's products
 * in the 24 of S=4096 (and less energy under the power cap); the listing
 * gains that step's 848 instructions (12 HGMMA), run once a work tile, no
 * spills. Prediction: +0.5-1.3% per SM cycle at S=4096 (the low end if the
 * copy's instruction fetches cost what UQ's did), +0.2% at S=16384, nothing
 * causal (SF is off there). Measured (H200, 2026-12-03 16:53 UTC, three
 * interleaved rounds, flop per SM cycle, 17 / 18 / cuDNN):
 *   S=4096    2776, 2767, 2793 / 2795, 2790, 2786 / 2655, 2689, 2699
 *   S=16384   2866, 2848, 2875 / 2890, 2889, 2875 / 2759, 2735, 2736
 * +0.4% and +0.8%, the first at the low end of the prediction and both
 * within about one round's spread; by time, 17 ran 602.7-626.6 TFLOP/s at
 * the default shape in these rounds (1635-1710 MHz), 18 612.5-630.9, cuDNN
 * 585.7-588.3. The configuration test passed its 266 cases (seq=900 at dim
 * 128: a last tile of 20 keys). Not yet the default: a gain this size wants
 * more rounds and a report of its own.
 * ST (FW_ST, "_st_"; configurations 19, and 20 with SP; dim 128, not
 * causal): the tail. 2048 work tiles on 132 blocks are 15 rounds and 68
 * tiles: in the last round 64 SMs sit idle for a whole work tile (the trace's
 * tail efficiency, 0.967 at S=4096 and 0.969 at S=16384). ST runs the first
 * T - tail work tiles whole and the tail's key tiles as one unit a block
 * (fw_st_plan: 68 tiles x 24 key tiles = 132 units of 12-13 at S=4096),
 * walked across work tiles; a work tile split over 2-3 units is merged by
 * the last of its parts to finish, from the others' unnormalised O, row max
 * and sums left in the scratch (fw_st_finish, a counter a tile and consumer;
 * no part waits for another). The consumers have no registers to spare over
 * the loop: the segment's unit, the launch's parameters and the merge's
 * addresses are read from shared memory after it (holding them, or a 64-bit
 * division, spilled 16-104 bytes), and the producer takes 40 registers (the
 * consumers keep 232). Dim 64's three consumers spill with it: no ST there.
 * Prediction: per block the tail round from 24.3 key tiles to ~12.4 plus a
 * second edge and a merge (~1.5 key tiles): +2.5% per SM cycle at S=4096 and
 * S=16384; on grids of fewer work tiles than SMs (B=1 H=2 S=4096: 64 tiles on
 * 132 SMs) nearly 2x, every block busy. Measured (H200, 2026-12-03):
 *   cycles (bench/fw_trace, its producer's records; --blocks of
 *   bench/fw_trace.py, 18:50 UTC): the tail efficiency 0.968 -> 0.995 at
 *   S=4096 and 0.969 -> 0.999 at S=16384, the longest block 1418873 ->
 *   1370445 cycles (-3.4%) and 5490940 -> 5276025 (-3.9%); a whole work
 *   tile's cycles no more (87548 and 339252 with ST, 88476 and 342978
 *   without: the trace's own stamps are in the latter); units of 12-13 key
 *   tiles took 45000-48700 cycles, 1-2 segments each.
 *   time (three interleaved rounds each, 18:25 and 18:50 UTC, one process a
 *   case, 1 s warm-up, flop per SM cycle 17 / 19 / cuDNN): S=4096 2762,
 *   2672, 2764 / 2714, 2713, 2723 / 2699, 2688, 2690, and 2783, 2753, 2771 /
 *   2690, 2689, 2690 / 2678, 2684, 2677; S=16384 2846, 2871, 2841 / 2829,
 *   2813, 2816 / 2766, 2770, 2772, and 2894, 2895, 2850 / 2818, 2845, 2811 /
 *   2761, 2785, 2743. By time (the rounds' means) 19 was 2.1% ahead at
 *   S=4096 and 0.6% at S=16384 in the first call; in the second 3.7% behind
 *   and 1.0% ahead; fw_trace's back-to-back launches, 778.6 (17) against
 *   795.0 us at S=4096. Under the power cap the cycles ST saves do
 *   not become time: its SMs are all busy to the end, where 17's idle half
 *   drew less power, and the clock falls to match (the per-cycle figure,
 *   from the clock read after the samples, does not see within a launch).
 *   The win is on small grids, where the GPU is far from the cap: B=1 H=2
 *   S=4096 1240 -> 1691 flop per SM cycle (+36%; cuDNN 1196). fw_choose
 *   takes 19 only there, where the work tiles are fewer than two rounds of
 *   the grid (fw_st_plan's rule still decides whether any split pays). The
 *   report with it (results/h200/attention.json, kbench db46f90, 19:23 UTC):
 *   B=1 H=2 S=4096 405.6 TFLOP/s, 1.30x cuDNN by time (1.39x per SM cycle);
 *   the other shapes run 17 as before.
 * SK (FW_SK, "_sk_"; part of both defaults since 2026-12-03, 21 the
 * default without it): causal, a work tile walks the key tiles its last
 * row needs, and its first warpgroups' rows end earlier. At dim 64 (BM 192,
 * 128 keys a tile) the last key tile lies wholly past consumer 0's rows in
 * every work tile, and past consumer 1's in every other one: 32 of a head's
 * 1088 consumer-tiles at S=4096, computed in full and then masked to zero.
 * SK skips them: that warpgroup's loop stops a tile short, and the skipped
 * tile's turn issues only the P V of the tile before (the slots released
 * as usual, the skipped tile's once they are full). Prediction: dim 64
 * causal +2-3% per SM cycle (2.9% of its products and softmaxes gone; with
 * 128 rows a block the waste in cuDNN's tiles would be 3.0% against this
 * kernel's 5.9%), dim 128 causal with 176 keys +1-1.5% at S=4096, ~0.3% at
 * S=16384. The first form (the loop's bound nt - 1 for such a warpgroup)
 * ran 5-7% slower everywhere causal, even at S=16384, where it skips
 * almost nothing (H200, 2026-12-03 21:08-21:10 UTC, three interleaved rounds): a
 * loop bound that depends on the warpgroup took the loop's counters, the
 * slots' addresses and the descriptors off the uniform datapath (R2UR 8 ->
 * 32 a key tile at dim 64, 16 -> 54 at dim 128). The loop now stops before
 * the last tile for every warpgroup, and the last tile is a step of its own
 * or the skipped turn, chosen by a vote; the skipped tile's V slot is
 * waited on by the whole warp, since a wait loop of lane 0 alone did the
 * same to the counters (the listing: the key-tile loop 675 instructions at
 * dim 64 against 680 without SK, 961 at dim 128 against 964; no spills).
 * Measured (21:28-21:30 UTC, three interleaved rounds, flop per SM cycle, without
 * SK / with SK / cuDNN):
 *   dim 64 causal            1681, 1666, 1658 / 1694, 1722, 1675 /
 *                            1774, 1787, 1788
 *   dim 128 causal S=4096    2280, 2316, 2301 / 2321, 2324, 2321 /
 *                            2326, 2353, 2342
 *   S=16384 causal           2602, 2613, 2605 / 2619, 2571, 2601 /
 *                            2586, 2538, 2585
 * +1.7%, +1.0% and -0.4% on the rounds' means: the low end of the
 * prediction at dim 64 and S=4096, nothing beyond the spread at S=16384.
 * By time the rounds were level at dim 64 (400.2 against 400.5 TFLOP/s,
 * cuDNN 412.7: 0.97x either way in this call). What is left at dim 64
 * causal, 0.95x cuDNN per cycle, is the loop's issue, as non-causal. The
 * report with SK (results/h200/attention.json, kbench e368f50, 2026-12-03
 * 21:39-21:45 UTC), against cuDNN in the same run, time (per SM cycle): dim
 * 128 S=4096 609.4 TFLOP/s at 1656 MHz, 1.06x (1.04x); causal 1.02x
 * (0.98x); dim 64 0.98x (0.98x), causal 0.99x (0.95x); S=16384 612.8,
 * 0.97x (1.03x: 1620 MHz against cuDNN's 1725), causal 1.01x (1.02x).
 * SP again (H200, 2026-12-03 22:00-22:01 UTC, four interleaved rounds, the
 * defaults with SK, flop per SM cycle; 17 / 18 = 17 with SP / cuDNN):
 *   S=4096    2752, 2744, 2714, 2750 / 2796, 2814, 2788, 2789 /
 *             2712, 2667, 2683, 2709
 *   S=16384   2878, 2853, 2845, 2848 / 2869, 2854, 2891, 2855 /
 *             2759, 2771, 2769, 2719
 * +2.1% at S=4096 (every round of 18 above every round of 17; by time 611.9
 * against 598.0 TFLOP/s on the rounds' means, cuDNN 582.5) and +0.4% at
 * S=16384, where the three rounds of 16:53 UTC had +0.4% and +0.8%: the
 * short tile's 7 products of zeros a work tile are 1.3% of S=4096's
 * products, and the SM's power under the cap follows them. Dim 128's
 * default is 18 since (20 with ST on small grids); causal runs as 17,
 * since SF, and so SP, is off there. The report with it
 * (results/h200/attention.json, kbench 6457989, 2026-12-03 22:07-22:13
 * UTC), against cuDNN in the same run, time (per SM cycle): dim 128 S=4096
 * 600.9 TFLOP/s at 1635 MHz, 1.04x (1.05x); causal 1.00x (1.00x); dim 64
 * 0.96x (0.98x), causal 0.98x (0.97x); S=16384 620.7, 1.04x (1.05x),
 * causal 1.06x (1.03x). */
#include <stdio.h>

#include "attention.cuh"
#include "kernels/cluster.cuh"
#include "kernels/hopper.cuh"
#include "kernels/tma.h"

#define FW_ROWS 64  /* query rows per consumer warpgroup: the m of wgmma */
#define FW_BN 128   /* keys per tile: the n of S's wgmma */
#define FW_WG 128   /* threads per warpgroup */
/* The persistent grid's work counter and finished-blocks counter (two ints in
 * the variant's scratch, zeroed once by prepare; the last block resets them). */
#define FW_SCHED_BYTES 8

/* D: head dimension (64, 128); NC: consumer warpgroups; STAGES: K/V slots;
 * PP: the two consumers take turns issuing (named barriers); OV: a branch on
 * the softmax's row sums ends its block before the wait for P V (fw_overlap);
 * X: alternatives under measurement, FW_PD | FW_CH | FW_RS (below). */
#define FW_PD 1 /* the operands' descriptors encoded once and moved (fw_qk) */
#define FW_CH 2 /* the softmax's row max and sum in FW_CHAINS chains (fw_softmax) */
#define FW_RS 4 /* the rows' sums of P on the tensor pipe: P V against ones (fw_pv) */
#define FW_LR 8 /* O rescaled only when a row's max grows by more than FW_LR_LOG2 (fw_softmax) */
#define FW_UQ 16 /* a copy of the consumer per warpgroup, its rows a constant */
#define FW_QP 32 /* the next work tile's Q brought into the L2 a work tile ahead */
#define FW_KE 64 /* a work tile's first K tiles copied before Q's slot is free (fw_produce) */
#define FW_SF 128 /* a short last key tile taken first, its S on 64 keys (fw_short_first) */
#define FW_TR 256 /* clock stamps of each work tile's edges into fw_trace (bench/fw_trace.cu) */
#define FW_MC 512 /* clusters of two blocks, each K and V tile multicast into both (fw_load_tile) */
#define FW_OS 1024 /* O stored through shared memory in 16-byte pieces (fw_store_o) */
#define FW_NS 2048 /* O not stored: a measuring build's (bench/fw_trace.cu) wrong output */
#define FW_SP 4096 /* with SF, the short tile's P V on its 64 keys (fw_consume_tile) */
#define FW_ST 8192 /* the last round's work tiles split by key range over every block (fw_st_plan) */
#define FW_SK 16384 /* causal: a key tile past all of a warpgroup's rows not computed (fw_consume_tile) */
#define FW_CHAINS 4
/* LR: a row keeps its stale max while the tile's max exceeds it by at most
 * this, in log2 units, so that P = 2^(S - m) stays at most 2^8 = 256 */
#define FW_LR_LOG2 8.0f
template <int D_, int NC_, int STAGES_, bool PP_, bool OV_ = false, int X_ = 0, int BN_ = FW_BN>
struct fw_cfg {
    static constexpr int D = D_, NC = NC_, STAGES = STAGES_, BN = BN_;
    static constexpr bool PP = PP_, OV = OV_, PD = (X_ & FW_PD) != 0;
    static constexpr int CHAINS = (X_ & FW_CH) ? FW_CHAINS : 1;
    static constexpr bool RS = (X_ & FW_RS) != 0, LR = (X_ & FW_LR) != 0, UQ = (X_ & FW_UQ) != 0;
    static constexpr bool QP = (X_ & FW_QP) != 0, KE = (X_ & FW_KE) != 0, SF = (X_ & FW_SF) != 0;
    static constexpr bool TR = (X_ & FW_TR) != 0, MC = (X_ & FW_MC) != 0;
    static constexpr bool OS = (X_ & FW_OS) != 0, NS = (X_ & FW_NS) != 0, SP = (X_ & FW_SP) != 0;
    /* CTR: the consumers' half of TR, not with ST, whose consumers have no
     * registers for it (bench/fw_trace's st traces the producer alone); nor
     * SK, whose last step spills 8 bytes beside CTR's stamps (a trace of a
     * default is then of it without SK, which changes only causal runs) */
    static constexpr bool ST = (X_ & FW_ST) != 0, CTR = TR && !ST;
    static constexpr bool SK = (X_ & FW_SK) != 0 && !CTR;
    static constexpr int CL = MC ? 2 : 1; /* blocks a cluster */
    static constexpr int ON = D / 2 + (RS ? 4 : 0); /* O's registers (RS: + the sums) */
    static constexpr int BM = FW_ROWS * NC;
    static constexpr int THREADS = FW_WG * (NC + 1);
    static constexpr int SLABS = D / 64; /* 128-byte slabs of a row */
    static constexpr int Q_BYTES = BM * D * 2;
    static constexpr int KV_BYTES = BN * D * 2;
    static constexpr int OFF_K = Q_BYTES;
    static constexpr int OFF_V = OFF_K + STAGES * KV_BYTES;
    /* RS: a slab of BN rows of ones after the V slots, the 8 columns P V's
     * n72 product reads past V's 64 (fw_vdesc0) */
    static constexpr int OFF_ONES = OFF_V + STAGES * KV_BYTES;
    static constexpr int ONES_BYTES = RS ? BN * KB_SW128_ROW : 0;
    static constexpr int OFF_BAR = OFF_ONES + ONES_BYTES;
    static constexpr int NBAR = 2 + 4 * STAGES; /* Q full and empty; K, V full and empty per slot */
    /* the block's next work item (one int; ST: two slots of four by the
     * segment's parity, fw_produce), then ST's flag per consumer and its
     * launch parameters (fw_st_finish) */
    static constexpr int OFF_SCHED = OFF_BAR + NBAR * 8;
    /* OS: a 2 KB stage per consumer warp (16 rows x 64 columns of O) */
    static constexpr int OFF_OST = OFF_SCHED + (ST ? 80 : 16);
    static constexpr int OST_BYTES = OS ? 4 * NC * 2048 : 0;
    static constexpr size_t SMEM = (size_t)OFF_OST + OST_BYTES + KB_SW128_ATOM; /* + alignment */
    /* registers per thread: the block is launched with 65536 / THREADS rounded
     * down to 8 (168 for 384 threads, 128 for 512) and setmaxnreg only moves
     * them: 128 REG_PRODUCER + 128 NC REG_CONSUMER <= THREADS x that */
    static constexpr int REG_LAUNCH = 65536 / THREADS / 8 * 8;
    /* MC: 40 for the multicast's addresses (the TR build spills at 32); at
     * dim 128 the consumers keep their 232 */
    static constexpr int REG_PRODUCER = MC || ST ? 40 : 32;
    static constexpr int REG_CONSUMER = (THREADS * REG_LAUNCH - FW_WG * REG_PRODUCER) / (FW_WG * NC) / 8 * 8;
    static_assert(D == 64 || D == 128, "dim 64 or 128");
    static_assert(!RS || (D == 64 && PD && !OV), "RS: dim 64, moved descriptors, l unused");
    static_assert(NC >= 2 && NC <= 3, "two or three consumer warpgroups");
    static_assert(BN == 128 || (BN == 176 && D == 128 && !RS), "128 keys a tile, or 176 at dim 128");
    static_assert(BN / CL % 8 == 0, "each block's part of a tile: whole swizzle atoms");
    static_assert(SMEM <= 227 * 1024, "one block an SM");
    static_assert(!ST || (!MC && D == 128), "ST: dim 128, blocks claiming their items alone");
    static_assert(ON % 4 == 0, "O's registers as 16-byte pieces (ST's partials)");
    static_assert(!SK || !MC, "SK: a block's consumers release the slots alone");
};

/* Configurations named once, for fw_choose's lists and bench/fw_trace: dim
 * 128's 176-key tiles with PD, LR and SF, X adding to them (14 with none, 16
 * MC, 21 OS, 17 OS and SK, 18 those and SP, 19 and 20 with ST), with the
 * default fw_choose picks among them; dim 64's default, PD, CH and SK (0; 21
 * without SK). */
template <int X> using fw_d128_sf = fw_cfg<128, 2, 2, true, true, FW_PD | FW_LR | FW_SF | X, 176>;
template <int X> using fw_d128_default = fw_d128_sf<FW_OS | FW_SK | X>;
template <int X> using fw_d64_default = fw_cfg<64, 3, 4, true, false, FW_PD | FW_CH | FW_SK | X>;
/* what fw_choose runs at dim 128 unless told: fw_d128_chosen<0>, or on small
 * grids fw_d128_chosen<FW_ST>, at these indices of its list */
template <int X> using fw_d128_chosen = fw_d128_default<FW_SP | X>;
#define FW_D128_DEFAULT 18
#define FW_D128_ST 20

/* The barriers, 8 bytes each after the tiles: Q full, Q empty, then per slot
 * K full, K empty, V full, V empty. */
enum { FW_K_FULL, FW_K_EMPTY, FW_V_FULL, FW_V_EMPTY };
#define FW_Q_FULL(bars) (bars)
#define FW_Q_EMPTY(bars) ((bars) + 8u)

template <typename C> static __device__ __forceinline__ uint32_t fw_bar(uint32_t bars, int kind, int st)
{
    return bars + 8u * (uint32_t)(2 + kind * C::STAGES + st);
}

/* The ring's slot of the block's pos-th key tile, and the parity of its
 * barriers' phase for that use. */
template <typename C> static __device__ __forceinline__ int fw_slot(int pos)
{
    return pos % C::STAGES;
}
template <typename C> static __device__ __forceinline__ unsigned fw_parity(int pos)
{
    return (unsigned)(pos / C::STAGES) & 1u;
}

/* TR, a measuring build's timeline (bench/fw_trace.cu; no configuration of
 * the variant has it): for each block, each of its first FW_TR_TILES work
 * tiles and each role (0 the producer, 1.. the consumers), a record of
 * FW_TR_SLOTS 64-bit words: SM clock stamps at the tile's edges, the
 * consumers' cycles spent in each kind of wait over the key-tile loop, the
 * global timer at the tile's start and the work tile with its key-tile count
 * (fw_trace_rec's callers say which slot is which). fw_trace is null unless
 * the measuring program sets it. */
#define FW_TR_TILES 64
#define FW_TR_ROLES 4
#define FW_TR_SLOTS 16
__device__ unsigned long long *fw_trace;

static __device__ __forceinline__ unsigned long long *fw_trace_rec(int n, int role)
{
    if (!fw_trace || n >= FW_TR_TILES)
        return nullptr;
    return fw_trace + (((size_t)blockIdx.x * FW_TR_TILES + n) * FW_TR_ROLES + role) * FW_TR_SLOTS;
}

static __device__ __forceinline__ unsigned long long fw_clock()
{
    return (unsigned long long)clock64();
}

static __device__ __forceinline__ unsigned long long fw_gtime()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}

/* A block's work tile wt: the (batch, head) bh and the first query row q0
 * (query blocks of a head from the last, which has the most key tiles when
 * causal), and the key tiles it walks. Heads are the slow index, so the
 * blocks in flight share a few heads' K and V in the L2. */
template <typename C>
static __device__ __forceinline__ void fw_work(int wt, int nqb, int s, int causal, int *bh, int *q0,
                                               int *ntiles)
{
    *bh = wt / nqb;
    *q0 = (nqb - 1 - wt % nqb) * C::BM;
    /* MC: the two blocks of a cluster walk the same key tiles, those of the
     * pair's later query block (its first, even, work tile) */
    const int qk = C::MC ? (nqb - 1 - (wt & ~1) % nqb) * C::BM : *q0;
    const int kend = causal && qk + C::BM < s ? qk + C::BM : s;
    *ntiles = (kend + C::BN - 1) / C::BN;
}

/* A compile-time bool as a value, for a generic lambda's copies. */
template <bool B> struct fw_bool {
    static constexpr bool value = B;
};

/* Named barrier ids (0 is __syncthreads): the turn of consumer w is 1 + w. */
#define FW_BAR_TURN 1

/* The descriptor of V at vbase (fw_pv), which PD moves from slot to slot. */
template <int BN> static __device__ __forceinline__ uint64_t fw_vdesc(uint32_t vbase)
{
    return kb_wgmma_desc(vbase, BN * KB_SW128_ROW, KB_SW128_ATOM);
}

/* The descriptor of a K-major operand (Q, K) at a (fw_qk). */
static __device__ __forceinline__ uint64_t fw_kdesc(uint32_t a)
{
    return kb_wgmma_desc(a, 16, KB_SW128_ATOM);
}

/* V slot 0's descriptor (PD), moved to slot st by fw_vslot. RS: its lbo
 * reaches from the slot to the slab of ones (the n72 product's last 8
 * columns), so moving the start address st KV_BYTES forward moves the lbo as
 * far back, in the same 32-bit add (the fields are bits 0-13 and 16-29). */
template <typename C> static __device__ __forceinline__ uint64_t fw_vdesc0(uint32_t sbase)
{
    if constexpr (C::RS)
        return kb_wgmma_desc(sbase + C::OFF_V, C::OFF_ONES - C::OFF_V, KB_SW128_ATOM);
    else
        return fw_vdesc<C::BN>(sbase + C::OFF_V);
}

template <typename C> static __device__ __forceinline__ uint64_t fw_vslot(uint64_t dv0, int st)
{
    const uint32_t d = (uint32_t)(st * C::KV_BYTES) >> 4;
    return kb_wgmma_desc_add_lo(dv0, C::RS ? d - (d << 16) : d);
}

/* O += P V for one tile: V (BN keys x D, rows of D contiguous: MN-major for
 * B) at vbase, 16 keys (2048 bytes) per instruction; the slabs of 64 columns
 * are BN rows (lbo) apart, groups of 8 keys 1024 bytes (sbo). PD: dv is
 * vbase's descriptor (fw_vslot), moved for each instruction; RS: the product
 * is n72, its last 8 columns against ones, so O's registers 32-35 collect
 * the rows' sums of P as rounded for the product. */
template <typename T, typename C, int KS = C::BN / 16>
static __device__ __forceinline__ void fw_pv(float (&o)[C::ON], const uint32_t (&p)[C::BN / 16][4],
                                             uint32_t vbase, uint64_t dv)
{
#pragma unroll
    for (int kk = 0; kk < KS; kk++) { /* KS < BN / 16: the rest of P is zeros (SP) */
        const uint32_t off = kk * 16 * KB_SW128_ROW;
        const uint64_t db = C::PD ? kb_wgmma_desc_add(dv, off) : fw_vdesc<C::BN>(vbase + off);
        if constexpr (C::D == 128)
            kb_wgmma_m64n128k16_rs<T>(o, p[kk], db, 1);
        else if constexpr (C::RS)
            kb_wgmma_m64n72k16_rs<T>(o, p[kk], db, 1);
        else
            kb_wgmma_m64n64k16_rs<T>(o, p[kk], db, 1);
    }
}

/* S = Q K^T for one tile: Q's 64 rows of this warpgroup at qa, K's BN rows at
 * kbase, both K-major; 16 columns (32 bytes) per instruction, slab by slab.
 * PD: dq and dk are qa's and kbase's descriptors (fw_kdesc), moved for each
 * instruction; otherwise each operand's address is encoded anew (in the SASS
 * of dim 64's loop, 82 uniform-datapath instructions a tile for 12 HGMMA). */
template <typename T, typename C, int N = C::BN>
static __device__ __forceinline__ void fw_qk(float (&sacc)[N / 2], uint32_t qa, uint32_t kbase,
                                             uint64_t dq, uint64_t dk)
{
#pragma unroll
    for (int kk = 0; kk < C::D / 16; kk++) {
        const uint32_t step = (uint32_t)(kk % 4) * 32;
        const uint32_t offq = (kk / 4) * C::BM * KB_SW128_ROW + step;
        const uint32_t offk = (kk / 4) * C::BN * KB_SW128_ROW + step;
        const uint64_t da = C::PD ? kb_wgmma_desc_add(dq, offq) : fw_kdesc(qa + offq);
        const uint64_t db = C::PD ? kb_wgmma_desc_add(dk, offk) : fw_kdesc(kbase + offk);
        if constexpr (N == 176)
            kb_wgmma_m64n176k16_ss<T>(sacc, da, db, kk > 0);
        else if constexpr (N == 128)
            kb_wgmma_m64n128k16_ss<T>(sacc, da, db, kk > 0);
        else
            kb_wgmma_m64n64k16_ss<T>(sacc, da, db, kk > 0);
    }
}

/* SF: whether a work tile of ntiles key tiles takes its last one first, with
 * S on 64 keys: not causal, and the sequence's last tile holds at most 64
 * keys (at S=4096 and 176 keys a tile, 48). The same for every work tile of
 * a launch. */
template <typename C>
static __device__ __forceinline__ bool fw_short_first(int s, int causal, int ntiles)
{
    return C::SF && !causal && ntiles > 1 && s - (ntiles - 1) * C::BN <= 64;
}

/* The key tile at position j of a work tile's walk: j, or with SF the last
 * first and then 0, 1, ... */
static __device__ __forceinline__ int fw_key_tile(int j, int ntiles, bool sf)
{
    return sf ? (j == 0 ? ntiles - 1 : j - 1) : j;
}

/* The next work tile of a block that has just started tile wt: with sched
 * (the persistent grid), the next unclaimed one (a device-wide counter past
 * the first gridDim.x, which every block starts with), else wt + gridDim.x. */
static __device__ __forceinline__ int fw_next(int *sched, int wt)
{
    return sched ? (int)gridDim.x + atomicAdd(&sched[0], 1) : wt + (int)gridDim.x;
}

/* Copies key tile j of slice bh (K or V, per tmap) into slot st at dst, once
 * the consumers have released the slot's previous tile (phase ph of the ring).
 * MC: this block copies its half of the tile's rows (rank 0 the first BN / 2,
 * rank 1 the rest; tmap's box is that half) into the slot of both blocks of
 * its cluster, and each block's full barrier counts both halves; the slot's
 * empty barrier counts the consumers of both blocks (fw_release), since this
 * copy writes into the other block's slot too. */
template <typename C>
static __device__ __forceinline__ void fw_load_tile(uint32_t dst, const CUtensorMap *tmap,
                                                    uint32_t bars, int full, int empty, int st,
                                                    unsigned ph, int j, int bh)
{
    constexpr int HALF = C::BN / C::CL;
    const unsigned rank = C::MC ? kb_cluster_rank() : 0u; /* read here, not held: the
                                                            producer has 32 registers */
    kb_mbar_wait(fw_bar<C>(bars, empty, st), ph ^ 1u);
    kb_mbar_expect_tx(fw_bar<C>(bars, full, st), C::KV_BYTES);
#pragma unroll
    for (int c = 0; c < C::SLABS; c++) {
        const uint32_t d = dst + c * C::BN * KB_SW128_ROW;
        if constexpr (C::MC)
            kb_tma_load_3d_multicast(d + rank * HALF * KB_SW128_ROW, tmap,
                                     fw_bar<C>(bars, full, st), c * 64,
                                     j * C::BN + (int)rank * HALF, bh, (uint16_t)3u);
        else
            kb_tma_load_3d(d, tmap, fw_bar<C>(bars, full, st), c * 64, j * C::BN, bh);
    }
}

/* A consumer warp is done with a K or V slot (bar, its empty barrier): one
 * arrival there, and with MC one on the same barrier of the other block of
 * the cluster, whose producer copies into this block's slot too. */
template <typename C> static __device__ __forceinline__ void fw_release(uint32_t bar)
{
    kb_mbar_arrive(bar);
    if constexpr (C::MC)
        kb_mbar_arrive_peer(bar);
}

/* ST ("_st_"; fw_st_plan on the host): a launch of T work tiles on a grid of
 * P blocks runs the first T - tail whole, and the last tail (T mod P, or all
 * T when T < P; not causal) as `units` equal runs of the tail's key tiles,
 * walked tile after tile (tail x ntl positions, each work tile's in its own
 * walk order, SF's included): unit u runs positions fw_st_begin(u) ..
 * fw_st_begin(u + 1) - 1, one segment a work tile it touches. A segment that
 * is not a whole work tile ends in fw_st_finish: its unnormalised O, row max
 * and sums go to a slot in the scratch, and the last of the tile's parts to
 * finish (a counter a tile and consumer) merges the others into its own and
 * stores O. */
#define FW_ST_MIN 4 /* key tiles a unit at least */
#define FW_ST_MAX_SMS 192 /* ST's scratch is sized for grids of up to this many blocks */
#define FW_ST_CNT 4 /* the combine counters' first int in the scratch (after the sched pair) */
#define FW_BAR_ST 4 /* named barrier of consumer w in fw_st_finish: FW_BAR_ST + w */

/* The first position of unit u of `units` in the tail's walk of iters key
 * tiles. 32-bit (fw_st_plan keeps units x iters below 2^31): a 64-bit
 * division's registers spill the consumers'. */
static __host__ __device__ __forceinline__ int fw_st_begin(int u, int units, int iters)
{
    return (int)((unsigned)(u * iters) / (unsigned)units);
}

/* The unit whose positions hold g. */
static __device__ __forceinline__ int fw_st_unit(int g, int units, int iters)
{
    int u = (int)((unsigned)(g * units) / (unsigned)iters);
    while (u + 1 < units && fw_st_begin(u + 1, units, iters) <= g)
        u++;
    return u;
}

/* The producer: one thread issues every copy of the block, work item after
 * work item; the K/V ring runs on across them (it counts the tiles passed).
 * A work item is a work tile, or (ST) a unit of the tail, walked as one
 * segment per work tile it touches. Each segment goes to the consumers in
 * shared memory (slot: the work tile; ST adds its first position in the
 * tile's walk, its key tiles and its unit, -1 for a whole tile), published by
 * Q's barrier; -1 says there is none left. */
template <typename C>
static __device__ __forceinline__ void fw_produce(const CUtensorMap *tq, const CUtensorMap *tk,
                                                  const CUtensorMap *tv, uint32_t sbase,
                                                  uint32_t bars, volatile int *slot, int *sched,
                                                  int s, int nqb, int total, int causal,
                                                  int tail, int units)
{
    kb_tma_prefetch_map(tq);
    kb_tma_prefetch_map(tk);
    kb_tma_prefetch_map(tv);
    int it = 0, n = 0, item = blockIdx.x;
    const int whole = total - tail;
    /* one segment: work tile wt (none at total), positions j0 .. j0 + nt - 1
     * of its walk (unit < 0: all of them); false when there is none */
    const auto segment = [&](int wt, int j0, int nt, int unit, bool first) {
        int bh = 0, q0 = 0, ntiles = 0; /* none past the last work tile */
        if (wt < total)
            fw_work<C>(wt, nqb, s, causal, &bh, &q0, &ntiles);
        if (!C::ST || unit < 0)
            nt = ntiles;
        const bool sf = fw_short_first<C>(s, causal, ntiles);
        unsigned long long *tr = nullptr; /* TR: 0 top, 1 Q's slot free, 2 Q asked for,
                                             3 the first K tile asked for, 4 the last V; past
                                             the last segment (wt total) 0 and 1 alone */
        if constexpr (C::TR) {
            tr = fw_trace_rec(n, 0);
            if (tr) {
                tr[0] = fw_clock();
                tr[15] = (unsigned long long)wt | (unsigned long long)nt << 32;
            }
        }
        /* KE: the first K tiles as soon as their slots are free, which is up
         * to STAGES - 1 key tiles before the last S of the work tile before
         * releases Q's slot */
        const int early = !C::KE ? 0 : nt < C::STAGES - 1 ? nt : C::STAGES - 1;
        for (int j = 0; j < early; j++) {
            const int st = fw_slot<C>(it + j);
            fw_load_tile<C>(sbase + C::OFF_K + st * C::KV_BYTES, tk, bars, FW_K_FULL, FW_K_EMPTY,
                            st, fw_parity<C>(it + j), fw_key_tile(j0 + j, ntiles, sf), bh);
        }
        kb_mbar_wait(FW_Q_EMPTY(bars), ((unsigned)n & 1u) ^ 1u);
        if (C::TR && tr)
            tr[1] = fw_clock();
        /* ST: segment n's slot stays as written until segment n + 2's, which
         * waits for Q's release in segment n + 1: past n's end in every
         * consumer, which reads its unit there (fw_consume_tile) */
        volatile int *sl = slot + (C::ST ? 4 * (n & 1) : 0);
        if (wt >= total) {
            sl[0] = -1;
            kb_mbar_arrive(FW_Q_FULL(bars));
            return false;
        }
        sl[0] = wt;
        if constexpr (C::ST) {
            sl[1] = j0;
            sl[2] = nt;
            sl[3] = nt < ntiles ? unit : -1; /* a part of the work tile, or all of it */
        }
        kb_mbar_expect_tx(FW_Q_FULL(bars), C::Q_BYTES);
#pragma unroll
        for (int c = 0; c < C::SLABS; c++)
            kb_tma_load_3d(sbase + c * C::BM * KB_SW128_ROW, tq, FW_Q_FULL(bars), c * 64, q0, bh);
        if (C::TR && tr)
            tr[2] = fw_clock();
        if (first) /* claimed early: the atomic's latency hides behind K, V */
            item = fw_next(sched, item);
        if (C::QP && first && item < whole) { /* QP: the next tile's Q on its way to the L2 */
            int nbh, nq0, nq;
            fw_work<C>(item, nqb, s, causal, &nbh, &nq0, &nq);
#pragma unroll
            for (int c = 0; c < C::SLABS; c++)
                kb_tma_prefetch_3d(tq, c * 64, nq0, nbh);
        }
        for (int j = 0; j < nt; j++, it++) {
            const int st = fw_slot<C>(it), kt = fw_key_tile(j0 + j, ntiles, sf);
            const unsigned ph = fw_parity<C>(it);
            if (j >= early)
                fw_load_tile<C>(sbase + C::OFF_K + st * C::KV_BYTES, tk, bars, FW_K_FULL,
                                FW_K_EMPTY, st, ph, kt, bh);
            if (C::TR && tr && j == 0)
                tr[3] = fw_clock();
            fw_load_tile<C>(sbase + C::OFF_V + st * C::KV_BYTES, tv, bars, FW_V_FULL, FW_V_EMPTY,
                            st, ph, kt, bh);
        }
        if (C::TR && tr)
            tr[4] = fw_clock();
        n++;
        return true;
    };
    for (;;) {
        const int cur = item;
        if (!C::ST || cur < whole || cur >= whole + units) {
            if (!segment(cur < whole ? cur : total, 0, 0, -1, true))
                break;
            continue;
        }
        /* ST: unit u's positions, one segment a work tile (every work tile of
         * the tail walks ntl key tiles: not causal) */
        int bh, q0, ntl;
        fw_work<C>(whole, nqb, s, causal, &bh, &q0, &ntl);
        const int u = cur - whole, iters = tail * ntl;
        const int gend = fw_st_begin(u + 1, units, iters);
        for (int g = fw_st_begin(u, units, iters); g < gend;) {
            const int t = g / ntl, j0 = g - t * ntl;
            const int nt = ntl - j0 < gend - g ? ntl - j0 : gend - g;
            segment(whole + t, j0, nt, u, g == fw_st_begin(u, units, iters));
            g += nt;
        }
    }
    /* the last block to finish claiming resets the counter for the next launch */
    if (sched && atomicAdd(&sched[1], 1) == (int)gridDim.x - 1) {
        atomicExch(&sched[0], 0);
        atomicExch(&sched[1], 0);
    }
}

/* Masks S to -inf at keys past the sequence and, when causal, past the row. */
template <int BN>
static __device__ __forceinline__ void fw_mask(float (&sacc)[BN / 2], int k0, int row0, int colq,
                                               int s, int causal)
{
#pragma unroll
    for (int c = 0; c < BN / 8; c++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int col = k0 + c * 8 + colq + (e & 1);
            const int row = row0 + (e >> 1) * 8;
            if (col >= s || (causal && col > row))
                sacc[4 * c + e] = kb_neg_inf();
        }
}

/* The online softmax of one tile: S becomes exp2(S sl2 - m sl2) with m the new
 * running row max; returns each row's rescale factor for O in alpha and adds
 * the tile's sums (this thread's columns only) to l. The row's max and sum
 * run in CH independent chains, merged at the end: with one, each of a
 * thread's 32 FMNMX and 64 FADD a row waits for the one before it. LR: the
 * rows keep their max, and alpha is 1, unless some row of the warp meets a
 * max more than FW_LR_LOG2 above its own; the result says whether O is to be
 * rescaled (always, without LR). Exact either way: P and l share the max,
 * which O / l cancels, and P <= 2^FW_LR_LOG2 stays far from overflow in fp32
 * and in P's 16-bit type. */
template <int BN, int CH = 1, bool LR = false>
static __device__ __forceinline__ bool fw_softmax(float (&sacc)[BN / 2], float (&m)[2],
                                                  float (&l)[2], float (&alpha)[2], float sl2)
{
    float mx[2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mc[CH];
#pragma unroll
        for (int i = 0; i < CH; i++)
            mc[i] = m[h];
#pragma unroll
        for (int c = 0; c < BN / 8; c++)
            mc[c % CH] = fmaxf(mc[c % CH], fmaxf(sacc[4 * c + 2 * h], sacc[4 * c + 2 * h + 1]));
        mx[h] = mc[0];
#pragma unroll
        for (int i = 1; i < CH; i++)
            mx[h] = fmaxf(mx[h], mc[i]);
        mx[h] = att_lanes_max<4>(mx[h]);
    }
    /* tile 0 holds key 0, which no row masks: mx is finite from the start, and
     * m's -inf before it always asks for the rescale (alpha 0) */
    bool rescale = true;
    if constexpr (LR)
        rescale = __any_sync(KB_FULL_MASK, (mx[0] - m[0]) * sl2 > FW_LR_LOG2 ||
                                               (mx[1] - m[1]) * sl2 > FW_LR_LOG2);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        if (rescale) {
            alpha[h] = kb_exp2((m[h] - mx[h]) * sl2);
            m[h] = mx[h];
        } else {
            alpha[h] = 1.0f;
        }
        const float ms = m[h] * sl2;
        float sc[CH];
#pragma unroll
        for (int i = 0; i < CH; i++)
            sc[i] = 0.0f;
#pragma unroll
        for (int c = 0; c < BN / 8; c++)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; e++) {
                const float p = kb_exp2(fmaf(sacc[4 * c + e], sl2, -ms));
                sacc[4 * c + e] = p;
                sc[c % CH] += p;
            }
        float sum = sc[0];
#pragma unroll
        for (int i = 1; i < CH; i++)
            sum += sc[i];
        l[h] = rescale ? l[h] * alpha[h] + sum : l[h] + sum;
    }
    return rescale;
}

/* Masks (where the tile needs it) and runs the online softmax of the tile of
 * keys k0.. for a warpgroup whose first row is wrow0; returns fw_softmax's. */
template <int BN, int CH, bool LR>
static __device__ __forceinline__ bool fw_tile_softmax(float (&sacc)[BN / 2], float (&m)[2],
                                                       float (&l)[2], float (&alpha)[2], int k0,
                                                       int wrow0, int row0, int colq, int s,
                                                       int causal, float sl2)
{
    if (k0 + BN > s || (causal && k0 + BN - 1 > wrow0))
        fw_mask<BN>(sacc, k0, row0, colq, s, causal);
    return fw_softmax<BN, CH, LR>(sacc, m, l, alpha, sl2);
}

/* The softmax of S_j before the wait for P_{j-1} V_{j-1}, in the SASS too.
 * Without it ptxas puts the wait (WARPGROUP.DEPBAR.LE gsb0, 0x0) at the top of
 * the block holding the softmax, and every MUFU.EX2 of the tile after it: the
 * products and the exponentials of one warpgroup take turns, and only the
 * other consumers' ping-pong overlaps them. A branch on the row sums, never
 * taken (l is a sum of exponentials, never the bit pattern 0xffffffff), ends
 * the softmax's block, so the wait lands after it (the nvdisasm listing of
 * sm_90a: all 64 of a tile's EX2 ahead of the wait, at dim 64 and 128). */
template <typename C> static __device__ __forceinline__ void fw_overlap(const float (&l)[2])
{
    if constexpr (C::OV)
        if (__float_as_uint(l[0] + l[1]) == 0xffffffffu)
            asm volatile("nanosleep.u32 1;");
}

/* P as the A operand of P V: the accumulator pairs of S rounded to T, four
 * registers per 16 keys (m16n8k16 A-fragment order). */
template <typename T, int BN>
static __device__ __forceinline__ void fw_pack(uint32_t (&p)[BN / 16][4], const float (&sacc)[BN / 2])
{
#pragma unroll
    for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            p[kk][r] = kb_pack2<T>(sacc[8 * kk + 2 * r], sacc[8 * kk + 2 * r + 1]);
}

/* OS: O / l of a consumer warp's 16 rows (the first at row orow0 of the
 * [bh s][D] output, rows_left of them and after it in the sequence) stored
 * through the warp's 2 KB stage, 64 columns at a time: stmatrix writes the
 * accumulator fragments as rows of 128 bytes (its 16-byte chunks XOR-swizzled
 * by the row, so neither the matrices' rows nor the reads back meet on a
 * bank), then each thread reads 16 bytes back and stores them, eight threads
 * a row's 128 bytes: 8 full 16-byte stores a thread and 64 columns instead of
 * 32 4-byte ones, each of which left a warp's 8 rows 16 bytes apiece. */
template <typename T, typename C>
static __device__ __forceinline__ void fw_store_o(T *__restrict__ out, const float (&o)[C::ON],
                                                  const float (&inv)[2], uint32_t stage,
                                                  int64_t orow0, int rows_left)
{
    const int lane = threadIdx.x % 32, mi = lane / 8;
    const int srow = lane % 8 + 8 * (mi & 1); /* the row whose address this thread gives */
#pragma unroll
    for (int hf = 0; hf < C::D / 64; hf++) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const int c = 8 * hf + 2 * k, cb = 2 * k + (mi >> 1);
            kb_stmatrix_x4(stage + srow * 128 + ((cb ^ (srow % 8)) * 16),
                           kb_pack2<T>(o[4 * c] * inv[0], o[4 * c + 1] * inv[0]),
                           kb_pack2<T>(o[4 * c + 2] * inv[1], o[4 * c + 3] * inv[1]),
                           kb_pack2<T>(o[4 * c + 4] * inv[0], o[4 * c + 5] * inv[0]),
                           kb_pack2<T>(o[4 * c + 6] * inv[1], o[4 * c + 7] * inv[1]));
        }
        __syncwarp();
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int r = 4 * i + lane / 8, ch = lane % 8;
            const uint4 v = kb_lds_v4(stage + r * 128 + ((ch ^ (r % 8)) * 16));
            if (r < rows_left)
                *(uint4 *)(out + (orow0 + r) * C::D + hf * 64 + ch * 8) = v;
        }
        __syncwarp();
    }
}

/* ST: the launch's parameters a segment's end needs (fw_st_finish), kept in
 * shared memory (the consumers' registers have no room for them over the
 * key-tile loop): the partials' slots (ws) and the sched pair (the counters
 * follow it), the work tiles, the tail's and the units. */
struct fw_st_launch {
    float4 *ws;
    int *sched;
    int total, tail, units;
};

/* ST's slot of the part of the tail's work tile t that unit u runs: 2 u when
 * the unit starts in tile t (its first segment), else 2 u + 1 (its last). */
static __device__ __forceinline__ int fw_st_slot(int u, int t, int ntl, int units, int iters)
{
    return 2 * u + (fw_st_begin(u, units, iters) >= t * ntl ? 0 : 1);
}

/* ST: the end of a consumer's part of a split work tile (ntl key tiles). Its
 * unnormalised O, row max m and this thread's row sums l go to its slot,
 * thread-major (each thread's registers as 16-byte pieces, a warpgroup's
 * 2 KB apart), then the consumer counts itself in on the work tile's
 * counter. Returns false, having stored nothing, unless it was the last of
 * the tile's parts; the last merges every other part into o, m and l
 * (rescaled to the larger max, as the online softmax does) for the usual
 * store, and resets the counter for the next launch. */
template <typename C>
static __device__ __forceinline__ bool fw_st_finish(float (&o)[C::ON], float (&m)[2], float (&l)[2],
                                                    int wt, int unit, uint32_t sbase, int w,
                                                    int ntl, float sl2)
{
    const fw_st_launch sg =
        *(const fw_st_launch *)__cvta_shared_to_generic(sbase + C::OFF_SCHED + 48);
    const int t = wt - (sg.total - sg.tail);
    constexpr int N4 = C::ON / 4, SLOT = (N4 + 1) * FW_WG; /* float4s a part and consumer */
    const int tid = threadIdx.x % FW_WG, iters = sg.tail * ntl;
    volatile int *flag = (volatile int *)__cvta_shared_to_generic(sbase + C::OFF_SCHED + 32 + 4 * w);
    const auto part = [&](int u) {
        return sg.ws + ((size_t)fw_st_slot(u, t, ntl, sg.units, iters) * C::NC + w) * SLOT;
    };
    float4 *mine = part(unit);
#pragma unroll
    for (int i = 0; i < N4; i++)
        mine[i * FW_WG + tid] = make_float4(o[4 * i], o[4 * i + 1], o[4 * i + 2], o[4 * i + 3]);
    mine[N4 * FW_WG + tid] = make_float4(m[0], m[1], l[0], l[1]);
    /* the warpgroup's writes, then one thread's GPU-scope fence and count:
     * the barrier orders them before the fence, which releases them all */
    kb_bar_sync(FW_BAR_ST + w, FW_WG);
    const int u0 = fw_st_unit(t * ntl, sg.units, iters);
    const int u1 = fw_st_unit(t * ntl + ntl - 1, sg.units, iters);
    if (tid == 0) {
        int *c = &sg.sched[FW_ST_CNT + t * C::NC + w];
        __threadfence();
        const bool last = atomicAdd(c, 1) == u1 - u0;
        if (last) {
            *c = 0;
            __threadfence(); /* the others' parts, seen by the count, before the reads */
        }
        *flag = last;
    }
    kb_bar_sync(FW_BAR_ST + w, FW_WG);
    if (!*flag)
        return false;
    for (int u = u0; u <= u1; u++) {
        if (u == unit)
            continue;
        const float4 *q = part(u);
        const float4 ml = __ldcg(&q[N4 * FW_WG + tid]);
        const float mq[2] = {ml.x, ml.y}, lq[2] = {ml.z, ml.w};
        float a[2], b[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float mx = fmaxf(m[h], mq[h]);
            a[h] = kb_exp2((m[h] - mx) * sl2);
            b[h] = kb_exp2((mq[h] - mx) * sl2);
            l[h] = l[h] * a[h] + lq[h] * b[h];
            m[h] = mx;
        }
#pragma unroll
        for (int i = 0; i < N4; i++) {
            const float4 v = __ldcg(&q[i * FW_WG + tid]);
            const float x[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int h = ((4 * i + e) >> 1) & 1; /* o's row half, as O's rescale */
                o[4 * i + e] = o[4 * i + e] * a[h] + x[e] * b[h];
            }
        }
    }
    return true;
}

/* One segment of a work tile for one consumer warpgroup (w = 0..NC-1), Q in
 * place: rows q0 + 64 w .. + 63 of slice bh, nt of the work tile's ntiles
 * key tiles from ring position it: with SF its walk's first nt (the short
 * tile first), else key tiles kt0 .. kt0 + nt - 1; a part of a split work
 * tile (ST: its slot's unit >= 0, slot n % 2) ends in fw_st_finish. TR:
 * tr (the warpgroup's first thread's record, else null) gets the clock at 1
 * tile 0's K in, 2 its turn, 3 its S in, 4 its softmax done, 5 the loop's
 * end, 6 the last P V in, 7 the stores issued, and the loop's cycles in 8
 * the waits for K and V, 9 the turns, 10 the waits for S, 11 those for P V. */
template <typename T, typename C, bool SF = false>
static __device__ __forceinline__ void fw_consume_tile(T *__restrict__ out, uint32_t sbase,
                                                       uint32_t bars, int w, int q0, int bh,
                                                       int s, int ntiles, int kt0, int nt, int it,
                                                       int causal, float sl2, int n,
                                                       unsigned long long *tr)
{
    unsigned long long tw[4] = {0, 0, 0, 0}, t0 = 0;
    const auto stamp = [&](int slot) {
        if constexpr (C::CTR) {
            const unsigned long long t = fw_clock();
            if (tr)
                tr[slot] = t;
        }
    };
    const auto mark = [&] {
        if constexpr (C::CTR)
            t0 = fw_clock();
    };
    const auto add = [&](int k) {
        if constexpr (C::CTR)
            tw[k] += fw_clock() - t0;
    };
    constexpr int D = C::D, BN = C::BN;
    const int tid = threadIdx.x % FW_WG, lane = tid % 32;
    const int rl = 16 * (tid / 32) + lane / 4; /* first row of this thread in the 64 */
    const int row0 = q0 + FW_ROWS * w + rl;    /* its rows: row0 and row0 + 8 */
    const int colq = 2 * (lane % 4);           /* its first column in each group of 8 */
    const uint32_t qa = sbase + FW_ROWS * w * KB_SW128_ROW;
    /* PD: Q's descriptor and slot 0's of K and V, moved to slot st by
     * st KV_BYTES (fw_qk, fw_pv) */
    const uint64_t dq = fw_kdesc(qa), dk0 = fw_kdesc(sbase + C::OFF_K),
                   dv0 = fw_vdesc0<C>(sbase);

    float o[C::ON], sacc[BN / 2];
    uint32_t p[BN / 16][4];
    float m[2] = {kb_neg_inf(), kb_neg_inf()}, l[2] = {0.0f, 0.0f};
#pragma unroll
    for (int i = 0; i < C::ON; i++)
        o[i] = 0.0f;

    /* tile 0: S alone (SF: the last key tile, its at most 64 keys on n64) */
    float s64[SF ? 32 : 1];
    {
        const int st = fw_slot<C>(it);
        kb_mbar_wait(fw_bar<C>(bars, FW_K_FULL, st), fw_parity<C>(it));
        stamp(1);
        if (C::PP)
            kb_bar_sync(FW_BAR_TURN + w, 2 * FW_WG);
        stamp(2);
        kb_wgmma_fence();
        if constexpr (SF)
            fw_qk<T, C, 64>(s64, qa, sbase + C::OFF_K + st * C::KV_BYTES, dq,
                            kb_wgmma_desc_add(dk0, st * C::KV_BYTES));
        else
            fw_qk<T, C>(sacc, qa, sbase + C::OFF_K + st * C::KV_BYTES, dq,
                        kb_wgmma_desc_add(dk0, st * C::KV_BYTES));
    }
    kb_wgmma_commit();
    if (C::PP)
        kb_bar_arrive(FW_BAR_TURN + (w + 1) % C::NC, 2 * FW_WG);
    kb_wgmma_wait<0>();
    if constexpr (SF)
        kb_fence_regs(s64);
    else
        kb_fence_regs(sacc);
    stamp(3);
    if (lane == 0) {
        fw_release<C>(fw_bar<C>(bars, FW_K_EMPTY, fw_slot<C>(it)));
        if (nt == 1)
            kb_mbar_arrive(FW_Q_EMPTY(bars)); /* the last read of Q */
    }
    /* the first key of the key tile at position j of this segment */
    const auto key0 = [&](int j) { return (SF ? fw_key_tile(j, ntiles, true) : kt0 + j) * BN; };
    if constexpr (SF) { /* P's keys past the 64 are zeros (fw_pv runs all BN) */
        float alpha[2];
        fw_tile_softmax<64, C::CHAINS, C::LR>(s64, m, l, alpha, key0(0),
                                              q0 + FW_ROWS * w, row0, colq, s, causal, sl2);
        uint32_t p64[4][4];
        fw_pack<T, 64>(p64, s64);
#pragma unroll
        for (int kk = 0; kk < BN / 16; kk++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                p[kk][r] = kk < 4 ? p64[kk][r] : 0u;
    } else {
        float alpha[2];
        fw_tile_softmax<BN, C::CHAINS, C::LR>(sacc, m, l, alpha, key0(0), q0 + FW_ROWS * w, row0,
                                              colq, s, causal, sl2);
        fw_pack<T, BN>(p, sacc);
    }
    stamp(4);
    /* tile j: S_j beside P_{j-1} V_{j-1}; the softmax of S_j while P V runs.
     * SP: the first such step, whose P V is SF's short tile's, a copy of its
     * own with that product on the 64 keys (4 k-steps of BN / 16) */
    const auto step = [&](int j, auto short_pv) {
        constexpr int KS = decltype(short_pv)::value ? 4 : BN / 16;
        const int st = fw_slot<C>(it + j), sp = fw_slot<C>(it + j - 1);
        const unsigned ph = fw_parity<C>(it + j), php = fw_parity<C>(it + j - 1);
        mark();
        kb_mbar_wait(fw_bar<C>(bars, FW_K_FULL, st), ph);
        kb_mbar_wait(fw_bar<C>(bars, FW_V_FULL, sp), php);
        add(0);
        mark();
        if (C::PP)
            kb_bar_sync(FW_BAR_TURN + w, 2 * FW_WG);
        add(1);
        /* O's rescale and P's packing stay before the fence */
        kb_fence_regs(o);
        kb_fence_regs(p);
        kb_wgmma_fence();
        fw_qk<T, C>(sacc, qa, sbase + C::OFF_K + st * C::KV_BYTES, dq,
                    kb_wgmma_desc_add(dk0, st * C::KV_BYTES));
        kb_wgmma_commit();
        fw_pv<T, C, KS>(o, p, sbase + C::OFF_V + sp * C::KV_BYTES, fw_vslot<C>(dv0, sp));
        kb_wgmma_commit();
        if (C::PP)
            kb_bar_arrive(FW_BAR_TURN + (w + 1) % C::NC, 2 * FW_WG);
        mark();
        kb_wgmma_wait<1>(); /* S_j is in; P V may still run */
        kb_fence_regs(sacc);
        add(2);
        if (lane == 0) {
            fw_release<C>(fw_bar<C>(bars, FW_K_EMPTY, st));
            if (j == nt - 1)
                kb_mbar_arrive(FW_Q_EMPTY(bars)); /* the last read of Q */
        }
        float alpha[2];
        const bool rescale = fw_tile_softmax<BN, C::CHAINS, C::LR>(
            sacc, m, l, alpha, key0(j), q0 + FW_ROWS * w, row0, colq, s, causal, sl2);
        fw_overlap<C>(l);
        mark();
        kb_wgmma_wait<0>(); /* P V is in: O and P are free */
        kb_fence_regs(o);
        kb_fence_regs(p);
        add(3);
        if (lane == 0)
            fw_release<C>(fw_bar<C>(bars, FW_V_EMPTY, sp));
        if (rescale) /* LR: warp-uniform */
#pragma unroll
            for (int i = 0; i < C::ON; i++) /* RS: the sums too */
                o[i] *= alpha[(i >> 1) & 1];
        fw_pack<T, BN>(p, sacc);
    };
    int j1 = 1;
    if constexpr (SF && C::SP) {
        if (nt > 1) {
            step(1, fw_bool<true>());
            j1 = 2;
        }
    }
    /* SK (causal): the work tile's last key tile lies wholly past this
     * warpgroup's rows when its first key is past the warpgroup's last row
     * (a later warpgroup of the block needs it; at most that one tile, BN >=
     * 128 >= the rows between the two). Its products and softmax are
     * skipped, and its turn issues only the P V of the tile before. The loop
     * stops short of the last tile either way (a bound that depends on the
     * warpgroup takes the loop's counters off the uniform datapath, as the
     * first form of SK measured: 5-7% slower), and the last step is a copy
     * of its own */
    constexpr bool SK = C::SK && !SF;
    const bool skipped =
        SK && __all_sync(KB_FULL_MASK, nt > 1 && causal && kt0 == 0 &&
                                           (nt - 1) * BN > q0 + FW_ROWS * (w + 1) - 1);
    for (int j = j1; j < (SK ? nt - 1 : nt); j++)
        step(j, fw_bool<false>());
    if (SK && nt > 1 && !skipped)
        step(nt - 1, fw_bool<false>());
    stamp(5);
    /* the work tile's last product, P V of the block's pos-th key tile, alone
     * (turn: in a turn of the ping-pong); returns the slot of its V */
    const auto last_pv = [&](int pos, bool turn) {
        const int sl = fw_slot<C>(pos);
        kb_mbar_wait(fw_bar<C>(bars, FW_V_FULL, sl), fw_parity<C>(pos));
        if (C::PP && turn)
            kb_bar_sync(FW_BAR_TURN + w, 2 * FW_WG);
        kb_fence_regs(o);
        kb_fence_regs(p);
        kb_wgmma_fence();
        fw_pv<T, C>(o, p, sbase + C::OFF_V + sl * C::KV_BYTES, fw_vslot<C>(dv0, sl));
        kb_wgmma_commit();
        if (C::PP && turn)
            kb_bar_arrive(FW_BAR_TURN + (w + 1) % C::NC, 2 * FW_WG);
        kb_wgmma_wait<0>();
        kb_fence_regs(o);
        return sl;
    };
    if (SK && skipped) { /* the skipped tile's turn: P_{nt-2} V_{nt-2} alone */
        const int st = fw_slot<C>(it + nt - 1);
        const unsigned ph = fw_parity<C>(it + nt - 1);
        kb_mbar_wait(fw_bar<C>(bars, FW_K_FULL, st), ph);
        const int sp = last_pv(it + nt - 2, true);
        /* the skipped tile's slots are released once full (an arrival before
         * the fill could count toward the slot's last use); the whole warp
         * waits: a wait loop of lane 0 alone takes the key-tile loop's
         * counters off the uniform datapath (the SASS) */
        kb_mbar_wait(fw_bar<C>(bars, FW_V_FULL, st), ph);
        if (lane == 0) {
            fw_release<C>(fw_bar<C>(bars, FW_K_EMPTY, st));
            kb_mbar_arrive(FW_Q_EMPTY(bars)); /* the last read of Q was tile nt - 2's */
            fw_release<C>(fw_bar<C>(bars, FW_V_EMPTY, sp));
            fw_release<C>(fw_bar<C>(bars, FW_V_EMPTY, st));
        }
    } else { /* the last tile's P V */
        const int sl = last_pv(it + nt - 1, false);
        if (lane == 0)
            fw_release<C>(fw_bar<C>(bars, FW_V_EMPTY, sl));
    }
    stamp(6);
    if constexpr (C::ST) { /* a part of a split work tile: the last to finish stores O */
        /* what is found from sbase and s here is found here: the empty asm
         * keeps the compiler from hoisting it over the key-tile loop, where
         * the registers are all taken */
        uint32_t sb = sbase;
        int sv = s;
        asm volatile("" : "+r"(sb), "+r"(sv));
        const volatile int *sl =
            (const volatile int *)__cvta_shared_to_generic(sb + C::OFF_SCHED + 16 * (n & 1));
        const int unit = sl[3];
        if (unit >= 0 && !fw_st_finish<C>(o, m, l, sl[0], unit, sb, w, (sv + BN - 1) / BN, sl2))
            return;
    }

    /* O / l, rounded to T, straight from the accumulators to global memory
     * (rows past the sequence not stored), or with OS through shared memory;
     * Q's slot is already refilling. RS: a row's whole sum is already in
     * every thread of its quad. (inv is found in each path, not once above
     * both: hoisted, it reorders the register path's stores in the SASS of
     * the committed dim-64 kernel.) */
    const auto row_inv = [&](int h) {
        return kb_rcp(C::RS ? o[D / 2 + 2 * h] : att_lanes_sum<4>(l[h]));
    };
    if constexpr (C::OS && !C::NS) {
        const float inv[2] = {row_inv(0), row_inv(1)};
        int bhv = bh; /* ST: the rows' 64-bit base found here, not held over the loop */
        if constexpr (C::ST)
            asm volatile("" : "+r"(bhv));
        const int wr0 = q0 + FW_ROWS * w + 16 * (tid / 32); /* the warp's first row */
        fw_store_o<T, C>(out, o, inv,
                         sbase + C::OFF_OST + (uint32_t)(4 * w + tid / 32) * 2048u,
                         (int64_t)bhv * s + wr0, s - wr0);
    }
#pragma unroll
    for (int h = 0; h < 2 && !C::OS && !C::NS; h++) {
        const float inv = row_inv(h);
        const int row = row0 + 8 * h;
        if (row < s) {
            T *orow = out + ((int64_t)bh * s + row) * D + colq;
#pragma unroll
            for (int c = 0; c < D / 8; c++)
                *(uint32_t *)(orow + 8 * c) =
                    kb_pack2<T>(o[4 * c + 2 * h] * inv, o[4 * c + 2 * h + 1] * inv);
        }
    }
    stamp(7);
    if constexpr (C::CTR)
        if (tr)
            for (int k = 0; k < 4; k++)
                tr[8 + k] = tw[k];
}

template <typename T, typename C>
__global__ void __launch_bounds__(C::THREADS, 1)
    att_fw(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
           const __grid_constant__ CUtensorMap tv, T *__restrict__ out, int *sched, int s,
           int nqb, int total, int causal, float sl2, int tail, int units, float4 *stws)
{
    extern __shared__ __align__(KB_SW128_ATOM) uint8_t fw_smem[];
    const uint32_t sbase = (kb_smem_u32(fw_smem) + KB_SW128_ATOM - 1) & ~(uint32_t)(KB_SW128_ATOM - 1);
    const uint32_t bars = sbase + C::OFF_BAR;
    volatile int *slot = (volatile int *)(fw_smem + (sbase - kb_smem_u32(fw_smem)) + C::OFF_SCHED);
    const int wg = threadIdx.x / FW_WG;

    if constexpr (C::RS) { /* the slab of ones, once, for every P V (fw_pv) */
        const uint32_t one2 = kb_pack2<T>(1.0f, 1.0f);
        uint4 *ones = (uint4 *)(fw_smem + (sbase - kb_smem_u32(fw_smem)) + C::OFF_ONES);
        for (int i = threadIdx.x; i < C::ONES_BYTES / 16; i += C::THREADS)
            ones[i] = make_uint4(one2, one2, one2, one2);
        kb_fence_proxy_async(); /* visible to wgmma's reads, after the barrier below */
    }
    if (threadIdx.x == 0) {
        kb_mbar_init(FW_Q_FULL(bars), 1);
        kb_mbar_init(FW_Q_EMPTY(bars), 4 * C::NC); /* one arrival per consumer warp */
        for (int st = 0; st < C::STAGES; st++) {
            kb_mbar_init(fw_bar<C>(bars, FW_K_FULL, st), 1);
            kb_mbar_init(fw_bar<C>(bars, FW_V_FULL, st), 1);
            kb_mbar_init(fw_bar<C>(bars, FW_K_EMPTY, st), 4 * C::NC * C::CL);
            kb_mbar_init(fw_bar<C>(bars, FW_V_EMPTY, st), 4 * C::NC * C::CL);
        }
        kb_mbar_fence_init();
        if constexpr (C::ST) { /* for fw_st_finish, after the barrier below */
            const fw_st_launch sg = {stws, sched, total, tail, units};
            *(fw_st_launch *)(fw_smem + (sbase - kb_smem_u32(fw_smem)) + C::OFF_SCHED + 48) = sg;
        }
    }
    __syncthreads();
    if constexpr (C::MC)
        kb_cluster_sync(); /* the barriers exist before the other block signals them */
    if (wg == 0) {
        kb_setmaxnreg_dec<C::REG_PRODUCER>();
        if (threadIdx.x == 0)
            fw_produce<C>(&tq, &tk, &tv, sbase, bars, slot, sched, s, nqb, total, causal, tail,
                          units);
    } else {
        kb_setmaxnreg_inc<C::REG_CONSUMER>();
        /* ping-pong: the turns run on across work tiles (every consumer takes
         * one turn per key tile); consumer 0 takes the first */
        if (C::PP && wg == C::NC)
            kb_bar_arrive(FW_BAR_TURN, 2 * FW_WG);
        int it = 0;
        for (int n = 0;; n++) {
            kb_mbar_wait(FW_Q_FULL(bars), (unsigned)n & 1u);
            const unsigned long long tq = C::CTR ? fw_clock() : 0;
            const volatile int *sl = slot + (C::ST ? 4 * (n & 1) : 0); /* fw_produce */
            const int wt = sl[0];
            if (wt < 0)
                break;
            int bh, q0, ntiles;
            fw_work<C>(wt, nqb, s, causal, &bh, &q0, &ntiles);
            /* the segment: positions j0 .. j0 + nt - 1 of the work tile's walk */
            int j0 = 0, nt = ntiles;
            if constexpr (C::ST) {
                j0 = sl[1];
                nt = sl[2];
            }
            unsigned long long *tr = nullptr; /* TR: 0 Q in, 14 the global timer then */
            if constexpr (C::CTR) {
                tr = threadIdx.x % FW_WG == 0 ? fw_trace_rec(n, wg) : nullptr;
                if (tr) {
                    tr[0] = tq;
                    tr[14] = fw_gtime();
                    tr[15] = (unsigned long long)wt | (unsigned long long)ntiles << 32;
                }
            }
            const bool sf = fw_short_first<C>(s, causal, ntiles); /* the same for the launch */
            const auto consume = [&](int w) {
                if (sf && j0 == 0)
                    fw_consume_tile<T, C, C::SF>(out, sbase, bars, w, q0, bh, s, ntiles, 0, nt,
                                                 it, causal, sl2, n, tr);
                else
                    fw_consume_tile<T, C>(out, sbase, bars, w, q0, bh, s, ntiles,
                                          fw_key_tile(j0, ntiles, sf), nt, it, causal, sl2, n,
                                          tr);
            };
            if constexpr (C::UQ) { /* one call a warpgroup: w a constant in each copy */
                if (wg == 1)
                    consume(0);
                else if (C::NC == 2 || wg == 2)
                    consume(1);
                else
                    consume(2);
            } else {
                consume(wg - 1);
            }
            it += nt;
        }
        if (C::PP && wg == 1)
            kb_bar_sync(FW_BAR_TURN, 2 * FW_WG); /* the last consumer's last turn-arrival */
    }
    if constexpr (C::MC)
        kb_cluster_sync(); /* no block leaves while the other may still signal it */
}

/* ---- host side ------------------------------------------------------------------------ */

/* The configurations measured (see the header), fw_choose's pick among them
 * the one the variant runs; KBENCH_FLASH_WGMMA_CONFIG=i runs the i-th instead, to
 * measure the alternatives again (the kernel's name in the report says which
 * ran). setup raises the kernel's shared-memory limit and makes its tensor
 * maps; launch computes the grid and launches. */
typedef struct fw_config {
    cudaError_t (*setup)(const kb_args *a, CUtensorMap *maps);
    cudaError_t (*launch)(const kb_args *a, cudaStream_t st, const CUtensorMap *maps, int sms,
                          const char *name, int persist);
    const char *name;
    int persist; /* one block per SM claiming work tiles, else one block a tile */
} fw_config;

#define FW_CONFIGS 22
/* dim 64 runs three consumers (BM 192) only when that still gives every SM
 * several blocks; fewer rows a block (config 3) otherwise. */
#define FW_D64_WAVES 4

/* What every launch of one case shares, found once (prepare, or the first
 * launch with other buffers or another shape): the configuration, the SM
 * count and the tensor maps. Nothing of it is looked up between the timing
 * events. */
typedef struct fw_plan {
    kb_case_key key;
    const fw_config *cfg;
    int sms;
    CUtensorMap maps[3]; /* Q, K, V */
} fw_plan;

static fw_plan fw_current;

/* Q, K, V as [bh][s][d]: boxes of 64 columns x rows x 1 slice; Q's box covers
 * a block's BM rows, K's and V's a tile's BN keys. */
template <typename T, typename C> static cudaError_t fw_setup(const kb_args *a, CUtensorMap *maps)
{
    void (*kern)(CUtensorMap, CUtensorMap, CUtensorMap, T *, int *, int, int, int, int, float, int,
                 int, float4 *) = att_fw<T, C>;
    cudaError_t e = kb_allow_smem(kern, C::SMEM);
    const att_shape sh = att_shape_of(a);
    const uint64_t dims[3] = {(uint64_t)sh.d, (uint64_t)sh.s, (uint64_t)sh.bh};
    const uint64_t strides[2] = {(uint64_t)sh.d * 2, (uint64_t)sh.s * (uint64_t)sh.d * 2};
    const uint32_t rows[3] = {(uint32_t)C::BM, (uint32_t)(C::BN / C::CL), (uint32_t)(C::BN / C::CL)};
    for (int i = 0; i < 3 && e == cudaSuccess; i++) {
        const uint32_t box[3] = {64, rows[i], 1};
        e = kb_tma_map_3d(&maps[i], a->in[i], a->dtype, dims, strides, box);
    }
    return e;
}

/* ST's plan for T work tiles of ntl key tiles on a grid of P blocks: the
 * tail is the last round's T mod P work tiles (all T when T < P), split into
 * as many units as there are blocks, each at least FW_ST_MIN key tiles; none
 * (tail 0) where a unit would not be at least 2 key tiles shorter than a
 * work tile (its two edges and the merge cost about one). At B=4 H=16
 * S=4096 dim 128 (2048 work tiles of 24 key tiles on 132 SMs): the last 68
 * tiles as 132 units of 12-13 key tiles, instead of a round of 24 with 64
 * blocks idle. */
static void fw_st_plan(int T, int P, int ntl, int *tail, int *units)
{
    *tail = *units = 0;
    const int r = T < P ? T : T % P;
    if (r == 0 || ntl < 1 || P > FW_ST_MAX_SMS)
        return;
    const long long iters = (long long)r * ntl;
    const long long u = iters / FW_ST_MIN < P ? iters / FW_ST_MIN : P;
    if (u < 2 || ntl - (iters + u - 1) / u < 2 || u * iters >= 0x7fffffff)
        return;
    *tail = r;
    *units = (int)u;
}

/* ST's scratch: the sched pair, a counter a tail tile (fewer than the
 * blocks) and consumer (at most 3), then, 256-byte aligned, two slots a unit
 * (at most one a block), each a consumer's ON / 4 + 1 pieces of 16 bytes a
 * thread. */
static size_t fw_st_ws_offset(void)
{
    return ((size_t)FW_ST_CNT * 4 + (size_t)FW_ST_MAX_SMS * 3 * 4 + 255) / 256 * 256;
}

static size_t fw_st_ws_bytes(int nc, int on, int units)
{
    return (size_t)2 * units * nc * (on / 4 + 1) * FW_WG * 16;
}

/* The work tiles of dim 128's configurations (BM 128, every one two
 * consumers) for bh slices of s queries: fw_choose's and the scratch's
 * measure of a grid. */
static int64_t fw_d128_tiles(int64_t bh, int64_t s)
{
    return bh * ((s + FW_ROWS * 2 - 1) / (FW_ROWS * 2));
}

/* The scratch of an ST configuration at dim 128 not causal: the sched pair,
 * the counters and slots for as many units as a grid of FW_ST_MAX_SMS
 * blocks or the shape's key tiles ask for (fw_st_plan). */
static size_t fw_st_scratch(const int64_t *shape)
{
    typedef fw_d128_default<FW_ST> C;
    static_assert(C::BM == FW_ROWS * 2, "fw_d128_tiles counts ST's work tiles");
    const int64_t iters = fw_d128_tiles(shape[ATT_BATCH] * shape[ATT_HEADS], shape[ATT_SEQ]) *
                          ((shape[ATT_SEQ] + C::BN - 1) / C::BN) / FW_ST_MIN;
    const int units = iters < FW_ST_MAX_SMS ? (int)iters : FW_ST_MAX_SMS;
    return fw_st_ws_offset() + fw_st_ws_bytes(C::NC, C::ON, units);
}

/* MC: clusters of two blocks, as many as the GPU holds at once, take the
 * work tiles in pairs, statically (block b tiles b, b + grid, ...): the two
 * query blocks of a pair share their head's K and V tiles. A head's query
 * blocks are counted up to an even number, so a pair never spans two heads;
 * the extra one (odd counts) lies past the sequence: its rows are zeros and
 * not stored. */
template <typename T, typename C>
static cudaError_t fw_launch(const kb_args *a, cudaStream_t st, const CUtensorMap *maps, int sms,
                             const char *name, int persist)
{
    const att_shape sh = att_shape_of(a);
    int64_t nqb = (sh.s + C::BM - 1) / C::BM;
    if (C::MC)
        nqb += nqb & 1;
    const int64_t total = sh.bh * nqb;
    if (total > 0x7fffffff)
        return cudaErrorInvalidConfiguration;
    if (!C::MC && persist && (!a->scratch || a->scratch_bytes < FW_SCHED_BYTES))
        return cudaErrorInvalidValue; /* the counter: see kb_attention_flash_wgmma_scratch */
    const kb_dim3 block = {C::THREADS, 1, 1};
    if constexpr (C::MC) {
        static const int clusters =
            kb_cluster_capacity((const void *)att_fw<T, C>, C::THREADS, C::CL, C::SMEM);
        if (clusters < 1)
            return cudaErrorNotSupported;
        const int64_t blocks = total < 2 * (int64_t)clusters ? total : 2 * (int64_t)clusters;
        const kb_dim3 grid = {(unsigned)blocks, 1, 1};
        return kb_launch_cluster(a, st, att_fw<T, C>, name, grid, block, C::SMEM, C::CL, maps[0],
                                 maps[1], maps[2], (T *)a->out[0], (int *)NULL, (int)sh.s,
                                 (int)nqb, (int)total, sh.causal, sh.scale * KB_LOG2E, 0, 0,
                                 (float4 *)NULL);
    }
    /* ST: the tail's work tiles and units, where the scratch holds their
     * slots (kb_attention_flash_wgmma_scratch) */
    int tail = 0, units = 0;
    float4 *stws = NULL;
    if (C::ST && persist && !sh.causal) {
        const size_t off = fw_st_ws_offset();
        fw_st_plan((int)total, sms, (int)((sh.s + C::BN - 1) / C::BN), &tail, &units);
        if (tail > 0 && a->scratch_bytes >= off + fw_st_ws_bytes(C::NC, C::ON, units))
            stws = (float4 *)((char *)a->scratch + off);
        else
            tail = units = 0;
    }
    const int64_t items = total - tail + units;
    const int64_t blocks = persist && items > sms ? sms : items;
    const kb_dim3 grid = {(unsigned)blocks, 1, 1};
    return kb_launch(a, st, att_fw<T, C>, name, grid, block, C::SMEM, maps[0], maps[1], maps[2],
                     (T *)a->out[0], persist ? (int *)a->scratch : (int *)NULL, (int)sh.s,
                     (int)nqb, (int)total, sh.causal, sh.scale * KB_LOG2E, tail, units, stws);
}

/* A configuration's kernel name, made once from its parameters:
 * att_fw_dD_cNC_nBN_sSTAGES, then _pp, _ov, _pd, _ch, _rs, _lr, _uq, _qp, _ke and _sf for
 * the parts it has, and _persist for the persistent grid. */
struct fw_kname {
    char s[64];
};
template <typename C, int PERSIST> static const char *fw_name()
{
    static const fw_kname n = [] {
        fw_kname k;
        snprintf(k.s, sizeof k.s, "att_fw_d%d_c%d_n%d_s%d%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s%s", C::D, C::NC,
                 C::BN, C::STAGES, C::PP ? "_pp" : "", C::OV ? "_ov" : "", C::PD ? "_pd" : "",
                 C::CHAINS > 1 ? "_ch" : "", C::RS ? "_rs" : "", C::LR ? "_lr" : "",
                 C::UQ ? "_uq" : "", C::QP ? "_qp" : "", C::KE ? "_ke" : "",
                 C::SF ? "_sf" : "", C::SP ? "_sp" : "", C::MC ? "_mc" : "", C::OS ? "_os" : "",
                 C::ST ? "_st" : "", C::SK ? "_sk" : "", PERSIST ? "_persist" : "");
        return k;
    }();
    return n.s;
}

#define FW_CONFIG(T, D, NC, ST, PP, persist) FW_CONFIG_OV(T, D, NC, ST, PP, false, persist)
#define FW_CONFIG_OV(T, D, NC, ST, PP, OV, persist) FW_CONFIG_X(T, D, NC, ST, PP, OV, 0, persist)
#define FW_CONFIG_X(T, D, NC, ST, PP, OV, X, persist)                                          \
    FW_CONFIG_N(T, D, NC, ST, PP, OV, X, FW_BN, persist)
#define FW_CONFIG_N(T, D, NC, ST, PP, OV, X, BN, persist)                                      \
    FW_CONFIG_C(T, persist, fw_cfg<D, NC, ST, PP, OV, X, BN>)
/* a configuration by its fw_cfg type (the variadic part: its commas) */
#define FW_CONFIG_C(T, persist, ...)                                                            \
    {fw_setup<T, __VA_ARGS__>, fw_launch<T, __VA_ARGS__>, fw_name<__VA_ARGS__, persist>(), persist}

/* The configuration for a's shape: KBENCH_FLASH_WGMMA_CONFIG's, else for dim
 * 128 the 176-key tiles with SF, OS, SK and SP (18), with ST too (20) where the work
 * tiles are fewer than two rounds of the grid (not causal); for dim 64 the
 * first, or the two-consumer one (3) on grids too small for three
 * consumers. */
template <typename T> static const fw_config *fw_choose(const kb_args *a, int sms)
{
    static const fw_config d128[FW_CONFIGS] = {
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_LR, 1),
        FW_CONFIG(T, 128, 2, 3, false, 1),
        FW_CONFIG(T, 128, 2, 3, false, 0),
        FW_CONFIG(T, 128, 2, 2, true, 1),
        FW_CONFIG(T, 128, 2, 3, true, 1),
        FW_CONFIG_OV(T, 128, 2, 3, false, true, 1),
        FW_CONFIG_OV(T, 128, 2, 3, true, true, 1),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_CH, 1),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD, 1),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_CH | FW_LR, 1),
        FW_CONFIG_N(T, 128, 2, 2, true, true, FW_PD | FW_LR, 176, 1),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_LR | FW_UQ, 1),
        FW_CONFIG_N(T, 128, 2, 2, true, true, FW_PD | FW_LR | FW_UQ, 176, 1),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_LR | FW_QP, 1),
        FW_CONFIG_C(T, 1, fw_d128_sf<0>),
        FW_CONFIG_X(T, 128, 2, 3, true, true, FW_PD | FW_LR | FW_KE | FW_QP, 1),
        FW_CONFIG_C(T, 1, fw_d128_sf<FW_MC>),
        FW_CONFIG_C(T, 1, fw_d128_default<0>),
        FW_CONFIG_C(T, 1, fw_d128_chosen<0>), /* FW_D128_DEFAULT */
        FW_CONFIG_C(T, 1, fw_d128_default<FW_ST>),
        FW_CONFIG_C(T, 1, fw_d128_chosen<FW_ST>), /* FW_D128_ST */
        FW_CONFIG_C(T, 1, fw_d128_sf<FW_OS>)}; /* 17 without SK */
    static const fw_config d64[FW_CONFIGS] = {
        FW_CONFIG_C(T, 1, fw_d64_default<0>),
        FW_CONFIG(T, 64, 3, 4, true, 0),
        FW_CONFIG(T, 64, 3, 4, false, 1),
        FW_CONFIG(T, 64, 2, 4, true, 1),
        FW_CONFIG_OV(T, 64, 3, 4, true, true, 1),
        FW_CONFIG_OV(T, 64, 2, 4, true, true, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_RS, 1),
        FW_CONFIG(T, 64, 3, 4, true, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_RS | FW_LR, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_LR, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_UQ, 1),
        FW_CONFIG_X(T, 64, 2, 4, true, false, FW_PD | FW_CH | FW_UQ, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_QP, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_KE | FW_QP, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_KE, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH | FW_OS, 1),
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH, 1),  /* 17: no MC at dim 64 */
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH, 1), /* 18: no SF at dim 64 */
        FW_CONFIG_C(T, 1, fw_d64_default<0>),  /* 19, 20: no ST at dim 64 (its loop */
        FW_CONFIG_C(T, 1, fw_d64_default<0>),  /* spills with ST's registers) */
        FW_CONFIG_X(T, 64, 3, 4, true, false, FW_PD | FW_CH, 1)}; /* 0 without SK */
    const int c = kb_env_int("KBENCH_FLASH_WGMMA_CONFIG", -1, 0, FW_CONFIGS - 1);
    const att_shape sh = att_shape_of(a);
    if (sh.d == 128) {
        const bool small = !sh.causal && fw_d128_tiles(sh.bh, sh.s) < 2 * (int64_t)sms;
        return &d128[c >= 0 ? c : small ? FW_D128_ST : FW_D128_DEFAULT];
    }
    if (sh.d != 64)
        return NULL; /* other dims are skipped by the harness */
    if (c >= 0)
        return &d64[c];
    const int64_t blocks = sh.bh * ((sh.s + 3 * FW_ROWS - 1) / (3 * FW_ROWS));
    return &d64[blocks >= (int64_t)FW_D64_WAVES * sms ? 0 : 3];
}

/* Finds the plan for a's case unless fw_current already holds it, and points
 * *plan (when plan is not NULL) at fw_current, usable when cudaSuccess is
 * returned. Returns the CUDA error of a step that failed, or
 * cudaErrorInvalidValue for a dim without a configuration. */
template <typename T> static cudaError_t fw_plan_for(const kb_args *a, const fw_plan **plan)
{
    fw_plan *p = &fw_current;
    if (plan)
        *plan = p;
    if (p->cfg && kb_case_key_same(&p->key, a))
        return cudaSuccess;
    p->cfg = NULL; /* invalid until every step succeeded */
    cudaError_t e = kb_current_sms(&p->sms);
    if (e != cudaSuccess)
        return e;
    const fw_config *cfg = fw_choose<T>(a, p->sms);
    if (!cfg)
        return cudaErrorInvalidValue;
    if ((e = cfg->setup(a, p->maps)) != cudaSuccess)
        return e;
    kb_case_key_of(a, ATT_CAUSAL + 1, &p->key);
    p->cfg = cfg;
    return cudaSuccess;
}

template <typename T> static cudaError_t launch_fw(const kb_args *a, cudaStream_t st)
{
    const fw_plan *p;
    const cudaError_t e = fw_plan_for<T>(a, &p);
    return e != cudaSuccess ? e
                            : p->cfg->launch(a, st, p->maps, p->sms, p->cfg->name, p->cfg->persist);
}

/* Launches the TMA + wgmma flash attention of a->in[0..2] into a->out[0] on
 * stream s (fp16 and bf16; dim 64 and 128; a Hopper GPU). */
extern "C" cudaError_t kb_attention_flash_wgmma(const kb_args *a, cudaStream_t s)
{
    KB_LAUNCH_BY_DTYPE16(launch_fw, a, s) /* fp32 is not in the variant's dtype mask */
}

/* The scratch the persistent grid's counters need (FW_SCHED_BYTES) and,
 * where ST may run, its counters and slots for as many units as a grid of
 * FW_ST_MAX_SMS blocks or the shape's key tiles ask for (fw_st_plan; two
 * consumers of 64 registers of O): dim 128 not causal, with
 * KBENCH_FLASH_WGMMA_CONFIG naming an ST configuration, or unset where
 * fw_choose may pick one (fewer work tiles than two rounds of the largest
 * grid). From the shape alone: the harness asks before any process has
 * touched the GPU. */
extern "C" size_t kb_attention_flash_wgmma_scratch(const int64_t *shape, kb_dtype d)
{
    (void)d;
    if (shape[ATT_CAUSAL] || shape[ATT_DIM] != 128)
        return FW_SCHED_BYTES;
    const int64_t tiles = fw_d128_tiles(shape[ATT_BATCH] * shape[ATT_HEADS], shape[ATT_SEQ]);
    const int c = kb_env_int("KBENCH_FLASH_WGMMA_CONFIG", -1, 0, FW_CONFIGS - 1);
    /* ST's configurations: FW_D128_ST and the one before it, without SP */
    if (c >= 0 ? c != FW_D128_ST - 1 && c != FW_D128_ST : tiles >= 2 * FW_ST_MAX_SMS)
        return FW_SCHED_BYTES;
    return fw_st_scratch(shape);
}

/* The variant's prepare: a GPU other than Hopper is a skip (the kernels are
 * sm_90a: wgmma, setmaxnreg); zeroes the work counter and finds the case's
 * plan, so that the first timed launch does no more than the others. */
extern "C" int kb_attention_flash_wgmma_prepare(const kb_args *a, char *why, size_t why_size)
{
    int r = kb_require_sm90a("flash-wgmma", why, why_size);
    if (r != 0)
        return r;
    cudaError_t e = cudaSuccess;
    if (a->scratch)
        e = cudaMemset(a->scratch, 0, a->scratch_bytes);
    if (e == cudaSuccess) /* the dtype is fp16 or bf16: the variant's mask */
        e = a->dtype == KB_BF16 ? fw_plan_for<__nv_bfloat16>(a, NULL)
                                : fw_plan_for<__half>(a, NULL);
    if (e != cudaSuccess) {
        snprintf(why, why_size, "preparing flash-wgmma failed: %s", cudaGetErrorString(e));
        return -1;
    }
    return 0;
}
