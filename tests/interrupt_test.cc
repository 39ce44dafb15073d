// An interrupted sweep never loses work: Ctrl-C (SIGINT) ends it with exit
// 130 and a valid report holding every case that finished, the rest with
// status "interrupted" ("skipped" is for parameters a variant rejects).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "test_util.h"

extern char** environ;

namespace pebench {
namespace {

TEST(Interrupt, SigintKeepsFinishedCasesInAValidReport) {
  const std::string dir = test::temp_dir("interrupt");
  const std::string out = dir + "/r.json";
  std::vector<std::string> args{PEBENCH_EXE, "run", "--variant", "abs.learned", "--seq", "64,65,66,67,68,69,70,71",
                                "--dtype", "f32,f16", "--benchmark_min_time=0.3", "--quiet", "--out", out};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // stdout (the run table and the summary line) to a file.
  const std::string summary_file = dir + "/stdout.txt";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, summary_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, PEBENCH_EXE, &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);

  // Wait until at least one case is in the report, then interrupt.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  size_t finished = 0;
  while (std::chrono::steady_clock::now() < deadline && finished == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream in(out);
    if (!in) continue;
    const auto j = nlohmann::json::parse(in, nullptr, false);  // the file is replaced atomically: never torn
    ASSERT_FALSE(j.is_discarded()) << "a reader saw a torn report";
    finished = j["results"].size();
  }
  ASSERT_GT(finished, 0u) << "no case finished within 60 s";
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "pebench died from a signal";
  EXPECT_EQ(WEXITSTATUS(status), 130);

  std::ifstream in(out);
  const auto j = nlohmann::json::parse(in);
  const auto& results = j["results"];
  EXPECT_GE(results.size(), finished);
  size_t ok = 0, interrupted = 0;
  for (const auto& r : results) {
    if (r["status"] == "ok") ++ok;
    if (r["status"] == "interrupted" && r["reason"] == "interrupted") ++interrupted;
  }
  EXPECT_GE(ok, 1u);
  EXPECT_EQ(ok + interrupted, results.size());
  EXPECT_LT(ok, 16u) << "the interrupt came too late to test anything";
  // The summary counts interrupted cases as such, not as skipped.
  const std::string summary = test::read_file(summary_file);
  EXPECT_NE(summary.find(fmt::format("{} ok, 0 failed or errored, 0 skipped or unsupported, {} interrupted;", ok,
                                     interrupted)),
            std::string::npos)
      << summary;
}

}  // namespace
}  // namespace pebench
