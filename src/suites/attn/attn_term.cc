#include "suites/attn/attn_term.h"

#include <utility>

namespace pebench {

AttnRefTerms::RowTransform AttnRefTerms::then(RowTransform first, RowTransform second) {
  if (!first) return second;
  if (!second) return first;
  return [a = std::move(first), b = std::move(second)](int64_t h, int64_t pos, double* row) {
    a(h, pos, row);
    b(h, pos, row);
  };
}

AttnRefTerms::Score AttnRefTerms::sum(Score first, Score second) {
  if (!first) return second;
  if (!second) return first;
  return [a = std::move(first), b = std::move(second)](int64_t h, int64_t qpos, int64_t kpos, const double* q,
                                                       const double* k) {
    return a(h, qpos, kpos, q, k) + b(h, qpos, kpos, q, k);
  };
}

void AttnRefTerms::add_value(Value f) {
  if (!value) {
    value = std::move(f);
    return;
  }
  value = [a = std::move(value), b = std::move(f)](int64_t h, int64_t qpos, int64_t kpos, double w, double* acc) {
    a(h, qpos, kpos, w, acc);
    b(h, qpos, kpos, w, acc);
  };
}

FlashHookLoops& FlashHookLoops::operator+=(const FlashHookLoops& o) {
  per_invocation += o.per_invocation;
  per_row += o.per_row;
  per_key += o.per_key;
  per_key_load += o.per_key_load;
  per_chunk += o.per_chunk;
  return *this;
}

}  // namespace pebench
