#include "suites/abs/abs_common.h"

#include <fmt/format.h>

namespace pebench {

std::vector<ParamSpec> input_shape_params() {
  return {shape::batch(), shape::seq(), shape::d_model(),
          int_param("offset", 0, "absolute position of the first token (p = offset + n)")};
}

void resolve_input_shape(const Params& p) {
  const int64_t offset = p.i("offset");
  if (offset < 0) throw CaseRejected(fmt::format("offset={} must not be negative", offset));
  if (offset + p.i("seq") > (int64_t{1} << 31)) {
    throw CaseRejected(fmt::format("offset={} + seq={} exceeds 2^31 positions", offset, p.i("seq")));
  }
  require_u32_items(p.i("batch") * p.i("seq") * p.i("d_model"), "x");
}

ParamSpec table_len_param() {
  return derived_param("table_len", ParamType::kInt, "offset + seq", "rows L of the position table");
}

void resolve_table_len(Params& p) {
  if (!p.has("table_len")) p.set("table_len", p.i("offset") + p.i("seq"));
  if (p.i("offset") + p.i("seq") > p.i("table_len")) {
    throw CaseRejected(
        fmt::format("offset={} + seq={} exceeds table_len={}", p.i("offset"), p.i("seq"), p.i("table_len")));
  }
  // Divided, not multiplied: a huge table_len must not overflow int64 first.
  if (p.i("table_len") > int64_t{UINT32_MAX} / p.i("d_model")) {
    throw CaseRejected(fmt::format("table_len={} x d_model={} elements exceed 32-bit indexing", p.i("table_len"),
                                   p.i("d_model")));
  }
}

}  // namespace pebench
