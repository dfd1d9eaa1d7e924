// SPDX-License-Identifier: MIT
#include "timeline_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "cleanup.hpp"
#include "usage_error.hpp"

namespace reclaim_bench {
namespace {

constexpr std::string_view header = "ds,scheme,alloc,threads,trial,thread,event,start_ns,end_ns,value\n";

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// Nanoseconds since the measured start; signed, though no worker records before it.
std::int64_t since(std::uint64_t t, std::uint64_t origin) {
  return static_cast<std::int64_t>(t - origin);
}

}  // namespace

void write_timeline_rows(std::FILE* file, const std::string& path, const timeline_labels& l,
                         const trial_result& r) {
  if (!r.timeline) return;
  try {
    for (const reclaim::timeline::buffer* b : r.timeline->buffers())
      for (const reclaim::timeline::entry& e : b->events())
        fmt::print(file, "{},{},{},{},{},{},{},{},{},{}\n", l.ds, l.scheme, l.alloc, l.threads,
                   l.trial, b->thread(), reclaim::timeline::name(e.kind()),
                   since(e.start_ns, r.timeline_origin_ns), since(e.end_ns, r.timeline_origin_ns),
                   e.value());
  } catch (const std::system_error& e) {  // fmt's "cannot write to file": say which
    throw std::system_error(e.code(), fmt::format("writing '{}'", path));
  }
  if (std::ferror(file)) fail(fmt::format("writing '{}'", path));
}

void write_timeline_rows(const std::string& path, const timeline_labels& labels,
                         const trial_result& result) {
  std::FILE* file = std::fopen(path.c_str(), "we");
  if (!file) fail(fmt::format("creating '{}'", path));
  try {
    write_timeline_rows(file, path, labels, result);
  } catch (...) {
    std::fclose(file);
    throw;
  }
  if (std::fclose(file) != 0) fail(fmt::format("writing '{}'", path));
}

timeline_file::timeline_file(std::string path)
    : path_(std::move(path)), temp_(fmt::format("{}.tmp{}", path_, ::getpid())) {
  remove_stale_temporaries(path_);
  // Registered before they exist: a signal in between leaves nothing either.
  remove_on_signal(temp_);
  remove_on_signal(child_rows_path());
  file_ = std::fopen(temp_.c_str(), "we");
  if (!file_) {
    const int error = errno;
    forget_temporaries();
    throw usage_error(fmt::format("--timeline: cannot create '{}': {}", temp_,
                                  std::strerror(error)));
  }
  std::fputs(header.data(), file_);
}

timeline_file::~timeline_file() {
  if (file_) {
    std::fclose(file_);
    std::remove(temp_.c_str());
  }
  std::remove(child_rows_path().c_str());
  forget_temporaries();
}

void timeline_file::forget_temporaries() const {
  forget_on_signal(temp_);
  forget_on_signal(child_rows_path());
}

void timeline_file::append(const timeline_labels& labels, const trial_result& result) {
  write_timeline_rows(file_, temp_, labels, result);
  ++trials_;
}

void timeline_file::append_child_rows(bool child_succeeded) {
  const std::string rows_path = child_rows_path();
  std::FILE* rows = child_succeeded ? std::fopen(rows_path.c_str(), "re") : nullptr;
  if (rows) {
    char buffer[1 << 16];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, rows)) > 0) {
      if (std::fwrite(buffer, 1, n, file_) != n) {
        const int error = errno;
        std::fclose(rows);
        std::remove(rows_path.c_str());
        errno = error;
        fail(fmt::format("writing '{}'", temp_));
      }
    }
    std::fclose(rows);
    ++trials_;
  }
  std::remove(rows_path.c_str());
}

void timeline_file::commit() {
  std::FILE* file = std::exchange(file_, nullptr);
  const bool closed = std::fclose(file) == 0;  // the buffered rows are written now
  if (trials_ == 0) {  // no trial ran: FILE stays as it was, as --out does
    std::remove(temp_.c_str());
    return;
  }
  if (closed && std::rename(temp_.c_str(), path_.c_str()) == 0) return;
  const int error = errno;
  std::remove(temp_.c_str());  // half a timeline: no use to anyone
  errno = error;
  fail(closed ? fmt::format("renaming '{}' to '{}'", temp_, path_)
              : fmt::format("writing '{}'", temp_));
}

}  // namespace reclaim_bench
