// What the input-side (`abs.*`) variants share: x [B,N,d] in, y [B,N,d] out,
// token n at absolute position p = offset + n (encodings.md section 0).
#pragma once

#include <vector>

#include "harness/contract/params.h"
#include "harness/contract/variant.h"
#include "suites/common/suite_util.h"

namespace pebench {

struct InputShape {
  explicit InputShape(const Params& p)
      : batch(p.i("batch")), seq(p.i("seq")), d(p.i("d_model")), offset(p.i("offset")) {}
  int64_t batch, seq, d, offset;

  TensorDesc x(DType dtype) const { return tensor("x", TensorRole::kInput, dtype, {batch, seq, d}, "[B,N,d]"); }
  TensorDesc y(DType dtype) const { return tensor("y", TensorRole::kOutput, dtype, {batch, seq, d}, "[B,N,d]"); }
};

// batch, seq, d_model and offset.
std::vector<ParamSpec> input_shape_params();

// Rejects offsets that are negative or push positions past 2^31 and
// tensors too large for 32-bit indexing.
void resolve_input_shape(const Params& p);

// The `table_len` of a position table indexed by p = offset + n: declared
// with default offset + seq; resolve fills the default and rejects tables
// that are too short (offset + seq > table_len) or too large to index.
ParamSpec table_len_param();
void resolve_table_len(Params& p);

}  // namespace pebench
