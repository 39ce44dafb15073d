#include "suites/abs_common.h"

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

}  // namespace pebench
