// The "baton.redlock" category; the detail beside each code names the masters.
#include "redlock_error.hpp"

#include <string>

namespace baton {
namespace {

class redlock_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.redlock"; }

  std::string message(int value) const override {
    switch (static_cast<redlock_errc>(value)) {
      case redlock_errc::no_quorum:
        return "fewer than a majority of redlock masters answered";
      case redlock_errc::validity_spent:
        return "a majority answered only after the lease's validity was spent";
    }
    return "unknown redlock error " + std::to_string(value);
  }

  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<redlock_errc>(value)) {
      case redlock_errc::no_quorum:
        return store_errc::no_quorum;
      case redlock_errc::validity_spent:
        return store_errc::timeout;
    }
    return {value, *this};
  }
};

}  // namespace

const std::error_category& redlock_category() noexcept {
  static const redlock_category_impl category;
  return category;
}

std::error_code make_error_code(redlock_errc e) noexcept {
  return {static_cast<int>(e), redlock_category()};
}

}  // namespace baton
