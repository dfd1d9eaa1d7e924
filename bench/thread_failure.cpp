// SPDX-License-Identifier: MIT
#include "thread_failure.hpp"

#include <new>

#include <fmt/format.h>

namespace reclaim_bench {

std::string failure_text(const std::exception& e) {
  if (const auto* t = dynamic_cast<const thread_error*>(&e)) {
    std::string cause = "an exception that is not a std::exception";
    try {
      std::rethrow_exception(t->cause_);
    } catch (const std::exception& c) {
      cause = failure_text(c);
    } catch (...) {
    }
    return fmt::format("{}{} thread {} of {}: {}", t->creating_ ? "cannot create " : "", t->role_,
                       t->index_ + 1, t->count_, cause);
  }
  if (dynamic_cast<const std::bad_alloc*>(&e)) return fmt::format("out of memory ({})", e.what());
  return e.what();  // a thread that cannot be created: "Resource temporarily unavailable"
}

}  // namespace reclaim_bench
