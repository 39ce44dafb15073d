// A bounded mutation fuzz of the report reader through the real binary: a
// real report (reports/samples) is mutated (keys deleted, values retyped,
// NaN/Infinity/1e400 tokens, deep nesting, duplicated elements, changed
// statuses, flipped bytes, truncation) and fed to `compare` (text, md and
// json) and `report`. Every run must end with exit 0, or exit 2 and one
// line naming the file; a crash, a sanitizer report (exit 1) or any other
// code fails the test. Deterministic: PEBENCH_FUZZ_SEED and
// PEBENCH_FUZZ_CASES (default 300 mutated reports, 3 runs each) change it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "test_util.h"

namespace pebench {
namespace {

using nlohmann::json;

const std::string kSeedReport =
    std::string(PEBENCH_SOURCE_DIR) + "/reports/samples/lavapipe-attn-nope-naive-vs-flash-1024.json";
// Dumped in place of a value, then replaced by raw text JSON cannot carry.
const std::string kHole = "\"@@fuzz-hole@@\"";

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  // One mutated report text from `doc`.
  std::string mutate(json doc) {
    std::string raw;  // what replaces kHole, if anything
    const size_t structural = 1 + pick(3);
    for (size_t i = 0; i < structural; ++i) mutate_value(doc, raw);
    std::string text = doc.dump(pick(2) ? 1 : -1);
    if (!raw.empty()) {
      const auto at = text.find(kHole);
      if (at != std::string::npos) text.replace(at, kHole.size(), raw);
    }
    if (pick(10) == 0) flip_byte(text);
    if (pick(10) == 0) text.resize(pick(text.size()));  // truncation
    return text;
  }

 private:
  size_t pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  // A random node, reached by a walk from the root that stops at each level
  // with probability 1/4, so the report's structure is hit as often as the
  // long sample lists.
  json& random_node(json& root) {
    json* node = &root;
    while ((node->is_object() || node->is_array()) && !node->empty() && pick(4) != 0) {
      auto it = node->begin();
      std::advance(it, static_cast<long>(pick(node->size())));
      node = &*it;
    }
    return *node;
  }

  json random_value() {
    static const std::vector<json> kValues = {
        nullptr, true, false, 0, -1, 1.5, -0.0, 1e308, -1e308, 5e-324,
        18446744073709551615u, INT64_MIN, "", "x", "ok", "interrupted", "two\nlines", json::array(), json::object(),
        json::array({1, "a", nullptr}), json::object({{"median", 0}})};
    return kValues[pick(kValues.size())];
  }

  std::string raw_token() {
    static const std::vector<std::string> kTokens = {"NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e-400",
                                                     "01",  "+1",       ".5",        "0x10",  "1e",     "\"\\ud800\""};
    return kTokens[pick(kTokens.size())];
  }

  std::string deep_text() {
    static const std::vector<size_t> kDepths = {99, 100, 101, 1000, 200000};
    const size_t depth = kDepths[pick(kDepths.size())];
    if (pick(2)) return std::string(depth, '[') + std::string(depth, ']');
    std::string s;
    for (size_t i = 0; i < depth; ++i) s += "{\"a\":";
    return s + "0" + std::string(depth, '}');
  }

  void mutate_value(json& doc, std::string& raw) {
    json& node = random_node(doc);
    switch (pick(7)) {
      case 0:  // delete a member or element
        if (node.is_object() && !node.empty()) {
          auto it = node.begin();
          std::advance(it, static_cast<long>(pick(node.size())));
          node.erase(it);
        } else if (node.is_array() && !node.empty()) {
          node.erase(node.begin() + static_cast<long>(pick(node.size())));
        }
        break;
      case 1:  // another type or an extreme value
        node = random_value();
        break;
      case 2:  // duplicate an element (two results for one case, ...)
        if (node.is_array() && !node.empty()) node.push_back(node[pick(node.size())]);
        break;
      case 3:  // a status, device or time the reader must judge
        if (doc.contains("results") && doc["results"].is_array() && !doc["results"].empty()) {
          json& r = doc["results"][pick(doc["results"].size())];
          if (!r.is_object()) break;
          const char* keys[] = {"status", "device", "time_ns"};
          r[keys[pick(3)]] = random_value();
        }
        break;
      case 4:  // NaN, Infinity, 1e400, ... (only one hole per text)
        if (raw.empty()) {
          node = "@@fuzz-hole@@";
          raw = raw_token();
        }
        break;
      case 5:  // deep nesting
        if (raw.empty()) {
          node = "@@fuzz-hole@@";
          raw = deep_text();
        }
        break;
      default:  // a long string
        node = std::string(1 + pick(100000), 'x');
        break;
    }
  }

  void flip_byte(std::string& text) {
    if (text.empty()) return;
    text[pick(text.size())] = static_cast<char>(pick(256));
  }

  std::mt19937_64 rng_;
};

TEST(ReportFuzz, MutatedReportsExitZeroOrTwoNeverCrash) {
  const uint64_t seed = env_or("PEBENCH_FUZZ_SEED", 12);
  const uint64_t cases = env_or("PEBENCH_FUZZ_CASES", 300);
  std::ifstream in(kSeedReport);
  ASSERT_TRUE(in) << kSeedReport;
  const json original = json::parse(in);
  const std::string dir = test::temp_dir("fuzz");
  Mutator mutator(seed);
  std::map<int, size_t> exit_codes;
  size_t runs = 0, crashes = 0;
  const char* formats[] = {"text", "md", "json"};
  for (uint64_t i = 0; i < cases; ++i) {
    const std::string path = dir + "/m.json";
    std::ofstream(path, std::ios::binary | std::ios::trunc) << mutator.mutate(original);
    const std::vector<std::vector<std::string>> commands = {
        {"compare", kSeedReport, path, "--format", formats[i % 3]},
        {"compare", path, kSeedReport, "--format", formats[(i + 1) % 3]},
        {"report", path, kSeedReport, "-o", dir + "/r.html"}};
    for (const auto& args : commands) {
      const auto r = test::run_pebench(args);
      ++runs;
      ++exit_codes[r.exit_code];
      if (r.exit_code == 0) continue;
      if (r.exit_code != 2) {
        ++crashes;
        // Keep the input that did it, for the developer.
        const std::string kept = fmt::format("{}/crash-{}.json", dir, i);
        std::filesystem::copy_file(path, kept, std::filesystem::copy_options::overwrite_existing);
        ADD_FAILURE() << "seed " << seed << " case " << i << ": " << args[0] << " exited " << r.exit_code
                      << " on " << kept << ":\n"
                      << r.out.substr(0, 2000);
        continue;
      }
      // Bad input: one line naming the file.
      EXPECT_NE(r.out.find(path), std::string::npos) << "case " << i << ": " << r.out.substr(0, 2000);
      EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "case " << i << ": " << r.out.substr(0, 2000);
    }
  }
  std::string codes;
  for (const auto& [code, n] : exit_codes) codes += fmt::format(" exit {}: {}", code, n);
  std::cout << fmt::format("report fuzz: seed {}, {} mutated reports, {} runs, {} crashes;{}\n", seed, cases, runs,
                           crashes, codes);
  RecordProperty("runs", static_cast<int>(runs));
  RecordProperty("crashes", static_cast<int>(crashes));
  EXPECT_EQ(crashes, 0u);
  // The mutations must reach both outcomes, or the test is not testing the reader.
  EXPECT_GT(exit_codes[0], runs / 20);
  EXPECT_GT(exit_codes[2], runs / 4);
}

}  // namespace
}  // namespace pebench
