// The port's failsafe calls (lease_store::failsafe()) of a store whose impl
// carries them out in member functions of its own: every call is refused
// once the store is closed, as the port's own calls are, and otherwise
// handed to acquire_with_record, renew_with_record or resume_with_record
// (the record of lease.failsafe peers). One adapter, so that each store
// keeps only what its kind does differently.
#pragma once

#include <cstdint>
#include <utility>

#include "baton/lease_store.hpp"

namespace baton::store_detail {

template <typename Impl>
class failsafe_forwarder final : public failsafe_calls {
 public:
  explicit failsafe_forwarder(Impl& impl) : impl_(impl) {}

  void async_acquire(const failsafe_acquire& a, acquire_handler handler) override {
    if (impl_.shell.reject_if_closed(handler)) return;
    impl_.acquire_with_record(a, std::move(handler));
  }
  void async_renew(const failsafe_list& list, renew_handler handler) override {
    if (impl_.shell.reject_if_closed(handler)) return;
    impl_.renew_with_record(list, std::move(handler));
  }
  void async_resume(std::uint64_t token, const failsafe_list& list,
                    renew_handler handler) override {
    if (impl_.shell.reject_if_closed(handler)) return;
    impl_.resume_with_record(token, list, std::move(handler));
  }

 private:
  Impl& impl_;
};

}  // namespace baton::store_detail
