// RUN: attn-opt %s --attn-distribute --split-input-file --verify-diagnostics

func.func @mask(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>, %m: tensor<1x1x8x8xi1>, %o: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{a distributed attention cannot take a mask operand yet; express the mask as a score region}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>) mask(%m : tensor<1x1x8x8xi1>)
      outs(%o : tensor<1x1x8x8xf32>) {partition = #attn.ring<devices = 2>} -> tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}

// -----

func.func @not_an_argument(%k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>, %o: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  %q = tensor.empty() : tensor<1x1x8x8xf32>
  // expected-error @+1 {{a distributed attention's Q, K and V must be arguments of the function, which becomes the program of one rank}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
      outs(%o : tensor<1x1x8x8xf32>) {partition = #attn.ring<devices = 2>} -> tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}

// -----

func.func @shared_argument(%x: tensor<1x1x8x8xf32>, %o: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{argument #0 is sharded for the distributed attention and must have no other use}}
  %r = attn.attention ins(%x, %x, %x : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
      outs(%o : tensor<1x1x8x8xf32>) {partition = #attn.attention2d<q_parts = 1, kv_parts = 2>} -> tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}

// -----

func.func @result_used(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>, %o: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{a distributed attention's results are sharded and must only be returned}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
      outs(%o : tensor<1x1x8x8xf32>) {partition = #attn.ring<devices = 2>} -> tensor<1x1x8x8xf32>
  %s = arith.addf %r, %r : tensor<1x1x8x8xf32>
  return %s : tensor<1x1x8x8xf32>
}

// -----

func.func @dynamic(%q: tensor<1x1x?x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>, %o: tensor<1x1x?x8xf32>) -> tensor<1x1x?x8xf32> {
  // expected-error @+1 {{a distributed attention needs static sizes}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x?x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
      outs(%o : tensor<1x1x?x8xf32>) {partition = #attn.ring<devices = 2>} -> tensor<1x1x?x8xf32>
  return %r : tensor<1x1x?x8xf32>
}

// -----

func.func private @attn_grid_2()

func.func @taken(%q: tensor<1x1x8x8xf32>, %k: tensor<1x1x8x8xf32>, %v: tensor<1x1x8x8xf32>, %o: tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32> {
  // expected-error @+1 {{symbol @attn_grid_2 exists and is not the grid it names}}
  %r = attn.attention ins(%q, %k, %v : tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>, tensor<1x1x8x8xf32>)
      outs(%o : tensor<1x1x8x8xf32>) {partition = #attn.ring<devices = 2>} -> tensor<1x1x8x8xf32>
  return %r : tensor<1x1x8x8xf32>
}
