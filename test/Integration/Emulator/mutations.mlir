// Real kernels' PTX, edited the way a generator bug would leave it, run on the
// PTX emulator: each edit is caught (a wrong result, a race, a read before a
// wait, an unordered read of another CTA's write) with where it happened;
// the kernels as compiled pass (docs/emulator.md).
//
// RUN: rm -rf %t && mkdir -p %t
// The mma.sync kernels (the target's default would be wgmma for these
// tiles), and the prefill on wgmma.
// RUN: attn-compile %s --function=prefill -o %t/prefill --split-kv=false --matrix-unit=mma-sync
// RUN: attn-compile %s --function=lean -o %t/lean --matrix-unit=mma-sync
// RUN: attn-compile %s --function=prefill -o %t/wgmma --split-kv=false
// RUN: attn-compile %s --function=turns -o %t/turns --split-kv=false
// RUN: FileCheck %s --check-prefix=WGMMA --input-file=%t/wgmma/kernels.ptx
// WGMMA: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/prefill %t/lean %t/wgmma | FileCheck %s --check-prefix=INTACT
// INTACT: kernel prefill_attention0
// INTACT: O {{.*}}: PASS
// INTACT: kernel lean_attention0
// INTACT: O {{.*}}: PASS
// INTACT: kernel prefill_attention0
// INTACT: O {{.*}}: PASS
//
// wgmma: a product's wait removed: what follows it touches the product's
// registers or overwrites its shared operands before any wait retires it.
// RUN: cp -r %t/wgmma %t/no-wgmma-wait
// RUN: sed '0,/wgmma.wait_group.sync.aligned[ \t]*0;/s///' %t/wgmma/kernels.ptx > %t/no-wgmma-wait/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/no-wgmma-wait/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-wgmma-wait 2>&1 | FileCheck %s --check-prefix=NO-WGMMA-WAIT
// NO-WGMMA-WAIT: PTX emulator: kernel prefill_attention0: {{.*}}wgmma.mma_async {{.*}}no wgmma.wait_group has retired
//
// wgmma: the fence.proxy.async after Q's cp.async removed (a GQA-packed
// decode, whose tile rows belong to several heads, keeps Q's cp.async):
// the Q tile the warps' cp.async wrote (the generic proxy) is read by wgmma
// (the async proxy) unfenced. (K and V come by tensor copies, through the
// async proxy: they need no fence; so does the prefill's Q.)
// RUN: attn-compile %s --function=packed -o %t/packed --split-kv=false
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/packed | FileCheck %s --check-prefix=PACKED
// PACKED: problem {{.*}} Hq=8 Hkv=2 Sq=2
// PACKED: O {{.*}}: PASS
// RUN: cp -r %t/packed %t/no-proxy-fence
// RUN: sed '/cp.async.wait_group/{n;/fence.proxy.async.shared::cta;/d;}' %t/packed/kernels.ptx > %t/no-proxy-fence/kernels.ptx
// RUN: not diff -q %t/packed/kernels.ptx %t/no-proxy-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-proxy-fence 2>&1 | FileCheck %s --check-prefix=NO-PROXY-FENCE
// NO-PROXY-FENCE: PTX emulator: kernel packed_attention0: reads shared offset {{[0-9]+}} through the async proxy, which warp {{[0-9]+}} wrote (line {{[0-9]+}}) through the generic proxy with no fence.proxy.async of that warp after the write and ordered before this read; CTA {{.*}}: wgmma.mma_async
//
// wgmma, Lean: persistent CTAs of several output tiles each load each
// tile's Q by a tensor copy; Q's mbarrier is initialised for each tile and
// invalidated after every consumer waited for it. Without the
// invalidation the next tile's init finds a live mbarrier; without the
// consumer barrier before it, thread 0 invalidates it while other threads
// still wait on it.
// RUN: attn-compile %s --function=lean_tiles -o %t/lean-wgmma
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/lean-wgmma | FileCheck %s --check-prefix=LEAN-WGMMA
// LEAN-WGMMA: launch grid 6x1x1, 256 threads
// LEAN-WGMMA: O {{.*}}: PASS
// RUN: FileCheck %s --check-prefix=LEAN-Q --input-file=%t/lean-wgmma/kernels.ptx
// LEAN-Q: mbarrier.init.shared.b64 [[Q:\[__dynamic_shmem__0\+[0-9]+\]]]
// LEAN-Q: cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes {{.*}}, [[Q]];
// LEAN-Q: mbarrier.inval.shared.b64 [[Q]];
// RUN: cp -r %t/lean-wgmma %t/no-query-inval
// RUN: tac %t/lean-wgmma/kernels.ptx | sed '0,/mbarrier.inval/{//d}' | tac > %t/no-query-inval/kernels.ptx
// RUN: not diff -q %t/lean-wgmma/kernels.ptx %t/no-query-inval/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-query-inval 2>&1 | FileCheck %s --check-prefix=NO-QUERY-INVAL
// NO-QUERY-INVAL: PTX emulator: kernel lean_tiles_attention0: mbarrier.init of a live mbarrier at shared offset {{[0-9]+}} (mbarrier.inval it first)
// RUN: cp -r %t/lean-wgmma %t/no-query-inval-barrier
// RUN: tac %t/lean-wgmma/kernels.ptx | awk 'held == 2 && /bar.sync/ { held = 3; next } held == 1 { held = 2 } held == 0 && /mbarrier.inval/ { held = 1 } { print }' | tac > %t/no-query-inval-barrier/kernels.ptx
// RUN: not diff -q %t/lean-wgmma/kernels.ptx %t/no-query-inval-barrier/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-query-inval-barrier 2>&1 | FileCheck %s --check-prefix=NO-QUERY-INVAL-BARRIER
// NO-QUERY-INVAL-BARRIER: PTX emulator: kernel lean_tiles_attention0: mbarrier.try_wait of shared offset {{[0-9]+}}, which holds no initialised mbarrier
//
// wgmma: the fence.proxy.async of the O epilogue removed (the kernel's last
// one): thread 0's tensor store reads the O tile (the async proxy) that the
// lanes wrote through the generic proxy unfenced.
// RUN: cp -r %t/wgmma %t/no-store-fence
// RUN: tac %t/wgmma/kernels.ptx | sed '0,/fence.proxy.async.shared::cta;/{//d}' | tac > %t/no-store-fence/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/no-store-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-store-fence 2>&1 | FileCheck %s --check-prefix=NO-STORE-FENCE
// NO-STORE-FENCE: PTX emulator: kernel prefill_attention0: reads shared offset {{[0-9]+}} through the async proxy, which warp {{[0-9]+}} wrote (line {{[0-9]+}}) through the generic proxy with no fence.proxy.async of that warp after the write and ordered before this read; CTA {{.*}}: cp.async.bulk.tensor.4d.global.shared::cta
//
// wgmma: the wait for the tensor stores' reads removed: the CTA exits while
// its stores of O may still read the tile.
// RUN: cp -r %t/wgmma %t/no-store-wait
// RUN: sed '/cp.async.bulk.wait_group.read/d' %t/wgmma/kernels.ptx > %t/no-store-wait/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/no-store-wait/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-store-wait 2>&1 | FileCheck %s --check-prefix=NO-STORE-WAIT
// NO-STORE-WAIT: PTX emulator: kernel prefill_attention0: the CTA exits before its bulk copy to global memory (warp 0, line {{[0-9]+}}) has read shared memory: no cp.async.bulk.wait_group retired it
//
// Warp roles: the consumers' release of a step's stages (their arrival on
// its empty mbarrier) removed: the producer waits for it forever before the
// group that reuses the stages, and the consumers for that group.
// RUN: cp -r %t/wgmma %t/no-release
// RUN: sed '0,/mbarrier.arrive.shared.b64/{/mbarrier.arrive.shared.b64/d}' %t/wgmma/kernels.ptx > %t/no-release/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/no-release/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-release 2>&1 | FileCheck %s --check-prefix=NO-RELEASE
// NO-RELEASE: PTX emulator: kernel prefill_attention0: deadlock: {{.*}}
// NO-RELEASE: warp 4 waits on the mbarrier at shared offset 40976 (phase 0, parity 0: 128 of 128 arrivals
//
// Warp roles: the producer's wait for a release made to pass at once (its
// parity 1): it issues group 2 into the stages step 0 still reads, and the
// full mbarrier's phases run ahead of the consumers' waits.
// RUN: cp -r %t/wgmma %t/no-empty-wait
// RUN: awk '/mbarrier.try_wait.parity/ && ++n == 2 { sub(/, %r[0-9]+, 10000000/, ", 1, 10000000") } { print }' %t/wgmma/kernels.ptx > %t/no-empty-wait/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/no-empty-wait/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-empty-wait 2>&1 | FileCheck %s --check-prefix=NO-EMPTY-WAIT
// NO-EMPTY-WAIT: PTX emulator: kernel prefill_attention0: deadlock: {{.*}}
// NO-EMPTY-WAIT: waits on the mbarrier at shared offset 40960 (phase 2, parity 0
//
// Ping-pong: warpgroup 0's opening arrival on its own turn removed (the
// kernel as compiled passes, below): both consumer warpgroups wait for a
// turn nobody gives.
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/turns | FileCheck %s --check-prefix=TURNS
// TURNS: O {{.*}}: PASS
// RUN: cp -r %t/turns %t/no-first-turn
// RUN: sed '0,/bar.arrive/{/bar.arrive/d}' %t/turns/kernels.ptx > %t/no-first-turn/kernels.ptx
// RUN: not diff -q %t/turns/kernels.ptx %t/no-first-turn/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-first-turn 2>&1 | FileCheck %s --check-prefix=NO-FIRST-TURN
// NO-FIRST-TURN: PTX emulator: kernel turns_attention0: deadlock: {{.*}}
// NO-FIRST-TURN: warp 0 waits at barrier 2
//
// wgmma: V read K-major in one k slice of O += P V (imm-trans-b 1 -> 0).
// RUN: cp -r %t/wgmma %t/wgmma-no-trans
// RUN: sed '0,/p, 1, 1, 1;/s//p, 1, 1, 0;/' %t/wgmma/kernels.ptx > %t/wgmma-no-trans/kernels.ptx
// RUN: not diff -q %t/wgmma/kernels.ptx %t/wgmma-no-trans/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/wgmma-no-trans 2>&1 | FileCheck %s --check-prefix=WRONG
//
// The barrier after the loop's cp.async.wait_group: warps read K tiles other
// warps' copies have not landed in.
// RUN: cp -r %t/prefill %t/no-barrier
// RUN: awk '/cp.async.wait_group[ \t]+1;/ { w = 1; print; next } w && !done && /bar.sync/ { done = 1; w = 0; next } { w = 0; print }' %t/prefill/kernels.ptx > %t/no-barrier/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-barrier 2>&1 | FileCheck %s --check-prefix=NO-BARRIER
// NO-BARRIER: PTX emulator: kernel prefill_attention0: reads shared offset {{[0-9]+}} that a cp.async writes before waiting for it (cp.async.wait_group); CTA ({{[0-9]+}},{{[0-9]+}},{{[0-9]+}}) thread {{[0-9]+}}, line {{[0-9]+}}: ldmatrix
//
// The barrier at the top of the loop: the next tiles' copies overwrite tiles
// other warps still read.
// RUN: cp -r %t/prefill %t/no-top-barrier
// RUN: awk 'prev ~ /^\$L__BB[0-9_]+:$/ && $0 ~ /bar.sync/ && !done { done = 1; prev = $0; next } { print; prev = $0 }' %t/prefill/kernels.ptx > %t/no-top-barrier/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-top-barrier 2>&1 | FileCheck %s --check-prefix=NO-TOP-BARRIER
// NO-TOP-BARRIER: PTX emulator: kernel prefill_attention0: shared-memory race: {{.*}} with no barrier or mbarrier wait ordering them; CTA {{.*}} line {{[0-9]+}}: cp.async
//
// One ldmatrix of V without .trans: V enters the second product transposed.
// RUN: cp -r %t/prefill %t/no-trans
// RUN: sed '0,/x2.trans.shared/s//x2.shared/' %t/prefill/kernels.ptx > %t/no-trans/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-trans 2>&1 | FileCheck %s --check-prefix=WRONG
// WRONG: O {{.*}}: FAIL
//
// The loop waits for the wrong cp.async group (all but the newest 2).
// RUN: cp -r %t/prefill %t/wrong-group
// RUN: awk '/cp.async.wait_group[ \t]+1;/ && ++n == 2 { sub(/1;/, "2;") } { print }' %t/prefill/kernels.ptx > %t/wrong-group/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/wrong-group 2>&1 | FileCheck %s --check-prefix=WRONG-GROUP
// WRONG-GROUP: PTX emulator: kernel prefill_attention0: reads shared offset {{[0-9]+}} that a cp.async writes before waiting for it
//
// The causal comparison shifted by one (lt -> le) where a score is set to
// -inf: the diagonal key of some rows is hidden.
// RUN: cp -r %t/prefill %t/mask-off-by-one
// RUN: awk '{ line[NR] = $0 } $0 ~ /selp.f32.*0fFF800000/ && line[NR-1] ~ /setp.lt.s64/ && !done { sub(/setp.lt.s64/, "setp.le.s64", line[NR-1]); done = 1 } END { for (i = 1; i <= NR; ++i) print line[i] }' %t/prefill/kernels.ptx > %t/mask-off-by-one/kernels.ptx
// RUN: not diff -q %t/prefill/kernels.ptx %t/mask-off-by-one/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/mask-off-by-one 2>&1 | FileCheck %s --check-prefix=WRONG
//
// A Lean host that does not wait for its contributors' flags (the spin
// loop's branch back removed): it reads partials no synchronisation orders.
// RUN: cp -r %t/lean %t/no-spin
// RUN: awk '/atom.global.or.b32/ { a = 1 } a && /setp.eq.b32/ { print; getline; if ($0 ~ /bra/) { a = 0; next } } { print }' %t/lean/kernels.ptx > %t/no-spin/kernels.ptx
// RUN: not diff -q %t/lean/kernels.ptx %t/no-spin/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-spin 2>&1 | FileCheck %s --check-prefix=UNORDERED
// UNORDERED: PTX emulator: kernel lean_attention0: reads global memory that CTA {{[0-9]+}} wrote (line {{[0-9]+}}) with no fence and atomic ordering that write before this read
//
// A contributor that raises its flag without the fence before it.
// RUN: cp -r %t/lean %t/no-fence
// RUN: awk '/membar.gl/ { held = $0; next } held != "" { if ($0 !~ /atom.global.add/) print held; held = "" } { print }' %t/lean/kernels.ptx > %t/no-fence/kernels.ptx
// RUN: not diff -q %t/lean/kernels.ptx %t/no-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-fence 2>&1 | FileCheck %s --check-prefix=UNORDERED
//
// Per-sequence key lengths on wgmma. The tensor copies bring the keys past
// a sequence's end as they are (the check writes NaN there). In the
// overlapped loop the consumers zero V's past it before the last P V (K's
// scores are selected to -inf), fence their zeros for the async proxy and
// meet at their barrier; in the sequential loop (a block mask keeps it)
// the producer zeroes K's and V's before it releases the stage. Intact
// both pass (the overlapped one with one consumer warpgroup and with two
// taking turns: causal, the default 128 x 128 tiles); without the zeros
// the NaN reaches O; without the fence wgmma reads them through the async
// proxy unordered; without the consumers' barrier a warp zeroes V rows
// that another warp's wgmma may already read.
// RUN: attn-compile %s --function=ragged -o %t/ragged --split-kv=false
// RUN: attn-compile %s --function=ragged_turns -o %t/ragged-turns --split-kv=false
// RUN: attn-compile %s --function=ragged_blocks -o %t/ragged-blocks --split-kv=false
// RUN: env ATTNRT_LIBCUDA=emulator attn-launch %t/ragged %t/ragged-turns %t/ragged-blocks | FileCheck %s --check-prefix=RAGGED
// RAGGED: problem {{.*}} key-lengths={{[0-9]+}},0,{{[0-9]+$}}
// RAGGED: O {{.*}}: PASS
// RAGGED: problem {{.*}} key-lengths={{[0-9]+}},0,{{[0-9]+$}}
// RAGGED-NEXT: launch {{.*}} 384 threads
// RAGGED: O {{.*}}: PASS
// RAGGED: problem {{.*}} key-lengths={{[0-9]+}},0,{{[0-9]+$}}
// RAGGED: O {{.*}}: PASS
// RAGGED-NOT: FAIL
// RUN: cp -r %t/ragged %t/no-tail-zeros
// RUN: sed '/st.shared.v4.b32.*{0, 0, 0, 0};/d' %t/ragged/kernels.ptx > %t/no-tail-zeros/kernels.ptx
// RUN: not diff -q %t/ragged/kernels.ptx %t/no-tail-zeros/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-tail-zeros 2>&1 | FileCheck %s --check-prefix=NO-TAIL-ZEROS
// NO-TAIL-ZEROS: O {{.*}} elements NaN or mismatched infinities: FAIL
// RUN: cp -r %t/ragged %t/no-tail-fence
// RUN: awk '{ line[NR] = $0 } END { for (i = 1; i <= NR; ++i) if (!(line[i] ~ /fence.proxy.async.shared::cta;/ && line[i + 1] ~ /bar.sync/ && line[i - 1] ~ /^\$L__BB/)) print line[i] }' %t/ragged/kernels.ptx > %t/no-tail-fence/kernels.ptx
// RUN: not diff -q %t/ragged/kernels.ptx %t/no-tail-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-tail-fence 2>&1 | FileCheck %s --check-prefix=NO-TAIL-FENCE
// NO-TAIL-FENCE: PTX emulator: kernel ragged_attention0: reads shared offset {{[0-9]+}} through the async proxy, which warp {{[0-9]+}} wrote (line {{[0-9]+}}) through the generic proxy with no fence.proxy.async of that warp after the write and ordered before this read
// RUN: cp -r %t/ragged %t/no-tail-barrier
// RUN: awk '{ line[NR] = $0 } END { for (i = 1; i <= NR; ++i) if (!(line[i] ~ /bar.sync/ && line[i - 1] ~ /fence.proxy.async.shared::cta;/ && line[i - 2] ~ /^\$L__BB/)) print line[i] }' %t/ragged/kernels.ptx > %t/no-tail-barrier/kernels.ptx
// RUN: not diff -q %t/ragged/kernels.ptx %t/no-tail-barrier/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-tail-barrier 2>&1 | FileCheck %s --check-prefix=NO-TAIL-BARRIER
// NO-TAIL-BARRIER: PTX emulator: kernel ragged_attention0: shared-memory race: writes offset {{[0-9]+}} read by warp {{[0-9]+}} (line {{[0-9]+}}) with no barrier or mbarrier wait ordering them
// RUN: cp -r %t/ragged-blocks %t/no-producer-zeros
// RUN: sed '/st.shared.v4.b32.*{0, 0, 0, 0};/d' %t/ragged-blocks/kernels.ptx > %t/no-producer-zeros/kernels.ptx
// RUN: not diff -q %t/ragged-blocks/kernels.ptx %t/no-producer-zeros/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-producer-zeros 2>&1 | FileCheck %s --check-prefix=NO-TAIL-ZEROS
// RUN: cp -r %t/ragged-blocks %t/no-producer-fence
// RUN: awk '{ line[NR] = $0 } END { for (i = 1; i <= NR; ++i) if (!(line[i] ~ /fence.proxy.async.shared::cta;/ && line[i + 1] ~ /mbarrier.inval/)) print line[i] }' %t/ragged-blocks/kernels.ptx > %t/no-producer-fence/kernels.ptx
// RUN: not diff -q %t/ragged-blocks/kernels.ptx %t/no-producer-fence/kernels.ptx
// RUN: not env ATTNRT_LIBCUDA=emulator attn-launch %t/no-producer-fence 2>&1 | FileCheck %s --check-prefix=NO-PRODUCER-FENCE
// NO-PRODUCER-FENCE: PTX emulator: kernel ragged_blocks_attention0: reads shared offset {{[0-9]+}} through the async proxy, which warp {{[0-9]+}} wrote (line {{[0-9]+}}) through the generic proxy with no fence.proxy.async of that warp after the write and ordered before this read

module attributes {attn.target = #attn.target<chip = "sm_90a", sms = 132,
    smem_per_block = 232448, smem_per_sm = 233472, regs_per_sm = 65536, regs_per_thread = 255>} {
func.func @prefill(%q: tensor<1x2x100x64xbf16>, %k: tensor<1x2x130x64xbf16>,
                   %v: tensor<1x2x130x64xbf16>) -> tensor<1x2x100x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x100x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x100x64xbf16>,
      tensor<1x2x130x64xbf16>, tensor<1x2x130x64xbf16>)
      outs(%o0 : tensor<1x2x100x64xbf16>)
      {causal, tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
      -> tensor<1x2x100x64xbf16>
  return %o : tensor<1x2x100x64xbf16>
}
func.func @turns(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                 %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o0 = tensor.empty() : tensor<1x2x256x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x2x256x64xbf16>,
      tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>)
      outs(%o0 : tensor<1x2x256x64xbf16>)
      {tiles = #attn.fa2<block_m = 128, block_n = 64, warps = 8, stages = 2>}
      -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
func.func @ragged(%q: tensor<3x2x64x64xbf16>, %k: tensor<3x2x200x64xbf16>,
                  %v: tensor<3x2x200x64xbf16>, %lengths: tensor<3xi32>)
    -> tensor<3x2x64x64xbf16> {
  %o0 = tensor.empty() : tensor<3x2x64x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<3x2x64x64xbf16>,
      tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>)
      key_lengths(%lengths : tensor<3xi32>)
      outs(%o0 : tensor<3x2x64x64xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
      -> tensor<3x2x64x64xbf16>
  return %o : tensor<3x2x64x64xbf16>
}
func.func @ragged_blocks(%q: tensor<3x2x64x64xbf16>, %k: tensor<3x2x200x64xbf16>,
                         %v: tensor<3x2x200x64xbf16>, %lengths: tensor<3xi32>,
                         %bm: tensor<3x2x1x4xi8>) -> tensor<3x2x64x64xbf16> {
  %o0 = tensor.empty() : tensor<3x2x64x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<3x2x64x64xbf16>,
      tensor<3x2x200x64xbf16>, tensor<3x2x200x64xbf16>)
      block_mask(%bm : tensor<3x2x1x4xi8> blocks [64, 64])
      key_lengths(%lengths : tensor<3xi32>)
      outs(%o0 : tensor<3x2x64x64xbf16>)
      {tiles = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>}
      -> tensor<3x2x64x64xbf16>
  return %o : tensor<3x2x64x64xbf16>
}
func.func @ragged_turns(%q: tensor<3x2x256x64xbf16>, %k: tensor<3x2x300x64xbf16>,
                        %v: tensor<3x2x300x64xbf16>, %lengths: tensor<3xi32>)
    -> tensor<3x2x256x64xbf16> {
  %o0 = tensor.empty() : tensor<3x2x256x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<3x2x256x64xbf16>,
      tensor<3x2x300x64xbf16>, tensor<3x2x300x64xbf16>)
      key_lengths(%lengths : tensor<3xi32>)
      outs(%o0 : tensor<3x2x256x64xbf16>) {causal} -> tensor<3x2x256x64xbf16>
  return %o : tensor<3x2x256x64xbf16>
}
func.func @packed(%q: tensor<1x8x2x64xbf16>, %k: tensor<1x2x300x64xbf16>,
                  %v: tensor<1x2x300x64xbf16>) -> tensor<1x8x2x64xbf16> {
  %o0 = tensor.empty() : tensor<1x8x2x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<1x8x2x64xbf16>,
      tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>)
      outs(%o0 : tensor<1x8x2x64xbf16>) {causal} -> tensor<1x8x2x64xbf16>
  return %o : tensor<1x8x2x64xbf16>
}
func.func @lean_tiles(%q: tensor<2x4x1x64xbf16>, %k: tensor<2x4x200x64xbf16>,
                      %v: tensor<2x4x200x64xbf16>) -> tensor<2x4x1x64xbf16> {
  %o0 = tensor.empty() : tensor<2x4x1x64xbf16>
  %o = attn.attention ins(%q, %k, %v : tensor<2x4x1x64xbf16>,
      tensor<2x4x200x64xbf16>, tensor<2x4x200x64xbf16>)
      outs(%o0 : tensor<2x4x1x64xbf16>)
      {partition = #attn.lean<ctas = 6>} -> tensor<2x4x1x64xbf16>
  return %o : tensor<2x4x1x64xbf16>
}
func.func @lean(%q: tensor<1x2x1x64xbf16>, %k: tensor<1x2x616x64xbf16>,
                %v: tensor<1x2x616x64xbf16>, %o: tensor<1x2x1x64xbf16>,
                %l: tensor<1x2x1xf32>) -> (tensor<1x2x1x64xbf16>, tensor<1x2x1xf32>) {
  %r:2 = attn.attention ins(%q, %k, %v : tensor<1x2x1x64xbf16>,
      tensor<1x2x616x64xbf16>, tensor<1x2x616x64xbf16>)
      outs(%o, %l : tensor<1x2x1x64xbf16>, tensor<1x2x1xf32>)
      {partition = #attn.lean<ctas = 64>} -> tensor<1x2x1x64xbf16>, tensor<1x2x1xf32>
  return %r#0, %r#1 : tensor<1x2x1x64xbf16>, tensor<1x2x1xf32>
}
}
