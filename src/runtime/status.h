// Status and StatusOr: how runtime factories report failure without exceptions.
//
// A failed Vulkan call becomes a Status carrying the VkResult, its name and
// the call that failed ("vkCreateBuffer: VK_ERROR_OUT_OF_DEVICE_MEMORY").
// Callers that cannot go on (the harness, per case) call value(), which throws
// StatusError; the harness turns that into the case's `error` status.
#pragma once

#include <volk.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace pebench {

// The VkResult's enumerant name, e.g. "VK_ERROR_DEVICE_LOST".
const char* vk_result_name(VkResult result);

class Status {
 public:
  Status() = default;
  static Status error(std::string message, VkResult result = VK_ERROR_UNKNOWN) {
    return Status(std::move(message), result);
  }
  bool ok() const { return !message_.has_value(); }
  VkResult vk_result() const { return result_; }
  const std::string& message() const;

 private:
  Status(std::string message, VkResult result) : message_(std::move(message)), result_(result) {}
  std::optional<std::string> message_;
  VkResult result_ = VK_SUCCESS;
};

// Thrown by StatusOr::value() / throw_if_error() on a failed status.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(const Status& s) : std::runtime_error(s.message()), result_(s.vk_result()) {}
  VkResult vk_result() const { return result_; }

 private:
  VkResult result_;
};

inline void throw_if_error(const Status& s) {
  if (!s.ok()) throw StatusError(s);
}

template <typename T>
class StatusOr {
 public:
  StatusOr(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design
  StatusOr(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & {
    throw_if_error(status_);
    return *value_;
  }
  T&& value() && {
    throw_if_error(status_);
    return std::move(*value_);
  }

 private:
  Status status_;
  std::optional<T> value_;
};

// Status for a failed Vulkan call: "<call>: <VK_RESULT_NAME>".
Status vk_error(const char* call, VkResult result);

}  // namespace pebench

// Evaluates a Vulkan call; on failure returns a Status naming call and result.
#define PB_VK_RETURN_IF_ERROR(call)                                   \
  do {                                                                \
    VkResult pb_vk_result_ = (call);                                  \
    if (pb_vk_result_ != VK_SUCCESS) {                                \
      return ::pebench::vk_error(#call, pb_vk_result_);               \
    }                                                                 \
  } while (0)

// Evaluates a Vulkan call; on failure throws StatusError naming call and result.
#define PB_VK_CHECK(call)                                                     \
  do {                                                                        \
    VkResult pb_vk_result_ = (call);                                          \
    if (pb_vk_result_ != VK_SUCCESS) {                                        \
      throw ::pebench::StatusError(::pebench::vk_error(#call, pb_vk_result_)); \
    }                                                                         \
  } while (0)

#define PB_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::pebench::Status pb_status_ = (expr);   \
    if (!pb_status_.ok()) return pb_status_; \
  } while (0)
