// SPDX-License-Identifier: MIT
// A scheme's domain that forgets a hook of core::domain_contract (here on_thread_exit, which
// hands an exiting thread's garbage over) is refused where it is defined, naming the contract.
#include <reclaim/core/domain.hpp>
#include <reclaim/free/batch.hpp>

struct leaky_record : reclaim::core::thread_record<reclaim::batch_free> {
  void destroy_garbage() noexcept {}
};

class leaky_domain : public reclaim::core::domain_base<leaky_domain, leaky_record> {
 public:
  struct guard_type {};
  static constexpr bool grace_periods = false;
  ~leaky_domain() { shutdown(); }

 private:
  friend reclaim::core::domain_base<leaky_domain, leaky_record>;
  void flush_local(leaky_record&) noexcept {}
};

int main() { leaky_domain d; }
