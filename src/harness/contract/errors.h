// The exceptions that carry a case's (or the command line's) fate.
//
//   UsageError   the command line is wrong: one line naming the value, exit 2
//   CaseRejected this parameter combination is invalid for the variant:
//                the case is reported `skipped` with the reason, the sweep goes on
//   Unsupported  the device cannot run the case (no fp16, too big, limits):
//                reported `unsupported` with the reason
// Anything else thrown while a case runs is reported as `error`.
#pragma once

#include <stdexcept>
#include <string>

namespace pebench {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CaseRejected : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace pebench
