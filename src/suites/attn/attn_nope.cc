// attn.nope: plain scaled dot-product attention (encodings.md section 3),
// the baseline every other attention variant is compared to.
#include <cmath>

#include "harness/contract/registry.h"
#include "suites/attn/attn_common.h"

namespace pebench {
namespace {

class AttnNopeCase : public AttnCase {
 public:
  explicit AttnNopeCase(const Params& p) : AttnCase(p) { plan(); }

 protected:
  std::string kernel() const override { return "nope"; }
};

class AttnNope : public Variant {
 public:
  std::string id() const override { return "attn.nope"; }
  std::string summary() const override { return "scaled dot-product attention without positions (the baseline)"; }
  std::vector<std::string> impls() const override { return {"naive", "flash"}; }
  std::vector<ParamSpec> params() const override { return attn_params(); }
  void resolve(Params& p) const override { resolve_attn_params(p, 1.0 / std::sqrt(static_cast<double>(p.i("dim")))); }
  std::unique_ptr<Case> make(const Params& p) const override { return std::make_unique<AttnNopeCase>(p); }
};

PEBENCH_REGISTER_VARIANT(AttnNope);

}  // namespace
}  // namespace pebench
