module attributes {test.partition = #attn.split_kv<parts = 4>} {}
