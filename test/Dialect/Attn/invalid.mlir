// RUN: attn-opt %s --split-input-file --verify-diagnostics

// One test per verifier message of attn.attention, attn.yield and attn.merge.

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf32>) {
  // expected-error @+1 {{expects one result per outs operand (2), got 1}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf32>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{result #0 has type 'tensor<2x8x16x64xf32>' but its destination has type 'tensor<2x8x16x64xf16>'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf32>
  return
}

// -----

func.func @f(%q: tensor<8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{Q must have rank 4 ([B, Hq, Sq, D]), got rank 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64x1xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{K must have rank 4 ([B, Hkv, Sk, D]), got rank 5}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64x1xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{V must have rank 4 ([B, Hkv, Sk, Dv]), got rank 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<8x16x64xf16>) {
  // expected-error @+1 {{O must have rank 4 ([B, Hq, Sq, Dv]), got rank 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<8x16x64xf16>) -> tensor<8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16x1xf32>) {
  // expected-error @+1 {{LSE must have rank 3 ([B, Hq, Sq]), got rank 4}}
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16x1xf32>) -> tensor<2x8x16x64xf16>, tensor<2x8x16x1xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xi32>, %k: tensor<2x2x32x64xi32>, %v: tensor<2x2x32x64xi32>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{Q element type must be f16, bf16 or f32, got 'i32'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xi32>, tensor<2x2x32x64xi32>, tensor<2x2x32x64xi32>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf32>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{Q, K and V must have the same element type, got 'f16', 'f32' and 'f16'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf32>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf64>) {
  // expected-error @+1 {{O element type must be f16, bf16 or f32, got 'f64'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf64>) -> tensor<2x8x16x64xf64>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x16xf16>) {
  // expected-error @+1 {{LSE element type must be f32, got 'f16'}}
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x16xf16>) -> tensor<2x8x16x64xf16>, tensor<2x8x16xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<3x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{batch size (B) mismatch: Q has 2, K has 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<3x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<1x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{batch size (B) mismatch: Q has 2, V has 1}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<1x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x4x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{key/value head count (Hkv) mismatch: K has 2, V has 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x4x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x31x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{key/value length (Sk) mismatch: K has 32, V has 31}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x31x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x128xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{head dimension (D) mismatch: Q has 64, K has 128}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x128xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x0x32x64xf16>, %v: tensor<2x0x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{K has a zero size ('tensor<2x0x32x64xf16>'): every size of an attention must be positive}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x0x32x64xf16>, tensor<2x0x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x6x16x64xf16>, %k: tensor<2x4x32x64xf16>, %v: tensor<2x4x32x64xf16>, %o: tensor<2x6x16x64xf16>) {
  // expected-error @+1 {{query heads (Hq = 6) must be a multiple of key/value heads (Hkv = 4)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x6x16x64xf16>, tensor<2x4x32x64xf16>, tensor<2x4x32x64xf16>) outs(%o : tensor<2x6x16x64xf16>) -> tensor<2x6x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<1x8x16x64xf16>) {
  // expected-error @+1 {{batch size (B) mismatch: Q has 2, O has 1}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<1x8x16x64xf16>) -> tensor<1x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x4x16x64xf16>) {
  // expected-error @+1 {{query head count (Hq) mismatch: Q has 8, O has 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x4x16x64xf16>) -> tensor<2x4x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x15x64xf16>) {
  // expected-error @+1 {{query length (Sq) mismatch: Q has 16, O has 15}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x15x64xf16>) -> tensor<2x8x15x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x32xf16>) {
  // expected-error @+1 {{value head dimension (Dv) mismatch: V has 64, O has 32}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x32xf16>) -> tensor<2x8x16x32xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<3x8x16xf32>) {
  // expected-error @+1 {{batch size (B) mismatch: Q has 2, LSE has 3}}
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<3x8x16xf32>) -> tensor<2x8x16x64xf16>, tensor<3x8x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x1x16xf32>) {
  // expected-error @+1 {{query head count (Hq) mismatch: Q has 8, LSE has 1}}
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<2x1x16xf32>) -> tensor<2x8x16x64xf16>, tensor<2x1x16xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %l: tensor<2x8x1xf32>) {
  // expected-error @+1 {{query length (Sq) mismatch: Q has 16, LSE has 1}}
  %r:2 = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o, %l : tensor<2x8x16x64xf16>, tensor<2x8x1xf32>) -> tensor<2x8x16x64xf16>, tensor<2x8x1xf32>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<16x32xi1>) {
  // expected-error @+1 {{mask must have rank 4 ([B or 1, Hq or 1, Sq, Sk]), got rank 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<16x32xi1>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x16x32xi8>) {
  // expected-error @+1 {{mask element type must be i1 (boolean) or f16, bf16, f32 (additive), got 'i8'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<1x1x16x32xi8>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<3x1x16x32xi1>) {
  // expected-error @+1 {{mask dimension 0 (batch (B)) must be 1 or 2 to broadcast, got 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<3x1x16x32xi1>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x2x16x32xf32>) {
  // expected-error @+1 {{mask dimension 1 (query heads (Hq)) must be 1 or 8 to broadcast, got 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<1x2x16x32xf32>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x8x32xi1>) {
  // expected-error @+1 {{query length (Sq) mismatch: Q has 16, mask has 8}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<1x1x8x32xi1>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x16x16xi1>) {
  // expected-error @+1 {{key/value length (Sk) mismatch: K has 32, mask has 16}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) mask(%m : tensor<1x1x16x16xi1>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi8>) {
  // expected-error @+1 {{block mask blocks must be from 1 to 2147483647 rows and keys, got [0, 8]}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi8> blocks [0, 8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi8>) {
  // expected-error @+1 {{a block mask needs its block size [Bq, Bk]}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi8> blocks [8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{block_mask_size is given without a block mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {block_mask_size = array<i64: 8, 8>} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi1>) {
  // expected-error @+1 {{block mask element type must be i8 (0 empty, 1 partial, 2 full), got 'i1'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi1> blocks [8, 8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<2x4x4xi8>) {
  // expected-error @+1 {{block mask must have rank 4 ([B or 1, Hq or 1, Nq, Nk]), got rank 3}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<2x4x4xi8> blocks [8, 8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x2x2x4xi8>) {
  // expected-error @+1 {{block mask dimension 1 (query heads (Hq)) must be 1 or 8 to broadcast, got 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x2x2x4xi8> blocks [8, 8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi8>) {
  // expected-error @+1 {{query block count (ceil(Sq / Bq)) mismatch: Q has 3, block mask has 2}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi8> blocks [7, 8]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi8>) {
  // expected-error @+1 {{key block count (ceil(Sk / Bk)) mismatch: K has 1, block mask has 4}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi8> blocks [8, 64]) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>, %m: tensor<1x1x2x4xi8>, %i: index) {
  // expected-error @+1 {{a framed attention cannot carry a block mask}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) block_mask(%m : tensor<1x1x2x4xi8> blocks [8, 8]) frame(%i, %i of %i, %i) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{scale must be positive and finite, got -1}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {scale = -1.0 : f32} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{softcap must be positive and finite, got 0}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {softcap = 0.0 : f32} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x?xf16>, %k: tensor<2x2x32x?xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{scale is required when the head dimension D is dynamic}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x?xf16>, tensor<2x2x32x?xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{window must have two entries [left, right], got 1}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {window = array<i64: 4>} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{window sizes must be non-negative, got [-1, 0]}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {window = array<i64: -1, 0>} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'partition' failed to satisfy constraint}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {partition = #attn.fa2<block_m = 64, block_n = 64, warps = 4, stages = 2>} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{attribute 'tiles' failed to satisfy constraint}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) {tiles = #attn.split_kv<splits = 2>} -> tensor<2x8x16x64xf16>
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{score region arguments must be (f32 score, index b, index h, index q, index k), got (f32, index, index, index)}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index):
        attn.yield %s : f32
      }
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{score region must yield an f32 score, got 'f16'}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %t = arith.truncf %s : f32 to f16
        attn.yield %t : f16
      }
  return
}

// -----

func.func @f(%q: tensor<2x8x16x64xf16>, %k: tensor<2x2x32x64xf16>, %v: tensor<2x2x32x64xf16>, %o: tensor<2x8x16x64xf16>) {
  // expected-error @+1 {{score region must have exactly one block}}
  %r = attn.attention ins(%q, %k, %v : tensor<2x8x16x64xf16>, tensor<2x2x32x64xf16>, tensor<2x2x32x64xf16>) outs(%o : tensor<2x8x16x64xf16>) -> tensor<2x8x16x64xf16>
      score {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        cf.br ^bb1
      ^bb1:
        attn.yield %s : f32
      }
  return
}

// -----

func.func @too_many_outs(%q: tensor<1x1x4x8xf32>, %o: tensor<1x1x4x8xf32>, %l: tensor<1x1x4xf32>) {
  // expected-error @+1 {{expects 1 or 2 outs operands (O, then optionally LSE), got 3}}
  %r:3 = attn.attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%o, %l, %l : tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>)
      -> tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>
  return
}

// -----

func.func @yield_outside_attention(%x: f32) {
  // expected-error @+1 {{'attn.yield' op expects parent op to be one of 'attn.attention, attn.partial_attention, attn.attention_grad'}}
  attn.yield %x : f32
}

// -----

func.func @merge_rank0_lse(%po: tensor<4xf32>, %pl: tensor<f32>, %o: tensor<4xf32>) {
  // expected-error @+1 {{partial LSE must have rank at least 1 (it holds the split dimension)}}
  %r = attn.merge ins(%po, %pl : tensor<4xf32>, tensor<f32>) outs(%o : tensor<4xf32>) dim = 0 -> tensor<4xf32>
  return
}

// -----

func.func @merge_rank(%po: tensor<4x2x8xf32>, %pl: tensor<4x2x8xf32>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{partial O must have rank one more than partial LSE (the feature dimension), got ranks 3 and 3}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2x8xf32>) outs(%o : tensor<2x8xf32>) dim = 0 -> tensor<2x8xf32>
  return
}

// -----

func.func @merge_dim(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xf32>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{dim must be in [0, 2), got 2}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%o : tensor<2x8xf32>) dim = 2 -> tensor<2x8xf32>
  return
}

// -----

func.func @merge_disagree(%po: tensor<4x2x8xf32>, %pl: tensor<4x3xf32>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{partial O and partial LSE disagree in dimension 1: 2 vs 3}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x3xf32>) outs(%o : tensor<2x8xf32>) dim = 0 -> tensor<2x8xf32>
  return
}

// -----

func.func @merge_partial_type(%po: tensor<4x2x8xf16>, %pl: tensor<4x2xf32>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{partial O element type must be f32, got 'f16'}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf16>, tensor<4x2xf32>) outs(%o : tensor<2x8xf32>) dim = 0 -> tensor<2x8xf32>
  return
}

// -----

func.func @merge_partial_lse_type(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xbf16>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{partial LSE element type must be f32, got 'bf16'}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xbf16>) outs(%o : tensor<2x8xf32>) dim = 0 -> tensor<2x8xf32>
  return
}

// -----

func.func @merge_out_type(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xf32>, %o: tensor<2x8xi32>) {
  // expected-error @+1 {{O element type must be f16, bf16 or f32, got 'i32'}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%o : tensor<2x8xi32>) dim = 0 -> tensor<2x8xi32>
  return
}

// -----

func.func @merge_out_shape(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xf32>, %o: tensor<4x8xf32>) {
  // expected-error @+1 {{O must have shape [2, 8] (partial O without dimension 0), got [4, 8]}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%o : tensor<4x8xf32>) dim = 0 -> tensor<4x8xf32>
  return
}

// -----

func.func @merge_lse_shape(%po: tensor<2x4x8xf32>, %pl: tensor<2x4xf32>, %o: tensor<2x8xf32>, %l: tensor<4xf32>) {
  // expected-error @+1 {{LSE must have shape [2] (partial LSE without dimension 1), got [4]}}
  %r:2 = attn.merge ins(%po, %pl : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%o, %l : tensor<2x8xf32>, tensor<4xf32>) dim = 1 -> tensor<2x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @merge_lse_type(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xf32>, %o: tensor<2x8xf32>, %l: tensor<2xf16>) {
  // expected-error @+1 {{LSE element type must be f32, got 'f16'}}
  %r:2 = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%o, %l : tensor<2x8xf32>, tensor<2xf16>) dim = 0 -> tensor<2x8xf32>, tensor<2xf16>
  return
}

// -----

func.func @merge_results(%po: tensor<4x2x8xf32>, %pl: tensor<4x2xf32>, %o: tensor<2x8xf32>) {
  // expected-error @+1 {{result #0 has type 'tensor<2x8xf16>' but its destination has type 'tensor<2x8xf32>'}}
  %r = attn.merge ins(%po, %pl : tensor<4x2x8xf32>, tensor<4x2xf32>) outs(%o : tensor<2x8xf32>) dim = 0 -> tensor<2x8xf16>
  return
}

// -----

func.func @score_region_without_yield(%q: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  // expected-error @+1 {{score region must end with attn.yield}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%q : tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> score {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    llvm.unreachable
  }
  return %r : tensor<1x1x4x8xf32>
}

// -----

func.func @partial_one_destination(%q: tensor<1x1x4x8xf32>, %po: tensor<2x1x1x4x8xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op needs two destinations, the partial O and LSE, got 1}}
  %r = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po : tensor<2x1x1x4x8xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<2x1x1x4x8xf32>
  return
}

// -----

func.func @partial_without_tiles(%q: tensor<1x1x4x8xf32>, %po: tensor<2x1x1x4x8xf32>, %pl: tensor<2x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op needs tiles: the pieces are made of its blocks}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<2x1x1x4x8xf32>, tensor<2x1x1x4xf32>)
      {partition = #attn.split_kv<splits = 2>} -> tensor<2x1x1x4x8xf32>, tensor<2x1x1x4xf32>
  return
}

// -----

func.func @partial_attention2d(%q: tensor<1x1x4x8xf32>, %po: tensor<2x1x1x4x8xf32>, %pl: tensor<2x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op needs a split_kv or lean partition, got #attn.attention2d<q_parts = 1, kv_parts = 2>}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<2x1x1x4x8xf32>, tensor<2x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.attention2d<q_parts = 1, kv_parts = 2>}
      -> tensor<2x1x1x4x8xf32>, tensor<2x1x1x4xf32>
  return
}

// -----

func.func @partial_out_rank(%q: tensor<1x1x4x8xf32>, %po: tensor<1x1x4x8xf32>, %pl: tensor<2x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op O must have rank 5 ([S, B, Hq, Sq, Dv])}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<1x1x4x8xf32>, tensor<2x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<1x1x4x8xf32>, tensor<2x1x1x4xf32>
  return
}

// -----

func.func @partial_out_f16(%q: tensor<1x1x4x8xf16>, %po: tensor<2x1x1x4x8xf16>, %pl: tensor<2x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op partial O element type must be f32, got 'f16'}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>, tensor<1x1x4x8xf16>)
      outs(%po, %pl : tensor<2x1x1x4x8xf16>, tensor<2x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<2x1x1x4x8xf16>, tensor<2x1x1x4xf32>
  return
}

// -----

func.func @partial_slot_mismatch(%q: tensor<1x1x4x8xf32>, %po: tensor<2x1x1x4x8xf32>, %pl: tensor<3x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op slot count (S) mismatch: O has 2, LSE has 3}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<2x1x1x4x8xf32>, tensor<3x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<2x1x1x4x8xf32>, tensor<3x1x1x4xf32>
  return
}

// -----

func.func @partial_splits_mismatch(%q: tensor<1x1x4x8xf32>, %po: tensor<3x1x1x4x8xf32>, %pl: tensor<3x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op split_kv with 2 splits needs 2 slots, got 3}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<3x1x1x4x8xf32>, tensor<3x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 2>}
      -> tensor<3x1x1x4x8xf32>, tensor<3x1x1x4xf32>
  return
}

// -----

func.func @partial_lean_too_many_slots(%q: tensor<1x1x4x8xf32>, %po: tensor<9x1x1x4x8xf32>, %pl: tensor<9x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op lean with 8 CTAs has at most 8 pieces per tile, got 9 slots}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<9x1x1x4x8xf32>, tensor<9x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.lean<ctas = 8>}
      -> tensor<9x1x1x4x8xf32>, tensor<9x1x1x4xf32>
  return
}

// -----

// The slot count of LSE counts when O's is dynamic.
func.func @partial_lse_slots_checked(%q: tensor<1x1x4x8xf32>, %po: tensor<?x1x1x4x8xf32>, %pl: tensor<5x1x1x4xf32>) {
  // expected-error @+1 {{'attn.partial_attention' op split_kv with 3 splits needs 3 slots, got 5}}
  %r:2 = attn.partial_attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      outs(%po, %pl : tensor<?x1x1x4x8xf32>, tensor<5x1x1x4xf32>)
      {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1>, partition = #attn.split_kv<splits = 3>}
      -> tensor<?x1x1x4x8xf32>, tensor<5x1x1x4xf32>
  return
}

// -----

func.func @frame_with_partition(%q: tensor<1x1x4x8xf32>, %o: tensor<1x1x4x8xf32>, %i: index) {
  // expected-error @+1 {{'attn.attention' op a framed attention cannot carry a partition; got #attn.split_kv<splits = 2>}}
  %r = attn.attention ins(%q, %q, %q : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>)
      frame(%i, %i of %i, %i) outs(%o : tensor<1x1x4x8xf32>) {partition = #attn.split_kv<splits = 2>} -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @partial_frame(%q: tensor<1x1x4x8xf32>, %o: tensor<1x1x4x8xf32>, %i: index) {
  // expected-error @+1 {{'attn.attention' op a frame needs all of query offset, key offset, query total and key total}}
  %r = "attn.attention"(%q, %q, %q, %i, %o) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1>}> ({}) : (tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, index, tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32>
  return
}

// -----

func.func @packed_heads_not_dividing_group(%q: tensor<1x6x1x8xf32>, %k: tensor<1x2x16x8xf32>, %o: tensor<1x6x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op packed_heads = 2 must divide the query heads per key/value head (Hq / Hkv = 3)}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x6x1x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>)
      outs(%o : tensor<1x6x1x8xf32>) {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1, packed_heads = 2>} -> tensor<1x6x1x8xf32>
  return
}

// -----

func.func @packed_heads_with_mask(%q: tensor<1x4x1x8xf32>, %k: tensor<1x1x16x8xf32>, %m: tensor<1x1x1x16xi1>, %o: tensor<1x4x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op packed_heads = 4 cannot pack a mask operand (its rows are one head's rows): use packed_heads = 1}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x4x1x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>)
      mask(%m : tensor<1x1x1x16xi1>) outs(%o : tensor<1x4x1x8xf32>) {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1, packed_heads = 4>} -> tensor<1x4x1x8xf32>
  return
}

// -----

func.func @packed_heads_dynamic_heads(%q: tensor<1x?x1x8xf32>, %k: tensor<1x1x16x8xf32>, %o: tensor<1x?x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op packed_heads = 4 needs static head counts}}
  %r = attn.attention ins(%q, %k, %k : tensor<1x?x1x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>)
      outs(%o : tensor<1x?x1x8xf32>) {tiles = #attn.fa2<block_m = 16, block_n = 16, warps = 1, stages = 1, packed_heads = 4>} -> tensor<1x?x1x8xf32>
  return
}

// -----

func.func @key_lengths_batch(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>, %lengths: tensor<3xi32>, %o: tensor<2x4x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op batch size (B) mismatch: Q has 2, key lengths has 3}}
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
      key_lengths(%lengths : tensor<3xi32>) outs(%o : tensor<2x4x1x8xf32>) -> tensor<2x4x1x8xf32>
  return
}

// -----

func.func @key_lengths_rank(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>, %lengths: tensor<2x1xi32>, %o: tensor<2x4x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op key lengths must have rank 1 ([B]), got rank 2}}
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
      key_lengths(%lengths : tensor<2x1xi32>) outs(%o : tensor<2x4x1x8xf32>) -> tensor<2x4x1x8xf32>
  return
}

// -----

func.func @key_lengths_i64(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>, %lengths: tensor<2xi64>, %o: tensor<2x4x1x8xf32>) {
  // expected-error @+1 {{operand #3 must be tensor of 32-bit signless integer values}}
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
      key_lengths(%lengths : tensor<2xi64>) outs(%o : tensor<2x4x1x8xf32>) -> tensor<2x4x1x8xf32>
  return
}

// -----

func.func @key_lengths_lean(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>, %lengths: tensor<2xi32>, %o: tensor<2x4x1x8xf32>) {
  // expected-error @+1 {{'attn.attention' op #attn.lean cannot take key lengths: its work assignment counts every sequence's keys when it is built; use #attn.split_kv}}
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
      key_lengths(%lengths : tensor<2xi32>) outs(%o : tensor<2x4x1x8xf32>) {partition = #attn.lean<ctas = 4>} -> tensor<2x4x1x8xf32>
  return
}

// -----

func.func @key_lengths_frame(%q: tensor<2x4x1x8xf32>, %k: tensor<2x4x16x8xf32>, %lengths: tensor<2xi32>, %o: tensor<2x4x1x8xf32>, %i: index) {
  // expected-error @+1 {{'attn.attention' op a framed attention cannot carry key lengths (its frame places its keys)}}
  %r = attn.attention ins(%q, %k, %k : tensor<2x4x1x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>)
      key_lengths(%lengths : tensor<2xi32>) frame(%i, %i of %i, %i) outs(%o : tensor<2x4x1x8xf32>) -> tensor<2x4x1x8xf32>
  return
}
