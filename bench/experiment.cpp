// SPDX-License-Identifier: MIT
#include "experiment.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace reclaim_bench {
namespace {

// What a key's TOML value may be; each becomes the text its flag takes.
enum class kind {
  names,      // a string or an array of strings: a comma list
  counts,     // an integer or an array of integers: a comma list
  number,     // an integer or a float
  integer,
  key_count,  // an integer, or a string with a K or M suffix
  boolean,    // --NAME / --no-NAME (prefill, interleave, pairs)
  text,
};

struct key_spec {
  std::string_view name;  // the key; its flag is the same with '-' for '_' ("--slow-free-us")
  kind type;
};

// The keys of a [[run]]: the sweep flags of the command line (options.cpp).
constexpr key_spec run_keys[] = {
    {"ds", kind::names},          {"scheme", kind::names},
    {"threads", kind::counts},    {"alloc", kind::names},
    {"seconds", kind::number},    {"trials", kind::integer},
    {"keys", kind::key_count},    {"insert", kind::integer},
    {"delete", kind::integer},    {"prefill", kind::boolean},
    {"seed", kind::integer},      {"timeline", kind::text},
    {"timeline_capacity", kind::key_count}, {"slow_free_us", kind::integer},
    {"stall", kind::integer},     {"sample_ms", kind::integer},
    {"interleave", kind::boolean},  {"ops", kind::key_count},
    {"pairs", kind::boolean},     {"region_ops", kind::integer},
};

std::string flag_name(std::string_view key) {
  std::string flag(key);
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The keys of the file's top level; `plot` is read by the tools (python -m reclaim_tools), not here.
constexpr std::string_view top_keys[] = {"title", "paper", "claim", "out", "run", "plot"};

std::string_view expected(kind k) {
  switch (k) {
    case kind::names: return "a string or an array of strings";
    case kind::counts: return "an integer or an array of integers";
    case kind::number: return "a number";
    case kind::integer: return "an integer";
    case kind::key_count: return "an integer, or a string such as \"20K\"";
    case kind::boolean: return "true or false";
    case kind::text: return "a string";
  }
  return "";
}

std::string_view type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return n.as_array()->empty() ? "an empty array" : "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

// The flag text of `n` as a value of kind `k`; nullopt if it is of another type.
std::optional<std::string> to_text(const toml::node& n, kind k) {
  switch (k) {
    case kind::names:
    case kind::counts: {
      const kind item = k == kind::names ? kind::text : kind::integer;
      const toml::array* list = n.as_array();
      if (!list) return to_text(n, item);
      if (list->empty()) return std::nullopt;
      std::string joined;
      for (const toml::node& element : *list) {
        std::optional<std::string> t = to_text(element, item);
        if (!t) return std::nullopt;
        joined += (joined.empty() ? "" : ",") + *t;
      }
      return joined;
    }
    case kind::number:
      if (auto d = n.as_floating_point()) return fmt::format("{}", d->get());  // round-trips
      return to_text(n, kind::integer);
    case kind::integer:
      if (auto i = n.as_integer()) return std::to_string(i->get());
      return std::nullopt;
    case kind::key_count:
      if (n.is_string()) return to_text(n, kind::text);
      return to_text(n, kind::integer);
    case kind::boolean:
      if (auto b = n.as_boolean()) return b->get() ? "true" : "false";
      return std::nullopt;
    case kind::text:
      if (auto s = n.as_string()) return s->get();
      return std::nullopt;
  }
  return std::nullopt;
}

std::string run_key_names() {
  std::vector<std::string_view> names;
  for (const key_spec& k : run_keys) names.push_back(k.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// One value of a sweep: the file's (with where it is) or the command line's.
struct value {
  std::string flag;  // without the dashes
  std::string key;   // as the file spells it
  std::string text;
  std::optional<toml::source_region> in_file;  // empty: given on the command line
};

class loader {
 public:
  loader(const options& command_line, const registry& reg)
      : cmd_(command_line), reg_(reg), path_(command_line.experiment) {}

  experiment load() {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec))
      throw usage_error(fmt::format("--experiment: cannot read '{}': not a file", path_));
    toml::table doc;
    try {
      doc = toml::parse_file(path_);
    } catch (const toml::parse_error& e) {
      throw usage_error(fmt::format("{}:{}:{}: not valid TOML: {}", path_, e.source().begin.line,
                                    e.source().begin.column, e.description()));
    }

    for (const auto& [key, node] : doc) {
      if (std::find(std::begin(top_keys), std::end(top_keys), key.str()) == std::end(top_keys))
        fail(key.source(), fmt::format("unknown key '{}' (accepted: {})", key.str(),
                                       fmt::join(top_keys, ", ")));
    }
    experiment e;
    e.path = path_;
    e.title = top_text(doc, "title", /*required=*/true).value_or("");
    e.paper = top_text(doc, "paper", false).value_or("");
    top_text(doc, "claim", false);
    const std::string default_out =
        fmt::format("results/{}.jsonl", std::filesystem::path(path_).stem().string());
    value out{"out", "out", top_text(doc, "out", false).value_or(default_out), doc.source()};
    if (const toml::node* o = doc.get("out")) out.in_file = o->source();

    if (const toml::node* plots = doc.get("plot"); plots && !is_array_of_tables(*plots))
      fail(plots->source(), fmt::format("plot: expected an array of tables ([[plot]]), got {}",
                                        type_name(*plots)));
    const toml::node* runs = doc.get("run");
    if (!runs) fail(doc.source(), "no [[run]] (at least one is required)");
    if (!is_array_of_tables(*runs) || runs->as_array()->empty())
      fail(runs->source(), fmt::format("run: expected an array of tables ([[run]]), got {}",
                                       type_name(*runs)));
    unsigned number = 0;
    for (const toml::node& run : *runs->as_array())
      e.sweeps.push_back(load_run(*run.as_table(), ++number, out));
    e.out = e.sweeps.front().out;
    return e;
  }

 private:
  [[noreturn]] void fail(const toml::source_region& where, std::string_view what) const {
    throw usage_error(fmt::format("{}:{}: {}", path_, where.begin.line, what));
  }

  static bool is_array_of_tables(const toml::node& n) {
    const toml::array* a = n.as_array();
    return a && std::all_of(a->begin(), a->end(), [](const toml::node& x) { return x.is_table(); });
  }

  std::optional<std::string> top_text(const toml::table& doc, std::string_view key,
                                      bool required) const {
    const toml::node* n = doc.get(key);
    if (!n) {
      if (required) fail(doc.source(), fmt::format("{}: required ({})", key, expected(kind::text)));
      return std::nullopt;
    }
    std::optional<std::string> t = to_text(*n, kind::text);
    if (!t)
      fail(n->source(), fmt::format("{}: expected {}, got {}", key, expected(kind::text),
                                    type_name(*n)));
    return t;
  }

  // The run's values as flag texts, overridden by the command line's; then the same parsing and
  // checks as a command line.
  options load_run(const toml::table& run, unsigned number, const value& out) const {
    const std::string where = fmt::format("[[run]] {}", number);
    std::vector<value> values;
    for (const auto& [key, node] : run) {
      auto spec = std::find_if(std::begin(run_keys), std::end(run_keys),
                               [&](const key_spec& s) { return s.name == key.str(); });
      if (spec == std::end(run_keys))
        fail(key.source(), fmt::format("{}: unknown key '{}' (accepted: {})", where, key.str(),
                                       run_key_names()));
      std::optional<std::string> text = to_text(node, spec->type);
      if (!text)
        fail(node.source(), fmt::format("{}: {}: expected {}, got {}", where, key.str(),
                                        expected(spec->type), type_name(node)));
      values.push_back({flag_name(key.str()), std::string(key.str()), *text, node.source()});
    }
    values.push_back(out);
    for (const auto& [flag, text] : cmd_.given) {
      // --ops and --seconds are one choice: either on the command line replaces the file's.
      const bool duration = flag == "ops" || flag == "seconds";
      std::erase_if(values, [&](const value& v) {
        return v.flag == flag || (duration && (v.flag == "ops" || v.flag == "seconds"));
      });
      values.push_back({flag, flag, text, std::nullopt});
    }

    std::vector<std::string> words = {"reclaim-bench"};
    if (cmd_.in_process) words.push_back("--in-process");  // not a sweep key: for every run
    for (const value& v : values) {
      if (v.flag == "prefill" || v.flag == "interleave" || v.flag == "pairs") {  // kind::boolean
        words.push_back((v.text == "true" ? "--" : "--no-") + v.flag);
      } else if (v.text.starts_with('-')) {  // one word: then it stays a value, not a flag
        words.push_back(fmt::format("--{}={}", v.flag, v.text));
      } else {
        words.push_back("--" + v.flag);
        words.push_back(v.text);
      }
    }
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);

    try {
      options sweep = *parse_command_line(static_cast<int>(words.size()), argv.data(), reg_);
      check_output_files(sweep, /*directories_made=*/true);  // by make_output_directories()
      return sweep;
    } catch (const usage_error& e) {
      // "--scheme: unknown scheme ..." becomes "FILE:LINE: [[run]] 1: scheme: unknown scheme ...".
      const std::string_view message = e.what();
      for (const value& v : values) {
        const std::string flag = "--" + v.flag + ":";
        if (!message.starts_with(flag)) continue;
        if (!v.in_file)
          throw usage_error(fmt::format("{}: {}: {} (from the command line)", path_, where,
                                        message));
        fail(*v.in_file, fmt::format("{}: {}{}", where, v.key, message.substr(flag.size() - 1)));
      }
      fail(run.source(), fmt::format("{}: {}", where, message));
    }
  }

  const options& cmd_;
  const registry& reg_;
  const std::string path_;
};

}  // namespace

experiment load_experiment(const options& command_line, const registry& reg) {
  return loader(command_line, reg).load();
}

void make_output_directories(const experiment& e) {
  std::vector<std::pair<std::string_view, std::string_view>> files = {{"out", e.out}};
  for (const options& sweep : e.sweeps)
    if (!sweep.timeline.empty()) files.emplace_back("timeline", sweep.timeline);
  for (const auto& [key, file] : files) {
    const std::filesystem::path dir = std::filesystem::path(file).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec)
      throw usage_error(fmt::format("{}: {}: cannot create the directory '{}': {}", e.path, key,
                                    dir.string(), ec.message()));
  }
}

}  // namespace reclaim_bench
